//! A test hook, inert unless set: `INNOTUNE_FAULT_AFTER_STEP=N` kills this
//! innotune process with SIGKILL right after the Nth durable step of a run
//! that changes the host, as a power cut or the OOM killer would.
//!
//! The steps, counted from 1 in the order they happen: every write of the
//! journal (the empty journal of [`super::Journal::begin`], each change
//! journaled before it is made, each change journaled again after it is
//! made), each change made (before it is journaled again), the journal
//! removed at the end, and `apply --yes`'s write of the applied journal.
//! tests/faults.rs runs `apply --yes` with N = 1, 2, … until a run
//! completes, then `innotune restore` after each, and checks that the host
//! is byte-for-byte what it was.
//!
//! Why it cannot be abused: it only ever signals this process (its own
//! pid, from `getpid`), never another; its value is only a count (a
//! positive integer; anything else leaves it inert); and what it does is
//! what `kill -9` on this process does, which the journal exists to
//! survive (`innotune restore` puts back what the run had changed).
//! Whoever can set root's environment has no need of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable.
pub const ENV: &str = "INNOTUNE_FAULT_AFTER_STEP";

static STEPS: AtomicU64 = AtomicU64::new(0);

/// The step to die after, if the hook is set.
fn target() -> Option<u64> {
    static TARGET: OnceLock<Option<u64>> = OnceLock::new();
    *TARGET.get_or_init(|| {
        std::env::var(ENV)
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
    })
}

/// A durable step (`what` names it for the test's log) is done: when it is
/// the one [`ENV`] names, say so on stderr and die of SIGKILL.
pub fn step(what: &str) {
    let Some(n) = target() else { return };
    let k = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
    if k == n {
        eprintln!("innotune: {ENV}={n}: killed after step {k}: {what}");
        use rustix::process::{getpid, kill_process, Signal};
        let _ = kill_process(getpid(), Signal::KILL);
        // SIGKILL cannot be caught or ignored; should the kill itself fail,
        // end as abruptly anyway.
        std::process::abort();
    }
}
