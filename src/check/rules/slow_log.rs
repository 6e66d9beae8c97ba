//! The slow query log: without it nobody knows which statements to tune.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.slow_log",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "the slow query log on",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    if s.var_on("slow_query_log") != Some(false) {
        return Vec::new();
    }
    vec![server_advice(s, "server.slow_log", Severity::Notice, "slow_query_log", "ON",
        format!("the slow query log is off, so the statements that cost the most are invisible (pt-query-digest and MySQLTuner need it). With long_query_time {} it records only statements slower than that; the cost is one write per slow statement.", s.var("long_query_time").unwrap_or("10")),
        Source::RuleOfThumb, format!("slow_query_log OFF, slow_query_log_file {}", s.var("slow_query_log_file").unwrap_or("?")))]
}
