//! `bench/lib.sh`, the set-up every bench script shares, really puts the
//! host back: a script that builds the whole scratch stack (work directory,
//! tmpfs, loop device on a non-default scheduler, ext4 mounted, hugetlb
//! pages reserved) and then dies (a failed command under `set -e`, SIGINT,
//! SIGTERM) leaves no mount, loop device, reservation or directory, and the
//! undo of one step failing does not skip the others. innotune's state
//! (journal, lock) goes inside the work directory, never /var/lib/innotune.
//!
//! Live (`INNOTUNE_LIVE_TESTS=1`, root): it mounts and attaches for real.

mod support;

use std::path::Path;
use std::process::Stdio;
use support::{spawn, sys, WAIT};

const LIB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/lib.sh");

/// The stack of a RAM-backed bench, then `ENDING`. Prints the work
/// directory, loop device and mount point on the first line, then READY.
fn script(ending: &str) -> String {
    format!(
        r#"set -euo pipefail
. '{LIB}'
bench_workdir lib-test
bench_hugepages $(( $(cat /proc/sys/vm/nr_hugepages) + 2 ))
bench_tmpfs "$WORK/ram" 300
truncate -s 256M "$WORK/ram/backing"
bench_loop "$WORK/ram/backing"
echo mq-deadline > "/sys/block/${{LOOP#/dev/}}/queue/scheduler"
bench_ext4 "$LOOP" "$WORK/mnt"
case "$INNOTUNE_STATE_DIR" in "$WORK"/*) ;; *) echo "state dir $INNOTUNE_STATE_DIR outside $WORK"; exit 9 ;; esac
echo "$WORK $LOOP $WORK/mnt"
echo READY
{ending}
"#
    )
}

struct Before {
    huge: String,
    mounts: String,
}

fn snapshot() -> Before {
    Before {
        huge: std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap(),
        mounts: std::fs::read_to_string("/proc/self/mounts").unwrap(),
    }
}

fn attached(loop_dev: &str) -> bool {
    support::sh("losetup", &["-n", "-O", "NAME", "-l"])
        .lines()
        .any(|l| l.trim() == loop_dev)
}

/// Runs the script to READY, lets it end its way, and checks the host.
/// The script starts with default signal handling and every wait on it
/// has a deadline: run from a background shell (SIGINT ignored), the INT
/// case used to wait forever on a script that ignored the signal.
fn dies_clean(ending: &str, signal: Option<libc::c_int>) {
    let before = snapshot();
    let mut child = spawn(
        sys("bash")
            .arg("-c")
            .arg(script(ending))
            // The script checks that lib.sh puts innotune's state in WORK.
            .env_remove("INNOTUNE_STATE_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    // Held open until the script has ended, so a `read` in ENDING blocks.
    let mut stdin = child.stdin.take();
    let lines = child.stdout_lines();
    let first = lines.next_within(WAIT).expect("the stack line");
    let ready = lines.next_within(WAIT).expect("READY");
    assert_eq!(ready, "READY");
    let parts: Vec<String> = first.split(' ').map(str::to_string).collect();
    let (work, loop_dev, mnt) = (&parts[0], &parts[1], &parts[2]);
    // While the script lives, the stack is really there.
    assert!(
        attached(loop_dev),
        "{loop_dev} attached while the script runs"
    );
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(mounts.contains(mnt.as_str()), "{mnt} mounted");
    // The cue to end: a signal, or a line for the `read` every ending
    // starts with. An ending that died at once raced this test's look at
    // the mount table with its own clean-up (seen once under load).
    match signal {
        Some(sig) => child.signal(sig),
        None => {
            use std::io::Write;
            let cue = stdin.as_mut().expect("the script's stdin");
            cue.write_all(b"\n").expect("writing the cue");
            cue.flush().expect("writing the cue");
        }
    }
    let out = child.output_within(WAIT);
    drop(stdin);
    assert!(!out.status.success(), "the script was meant to fail");
    assert!(!attached(loop_dev), "{loop_dev} left attached");
    let after = snapshot();
    assert_eq!(after.mounts, before.mounts, "a mount was left behind");
    assert_eq!(after.huge, before.huge, "vm.nr_hugepages not put back");
    assert!(!Path::new(work).exists(), "{work} left behind");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("could not unmount"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One test, the four endings in turn: each reserves hugetlb pages and
/// compares the whole mount table, which a concurrent case would disturb.
#[test]
fn every_way_of_dying_undoes_the_whole_stack() {
    if !support::live() {
        return;
    }
    // Every ending first waits on its stdin, which the test holds open
    // until the script has ended: no sleep; the test looks at the stack
    // after READY, then gives the cue (a line, or a signal).
    // A failed command under `set -e`.
    dies_clean("read -r _\nfalse", None);
    // Signals, while the script waits.
    dies_clean("read -r _", Some(libc::SIGINT));
    dies_clean("read -r _", Some(libc::SIGTERM));
    // Undos registered last (so run first) that fail: the loop device,
    // mounts, pages and directory must still go.
    dies_clean(
        "read -r _\nbench_undo 'false'\nbench_undo 'umount /nonexistent'\nexit 3",
        None,
    );
}
