//! Several hosts' `check` results: the same finding across hosts in one row
//! ("storage.scheduler on 3 of 40 hosts"), outliers first.
//!
//! Outliers are what a fleet owner looks for: a finding on few hosts is a
//! host that drifted from the others (a scheduler lost at reboot, a my.cnf
//! edited by hand), while a finding on every host is a fleet-wide decision.
//! So rows sort by the share of hosts they are on, smallest first, then by
//! severity, worst first.

use super::load::Input;
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
        for f in i.result()["findings"].as_array().into_iter().flatten() {
            let Some(id) = f["id"].as_str() else { continue };
            let sev: Severity = serde_json::from_value(f["severity"].clone()).unwrap_or_default();
            let rec = f["recommended"].as_str().map(str::to_string);
            let observed = f["observed"].as_str().unwrap_or("").to_string();
            let subject = f["subject"]["name"].as_str().unwrap_or("");
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
    use serde_json::json;

    fn input(host: &str, findings: serde_json::Value) -> Input {
        Input {
            file: format!("{host}.json").into(),
            label: host.into(),
            command: "check".into(),
            envelope: json!({"schema": "check/2", "host": {"hostname": host}, "result": {"findings": findings}}),
        }
    }

    #[test]
    fn outliers_first_and_counts_of_hosts() {
        let wide = json!({"id": "os.swappiness", "severity": "warning", "recommended": "1", "observed": "60", "subject": {"name": "vm.swappiness"}});
        let odd = json!({"id": "storage.scheduler", "severity": "notice", "recommended": "none", "observed": "bfq", "subject": {"name": "sda"}});
        let ins = vec![
            input("db1", json!([wide.clone(), odd])),
            input("db2", json!([wide.clone()])),
            input("db3", json!([wide])),
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
