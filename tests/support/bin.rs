//! The innotune binary as a command.

use super::proc::{reset_signals, RUN_LIMIT};
use std::path::Path;
use std::process::Command;

/// The binary under test.
pub const INNOTUNE: &str = env!("CARGO_BIN_EXE_innotune");

/// The binary the command builders run: [`INNOTUNE`], or the one named by
/// `INNOTUNE_TEST_BIN` (`.ci/package` runs the CLI tests against the
/// glibc-2.17 fleet binary this way).
pub fn under_test() -> String {
    std::env::var("INNOTUNE_TEST_BIN").unwrap_or_else(|_| INNOTUNE.to_string())
}

/// innotune as a `std::process::Command` (to spawn, signal and wait on
/// with [`super::spawn`]), with default signal handling.
pub fn innotune_sys() -> Command {
    super::proc::sys(under_test())
}

/// innotune as an `assert_cmd::Command` (`.output()`, `.assert()`), with
/// default signal handling and killed after [`RUN_LIMIT`] (it then
/// reports having died of SIGKILL).
pub fn innotune() -> assert_cmd::Command {
    let mut std = Command::new(under_test());
    reset_signals(&mut std);
    let mut c = assert_cmd::Command::from_std(std);
    c.timeout(RUN_LIMIT);
    c
}

/// [`innotune`] with its own state directory (journal, lock), so a test
/// never touches /var/lib/innotune or another test's journal.
pub fn innotune_in(state: &Path) -> assert_cmd::Command {
    let mut c = innotune();
    c.env("INNOTUNE_STATE_DIR", state);
    c
}

/// `innotune --format json restore` with `state`'s journal: it must exit 0;
/// its document comes back.
pub fn restore(state: &Path) -> serde_json::Value {
    let out = innotune_in(state)
        .args(["--format", "json", "restore"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
