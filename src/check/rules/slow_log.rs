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
        format!("the slow query log is off, so the statements that cost the most are invisible (pt-query-digest and MySQLTuner need it). {}; the cost is one write per logged statement.", threshold(s.var("long_query_time"))),
        Source::RuleOfThumb, format!("slow_query_log OFF, slow_query_log_file {}", s.var("slow_query_log_file").unwrap_or("?")))]
}

/// What the slow log would record at `long_query_time` (seconds, as the
/// server shows it: `10.000000`), said for people.
fn threshold(v: Option<&str>) -> String {
    let raw = v.unwrap_or("10");
    match raw.trim().parse::<f64>() {
        Ok(s) if s <= 0.0 => "With long_query_time 0 it records every statement".to_string(),
        Ok(s) => format!(
            "With long_query_time {} it records only statements slower than that",
            crate::units::fmt_secs(s)
        ),
        Err(_) => format!("With long_query_time {raw} it records only statements slower than that"),
    }
}

#[cfg(test)]
mod tests {
    /// Issue 46: "long_query_time 0.000000 … records only statements
    /// slower than that".
    #[test]
    fn threshold_in_words() {
        assert_eq!(
            super::threshold(Some("0.000000")),
            "With long_query_time 0 it records every statement"
        );
        assert_eq!(
            super::threshold(Some("10.000000")),
            "With long_query_time 10 s it records only statements slower than that"
        );
        assert_eq!(
            super::threshold(Some("0.500000")),
            "With long_query_time 500 ms it records only statements slower than that"
        );
    }
}
