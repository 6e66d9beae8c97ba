//! InnoDB's read I/O threads against the reads waiting for them, averaged
//! over the per-second samples of the window.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.io_threads",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_read_io_threads vs pending reads",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let (Some(w), Some(threads)) = (&s.window, s.var_u64("innodb_read_io_threads")) else {
        return Vec::new();
    };
    let Some(pending) = w.pending_reads_avg else {
        return Vec::new();
    };
    if pending <= threads as f64 || threads >= 64 {
        return Vec::new();
    }
    let want = (threads * 2).min(64);
    vec![server_advice(
        s,
        "server.io_threads",
        Severity::Notice,
        "innodb_read_io_threads",
        want,
        format!("on average {pending:.1} reads were pending during the sample with {threads} read I/O threads to serve them: asynchronous reads (read-ahead) queue behind each other. {want} threads serve more in parallel."),
        Source::Measured,
        format!("Innodb_data_pending_reads averaged {pending:.1} over {:.0} one-second samples", w.seconds),
    )]
}
