//! The rules: pure functions from [`Facts`] to advice, one file per family,
//! split by layer (storage, filesystem, os, server).
//!
//! A rule returns [`Advice`]: a [`Finding`] plus the [`Setting`]s that
//! would fix it. A setting is the *state* innotune wants (`loop0
//! queue/scheduler = none`), not an action: `apply` turns each into a
//! runtime change (when one exists) and a persistent form (a udev rule, a
//! sysctl.d line, a my.cnf drop-in line), and skips what already holds.
//! A finding that only lacks persistence has a setting equal to the
//! current value: its runtime change is already in effect.
//!
//! Server rules say which server versions they were written for
//! ([`Versions`]); on any other server they are skipped, and the report
//! says so. Every value a rule recommends is exact (bytes, a scheduler
//! name), never "more" or ">X".

pub mod buffer_pool;
pub mod connections;
pub mod durability;
pub mod flush;
pub mod governor;
pub mod io_capacity;
pub mod io_threads;
pub mod irq_affinity;
pub mod limits;
pub mod log_buffer;
pub mod mount;
pub mod network;
pub mod numa;
pub mod query_cache;
pub mod raid;
pub mod read_ahead;
pub mod redo;
pub mod scheduler;
pub mod slow_log;
pub mod slow_queries;
pub mod table_defaults;
pub mod tmp_tables;
pub mod vm;

use super::facts::{Facts, ServerFacts};
use crate::finding::{Finding, Layer, Severity, Source, Subject, SubjectKind};
use serde::Serialize;
use std::borrow::Cow;

/// A finding and the settings that fix it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Advice {
    #[serde(flatten)]
    pub finding: Finding,
    /// The state that fixes it; empty when innotune cannot make the change
    /// (a mkfs-time layout, a durability decision left to the operator).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    /// How a managed server's provider takes each recommended variable
    /// (`check --provider`; empty on a self-managed server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managed: Vec<crate::check::provider::Managed>,
}

impl Advice {
    pub fn new(finding: Finding) -> Advice {
        Advice {
            finding,
            settings: Vec::new(),
            managed: Vec::new(),
        }
    }
    pub fn set(mut self, s: Setting) -> Advice {
        self.settings.push(s);
        self
    }
}

/// One piece of host state innotune can make true, now and at boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Setting {
    /// A block queue attribute of a whole disk (`scheduler`,
    /// `read_ahead_kb`, `nr_requests`): sysfs now, a udev rule at boot.
    Queue {
        device: String,
        attr: String,
        value: String,
    },
    /// A sysctl: /proc/sys now, sysctl.d at boot.
    Sysctl { name: String, value: String },
    /// Transparent hugepages (`enabled`): sysfs now, tmpfiles.d at boot.
    Thp { value: String },
    /// A receive queue attribute of a NIC (`rps_cpus`, `rps_flow_cnt`):
    /// sysfs now, a udev rule at boot.
    NetQueue {
        nic: String,
        queue: String,
        attr: String,
        value: String,
    },
    /// The CPU mask of a NIC's interrupt (`/proc/irq/N/smp_affinity`):
    /// now only (irq numbers are handed out at boot; irqbalance or a unit
    /// of the operator's keeps it across reboots).
    IrqAffinity {
        irq: u32,
        nic: String,
        value: String,
    },
    /// A CPU's frequency governor (cpufreq `scaling_governor`, which sets
    /// every CPU of its policy): sysfs now, tmpfiles.d at boot.
    CpuGovernor { cpu: u32, value: String },
    /// A server variable: `SET GLOBAL` (`SET PERSIST` on MySQL 8) when it
    /// is dynamic, and a line in innotune's [mysqld] drop-in.
    ServerVariable {
        name: String,
        value: String,
        dynamic: bool,
        /// Why, written as a comment above the line.
        reason: String,
    },
    /// LimitNOFILE of the server's systemd service (a drop-in; takes
    /// effect when the service restarts).
    Nofile { service: String, value: u64 },
    /// An /etc/fstab line for the datadir's mount, printed for the
    /// operator (never edited in place).
    Fstab { mount_point: String, line: String },
}

pub use crate::change::allowed::{SERVER_VARIABLES, SYSCTLS};

impl Setting {
    pub fn queue(device: &str, attr: &str, value: &str) -> Setting {
        Setting::Queue {
            device: device.into(),
            attr: attr.into(),
            value: value.into(),
        }
    }
    pub fn sysctl(name: &str, value: impl ToString) -> Setting {
        debug_assert!(SYSCTLS.contains(&name), "add {name} to rules::SYSCTLS");
        Setting::Sysctl {
            name: name.into(),
            value: value.to_string(),
        }
    }
    pub fn var(s: &ServerFacts, name: &str, value: impl ToString, reason: &str) -> Setting {
        debug_assert!(
            SERVER_VARIABLES.contains(&name),
            "add {name} to rules::SERVER_VARIABLES"
        );
        Setting::ServerVariable {
            name: name.into(),
            value: value.to_string(),
            dynamic: super::dynamic::is_dynamic(s, name),
            reason: reason.into(),
        }
    }

    /// The change that makes this setting true now (sysfs, /proc/sys,
    /// `SET GLOBAL`/`SET PERSIST`), when it has one; its persistent form
    /// is a file ([`super::emit`]). A scheduler switch also sets
    /// `nr_requests` when given (the switch resets it).
    pub fn runtime_change(
        &self,
        f: &Facts,
        nr_requests: Option<&str>,
    ) -> Option<Box<dyn crate::change::Change>> {
        use crate::change::{IrqAffinity, ServerVariable, Sysctl, SysfsAttr};
        Some(match self {
            Setting::Queue {
                device,
                attr,
                value,
            } if attr == "scheduler" => Box::new(SysfsAttr::scheduler(device, value, nr_requests)),
            Setting::Queue {
                device,
                attr,
                value,
            } => Box::new(SysfsAttr::new(
                format!("/sys/block/{device}/queue/{attr}"),
                value,
                &format!("{device} {attr}"),
            )),
            Setting::Sysctl { name, value } => Box::new(Sysctl::new(name, value)),
            Setting::Thp { value } => Box::new(SysfsAttr::new(
                "/sys/kernel/mm/transparent_hugepage/enabled",
                value,
                "transparent hugepages",
            )),
            Setting::NetQueue {
                nic,
                queue,
                attr,
                value,
            } => Box::new(SysfsAttr::new(
                format!("/sys/class/net/{nic}/queues/{queue}/{attr}"),
                value,
                &format!("{nic} {queue} {attr}"),
            )),
            Setting::IrqAffinity { irq, nic, value } => {
                Box::new(IrqAffinity::new(*irq, value, &format!("{nic} irq {irq}")))
            }
            Setting::CpuGovernor { cpu, value } => Box::new(SysfsAttr::new(
                crate::change::allowed::governor_path(*cpu),
                value,
                &format!("cpu{cpu} governor"),
            )),
            Setting::ServerVariable {
                name,
                value,
                dynamic: true,
                ..
            } => {
                let srv = f.server.as_ref()?;
                // SET PERSIST exists from MySQL 8.0.11; MariaDB has none.
                let persist = srv.is_mysql() && srv.at_least(8, 0, 11);
                Box::new(ServerVariable::new(&srv.endpoint, name, value, persist))
            }
            _ => return None,
        })
    }
}

/// Server series a rule was written for.
#[derive(Debug, Clone, Copy)]
pub struct Versions {
    /// MySQL (major, minor) series.
    pub mysql: &'static [(u32, u32)],
    /// MariaDB majors (10 = every 10.x, 11 = every 11.x).
    pub mariadb: &'static [u32],
}

impl Versions {
    /// MySQL 5.7, 8.0, 8.4; MariaDB 10.x, 11.x: the series innotune knows.
    pub const ALL: Versions = Versions {
        mysql: &[(5, 7), (8, 0), (8, 4)],
        mariadb: &[10, 11],
    };

    pub fn applies(&self, s: &ServerFacts) -> bool {
        if s.is_mariadb() {
            self.mariadb.contains(&s.major)
        } else {
            self.mysql.contains(&(s.major, s.minor))
        }
    }

    /// `MySQL 5.7, 8.0, 8.4; MariaDB 10.x, 11.x`.
    pub fn describe(&self) -> String {
        let my: Vec<String> = self.mysql.iter().map(|(a, b)| format!("{a}.{b}")).collect();
        let ma: Vec<String> = self.mariadb.iter().map(|a| format!("{a}.x")).collect();
        let mut parts = Vec::new();
        if !my.is_empty() {
            parts.push(format!("MySQL {}", my.join(", ")));
        }
        if !ma.is_empty() {
            parts.push(format!("MariaDB {}", ma.join(", ")));
        }
        parts.join("; ")
    }
}

/// What a rule needs to run.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Host facts only (storage, filesystem, OS).
    Host,
    /// A reachable server of one of these versions.
    Server(Versions),
    /// A slow query log given with `check --slowlog FILE` (no server needed).
    SlowLog,
}

/// A family of checks.
pub struct Rule {
    /// The family id; its findings' ids start with it.
    pub id: &'static str,
    pub layer: Layer,
    pub scope: Scope,
    /// One line: what it checks.
    pub about: &'static str,
    pub run: fn(&Facts) -> Vec<Advice>,
}

/// The rules about the machine that runs the load (`check --client`).
pub const CLIENT: &[&str] = &["os.rps", "os.irq_affinity", "os.governor"];

/// Every rule, bottom of the stack first.
pub fn all() -> Vec<Rule> {
    vec![
        scheduler::RULE,
        read_ahead::RULE,
        raid::RULE,
        mount::RULE,
        vm::SWAPPINESS,
        vm::THP,
        vm::DIRTY,
        limits::NOFILE,
        limits::AIO,
        numa::RULE,
        network::RULE,
        irq_affinity::RULE,
        governor::RULE,
        buffer_pool::RULE,
        redo::RULE,
        io_capacity::RULE,
        flush::RULE,
        durability::RULE,
        tmp_tables::RULE,
        log_buffer::RULE,
        query_cache::RULE,
        table_defaults::RULE,
        connections::RULE,
        io_threads::RULE,
        slow_log::RULE,
        slow_queries::RULE,
    ]
}

/// What happened to one rule in a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RuleRun {
    pub id: Cow<'static, str>,
    pub layer: Layer,
    /// `host`, or the server versions it applies to.
    pub applies_to: String,
    /// `ran` or `skipped`.
    pub status: Cow<'static, str>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub findings: usize,
}

impl Rule {
    /// Does it read the server's host (its disks, kernel, processes)? Those
    /// are not visible from a client ([`run`]'s `no_host`).
    pub fn needs_host(&self) -> bool {
        matches!(self.scope, Scope::Host) || (self.layer != Layer::Server)
    }
}

/// Run every rule whose layer is in `layers` (all when empty); advice
/// sorted worst first, with no two settings for the same thing. With
/// `no_host` (why the server's host is not read), the rules that need the
/// host are skipped with "not visible from a client" and that reason.
pub fn run(
    facts: &Facts,
    layers: &[Layer],
    server_note: Option<&str>,
    no_host: Option<&str>,
) -> (Vec<Advice>, Vec<RuleRun>) {
    let mut advice = Vec::new();
    let mut runs = Vec::new();
    for r in all() {
        if !layers.is_empty() && !layers.contains(&r.layer) {
            continue;
        }
        let (applies_to, skip) = match (&r.scope, &facts.server) {
            (Scope::Host, _) if no_host.is_some() => (
                "host".to_string(),
                no_host.map(|w| format!("not visible from a client: {w}")),
            ),
            (Scope::Server(v), _) if no_host.is_some() && r.needs_host() => (
                v.describe(),
                no_host.map(|w| {
                    format!("not visible from a client (it reads the server's host): {w}")
                }),
            ),
            (Scope::Host, _) => ("host".to_string(), None),
            (Scope::SlowLog, _) => (
                "slow log".to_string(),
                facts
                    .slowlog
                    .is_none()
                    .then(|| "no slow log given (check --slowlog FILE)".to_string()),
            ),
            (Scope::Server(v), None) => (
                v.describe(),
                Some(server_note.unwrap_or("no server reachable").to_string()),
            ),
            (Scope::Server(v), Some(s)) if !v.applies(s) => (
                v.describe(),
                Some(format!("written for {}, not {}", v.describe(), s.label())),
            ),
            (Scope::Server(v), Some(_)) => (v.describe(), None),
        };
        // A host rule whose facts this host does not show at all.
        let skip = skip.or_else(|| unseen(r.id, facts));
        if let Some(reason) = skip {
            runs.push(RuleRun {
                id: r.id.into(),
                layer: r.layer,
                applies_to,
                status: "skipped".into(),
                reason: Some(reason),
                findings: 0,
            });
            continue;
        }
        let got = (r.run)(facts);
        runs.push(RuleRun {
            id: r.id.into(),
            layer: r.layer,
            applies_to,
            status: "ran".into(),
            reason: None,
            findings: got.len(),
        });
        advice.extend(got);
    }
    let mut advice = dedup(advice);
    advice.sort_by(|a, b| {
        b.finding
            .severity
            .cmp(&a.finding.severity)
            .then(a.finding.layer.cmp(&b.finding.layer))
            .then(a.finding.id.cmp(&b.finding.id))
            .then(a.finding.subject.name.cmp(&b.finding.subject.name))
    });
    (advice, runs)
}

/// Why a host rule cannot see what it checks on this host (no cpufreq
/// directory in a VM), when it cannot: it is skipped with that reason
/// rather than run to an empty, misleading "ran, nothing found".
fn unseen(id: &str, f: &Facts) -> Option<String> {
    match id {
        "os.governor" => governor::unseen(f),
        _ => None,
    }
}

/// The identity of what a setting changes (two settings with the same key
/// and different values would contradict each other).
pub fn setting_key(s: &Setting) -> String {
    match s {
        Setting::Queue { device, attr, .. } => format!("queue:{device}/{attr}"),
        Setting::Sysctl { name, .. } => format!("sysctl:{name}"),
        Setting::Thp { .. } => "thp:enabled".into(),
        Setting::NetQueue {
            nic, queue, attr, ..
        } => format!("net:{nic}/{queue}/{attr}"),
        Setting::ServerVariable { name, .. } => format!("var:{name}"),
        Setting::Nofile { service, .. } => format!("nofile:{service}"),
        Setting::IrqAffinity { irq, .. } => format!("irq:{irq}"),
        Setting::CpuGovernor { cpu, .. } => format!("governor:cpu{cpu}"),
        Setting::Fstab { mount_point, .. } => format!("fstab:{mount_point}"),
    }
}

fn setting_value(s: &Setting) -> String {
    match s {
        Setting::Queue { value, .. }
        | Setting::Sysctl { value, .. }
        | Setting::Thp { value }
        | Setting::NetQueue { value, .. }
        | Setting::IrqAffinity { value, .. }
        | Setting::CpuGovernor { value, .. }
        | Setting::ServerVariable { value, .. } => value.clone(),
        Setting::Nofile { value, .. } => value.to_string(),
        Setting::Fstab { line, .. } => line.clone(),
    }
}

/// Guarantee that no two findings contradict: when two pieces of advice
/// want different values for the same setting, the more severe one keeps
/// it (rules are written so this does not happen; this is the net), and
/// identical findings (same id and subject) appear once.
fn dedup(mut advice: Vec<Advice>) -> Vec<Advice> {
    advice.sort_by_key(|a| std::cmp::Reverse(a.finding.severity));
    let mut seen_findings = std::collections::HashSet::new();
    let mut owner: std::collections::HashMap<String, String> = Default::default();
    let mut out = Vec::new();
    for mut a in advice {
        if !seen_findings.insert((a.finding.id.clone(), a.finding.subject.name.clone())) {
            continue;
        }
        a.settings.retain(|s| {
            let k = setting_key(s);
            let v = setting_value(s);
            match owner.get(&k) {
                Some(existing) => existing == &v,
                None => {
                    owner.insert(k, v);
                    true
                }
            }
        });
        out.push(a);
    }
    out
}

/// A finding with the usual parts (shorthand for rules).
pub fn finding(
    id: &str,
    severity: Severity,
    layer: Layer,
    kind: SubjectKind,
    subject: &str,
    observed: impl Into<String>,
    reason: impl Into<String>,
) -> Finding {
    Finding::new(
        id,
        severity,
        layer,
        Subject::new(kind, subject),
        observed,
        reason,
    )
}

/// Evidence shorthand.
pub fn observed(f: Finding, detail: impl Into<String>) -> Finding {
    f.evidence(Source::Observed, detail)
}

#[cfg(test)]
pub(crate) mod testing {
    //! Facts builders for rule tests.
    use super::super::facts::*;

    pub fn server(flavor: &str, major: u32, minor: u32, patch: u32) -> ServerFacts {
        ServerFacts {
            flavor: flavor.into(),
            version: format!("{major}.{minor}.{patch}"),
            major,
            minor,
            patch,
            endpoint: ServerEndpoint {
                socket: Some("/run/mysqld/mysqld.sock".into()),
                user: "root".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    pub fn with_vars(mut s: ServerFacts, vars: &[(&str, &str)]) -> ServerFacts {
        for (k, v) in vars {
            s.variables.insert(k.to_ascii_lowercase(), v.to_string());
        }
        s
    }

    pub fn window(seconds: f64, deltas: &[(&str, i64)]) -> Window {
        Window {
            seconds,
            delta: deltas
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), *v))
                .collect(),
            pending_reads_avg: None,
            dirty_pct_max: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_gate_rules() {
        let v = Versions::ALL;
        assert!(v.applies(&testing::server("mysql", 8, 0, 36)));
        assert!(v.applies(&testing::server("mariadb", 10, 11, 6)));
        assert!(!v.applies(&testing::server("mysql", 9, 1, 0)));
        assert!(!v.applies(&testing::server("mysql", 5, 6, 51)));
        assert_eq!(v.describe(), "MySQL 5.7, 8.0, 8.4; MariaDB 10.x, 11.x");
    }

    #[test]
    fn contradicting_settings_keep_the_more_severe() {
        let mk = |sev, v: &str| {
            Advice::new(finding(
                &format!("x.{v}"),
                sev,
                Layer::Os,
                SubjectKind::Sysctl,
                "vm.swappiness",
                "60",
                "r",
            ))
            .set(Setting::sysctl("vm.swappiness", v))
        };
        let out = dedup(vec![mk(Severity::Notice, "10"), mk(Severity::Warning, "1")]);
        let kept: Vec<&Setting> = out.iter().flat_map(|a| &a.settings).collect();
        assert_eq!(kept, vec![&Setting::sysctl("vm.swappiness", "1")]);
    }
}

/// A server-variable finding with the setting that fixes it: observed is
/// the running value, recommended the exact value to set.
#[allow(clippy::too_many_arguments)]
pub fn server_advice(
    s: &ServerFacts,
    id: &str,
    severity: Severity,
    name: &str,
    value: impl ToString,
    reason: String,
    source: Source,
    evidence: String,
) -> Advice {
    let v = value.to_string();
    let observed = s.var(name).unwrap_or("unset").to_string();
    Advice::new(
        finding(
            id,
            severity,
            Layer::Server,
            SubjectKind::ServerVariable,
            name,
            observed,
            reason.clone(),
        )
        .recommend(&v)
        .evidence(source, evidence),
    )
    .set(Setting::var(s, name, &v, &reason))
}

/// `x` rounded to two significant figures (io_capacity-style numbers).
pub fn round2(x: f64) -> u64 {
    if x < 100.0 {
        return x.round().max(1.0) as u64;
    }
    let mag = 10f64.powi(x.log10().floor() as i32 - 1);
    ((x / mag).round() * mag) as u64
}
