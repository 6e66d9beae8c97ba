//! Several hosts' `check` results: the same finding across hosts in one row
//! ("storage.scheduler on 3 of 40 hosts"), outliers first.
//!
//! Outliers are what a fleet owner looks for: a finding on few hosts is a
//! host that drifted from the others (a scheduler lost at reboot, a my.cnf
//! edited by hand), while a finding on every host is a fleet-wide decision.
//! So rows sort by the share of hosts they are on, smallest first, then by
//! severity, worst first.

use super::load::Input;
use super::typed::Typed;
use crate::export::doc::{Cell, Column, Table, Tone};
use crate::finding::Severity;
use serde::Serialize;
use std::collections::BTreeMap;

/// One finding id (with its recommended value) across hosts.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub id: String,
    pub severity: Severity,
    /// The recommended value, when all hosts that have it agree; else None.
    pub recommended: Option<String>,
    /// Hosts with the finding, and what each one observed.
    pub hosts: Vec<(String, String)>,
    /// Hosts that ran check.
    pub of: usize,
}

/// Groups across the `check` results among `inputs`, outliers first; empty
/// unless at least two hosts' check results are given.
pub fn groups(inputs: &[Input]) -> Vec<Group> {
    let checks: Vec<&Input> = inputs.iter().filter(|i| i.command == "check").collect();
    let mut hostnames: Vec<String> = checks.iter().map(|i| i.hostname()).collect();
    hostnames.sort();
    hostnames.dedup();
    if hostnames.len() < 2 {
        return Vec::new();
    }
    let of = hostnames.len();
    let mut by_id: BTreeMap<String, Group> = BTreeMap::new();
    for i in &checks {
        let host = i.hostname();
        let Typed::Check(c) = &i.result else { continue };
        for f in c.findings.iter().map(|a| &a.finding) {
            let id = f.id.as_str();
            let sev = f.severity;
            let rec = f.recommended.clone();
            let observed = f.observed.clone();
            let subject = f.subject.name.as_str();
            let g = by_id.entry(id.to_string()).or_insert_with(|| Group {
                id: id.to_string(),
                severity: sev,
                recommended: rec.clone(),
                hosts: Vec::new(),
                of,
            });
            g.severity = g.severity.max(sev);
            if g.recommended != rec {
                g.recommended = None;
            }
            let seen = if subject.is_empty() {
                observed
            } else {
                format!("{subject}: {observed}")
            };
            match g.hosts.iter_mut().find(|(h, _)| *h == host) {
                Some((_, o)) => {
                    o.push_str("; ");
                    o.push_str(&seen);
                }
                None => g.hosts.push((host.clone(), seen)),
            }
        }
    }
    let mut v: Vec<Group> = by_id.into_values().collect();
    for g in &mut v {
        g.hosts.sort();
    }
    v.sort_by(|a, b| {
        a.hosts
            .len()
            .cmp(&b.hosts.len())
            .then(b.severity.cmp(&a.severity))
            .then(a.id.cmp(&b.id))
    });
    v
}

pub fn table(groups: &[Group]) -> Table {
    let mut t = Table::new(vec![
        Column::text("finding"),
        Column::text("severity"),
        Column::text("hosts"),
        Column::text("recommended"),
        Column::text("on"),
    ]);
    for g in groups {
        let tone = Tone::of_severity(g.severity);
        let mut sev = Cell::text(g.severity.as_str());
        sev.tone = tone;
        let on: Vec<String> = g.hosts.iter().map(|(h, o)| format!("{h} ({o})")).collect();
        t.row(vec![
            Cell::text(g.id.clone()),
            sev,
            Cell::text(format!("{} of {}", g.hosts.len(), g.of)),
            Cell::text(g.recommended.clone().unwrap_or_else(|| "differs".into())),
            Cell::text(on.join(", ")),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::report::{CheckReport, ServerSummary};
    use crate::check::rules::Advice;
    use crate::export::json::HostStamp;
    use crate::finding::{Finding, Layer, Subject, SubjectKind};
    use crate::host::Known;

    fn input(host: &str, findings: &[Finding]) -> Input {
        let check = CheckReport {
            path: "/var/lib/mysql".into(),
            path_source: "argument".into(),
            server: ServerSummary::default(),
            findings: findings.iter().cloned().map(Advice::new).collect(),
            rules: vec![],
            notes: vec![],
            emitted: vec![],
            provider: None,
            facts: Default::default(),
            state: Default::default(),
        };
        Input {
            file: format!("{host}.json").into(),
            label: host.into(),
            command: "check".into(),
            header: super::super::load::Header {
                schema: "check/2".into(),
                version: String::new(),
                generated_at: String::new(),
                host: Some(HostStamp {
                    hostname: Known::Value(host.into()),
                    kernel: Known::unknown("not read"),
                    cpus: Known::unknown("not read"),
                    memory_bytes: Known::unknown("not read"),
                }),
                warnings: vec![],
            },
            result: Typed::Check(Box::new(check)),
        }
    }

    fn finding(id: &str, sev: Severity, subject: &str, observed: &str, rec: &str) -> Finding {
        Finding::new(
            id,
            sev,
            Layer::Os,
            Subject::new(SubjectKind::Host, subject),
            observed,
            "a reason",
        )
        .recommend(rec)
    }

    #[test]
    fn outliers_first_and_counts_of_hosts() {
        let wide = finding(
            "os.swappiness",
            Severity::Warning,
            "vm.swappiness",
            "60",
            "1",
        );
        let odd = finding("storage.scheduler", Severity::Notice, "sda", "bfq", "none");
        let ins = vec![
            input("db1", &[wide.clone(), odd]),
            input("db2", std::slice::from_ref(&wide)),
            input("db3", &[wide]),
        ];
        let g = groups(&ins);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].id, "storage.scheduler", "the outlier comes first");
        assert_eq!(
            g[0].hosts,
            vec![("db1".to_string(), "sda: bfq".to_string())]
        );
        assert_eq!(g[1].hosts.len(), 3);
        assert_eq!(g[1].of, 3);
        let t = table(&g);
        assert_eq!(t.rows[0][2].text, "1 of 3");
        assert_eq!(t.rows[1][2].text, "3 of 3");
        // One host: no fleet view.
        assert!(groups(&ins[..1]).is_empty());
    }
}
