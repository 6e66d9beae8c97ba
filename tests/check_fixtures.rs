//! `innotune check` and `apply` replayed on fixture hosts
//! (tests/fixtures/hosts/check-*, made by make-check-fixtures.py): every
//! planted problem found with its value, nothing on the clean host, the
//! same advice twice, and apply → check → restore on a copy of a tree.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// (exit code, `result` of the JSON document).
fn check(root: &Path, state: &Path, extra: &[&str]) -> (i32, Value) {
    let out = support::innotune_in(state)
        .arg("--root")
        .arg(root)
        .args(["check", "/var/lib/mysql", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(v["schema"], "check/2");
    (out.status.code().unwrap(), v["result"].clone())
}

/// (id, subject, observed, recommended) of every finding.
fn findings(r: &Value) -> Vec<(String, String, String, String)> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["subject"]["name"].as_str().unwrap().to_string(),
                f["observed"].as_str().unwrap().to_string(),
                f["recommended"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn t(a: &str, b: &str, c: &str, d: &str) -> (String, String, String, String) {
    (a.into(), b.into(), c.into(), d.into())
}

#[test]
fn clean_host_has_no_findings() {
    let st = tempfile::tempdir().unwrap();
    let (code, r) = check(&support::fixture_host("check-clean"), st.path(), &[]);
    assert_eq!(findings(&r), vec![], "{r:#}");
    assert_eq!(code, 0);
    // The server rules say why they did not run.
    assert!(r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["id"] == "server.redo" && x["status"] == "skipped"));
}

#[test]
fn planted_problems_are_found_with_their_values() {
    let st = tempfile::tempdir().unwrap();
    let (code, r) = check(&support::fixture_host("check-planted"), st.path(), &[]);
    let mut got = findings(&r);
    got.sort();
    let mut want = vec![
        t("storage.scheduler", "nvme1n1", "bfq", "none"),
        t("filesystem.atime", "/var/lib/mysql", "relatime", "noatime"),
        t("os.limits.nofile", "mysqld (pid 3141)", "1024", "32768"),
        t(
            "storage.scheduler.cmdline",
            "elevator",
            "elevator=deadline",
            "(remove elevator=)",
        ),
        t(
            "os.thp",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always",
            "never",
        ),
        t("os.swappiness", "vm.swappiness", "60", "1"),
    ];
    want.sort();
    assert_eq!(got, want, "{r:#}");
    assert_eq!(code, 1, "warnings exit 1");
    // The RAID member's finding says where it is, and carries its fix.
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "storage.scheduler")
        .unwrap();
    assert!(f["reason"].as_str().unwrap().contains("member of md0"));
    assert_eq!(
        f["settings"][0],
        serde_json::json!({"kind": "queue", "device": "nvme1n1", "attr": "scheduler", "value": "none"})
    );
    assert_eq!(f["change"]["kind"], "sysfs");
    // Worst first.
    let sev: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    let rank = |s: &str| {
        ["info", "notice", "warning", "critical"]
            .iter()
            .position(|x| *x == s)
            .unwrap()
    };
    assert!(sev.windows(2).all(|w| rank(w[0]) >= rank(w[1])), "{sev:?}");
}

#[test]
fn an_unpersisted_scheduler_is_found() {
    let st = tempfile::tempdir().unwrap();
    let (code, r) = check(&support::fixture_host("check-unpersisted"), st.path(), &[]);
    assert_eq!(
        findings(&r),
        vec![t(
            "storage.scheduler.persist",
            "sda",
            "none (at boot: mq-deadline)",
            "none"
        )]
    );
    assert_eq!(code, 0, "a notice alone exits 0");
}

#[test]
fn same_state_same_advice_and_only_filters_layers() {
    let st = tempfile::tempdir().unwrap();
    let (_, a) = check(&support::fixture_host("check-planted"), st.path(), &[]);
    let (_, b) = check(&support::fixture_host("check-planted"), st.path(), &[]);
    assert_eq!(a["findings"], b["findings"]);
    let (_, s) = check(
        &support::fixture_host("check-planted"),
        st.path(),
        &["--only", "storage"],
    );
    let ids: Vec<String> = findings(&s).into_iter().map(|f| f.0).collect();
    assert_eq!(ids, vec!["storage.scheduler", "storage.scheduler.cmdline"]);
}

#[test]
fn markdown_groups_findings_by_layer() {
    let st = tempfile::tempdir().unwrap();
    let out = support::innotune_in(st.path())
        .arg("--root")
        .arg(support::fixture_host("check-planted"))
        .args(["check", "/var/lib/mysql", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("# innotune check /var/lib/mysql"), "{md}");
    for h in ["## Storage (2)", "## OS (3)", "## Filesystem (1)"] {
        assert!(md.contains(h), "{h} missing:\n{md}");
    }
}

#[test]
fn emit_writes_every_persistent_form() {
    let st = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (_, r) = check(
        &support::fixture_host("check-planted"),
        st.path(),
        &["--emit", out.path().to_str().unwrap()],
    );
    let read = |p: &str| std::fs::read_to_string(out.path().join(p)).unwrap();
    let udev = read("etc/udev/rules.d/99-innotune.rules");
    assert!(udev.contains(r#"ENV{DEVTYPE}=="disk", ATTR{queue/zoned}=="none", KERNEL!="dm-*", ATTRS{model}=="INTEL SSDPE2KX010T8", ATTR{queue/rotational}=="0", ATTR{queue/scheduler}="none""#), "{udev}");
    let unit = read("etc/systemd/system/innotune-queues.service");
    assert!(unit.contains("echo none > $$d/queue/scheduler"), "{unit}");
    assert!(read("etc/sysctl.d/99-innotune.conf").contains("\nvm.swappiness = 1\n"));
    assert!(read("etc/tmpfiles.d/innotune-thp.conf")
        .contains("w /sys/kernel/mm/transparent_hugepage/enabled - - - - never"));
    assert!(
        read("etc/systemd/system/mysql.service.d/innotune-limits.conf")
            .contains("[Service]\n# [limit:nofile]")
    );
    assert!(
        read("etc/systemd/system/mysql.service.d/innotune-limits.conf")
            .contains("\nLimitNOFILE=32768\n")
    );
    assert!(
        read("fstab.innotune").contains("UUID=51c0ffee /var/lib/mysql xfs defaults,noatime 0 2")
    );
    // Each file the real tool can check was checked, and passed.
    let emitted = r["emitted"].as_array().unwrap();
    let has = |t: &str| which(t);
    for e in emitted {
        let kind = e["kind"].as_str().unwrap();
        let wants_tool = match kind {
            "systemd_unit" | "systemd_dropin" => has("systemd-analyze"),
            "tmpfiles" => has("systemd-tmpfiles"),
            "sysctl" => true,
            _ => false,
        };
        if wants_tool {
            assert_eq!(e["validation"]["ok"], true, "{e:#}");
        }
    }
    assert_eq!(emitted.len(), 6, "{emitted:#?}");
}

fn which(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn copy_tree(from: &Path, to: &Path) {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn apply_then_check_then_restore_on_a_tree() {
    let st = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("host");
    copy_tree(&support::fixture_host("check-planted"), &root);
    let apply = |extra: &[&str]| {
        support::innotune_in(st.path())
            .arg("--root")
            .arg(&root)
            .args(["apply", "/var/lib/mysql", "--format", "json"])
            .args(extra)
            .output()
            .unwrap()
    };
    // The plan alone changes nothing and exits 1.
    let plan = apply(&[]);
    assert_eq!(plan.status.code(), Some(1));
    let p: Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(p["schema"], "apply/2");
    assert_eq!(p["result"]["mode"], "plan");
    assert_eq!(p["result"]["pending"], 8, "{:#}", p["result"]);
    assert!(!root.join("etc/sysctl.d/99-innotune.conf").exists());
    let pending = apply(&["--check"]);
    assert_eq!(pending.status.code(), Some(1));

    let done = apply(&["--yes"]);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let d: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(d["result"]["applied"].as_array().unwrap().len(), 8);
    let rd = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    assert_eq!(rd("sys/block/nvme1n1/queue/scheduler"), "none");
    assert_eq!(rd("proc/sys/vm/swappiness"), "1");
    assert_eq!(rd("sys/kernel/mm/transparent_hugepage/enabled"), "never");
    assert!(rd("etc/udev/rules.d/99-innotune.rules").contains("INTEL SSDPE2KX010T8"));
    assert!(st.path().join("applied.json").exists());
    assert!(
        !st.path().join("journal.json").exists(),
        "the run's own journal is gone"
    );

    let c = apply(&["--check"]);
    assert_eq!(c.status.code(), Some(0), "nothing pending after apply");
    let before = rd("etc/sysctl.d/99-innotune.conf");
    let again = apply(&["--yes"]);
    assert_eq!(again.status.code(), Some(0));
    let a: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        a["result"]["applied"].as_array().unwrap().len(),
        0,
        "a second apply changes nothing"
    );
    assert_eq!(rd("etc/sysctl.d/99-innotune.conf"), before);
    // Check now: what was applied holds; the rest is what innotune leaves to people.
    let (_, r) = check(&root, st.path(), &[]);
    let ids: Vec<String> = findings(&r).into_iter().map(|f| f.0).collect();
    assert_eq!(
        ids,
        vec![
            "storage.scheduler.cmdline",
            "filesystem.atime",
            "os.limits.nofile"
        ]
    );
    assert_eq!(
        r["findings"][2]["severity"], "notice",
        "nofile waits for a restart"
    );
    assert!(r["findings"][2]["reason"]
        .as_str()
        .unwrap()
        .contains("innotune-limits.conf"));

    // Issue 46: the dry run listed /sys paths without the root apply wrote
    // under; every path it lists is the one restore would write.
    let dry = support::innotune_in(st.path())
        .args(["restore", "--dry-run"])
        .output()
        .unwrap();
    let dry = String::from_utf8_lossy(&dry.stdout);
    let sched = root.join("sys/block/nvme1n1/queue/scheduler");
    assert!(dry.contains(&*sched.to_string_lossy()), "{dry}");
    assert!(
        !dry.lines().any(|l| l.contains(" /sys/")),
        "a /sys path without the root: {dry}"
    );
    let out = support::innotune_in(st.path())
        .args(["restore", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(rd("sys/block/nvme1n1/queue/scheduler"), "bfq");
    assert_eq!(rd("proc/sys/vm/swappiness"), "60");
    assert_eq!(rd("sys/kernel/mm/transparent_hugepage/enabled"), "always");
    for f in [
        "etc/udev/rules.d/99-innotune.rules",
        "etc/sysctl.d/99-innotune.conf",
        "etc/tmpfiles.d/innotune-thp.conf",
        "etc/systemd/system/mysql.service.d",
    ] {
        assert!(!root.join(f).exists(), "{f} left behind");
    }
    assert!(!st.path().join("applied.json").exists());
    // Everything /etc held before is as it was.
    let diff = std::process::Command::new("diff")
        .args(["-r", "--no-dereference"])
        .arg(support::fixture_host("check-planted").join("etc"))
        .arg(root.join("etc"))
        .output()
        .unwrap();
    assert!(
        diff.status.success(),
        "{}",
        String::from_utf8_lossy(&diff.stdout)
    );
}

#[test]
fn committed_trees_are_what_the_generator_makes() {
    let t = tempfile::tempdir().unwrap();
    let dir = support::fixture_host("");
    let st = std::process::Command::new("python3")
        .arg(dir.join("make-check-fixtures.py"))
        .arg(t.path())
        .status()
        .expect("python3 runs make-check-fixtures.py");
    assert!(st.success());
    for name in [
        "check-clean",
        "check-planted",
        "check-unpersisted",
        "client-planted",
        "client-irq",
    ] {
        let out = std::process::Command::new("diff")
            .args(["-r", "--no-dereference"])
            .arg(dir.join(name))
            .arg(t.path().join(name))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name} differs from make-check-fixtures.py's output (rerun it and commit):\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn a_significant_sweep_result_overrides_the_class_rule() {
    let st = tempfile::tempdir().unwrap();
    let f = st.path().join("sweep.json");
    // The shape `innotune sweep --format json` writes (docs/json-sweep.md).
    std::fs::write(
        &f,
        serde_json::json!({
            "schema": "sweep/2",
            "tool": "innotune",
            "result": {
                "devices": [{"name": "sda", "scheduler": "none"}],
                "recommendation": {"scheduler": "mq-deadline", "candidate": "mq-deadline",
                                   "reason": "mq-deadline better on mixed", "pending_change": true},
                "verdicts": [{"candidate": "mq-deadline", "workload": "mixed", "verdict": "better"}]
            }
        })
        .to_string(),
    )
    .unwrap();
    let (code, r) = check(
        &support::fixture_host("check-unpersisted"),
        st.path(),
        &["--results", f.to_str().unwrap()],
    );
    assert_eq!(
        findings(&r),
        vec![t(
            "storage.scheduler.measured",
            "sda",
            "none",
            "mq-deadline"
        )]
    );
    assert_eq!(r["findings"][0]["evidence"]["source"], "measured");
    assert_eq!(code, 1);
    // A sweep of devices not under the path is set aside, with a note.
    let (_, r) = check(
        &support::fixture_host("check-clean"),
        st.path(),
        &["--results", f.to_str().unwrap()],
    );
    assert_eq!(findings(&r), vec![]);
    assert!(
        r["notes"].to_string().contains("ignored"),
        "{:#}",
        r["notes"]
    );
}

#[test]
fn without_udev_a_systemd_unit_is_installed_and_enabled() {
    let st = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("host");
    copy_tree(&support::fixture_host("check-planted"), &root);
    std::fs::remove_dir_all(root.join("etc/udev")).unwrap();
    std::fs::remove_dir_all(root.join("lib/udev")).unwrap();
    let run = |args: &[&str]| {
        support::innotune_in(st.path())
            .arg("--root")
            .arg(&root)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["apply", "/var/lib/mysql", "--yes", "--only", "storage"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let unit = root.join("etc/systemd/system/innotune-queues.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains("INTEL SSDPE2KX010T8") && text.contains("echo none > $$d/queue/scheduler"),
        "{text}"
    );
    let link = root.join("etc/systemd/system/multi-user.target.wants/innotune-queues.service");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        PathBuf::from("/etc/systemd/system/innotune-queues.service")
    );
    assert_eq!(
        run(&["apply", "/var/lib/mysql", "--check", "--only", "storage"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(run(&["restore"]).status.code(), Some(0));
    assert!(!unit.exists());
    assert!(!root
        .join("etc/systemd/system/multi-user.target.wants")
        .exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sys/block/nvme1n1/queue/scheduler")).unwrap(),
        "bfq"
    );
}

/// Issue 39, item 1, for `check --emit DIR`: a FIFO, a device-like node or
/// a symbolic link where an emitted file goes is refused in one line (exit
/// 2) and left as it was; the files are written on a clean directory.
#[test]
fn emit_never_replaces_anything_but_a_regular_file() {
    use std::os::unix::fs::FileTypeExt;
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let emit = |dir: &Path| {
        support::innotune_in(state.path())
            .arg("--root")
            .arg(support::fixture_host("check-planted"))
            .args(["check", "/var/lib/mysql", "--emit"])
            .arg(dir)
            .output()
            .unwrap()
    };
    let clean = work.path().join("clean");
    assert_eq!(emit(&clean).status.code(), Some(1));
    let sysctl = Path::new("etc/sysctl.d/99-innotune.conf");
    assert!(clean.join(sysctl).is_file());

    let planted = work.path().join("planted");
    let fifo = planted.join(sysctl);
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let o = emit(&planted);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("a FIFO, not a regular file"), "{err}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    std::fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &fifo).unwrap();
    let o = emit(&planted);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a symbolic link"));
    assert_eq!(
        std::fs::read_link(&fifo).unwrap(),
        Path::new("/etc/hostname")
    );
}

/// `chattr -i` on drop, so a failed test leaves no immutable directory.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// Issue 39: `--emit DIR` followed a symbolic link at `DIR/etc` (or any
/// directory below DIR) and wrote through it; an immutable DIR failed with
/// a bare "Operation not permitted (os error 1)". Now a link anywhere
/// below DIR is refused in one line naming it (the link's target stays
/// empty), and every error names the path and a fix.
#[test]
fn emit_never_writes_through_a_symlinked_directory_and_errors_name_the_path() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let emit = |dir: &Path| {
        let o = support::innotune_in(state.path())
            .arg("--root")
            .arg(support::fixture_host("check-planted"))
            .args(["check", "/var/lib/mysql", "--emit"])
            .arg(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("fix:") && !err.contains("/proc/self/fd"),
            "{err}"
        );
        err
    };
    for (i, at) in ["etc", "etc/sysctl.d"].into_iter().enumerate() {
        let dir = work.path().join(format!("emit{i}"));
        let link = dir.join(at);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = emit(&dir);
        assert!(
            err.contains(&format!("{} is a symbolic link", link.display())),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0, "{at}");
        assert_eq!(std::fs::read_link(&link).unwrap(), victim);
    }
    // An immutable --emit directory (chattr +i, where this filesystem and
    // user allow it; otherwise a file where a directory goes).
    let imm = work.path().join("immutable");
    std::fs::create_dir(&imm).unwrap();
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&imm)
        .status()
        .is_ok_and(|s| s.success());
    if chattr {
        let _undo = Immutable(imm.clone());
        let err = emit(&imm);
        assert!(
            err.contains(&format!("cannot create --emit {}/etc", imm.display()))
                && err.contains("Operation not permitted")
                && err.contains("chattr -i"),
            "{err}"
        );
    } else {
        std::fs::write(imm.join("etc"), "").unwrap();
        let err = emit(&imm);
        assert!(
            err.contains(&format!("{}/etc is not a directory", imm.display())),
            "{err}"
        );
    }
}

/// Issue 39: `check --sample 400d` was accepted where every other duration
/// stops at 366 days (check had a parser of its own); `nan` is named as
/// not a number.
#[test]
fn sample_durations_share_the_one_parser_and_its_limit() {
    let state = tempfile::tempdir().unwrap();
    for (v, want) in [
        ("400d", "out of range (at most 366 days)"),
        ("nan", "is not a number"),
    ] {
        let o = support::innotune_in(state.path())
            .arg("--root")
            .arg(support::fixture_host("check-planted"))
            .args(["check", "/var/lib/mysql", "--sample", v])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{v}: {err}");
        assert!(err.contains("--sample") && err.contains(want), "{v}: {err}");
    }
    let (code, _) = check(
        &support::fixture_host("check-planted"),
        state.path(),
        &["--sample", "0"],
    );
    assert_eq!(code, 1);
}

/// `check --emit`: every emitted file says which tool checked it or why
/// none did (issue 46: the udev rule said "checked by —" with udevadm
/// installed, since udevadm before 254 cannot check rules offline).
#[test]
fn emitted_files_say_what_checked_them_or_why_nothing_did() {
    let tmp = tempfile::tempdir().unwrap();
    let out = support::innotune_in(&tmp.path().join("state"))
        .env("NO_COLOR", "1")
        .arg("--root")
        .arg(support::fixture_host("check-planted"))
        .args(["check", "/var/lib/mysql", "--no-server", "--emit"])
        .arg(tmp.path().join("emit"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Emitted files"))
        .skip(2)
        .take_while(|l| l.starts_with(' '))
        .collect();
    assert!(
        rows.iter().any(|r| r.contains("99-innotune.rules")),
        "the udev rule is emitted: {text}"
    );
    for r in rows {
        assert!(
            r.contains(": ok") || r.contains("not checked: "),
            "says what checked it or why nothing did: {r}"
        );
    }
}
