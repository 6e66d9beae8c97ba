//! The query cache: one global mutex every query takes, invalidated by
//! every write to a table it caches; removed in MySQL 8.0, off by default
//! in MariaDB since 10.1.7.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::{human_bytes, Facts};
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.query_cache",
    layer: crate::finding::Layer::Server,
    // MySQL 8.0 removed it; only 5.7 and MariaDB have the variables.
    scope: Scope::Server(Versions {
        mysql: &[(5, 7)],
        mariadb: &[10, 11],
    }),
    about: "query cache off",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let ty = s
        .var("query_cache_type")
        .unwrap_or("OFF")
        .to_ascii_uppercase();
    let size = s.var_u64("query_cache_size").unwrap_or(0);
    let on = matches!(ty.as_str(), "ON" | "1" | "DEMAND" | "2") && size > 0;
    if !on {
        return Vec::new();
    }
    let hits = s
        .window
        .as_ref()
        .and_then(|w| {
            let h = w.delta("qcache_hits")?;
            let q = w.delta("questions").or_else(|| w.delta("com_select"))?;
            Some(format!(
                "; during the sample {h} hits for {q} statements, {} lowmem prunes",
                w.delta("qcache_lowmem_prunes").unwrap_or(0)
            ))
        })
        .unwrap_or_default();
    let reason = format!(
        "the query cache is on (query_cache_type {ty}, {}): every query takes its single global mutex, and every write to a table empties that table's entries, so under concurrent load it serialises the server. MySQL removed it in 8.0; MariaDB has it off by default. Turn it off and free its memory.",
        human_bytes(size)
    );
    let ev = format!("query_cache_type {ty}, query_cache_size {size}{hits}");
    vec![
        server_advice(
            s,
            "server.query_cache",
            Severity::Warning,
            "query_cache_type",
            "OFF",
            reason.clone(),
            Source::RuleOfThumb,
            ev.clone(),
        ),
        server_advice(
            s,
            "server.query_cache",
            Severity::Warning,
            "query_cache_size",
            0,
            reason,
            Source::RuleOfThumb,
            ev,
        ),
    ]
}
