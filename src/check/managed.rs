//! A managed provider's view of the advice: every server-variable setting
//! turned into the provider's form ([`super::provider::access`]), and the
//! ones the provider does not allow taken out of the settings.

use super::facts::Facts;
use super::provider::{access, memory_formula, Access, Managed, Provider};
use super::rules::{Advice, Setting};

/// Turn every server-variable setting into the provider's form: those it
/// does not allow are taken out of the settings (so nothing emits or
/// applies them) and said in the advice's `managed` entries.
pub fn adjust(p: Provider, f: &Facts, advice: &mut [Advice]) {
    if !p.is_managed() {
        return;
    }
    for a in advice.iter_mut() {
        let mut keep = Vec::new();
        for s in std::mem::take(&mut a.settings) {
            let Setting::ServerVariable { name, value, .. } = &s else {
                keep.push(s);
                continue;
            };
            let m = one(p, f, name, value);
            a.finding.reason = format!("{} ({}: {})", a.finding.reason, p.label(), m.note);
            if m.emitted() {
                keep.push(s.clone());
            }
            a.managed.push(m);
        }
        a.settings = keep;
    }
}

fn one(p: Provider, f: &Facts, name: &str, value: &str) -> Managed {
    let (value_out, status, apply, note) = match access(p, name) {
        Access::Modifiable {
            dynamic,
            formula,
            note,
        } => {
            let apply = if dynamic { "immediate" } else { "pending-reboot" };
            let mut v = value.to_string();
            let mut n = match p {
                Provider::Rds | Provider::Aurora => format!("set in the DB parameter group, ApplyMethod {apply}"),
                Provider::Azure => format!("az mysql flexible-server parameter set{}", if dynamic { "" } else { ", then restart the server" }),
                Provider::Cloudsql => format!("a database flag{}", if dynamic { "" } else { " (Cloud SQL restarts the instance)" }),
                Provider::SelfManaged => String::new(),
            };
            if let (Some(def), Some(bytes)) = (formula, value.parse::<u64>().ok()) {
                if name == "innodb_buffer_pool_size" {
                    // The instance's memory: the host's when known, else
                    // the running size read back through the default
                    // formula (3/4 of DBInstanceClassMemory).
                    let (mem, how) = match f.host.memory_bytes {
                        Some(m) => (m, "the instance's memory"),
                        None => (
                            f.server
                                .as_ref()
                                .and_then(|s| s.var_u64("innodb_buffer_pool_size"))
                                .map_or(bytes, |b| b / 3 * 4),
                            "DBInstanceClassMemory taken as 4/3 of the running buffer pool (the default formula)",
                        ),
                    };
                    v = memory_formula(bytes, mem);
                    n = format!("{n}; the default is {def}, {v} gives {} with {how}", crate::check::facts::human_bytes(bytes));
                } else {
                    n = format!("{n}; the default is {def}");
                }
            }
            if let Some(x) = note {
                n = format!("{n}; {x}");
            }
            (Some(v), "emit", Some(apply.to_string()), n)
        }
        Access::Cluster(why) => (None, "cluster_parameter", None, format!("{name}: {why}")),
        Access::Fixed(why) => (None, "not_modifiable", None, format!("{name} cannot be changed: {why}")),
        Access::NotListed => (
            None,
            "not_listed",
            None,
            format!("{name} is not among the parameters its documentation lists as modifiable (docs/managed.md): reported, not emitted"),
        ),
    };
    Managed {
        provider: p,
        parameter: name.to_string(),
        recommended: value.to_string(),
        value: value_out,
        status: status.into(),
        apply,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::server;

    #[test]
    fn aurora_never_keeps_a_redo_setting() {
        let s = server("mysql", 8, 0, 32);
        let f = Facts {
            server: Some(s.clone()),
            ..Default::default()
        };
        let mk = || {
            vec![Advice::new(crate::check::rules::finding(
                "server.redo",
                crate::finding::Severity::Warning,
                crate::finding::Layer::Server,
                crate::finding::SubjectKind::ServerVariable,
                "innodb_redo_log_capacity",
                "100 MiB",
                "r",
            ))
            .set(Setting::var(
                &s,
                "innodb_redo_log_capacity",
                "2147483648",
                "r",
            ))]
        };
        let mut a = mk();
        adjust(Provider::Aurora, &f, &mut a);
        assert!(a[0].settings.is_empty());
        assert_eq!(a[0].managed[0].status, "not_modifiable");
        let mut r = mk();
        adjust(Provider::Rds, &f, &mut r);
        assert_eq!(r[0].settings.len(), 1);
        assert_eq!(r[0].managed[0].apply.as_deref(), Some("immediate"));
    }

    #[test]
    fn rds_buffer_pool_is_a_formula_of_the_instance_memory() {
        let s = crate::check::rules::testing::with_vars(
            server("mysql", 8, 0, 35),
            &[("innodb_buffer_pool_size", &(12u64 << 30).to_string())],
        );
        let mut f = Facts {
            server: Some(s),
            ..Default::default()
        };
        // Memory unknown: DBInstanceClassMemory read back through the
        // default 3/4 formula (16 GiB here).
        let m = one(
            Provider::Rds,
            &f,
            "innodb_buffer_pool_size",
            &(13u64 << 30).to_string(),
        );
        assert_eq!(m.value.as_deref(), Some("{DBInstanceClassMemory*81/100}"));
        assert_eq!(m.apply.as_deref(), Some("immediate"));
        assert!(m.note.contains("{DBInstanceClassMemory*3/4}"), "{}", m.note);
        // Memory known (a host tree): that is the denominator.
        f.host.memory_bytes = Some(32 << 30);
        let m = one(
            Provider::Aurora,
            &f,
            "innodb_buffer_pool_size",
            &(16u64 << 30).to_string(),
        );
        assert_eq!(m.value.as_deref(), Some("{DBInstanceClassMemory*1/2}"));
        assert_eq!(m.apply.as_deref(), Some("pending-reboot"));
        // Azure takes bytes as they are.
        let m = one(Provider::Azure, &f, "innodb_buffer_pool_size", "4294967296");
        assert_eq!(m.value.as_deref(), Some("4294967296"));
    }
}
