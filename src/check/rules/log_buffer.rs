//! innodb_log_buffer_size against Innodb_log_waits in the sample: a wait
//! means a transaction found the log buffer full and had to wait for a
//! write.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::{human_bytes, Facts};
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.log_buffer",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_log_buffer_size vs Innodb_log_waits in the sample",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let (Some(w), Some(size)) = (&s.window, s.var_u64("innodb_log_buffer_size")) else {
        return Vec::new();
    };
    let waits = w.delta("innodb_log_waits").unwrap_or(0);
    if waits <= 0 {
        return Vec::new();
    }
    let want = (size * 2).min(256 << 20);
    if want <= size {
        return Vec::new();
    }
    vec![server_advice(
        s,
        "server.log_buffer",
        Severity::Notice,
        "innodb_log_buffer_size",
        want,
        format!("transactions waited {waits} times in {:.0} s for room in the {} log buffer: large transactions fill it before it is written. Doubling it to {} lets them commit without waiting.", w.seconds, human_bytes(size), human_bytes(want)),
        Source::Measured,
        format!("Innodb_log_waits +{waits} over {:.0} s", w.seconds),
    )]
}
