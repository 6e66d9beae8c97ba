//! max_connections against the highest number of connections the server
//! has seen (Max_used_connections is a high-water mark, not an average).

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.connections",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "max_connections vs Max_used_connections",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let (Some(max), Some(used)) = (
        s.var_u64("max_connections"),
        s.status("max_used_connections"),
    ) else {
        return Vec::new();
    };
    let refused = s.status("connection_errors_max_connections").unwrap_or(0);
    if used * 100 < max * 85 && refused == 0 {
        return Vec::new();
    }
    let want = (used * 3 / 2).max(max + 1).div_ceil(50) * 50;
    vec![server_advice(
        s,
        "server.connections",
        if refused > 0 { Severity::Warning } else { Severity::Notice },
        "max_connections",
        want,
        format!(
            "the server has had {used} of its {max} connections in use at once{}: the next peak is refused with \"Too many connections\". {want} leaves half again the peak (check the open-files limit grows with it).",
            if refused > 0 { format!(" and refused {refused} connections") } else { String::new() }
        ),
        Source::Observed,
        format!("Max_used_connections {used}, Connection_errors_max_connections {refused}"),
    )]
}
