//! `innotune apply` on a real loop device the test creates (file on the
//! real disk → losetup --direct-io=on → mkfs.ext4 → mount), with bfq set on
//! it: apply --yes → apply --check exits 0 → restore returns the scheduler
//! and removes every installed file; the same after a SIGKILL mid-apply.
//!
//! Files install into a root the test controls: a directory whose sys,
//! proc and dev are symlinks to the real ones (so the loop device is real)
//! and whose etc is the test's own (so nothing lands in this machine's
//! /etc). The emitted udev rule is run for real with `udevadm test` on the
//! loop device, in a private mount namespace over /etc/udev/rules.d.
//! Needs root, losetup, mkfs.ext4, mount, udevadm, unshare.

mod support;
use support::Start as _;
use support::{Lab, LabOpts};

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command as Sys, Stdio};

/// A 64 MiB ext4 loop device mounted with relatime, scheduler bfq.
fn loop_mount() -> Lab {
    Lab::new(LabOpts {
        tag: "apply",
        scheduler: "bfq",
        mount_opts: "relatime",
        ..LabOpts::default()
    })
}

/// A root whose sys/proc/dev are this machine's and whose etc is ours.
fn test_root(base: &Path) -> PathBuf {
    let root = base.join("root");
    for d in ["sys", "proc", "dev"] {
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(format!("/{d}"), root.join(d)).unwrap();
    }
    for d in [
        "etc/udev/rules.d",
        "etc/sysctl.d",
        "etc/tmpfiles.d",
        "etc/systemd/system",
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    root
}

fn apply(state: &Path, root: &Path, mnt: &Path, extra: &[&str]) -> std::process::Output {
    support::innotune()
        .env("INNOTUNE_STATE_DIR", state)
        .arg("--root")
        .arg(root)
        .args([
            "apply",
            "--format",
            "json",
            "--no-server",
            "--only",
            "storage,filesystem",
        ])
        .arg(mnt)
        .args(extra)
        .output()
        .unwrap()
}

fn restore(state: &Path) -> Value {
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state)
        .args(["restore", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn files_under(p: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for e in walk(p) {
        v.push(e.strip_prefix(p).unwrap().display().to_string());
    }
    v.sort();
    v
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            out.push(path.clone());
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(&path));
            }
        }
    }
    out
}

#[test]
fn apply_check_restore_on_a_loop_device() {
    if !support::live() {
        return;
    }
    let lm = loop_mount();
    let state = tempfile::tempdir().unwrap();
    let root = test_root(lm.dir.as_path());
    let etc_before = files_under(&root.join("etc"));

    let plan = apply(state.path(), &root, &lm.mnt, &[]);
    assert_eq!(
        plan.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    assert_eq!(lm.scheduler(), "bfq", "the plan changes nothing");

    let out = apply(state.path(), &root, &lm.mnt, &["--yes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let applied: Vec<&str> = r["result"]["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        applied,
        vec![
            lm.sched_path().to_str().unwrap(),
            "/etc/udev/rules.d/99-innotune.rules"
        ]
    );
    assert_eq!(lm.scheduler(), "none");
    let rule = std::fs::read_to_string(root.join("etc/udev/rules.d/99-innotune.rules")).unwrap();
    let backing = lm.dir.as_path().join("disk.img");
    assert!(
        rule.contains(&format!(
            "ATTR{{loop/backing_file}}==\"{}\"",
            backing.display()
        )),
        "{rule}"
    );

    let c = apply(state.path(), &root, &lm.mnt, &["--check"]);
    assert_eq!(
        c.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&c.stdout)
    );
    let again = apply(state.path(), &root, &lm.mnt, &["--yes"]);
    let a: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(a["result"]["applied"], serde_json::json!([]));

    let rr = restore(state.path());
    let outcomes: Vec<String> = rr["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, vec!["restored", "removed"], "{rr:#}");
    assert_eq!(lm.scheduler(), "bfq");
    assert_eq!(files_under(&root.join("etc")), etc_before);
    assert!(!state.path().join("applied.json").exists());
}

#[test]
fn sigkill_mid_apply_then_restore() {
    if !support::live() {
        return;
    }
    let lm = loop_mount();
    let state = tempfile::tempdir().unwrap();
    let root = test_root(lm.dir.as_path());
    let etc_before = files_under(&root.join("etc"));
    let mut child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .env("INNOTUNE_APPLY_PAUSE_AFTER", "2")
        .arg("--root")
        .arg(&root)
        .args([
            "apply",
            "--yes",
            "--no-server",
            "--only",
            "storage,filesystem",
        ])
        .arg(&lm.mnt)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .start();
    // Wait for the readiness line: both changes are journaled and made.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "apply ended before pausing"
        );
        if line.contains("paused after 2 change(s)") {
            break;
        }
    }
    assert_eq!(lm.scheduler(), "none");
    assert!(root.join("etc/udev/rules.d/99-innotune.rules").exists());
    child.kill().unwrap();
    child.wait_within(support::WAIT);
    // The crash left the run's journal, not an applied one.
    assert!(state.path().join("journal.json").exists());
    assert!(!state.path().join("applied.json").exists());
    restore(state.path());
    assert_eq!(lm.scheduler(), "bfq");
    assert_eq!(files_under(&root.join("etc")), etc_before);
    assert!(!state.path().join("journal.json").exists());
}

/// `tune --search`'s OS recommendation as apply runs it: `--set
/// DEV/queue/ATTR=V` (that disk under PATH; `queue/ATTR=V`: every one with
/// a scheduler) and `--set
/// vm.NAME=V` replace check's advice for those settings, are made true now
/// and persisted (the udev rule, sysctl.d in the test's etc), and restore
/// puts all of it back. Bad --set values are one line, nothing applied.
#[test]
fn apply_set_queue_attributes_and_sysctls_then_restore() {
    if !support::live() {
        return;
    }
    let lm = loop_mount();
    let state = tempfile::tempdir().unwrap();
    let root = test_root(lm.dir.as_path());
    let etc_before = files_under(&root.join("etc"));
    let ra = format!("/sys/block/{}/queue/read_ahead_kb", lm.loopdev);
    let bg = "/proc/sys/vm/dirty_background_ratio";
    let read = |p: &str| std::fs::read_to_string(p).unwrap().trim().to_string();
    let (ra0, bg0) = (read(&ra), read(bg));
    let ra1 = if ra0 == "64" { "32" } else { "64" };
    let bg1 = if bg0 == "7" { "8" } else { "7" };
    // The loop device by name (DEV/queue/ATTR, as tune --search writes
    // it): `queue/ATTR` alone would take the disk under its backing file
    // too.
    let vda_ra = read("/sys/block/vda/queue/read_ahead_kb");
    let sets = [
        "--set".to_string(),
        format!("{}/queue/scheduler=mq-deadline", lm.loopdev),
        "--set".into(),
        format!("{}/queue/read_ahead_kb={ra1}", lm.loopdev),
        "--set".into(),
        format!("vm.dirty_background_ratio={bg1}"),
    ];
    let mut args: Vec<&str> = sets.iter().map(String::as_str).collect();
    args.push("--yes");
    let out = apply(state.path(), &root, &lm.mnt, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The --set value, not check's own advice (none) for the scheduler.
    assert_eq!(lm.scheduler(), "mq-deadline");
    assert_eq!(read(&ra), ra1);
    assert_eq!(read(bg), bg1);
    assert_eq!(read("/sys/block/vda/queue/read_ahead_kb"), vda_ra);
    let rule = std::fs::read_to_string(root.join("etc/udev/rules.d/99-innotune.rules")).unwrap();
    assert!(
        rule.contains("ATTR{queue/scheduler}=\"mq-deadline\"")
            && rule.contains(&format!("ATTR{{queue/read_ahead_kb}}=\"{ra1}\"")),
        "{rule}"
    );
    let sysctl_d: String = walk(&root.join("etc/sysctl.d"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        sysctl_d.contains(&format!("vm.dirty_background_ratio = {bg1}")),
        "{sysctl_d}"
    );
    restore(state.path());
    assert_eq!(lm.scheduler(), "bfq");
    assert_eq!(read(&ra), ra0);
    assert_eq!(read(bg), bg0);
    assert_eq!(files_under(&root.join("etc")), etc_before);

    for (bad, says) in [
        ("queue/scheduler=cfq", "offers"),
        ("queue/nr_requests=many", "whole number"),
        ("queue/rotational=0", "not a queue attribute"),
        (
            "nosuch0/queue/scheduler=none",
            "not a disk with a scheduler",
        ),
        ("vm.overcommit_memory=1", "not a setting innotune sets"),
    ] {
        let out = apply(state.path(), &root, &lm.mnt, &["--set", bad, "--yes"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
        assert_eq!(lm.scheduler(), "bfq", "{bad} applied something");
    }
}

#[test]
fn emitted_udev_rule_sets_the_scheduler_under_udevadm_test() {
    if !support::live() {
        return;
    }
    let lm = loop_mount();
    let state = tempfile::tempdir().unwrap();
    let root = test_root(lm.dir.as_path());
    let emit = lm.dir.as_path().join("emit");
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state.path())
        .arg("--root")
        .arg(&root)
        .args([
            "check",
            "--format",
            "json",
            "--no-server",
            "--only",
            "storage",
            "--emit",
        ])
        .arg(&emit)
        .arg(&lm.mnt)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = emit.join("etc/udev/rules.d");
    assert!(rules.join("99-innotune.rules").exists());
    // udevadm test runs the rules for real (it writes ATTR{} values); in a
    // private mount namespace /etc/udev/rules.d is the emitted one and
    // /run a scratch tmpfs (udevadm writes its database there), so the
    // host keeps its own.
    let script = format!(
        "mount --bind {} /etc/udev/rules.d && mount -t tmpfs none /run && udevadm test --action=change /sys/block/{}",
        rules.display(),
        lm.name()
    );
    let t = Sys::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&t.stderr).to_string() + &String::from_utf8_lossy(&t.stdout);
    assert!(t.status.success(), "{log}");
    assert!(
        log.contains("99-innotune.rules") && log.contains("writing 'none'"),
        "the rule did not match the loop device:\n{log}"
    );
    assert_eq!(lm.scheduler(), "none");
}

#[test]
fn emitted_sysctl_file_is_read_by_sysctl_p() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let emit = work.path().join("emit");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/check-planted");
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state.path())
        .arg("--root")
        .arg(&fx)
        .args(["check", "/var/lib/mysql", "--emit"])
        .arg(&emit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let file = emit.join("etc/sysctl.d/99-innotune.conf");
    let text = std::fs::read_to_string(&file).unwrap();
    // sysctl -p writes for real: in a private mount namespace /proc/sys is
    // a scratch copy of the keys the file names, so this machine keeps its
    // values while sysctl parses and writes every line.
    let scratch = work.path().join("procsys");
    let mut keys = Vec::new();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
    {
        let (k, v) = l.split_once('=').unwrap();
        let rel = k.trim().replace('.', "/");
        let real = std::fs::read_to_string(format!("/proc/sys/{rel}")).unwrap();
        let f = scratch.join(&rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, real).unwrap();
        keys.push((f, v.trim().to_string()));
    }
    assert!(!keys.is_empty());
    let script = format!(
        "mount --bind {} /proc/sys && sysctl -p {}",
        scratch.display(),
        file.display()
    );
    let t = Sys::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    for (f, v) in keys {
        assert_eq!(
            std::fs::read_to_string(&f).unwrap().trim(),
            v,
            "{}",
            f.display()
        );
    }
}

/// Runs the rules in `rules` (a directory) for real with `udevadm test
/// --action=change` on `/sys/block/NAME`, in a private mount namespace
/// (the host's rules and /run stay its own); the log.
fn udevadm_test(rules: &Path, name: &str) -> String {
    let script = format!(
        "mount --bind {} /etc/udev/rules.d && mount -t tmpfs none /run && udevadm test --action=change /sys/block/{}",
        rules.display(),
        name
    );
    let t = Sys::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&t.stderr).to_string() + &String::from_utf8_lossy(&t.stdout);
    assert!(t.status.success(), "{log}");
    log
}

/// udev reads `*?[` in a match value as a glob and `|` as alternatives:
/// a rule written for a backing file `c*.img` also matched `c-decoy.img`,
/// and one for `a|b.img` matched a loop over `a`. Under `udevadm test` the
/// emitted rule now switches the tuned loop device and leaves each decoy
/// (a loop over the file the unescaped rule matched) as it was.
#[test]
fn a_udev_rule_for_a_backing_file_named_with_glob_characters_matches_only_it() {
    if !support::live() {
        return;
    }
    for (weird, decoy) in [("c*.img", "c-decoy.img"), ("a|b.img", "a")] {
        let dir = tempfile::Builder::new()
            .prefix("innotune-udevglob-")
            .tempdir_in(support::VAR_TMP)
            .unwrap();
        let d = dir.path();
        for f in [weird, decoy] {
            std::fs::File::create(d.join(f))
                .unwrap()
                .set_len(64 << 20)
                .unwrap();
        }
        let lo = support::Loop::attach(&d.join(weird), &[]);
        let decoy_lo = support::Loop::attach(&d.join(decoy), &[]);
        let mnt = lo.mount_ext4();
        lo.set_scheduler("bfq");
        decoy_lo.set_scheduler("bfq");
        let state = tempfile::tempdir().unwrap();
        let root = test_root(d);
        let emit = d.join("emit");
        let out = support::innotune()
            .env("INNOTUNE_STATE_DIR", state.path())
            .arg("--root")
            .arg(&root)
            .args([
                "check",
                "--format",
                "json",
                "--no-server",
                "--only",
                "storage",
                "--emit",
            ])
            .arg(&emit)
            .arg(&mnt.path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rules = emit.join("etc/udev/rules.d");
        let text = std::fs::read_to_string(rules.join("99-innotune.rules")).unwrap();
        let log = udevadm_test(&rules, &decoy_lo.name);
        assert_eq!(
            decoy_lo.scheduler(),
            "bfq",
            "the rule for {weird} matched the loop over {decoy}:\n{text}\n{log}"
        );
        let log = udevadm_test(&rules, &lo.name);
        assert!(log.contains("writing 'none'"), "{text}\n{log}");
        assert_eq!(lo.scheduler(), "none", "{text}");
        drop(mnt);
    }
}
