//! Live progress on stderr, only when stderr is a terminal: scripts and CI get
//! quiet output, people get a moving line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A spinner-style status line (free text updated by the caller), hidden
/// unless stderr is a terminal.
pub fn status_line() -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, draw_target());
    pb.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
    pb
}

/// A byte-counting bar with throughput, hidden unless stderr is a terminal.
pub fn bytes_bar(total: u64) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total), draw_target());
    pb.set_style(
        ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
        )
        .expect("static template"),
    );
    pb
}

fn draw_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr_with_hz(4)
    } else {
        ProgressDrawTarget::hidden()
    }
}
