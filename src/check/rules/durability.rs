//! Durability settings, stated as the trade-off they are. innotune never
//! recommends a value other than 1 and never changes them itself: what a
//! business may lose on a crash is the operator's decision, so these
//! findings carry the exact statement to run and no automatic change
//! (the emitted drop-in has them as commented lines).

use super::{finding, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "server.durability",
    layer: Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_flush_log_at_trx_commit and sync_binlog as a durability trade-off",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(v) = s
        .var_u64("innodb_flush_log_at_trx_commit")
        .filter(|v| *v != 1)
    {
        let (sev, loss) = if v == 0 {
            (Severity::Warning, "the redo log is written and flushed about once a second, not at commit: a mysqld crash or power loss loses up to a second of transactions the clients saw committed")
        } else {
            (Severity::Notice, "the redo log is written at commit but flushed to disk about once a second: a power loss or OS crash (not a mysqld crash) loses up to a second of committed transactions")
        };
        out.push(Advice::new(
            finding("server.durability.flush_log_at_trx_commit", sev, Layer::Server, SubjectKind::ServerVariable, "innodb_flush_log_at_trx_commit", v.to_string(),
                format!("with innodb_flush_log_at_trx_commit={v}, {loss}. That buys commit throughput; if the loss is acceptable keep it, otherwise SET GLOBAL innodb_flush_log_at_trx_commit = 1 (innotune does not change durability for you)."))
                .recommend("1")
                .evidence(Source::Observed, "MySQL manual: innodb_flush_log_at_trx_commit; pt-variable-advisor rule (0 is worse than 2)")
                .reference("https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html#sysvar_innodb_flush_log_at_trx_commit"),
        ));
    }
    if s.var_on("log_bin") == Some(true) {
        if let Some(v) = s.var_u64("sync_binlog").filter(|v| *v != 1) {
            let what = if v == 0 {
                "the binary log is flushed whenever the OS decides".to_string()
            } else {
                format!("the binary log is flushed every {v} commit groups")
            };
            out.push(Advice::new(
                finding("server.durability.sync_binlog", if v == 0 { Severity::Warning } else { Severity::Notice }, Layer::Server, SubjectKind::ServerVariable, "sync_binlog", v.to_string(),
                    format!("with sync_binlog={v}, {what}: after a power loss the binary log can miss transactions InnoDB kept, and replicas or point-in-time recovery diverge from the primary. If that is acceptable keep it; otherwise SET GLOBAL sync_binlog = 1."))
                    .recommend("1")
                    .evidence(Source::Observed, "log_bin ON")
                    .reference("https://dev.mysql.com/doc/refman/8.0/en/replication-options-binary-log.html#sysvar_sync_binlog"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::*;

    #[test]
    fn zero_is_a_warning_without_a_change() {
        let s = with_vars(
            server("mariadb", 10, 11, 19),
            &[
                ("innodb_flush_log_at_trx_commit", "0"),
                ("log_bin", "OFF"),
                ("sync_binlog", "0"),
            ],
        );
        let a = run(&Facts {
            server: Some(s),
            ..Default::default()
        });
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.observed, "0");
        assert_eq!(a[0].finding.recommended.as_deref(), Some("1"));
        assert!(a[0].settings.is_empty());
    }
}
