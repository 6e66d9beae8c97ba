//! `innotune prove` on a loop device (its backing file on /dev/shm, so no
//! other disk is under it; `--device` names the loop device all the same),
//! direct I/O, ext4, mounted: the verdict words in the JSON, the device's
//! queue attributes exactly as before afterwards, and SIGINT mid-run. Needs
//! root, losetup, mkfs.ext4, mount.

mod support;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use support::Start as _;

const ATTRS: [&str; 5] = [
    "scheduler",
    "read_ahead_kb",
    "nr_requests",
    "rq_affinity",
    "nomerges",
];

fn attrs(name: &str) -> Vec<(String, String)> {
    ATTRS
        .iter()
        .map(|a| {
            let p = format!("/sys/block/{name}/queue/{a}");
            (a.to_string(), std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn words(v: &Value) -> Vec<String> {
    v["result"]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

fn prove(state: &std::path::Path, mnt: &std::path::Path, dev: &str, change: &str) -> Value {
    let out = support::innotune_in(state)
        .args([
            "prove",
            mnt.to_str().unwrap(),
            "--device",
            dev,
            "--change",
            change,
            "--workload",
            "page-read",
            "--size",
            "64m",
            "--rounds",
            "4",
            "--trial",
            "1s",
            "--warmup",
            "0",
            "--seed",
            "7",
            "--format",
            "json",
        ])
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

#[test]
fn prove_read_ahead_and_scheduler_on_a_loop_device_and_put_it_back() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = attrs(&lp.name);
    let ra: u32 = before[1].1.trim().parse().unwrap();
    let v = prove(
        state.path(),
        &mnt.path,
        &lp.name,
        &format!("read_ahead_kb={}", ra * 4 + 4),
    );
    assert_eq!(v["schema"], "prove/2", "{v:#}");
    let r = &v["result"];
    assert_eq!(r["rounds_run"], 4);
    assert_eq!(r["arms"].as_array().unwrap().len(), 2);
    assert_eq!(r["trials"].as_array().unwrap().len(), 8);
    let ok = ["faster", "slower", "no_difference"];
    assert!(words(&v).iter().all(|w| ok.contains(&w.as_str())), "{r:#}");
    assert_eq!(attrs(&lp.name), before, "the loop device is put back");
    // A scheduler change: the loop starts on none.
    let v = prove(state.path(), &mnt.path, &lp.name, "scheduler=mq-deadline");
    assert!(words(&v).iter().all(|w| ok.contains(&w.as_str())), "{v:#}");
    let switched = v["result"]["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["candidate"] == "scheduler=mq-deadline")
        .count();
    assert_eq!(switched, 4);
    assert_eq!(
        attrs(&lp.name),
        before,
        "scheduler and nr_requests put back"
    );
    drop(mnt);
}

/// prove of a read-ahead change and mq-deadline on the loop device under
/// `mnt`, with 60 s trials (a signal comes long before the first ends).
fn prove_loop(state: &Path, mnt: &Path, dev: &str, read_ahead_kb: u32) -> std::process::Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state)
        .args(["prove", mnt.to_str().unwrap(), "--device", dev])
        .args(["--change", &format!("read_ahead_kb={read_ahead_kb}")])
        .args(["--change", "scheduler=mq-deadline"])
        .args(["--workload", "page-read", "--size", "64m"])
        .args(["--trial", "60s", "--warmup", "0"]);
    c
}

/// Once the journal in `state` remembers the loop device's nr_requests
/// (before its first scheduler switch; the journal's header alone names
/// the device too, in the command line), or an attribute has moved.
fn wait_for_a_switch(state: &Path, dev: &str, before: &[(String, String)]) {
    let needle = format!("/sys/block/{dev}/queue/nr_requests");
    let journal_has_switch = || {
        std::fs::read_dir(state)
            .map(|d| {
                d.flatten()
                    .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|s| s.contains(&needle)))
            })
            .unwrap_or(false)
    };
    support::wait_for(
        "prove to switch the loop device",
        Duration::from_secs(120),
        || journal_has_switch() || attrs(dev) != before,
    );
}

/// prove's work directories on `mnt`.
fn workdirs(mnt: &Path) -> usize {
    std::fs::read_dir(mnt)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".innotune-prove")
        })
        .count()
}

#[test]
fn sigint_mid_prove_leaves_nothing_changed_and_exits_130() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = attrs(&lp.name);
    let child = prove_loop(state.path(), &mnt.path, &lp.name, 4)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .start();
    wait_for_a_switch(state.path(), &lp.name, &before);
    child.interrupt();
    assert_eq!(attrs(&lp.name), before, "nothing left changed");
    assert_eq!(workdirs(&mnt.path), 0, "work directory left behind");
    drop(mnt);
}

/// SIGKILL gives prove no chance to put anything back: the journal must.
/// Killed once the journal records a switch of the loop device, then
/// `innotune restore` with the same state directory: the loop's queue
/// attributes exactly as before and no work directory left on the mount.
#[test]
fn sigkill_mid_prove_then_restore_leaves_nothing_changed() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = attrs(&lp.name);
    let ra: u32 = before[1].1.trim().parse().unwrap();
    let child = prove_loop(state.path(), &mnt.path, &lp.name, ra * 4 + 4)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .start();
    wait_for_a_switch(state.path(), &lp.name, &before);
    child.kill_now();
    assert_eq!(
        workdirs(&mnt.path),
        1,
        "the killed run left its work directory"
    );
    support::restore(state.path());
    assert_eq!(attrs(&lp.name), before, "restore put the loop device back");
    assert_eq!(workdirs(&mnt.path), 0, "restore removed the work directory");
    drop(mnt);
}

/// A sysctl arm: vm.dirty_expire_centisecs one centisecond above its value
/// (harmless: dirty pages written back 10 ms later), switched between
/// rounds through the journal and put back by prove itself on exit (and by
/// its guard on an error or a signal, so no path of this test leaves it).
#[test]
fn prove_a_sysctl_arm_and_put_it_back() {
    if !support::live() {
        return;
    }
    const SYSCTL: &str = "/proc/sys/vm/dirty_expire_centisecs";
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = std::fs::read_to_string(SYSCTL).unwrap();
    let cur: u64 = before.trim().parse().unwrap();
    let v = prove(
        state.path(),
        &mnt.path,
        &lp.name,
        &format!("vm.dirty_expire_centisecs={}", cur + 1),
    );
    let r = &v["result"];
    assert_eq!(r["changes"][0]["kind"], "sysctl", "{r:#}");
    let switched = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["candidate"] == format!("vm.dirty_expire_centisecs={}", cur + 1))
        .count();
    assert_eq!(switched, 4, "{r:#}");
    let ok = ["faster", "slower", "no_difference"];
    assert!(words(&v).iter().all(|w| ok.contains(&w.as_str())), "{r:#}");
    assert_eq!(
        std::fs::read_to_string(SYSCTL).unwrap(),
        before,
        "the sysctl is put back"
    );
    drop(mnt);
}

/// An arm the kernel refuses (nr_requests above a loop device's queue depth
/// of 128 while its scheduler is `none`) fails before any file is laid out
/// or any round is timed: one line naming the arm and the fix, exit 2, the
/// device as it was and no work directory left.
#[test]
fn an_arm_the_kernel_refuses_fails_up_front_naming_it() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 256 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(format!("/sys/block/{}/queue/scheduler", lp.name), "none").unwrap();
    let before = attrs(&lp.name);
    let out = support::innotune_in(state.path())
        .args([
            "prove",
            mnt.path.to_str().unwrap(),
            "--device",
            &lp.name,
            "--change",
            "nr_requests=256",
            "--workload",
            "page-read",
            "--size",
            "32m",
            "--rounds",
            "4",
            "--trial",
            "1s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("arm nr_requests=256"), "{err}");
    assert!(err.contains("queue depth"), "{err}");
    assert_eq!(attrs(&lp.name), before, "nothing left switched");
    let left = std::fs::read_dir(&mnt.path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".innotune-")
        })
        .count();
    assert_eq!(left, 0, "no work directory left");
    drop(mnt);
}

/// A 256 MiB loop device (direct I/O) on a file in /dev/shm, ext4,
/// mounted under /dev/shm: nothing under it but RAM, so no other disk is
/// switched or measured. Undone on drop.
fn ram_lab(tag: &str) -> support::Lab {
    support::Lab::new(support::LabOpts {
        tag,
        base: support::RAM,
        size: 256 << 20,
        ..Default::default()
    })
}

/// innotune (`--format json`) in `state`: exit 0 (prove), or 0 or 1
/// (sweep: 1 is "a pending change", its recommendation differs from the
/// current setting), else fail with its stderr.
fn json_of(state: &std::path::Path, args: &[&str]) -> Value {
    let out = support::innotune_in(state).args(args).output().unwrap();
    let ok: &[i32] = if args[0] == "sweep" { &[0, 1] } else { &[0] };
    assert!(
        out.status.code().is_some_and(|c| ok.contains(&c)),
        "{args:?}: {:?} {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A throughput comparison's interval: (ci_low, ci_high, ci_level_pct).
fn interval(c: &Value) -> (f64, f64, f64) {
    let f = |k: &str| {
        c[k].as_f64()
            .unwrap_or_else(|| panic!("{k} missing in {c:#}"))
    };
    (f("ci_low"), f("ci_high"), f("ci_level_pct"))
}

/// prove's word for a throughput verdict, in sweep's vocabulary
/// (`--objective throughput`: sweep's verdict is the throughput's).
fn as_sweep_word(prove: &str) -> &'static str {
    match prove {
        "faster" => "better",
        "slower" => "worse",
        "no_difference" | "too_few_rounds" => "no significant difference",
        w => panic!("not a prove verdict: {w}"),
    }
}

/// prove and sweep on the same loop device, same workload, rounds, trial
/// and seed, each comparing one change with the state found at start.
///
/// Both are clients of the same engine: `src/trial` runs the interleaved,
/// randomised rounds (and switches through the journal) for both, and both
/// judge throughput with `stats::compare` (prove through
/// `stats::compare_effect`, which only adds the `too_few_rounds` word). With
/// one change and one workload both test at 0.05 (prove: 0.05 / (arms − 1)
/// / workloads; sweep: 0.05 / workloads), so the two runs are two
/// measurements of one ratio at one level. What may differ is the noise
/// of two separate runs, so the test asks what must hold whatever it is:
/// the verdicts never contradict (one `faster` while the other is
/// `worse`, or the reverse), the intervals are at the same level and
/// overlap, and each carries the ratio inside its own interval.
#[test]
fn prove_and_sweep_agree_on_a_scheduler_and_a_read_ahead_change() {
    if !support::live() {
        return;
    }
    let lab = ram_lab("prove-agree");
    let state = tempfile::tempdir().unwrap();
    let before = attrs(lab.name());
    let ra: u32 = before[1].1.trim().parse().unwrap();
    let big_ra = (ra * 4 + 4).to_string();
    let ra_both = format!("{ra},{big_ra}");
    let path = lab.mnt.to_str().unwrap();
    let common = [
        "--device",
        lab.name(),
        "--workload",
        "page-read",
        "--size",
        "32m",
        "--rounds",
        "5",
        "--trial",
        "1s",
        "--warmup",
        "0",
        "--seed",
        "7",
        "--format",
        "json",
    ];
    // (prove's change, sweep's candidate options, sweep's label of the change)
    let big_ra_label = format!("none/ra={big_ra}");
    let cases: [(String, Vec<&str>, &str); 2] = [
        (
            "scheduler=mq-deadline".to_string(),
            vec!["--schedulers", "none,mq-deadline"],
            "mq-deadline",
        ),
        (
            format!("read_ahead_kb={big_ra}"),
            vec!["--schedulers", "none", "--read-ahead-kb", &ra_both],
            &big_ra_label,
        ),
    ];
    for (change, sweep_opts, label) in &cases {
        let mut pa = vec!["prove", path, "--change", change];
        pa.extend(common);
        let p = json_of(state.path(), &pa);
        assert_eq!(attrs(lab.name()), before, "prove put the device back");
        let mut sa = vec!["sweep", path, "--objective", "throughput"];
        sa.extend(sweep_opts.iter().copied());
        sa.extend(common);
        let s = json_of(state.path(), &sa);
        assert_eq!(attrs(lab.name()), before, "sweep put the device back");

        let pr = &p["result"];
        let sr = &s["result"];
        assert_eq!(pr["rounds_run"], 5, "{pr:#}");
        // O_DIRECT through a loop device with direct I/O: nothing to flag.
        assert!(
            pr.get("not_on_device").is_none(),
            "{:#}",
            pr["not_on_device"]
        );
        assert!(
            sr.get("not_on_device").is_none(),
            "{:#}",
            sr["not_on_device"]
        );
        let pc = &pr["cells"].as_array().unwrap()[0];
        assert_eq!(pc["arm"], change.as_str(), "{pr:#}");
        let sv: Vec<&Value> = sr["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["candidate"] == *label)
            .collect();
        assert_eq!(sv.len(), 1, "{:#}", sr["verdicts"]);
        let sv = sv[0];
        // Both compare with the state found at start.
        let base = sr["baseline"].as_str().unwrap();
        assert!(base == "none" || base == format!("none/ra={ra}"), "{base}");
        assert_eq!(sv["baseline"], base);
        // The same number of trials on each side.
        let count = |r: &Value, cand: &str| {
            r["trials"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["candidate"] == cand)
                .count()
        };
        assert_eq!((count(pr, "current"), count(pr, change)), (5, 5));
        assert_eq!((count(sr, base), count(sr, label)), (5, 5));

        let (pw, sw) = (
            pc["verdict"].as_str().unwrap(),
            sv["verdict"].as_str().unwrap(),
        );
        let contradiction = matches!(
            (as_sweep_word(pw), sw),
            ("better", "worse") | ("worse", "better")
        );
        assert!(
            !contradiction,
            "{change}: prove says {pw}, sweep says {sw}\nprove {:#}\nsweep {:#}",
            pc["throughput"], sv["throughput"]
        );
        let (plo, phi, plevel) = interval(&pc["throughput"]);
        let (slo, shi, slevel) = interval(&sv["throughput"]);
        assert_eq!(plevel, slevel, "one level for one comparison");
        assert_eq!(plevel, 95.0);
        for (lo, hi, r) in [
            (plo, phi, pc["throughput"]["ratio"].as_f64().unwrap()),
            (slo, shi, sv["throughput"]["ratio"].as_f64().unwrap()),
        ] {
            assert!(
                lo <= r && r <= hi,
                "{change}: ratio {r} outside [{lo}, {hi}]"
            );
        }
        assert!(
            plo.max(slo) <= phi.min(shi),
            "{change}: intervals do not overlap: prove [{plo:.3}, {phi:.3}], sweep [{slo:.3}, {shi:.3}]"
        );
    }
}

/// A large effect stops a sequential prove early, and the JSON says where.
/// max_sectors_kb=4 splits every 1 MiB read of seq-read into 256 requests
/// of 4 KiB (on this loop device: about a sixth of the throughput,
/// measured 0.17× [0.09–0.38]). With at most 10 rounds the first look
/// that can cross is round 5, so the run must stop at or before half the
/// fixed design's rounds and report that round: `rounds_run`, the
/// trials' rounds, and the text page's "N of at most 10".
#[test]
fn sequential_prove_of_a_large_effect_stops_by_half_the_rounds_and_says_so() {
    if !support::live() {
        return;
    }
    let lab = ram_lab("prove-agree");
    let state = tempfile::tempdir().unwrap();
    let max_sectors = format!("/sys/block/{}/queue/max_sectors_kb", lab.name());
    let before = (
        attrs(lab.name()),
        std::fs::read_to_string(&max_sectors).unwrap(),
    );
    let path = lab.mnt.to_str().unwrap();
    let args = [
        "prove",
        path,
        "--device",
        lab.name(),
        "--change",
        "max_sectors_kb=4",
        "--workload",
        "seq-read",
        "--size",
        "32m",
        "--rounds",
        "10",
        "--sequential",
        "--trial",
        "1s",
        "--warmup",
        "0",
        "--seed",
        "7",
        "--format",
        "json",
    ];
    let v = json_of(state.path(), &args);
    assert_eq!(
        (
            attrs(lab.name()),
            std::fs::read_to_string(&max_sectors).unwrap()
        ),
        before,
        "put back"
    );
    let r = &v["result"];
    assert_eq!(r["sequential"], true);
    assert_eq!(r["rounds"], 10);
    let run = r["rounds_run"].as_u64().unwrap();
    assert!(run <= 5, "a 6x effect took {run} of 10 rounds: {r:#}");
    let cell = &r["cells"][0];
    assert_eq!(cell["verdict"], "slower", "{cell:#}");
    assert!(cell["throughput"]["ci_high"].as_f64().unwrap() < 1.0);
    assert_eq!(cell["rounds"].as_u64(), Some(run));
    // The trials are exactly the rounds reported: two arms per round,
    // rounds 0..run.
    let trials = r["trials"].as_array().unwrap();
    assert_eq!(trials.len() as u64, 2 * run, "{r:#}");
    let last = trials.iter().map(|t| t["round"].as_u64().unwrap()).max();
    assert_eq!(last, Some(run - 1));
    // The text page reads the same result back and names the round.
    let saved = state.path().join("prove.json");
    std::fs::write(&saved, serde_json::to_vec(&v).unwrap()).unwrap();
    let text = support::innotune_in(state.path())
        .args(["report", saved.to_str().unwrap(), "--format", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("{run} of at most 10 (sequential)")),
        "{text}"
    );
}

/// The same experiment on a loop device without direct I/O (`loop/dio`
/// 0): every arm's I/O went through the page cache to a file in RAM, so
/// the verdicts are RAM's. prove and sweep (one engine, `src/trial`) say
/// so in the JSON (`not_on_device`) and on the text page.
#[test]
fn prove_and_sweep_on_a_loop_device_without_direct_io_say_it_did_not_reach_a_device() {
    if !support::live() {
        return;
    }
    let lab = support::Lab::new(support::LabOpts {
        tag: "prove-nodio",
        base: support::RAM,
        size: 256 << 20,
        direct_io: false,
        ..Default::default()
    });
    let state = tempfile::tempdir().unwrap();
    let path = lab.mnt.to_str().unwrap();
    let common = [
        "--device",
        lab.name(),
        "--workload",
        "page-read",
        "--size",
        "32m",
        "--rounds",
        "4",
        "--trial",
        "1s",
        "--warmup",
        "0",
        "--seed",
        "7",
    ];
    let mut pa = vec!["prove", path, "--change", "scheduler=mq-deadline"];
    pa.extend(common);
    let mut sa = vec!["sweep", path, "--schedulers", "none,mq-deadline"];
    sa.extend(common);
    for args in [pa, sa] {
        let mut j = args.clone();
        j.extend(["--format", "json"]);
        let v = json_of(state.path(), &j);
        let flags = v["result"]["not_on_device"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let loops: Vec<&Value> = flags
            .iter()
            .filter(|f| f["why"] == "loop_buffered")
            .collect();
        assert_eq!(loops.len(), 1, "{} {flags:#?}", args[0]);
        assert_eq!(loops[0]["device"], lab.name());
        assert_eq!(loops[0]["backing_file"], lab.img.to_str().unwrap());
        // The text page of the same result says it before the verdicts.
        let saved = state.path().join(format!("{}.json", args[0]));
        std::fs::write(&saved, serde_json::to_vec(&v).unwrap()).unwrap();
        let out = support::innotune_in(state.path())
            .args(["report", saved.to_str().unwrap(), "--format", "text"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("{} reads and writes its backing file", lab.name()))
                && text.contains("through the page cache"),
            "{text}"
        );
    }
}

fn has_server_binary() -> bool {
    ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
}

/// Nothing of prove's left on the mount: its work directory (and with it
/// the sandbox's datadir) and no server running under it.
fn nothing_left(mnt: &Path) {
    assert_eq!(workdirs(mnt), 0, "work directory left behind");
    assert!(
        support::servers_under(mnt).is_empty(),
        "a server left running under {}",
        mnt.display()
    );
}

/// The error lines of a refused run: exactly one, `innotune: error: …
/// (fix: …)`, containing `what`; exit 2; no journal left.
fn refused(out: &std::process::Output, state: &std::path::Path, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("innotune: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(what) && lines[0].contains("(fix: "),
        "{err}"
    );
    assert!(!state.join("journal.json").exists(), "journal left: {err}");
}

/// A server-variable arm on prove's own throwaway server (the planted
/// case: an 8 MiB buffer pool under 2 × 60,000 rows, about 29 MB):
/// `--change innodb_buffer_pool_size=128M` on a read-only load is switched
/// with SET GLOBAL between rounds and measured `faster` with its interval
/// above 1 (sequential: it stops once that is certain). The sandbox is gone
/// afterwards, its variable put back first.
#[test]
fn prove_a_server_variable_on_a_sandbox_grows_the_pool_faster() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 768 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let out = support::innotune_in(state.path())
        .args(["prove", mnt.path.to_str().unwrap(), "--device", &lp.name])
        .args(["--change", "innodb_buffer_pool_size=128M"])
        .args(["--workload", "oltp_read_only", "--threads", "4"])
        .args(["--oltp-buffer-pool", support::PLANTED_POOL])
        .args(["--oltp-tables", "2", "--oltp-table-size", "60000"])
        .args(["--rounds", "8", "--sequential", "--trial", "2s"])
        .args(["--warmup", "1s", "--seed", "3", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["changes"][0]["kind"], "server_variable", "{r:#}");
    let arms = r["arms"].as_array().unwrap();
    assert_eq!(arms.len(), 2);
    let cur = &arms[0]["settings"][0];
    assert_eq!(cur["kind"], "server_variable", "{r:#}");
    assert_eq!(cur["value"], (8u64 << 20).to_string(), "{r:#}");
    assert_eq!(arms[1]["settings"][0]["value"], "128M");
    let c = &r["cells"][0];
    eprintln!("pool 8M → 128M: rounds_run {}, cell {c:#}", r["rounds_run"]);
    assert_eq!(c["verdict"], "faster", "{r:#}");
    assert!(c["throughput"]["ci_low"].as_f64().unwrap() > 1.0, "{c:#}");
    let restored = r["restored"].as_array().unwrap();
    let var = restored
        .iter()
        .find(|x| x["kind"] == "server_variable")
        .unwrap_or_else(|| panic!("no server_variable restored: {r:#}"));
    assert_eq!(var["original"], (8u64 << 20).to_string(), "{var:#}");
    assert!(
        ["restored", "already_original"].contains(&var["outcome"].as_str().unwrap()),
        "{var:#}"
    );
    nothing_left(&mnt.path);
    assert!(!state.path().join("journal.json").exists(), "{err}");
    drop(mnt);
}

/// `--live-server` against a sandbox that plays the live server (the
/// planted one, with its sbtest tables): innodb_io_capacity is SET GLOBAL
/// there, journaled, and put back (SELECT @@ after). The refusals on it
/// come first, each one line with nothing changed: a variable the server
/// lacks, one that needs a restart. Without --live-server the same options
/// only seed prove's own server with the live one's settings.
#[test]
fn prove_live_server_sets_a_variable_and_puts_it_back() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 256 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let live = tempfile::tempdir().unwrap();
    let planted = support::Planted::start(live.path(), live.path());
    planted.load(2, 10_000);
    planted.set("innodb_io_capacity", "300");
    let was = planted.var("innodb_io_capacity");
    let base = |change: &str| {
        let mut c = support::innotune_in(state.path());
        c.args(["prove", mnt.path.to_str().unwrap(), "--device", &lp.name])
            .args(["--change", change])
            .args(["--workload", "oltp_read_only", "--threads", "2"])
            .args(["--oltp-tables", "2", "--oltp-table-size", "10000"])
            .args(["--rounds", "4", "--trial", "1s", "--warmup", "0"])
            .args(["--seed", "5"]);
        c
    };
    // MariaDB has no innodb_redo_log_capacity (MySQL 8.0.30's).
    let out = base("innodb_redo_log_capacity=64M")
        .arg("--live-server")
        .args(planted.sock_args())
        .output()
        .unwrap();
    refused(
        &out,
        state.path(),
        "has no variable innodb_redo_log_capacity",
    );
    let out = base("innodb_log_buffer_size=32M")
        .arg("--live-server")
        .args(planted.sock_args())
        .output()
        .unwrap();
    refused(&out, state.path(), "not dynamic");
    assert_eq!(planted.var("innodb_io_capacity"), was);

    // Without --live-server the connection options only say what the
    // throwaway server starts with: the live server's InnoDB settings
    // (tune's "before"), so `current` is its 300; the live server itself is
    // never switched.
    let out = base("innodb_io_capacity=2000")
        .args(planted.sock_args())
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["oltp"]["profile"], "before", "{r:#}");
    assert!(r["oltp"].get("live_server").is_none(), "{r:#}");
    let cur = &r["arms"][0]["settings"][0];
    assert_eq!(cur["value"], "300", "carried from the live server: {r:#}");
    assert_ne!(
        cur["endpoint"]["socket"],
        planted.socket().display().to_string(),
        "{r:#}"
    );
    assert_eq!(planted.var("innodb_io_capacity"), was, "never switched");
    nothing_left(&mnt.path);

    let out = base("innodb_io_capacity=2000")
        .arg("--live-server")
        .args(planted.sock_args())
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    let set = &r["arms"][1]["settings"][0];
    assert_eq!(set["kind"], "server_variable", "{r:#}");
    assert_eq!(
        set["endpoint"]["socket"],
        planted.socket().display().to_string(),
        "{r:#}"
    );
    assert_eq!(r["arms"][0]["settings"][0]["value"], was.as_str());
    assert_eq!(
        r["oltp"]["live_server"]
            .as_str()
            .map(|s| s.contains("mysql.sock")),
        Some(true),
        "{r:#}"
    );
    let switched = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["candidate"] == "innodb_io_capacity=2000")
        .count();
    assert_eq!(switched, 4, "{r:#}");
    let ok = ["faster", "slower", "no_difference"];
    assert!(words(&v).iter().all(|w| ok.contains(&w.as_str())), "{r:#}");
    let var = r["restored"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "server_variable")
        .unwrap_or_else(|| panic!("no server_variable restored: {r:#}"));
    assert_eq!(var["original"], was.as_str(), "{var:#}");
    assert_eq!(planted.var("innodb_io_capacity"), was, "put back");
    // The tables are the server's own: prove neither dropped nor loaded
    // them, and started no server of its own.
    let n: Vec<String> = {
        use mysql::prelude::Queryable;
        innotune::db::ConnSpec::socket(planted.socket(), "root")
            .connect()
            .unwrap()
            .query("SHOW TABLES FROM sbtest")
            .unwrap()
    };
    assert_eq!(n.len(), 2, "{n:?}");
    nothing_left(&mnt.path);
    assert!(!state.path().join("journal.json").exists(), "{err}");
    drop(mnt);
}

/// Refused before any round, one line each, nothing left: a name that is
/// no server variable innotune sets, a server variable without an OLTP
/// workload, and (after the sandbox starts, before any round) a value the
/// sandbox's server rejects and a variable that needs a restart.
#[test]
fn prove_server_variable_refusals_are_one_line_and_leave_nothing() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let run = |change: &str, workload: &str| {
        support::innotune_in(state.path())
            .args(["prove", mnt.path.to_str().unwrap(), "--device", &lp.name])
            .args(["--change", change, "--workload", workload])
            .args(["--threads", "1", "--oltp-tables", "1"])
            .args(["--oltp-table-size", "1000", "--rounds", "4"])
            .args(["--trial", "1s", "--warmup", "0"])
            .output()
            .unwrap()
    };
    refused(
        &run("innodb_bogus_knob=1", "oltp_read_only"),
        state.path(),
        "not a block-queue attribute, sysctl or server variable",
    );
    refused(
        &run("innodb_io_capacity=2000", "page-read"),
        state.path(),
        "needs an OLTP workload",
    );
    refused(
        &run("innodb_io_capacity=lots", "oltp_read_only"),
        state.path(),
        "the server rejects it",
    );
    nothing_left(&mnt.path);
    refused(
        &run("innodb_log_buffer_size=32M", "oltp_read_only"),
        state.path(),
        "not dynamic",
    );
    nothing_left(&mnt.path);
    drop(mnt);
}

/// `--live-server` killed with SIGKILL while innodb_io_capacity is switched
/// on the server: the journal holds the value found at start, and
/// `innotune restore` puts it back there (SELECT @@ after) and removes the
/// work directory.
#[test]
fn sigkill_mid_live_server_prove_then_restore_puts_the_variable_back() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 256 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let live = tempfile::tempdir().unwrap();
    let planted = support::Planted::start(live.path(), live.path());
    planted.load(1, 2_000);
    let was = planted.var("innodb_io_capacity");
    assert_ne!(was, "1999");
    let child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["prove", mnt.path.to_str().unwrap(), "--device", &lp.name])
        .args(["--change", "innodb_io_capacity=1999"])
        .args(["--workload", "oltp_read_only", "--threads", "1"])
        .args(["--oltp-tables", "1", "--oltp-table-size", "2000"])
        .args(["--trial", "60s", "--warmup", "0", "--live-server"])
        .args(planted.sock_args())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .start();
    support::wait_for(
        "prove to SET innodb_io_capacity on the server",
        Duration::from_secs(120),
        || planted.var("innodb_io_capacity") == "1999",
    );
    child.kill_now();
    assert_eq!(planted.var("innodb_io_capacity"), "1999", "left switched");
    support::restore(state.path());
    assert_eq!(
        planted.var("innodb_io_capacity"),
        was,
        "restore put it back"
    );
    nothing_left(&mnt.path);
    drop(mnt);
}

/// The per-mount options of the filesystem mounted at `mnt`, as mountinfo
/// shows them (`rw,relatime`).
fn mount_options(mnt: &std::path::Path) -> String {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mp = mnt.to_str().unwrap();
    mi.lines()
        .rfind(|l| l.split(' ').nth(4) == Some(mp))
        .and_then(|l| l.split(' ').nth(5))
        .unwrap_or_else(|| panic!("{mp} is not mounted"))
        .to_string()
}

/// In a round under noatime: prove's files are laid out (every remount
/// before the rounds, the arms' dry run and `current`, is done by then)
/// and the mount shows noatime.
fn noatime_in_a_round(mnt: &std::path::Path) -> bool {
    let laid_out = std::fs::read_dir(mnt).unwrap().flatten().any(|e| {
        e.file_name()
            .to_string_lossy()
            .starts_with(".innotune-prove")
            && std::fs::read_dir(e.path())
                .map(|d| {
                    d.flatten().any(|f| {
                        f.metadata()
                            .is_ok_and(|m| m.is_file() && m.len() >= 64 << 20)
                    })
                })
                .unwrap_or(false)
    });
    laid_out && mount_options(mnt).contains("noatime")
}

/// prove with `--change mount:noatime` on a scratch ext4 (a loop device),
/// run with default signal handling (`args` after the change).
fn prove_mount(
    state: &std::path::Path,
    mnt: &std::path::Path,
    trial: &str,
) -> std::process::Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state).args([
        "prove",
        mnt.to_str().unwrap(),
        "--change",
        "mount:noatime",
        "--workload",
        "page-read",
        "--size",
        "64m",
        "--rounds",
        "4",
        "--trial",
        trial,
        "--warmup",
        "0",
        "--seed",
        "7",
    ]);
    c
}

/// Issue 40: a remount option as a prove arm. On a loop device's ext4
/// (relatime): `current` (relatime) and `mount=noatime` are switched with
/// a journaled remount between rounds, a verdict word comes out for the
/// cell, and the mount's options are exactly as before afterwards. The
/// root filesystem and an unknown option are refused in one line with
/// nothing journaled.
#[test]
fn prove_a_mount_option_on_a_loop_filesystem_and_put_it_back() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = mount_options(&mnt.path);
    assert!(before.contains("relatime"), "{before}");
    let out = prove_mount(state.path(), &mnt.path, "1s")
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["changes"][0]["kind"], "remount", "{r:#}");
    assert_eq!(r["changes"][0]["mount_point"], mnt.path.to_str().unwrap());
    let arm_value = |i: usize| {
        r["arms"][i]["settings"][0]["value"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(arm_value(0), "relatime");
    assert_eq!(arm_value(1), "noatime");
    assert_eq!(r["arms"][1]["label"], "mount=noatime");
    let under_noatime = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["candidate"] == "mount=noatime")
        .count();
    assert_eq!(under_noatime, 4);
    let ok = ["faster", "slower", "no_difference"];
    assert!(words(&v).iter().all(|w| ok.contains(&w.as_str())), "{r:#}");
    assert!(r["restored"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["kind"] == "remount" && x["original"] == "relatime"));
    assert_eq!(mount_options(&mnt.path), before, "mount options put back");
    assert!(!state.path().join("journal.json").exists());
    // Refusals: the root filesystem, an option innotune does not switch.
    for (path, change, what) in [
        ("/", "mount=noatime", "root filesystem"),
        (
            mnt.path.to_str().unwrap(),
            "mount=ro",
            "not a mount option innotune switches",
        ),
    ] {
        let out = support::innotune_in(state.path())
            .args(["prove", path, "--change", change, "--workload", "page-read"])
            .output()
            .unwrap();
        refused(&out, state.path(), what);
    }
    assert_eq!(mount_options(&mnt.path), before);
    drop(mnt);
}

/// [`prove_mount`] with 20 s trials (its output piped, or dropped), once
/// it runs a round under noatime.
fn mount_prove_in_a_round(state: &Path, mnt: &Path, piped: bool) -> support::Spawned {
    let io = || if piped { Stdio::piped() } else { Stdio::null() };
    let child = prove_mount(state, mnt, "20s")
        .stdout(io())
        .stderr(io())
        .start();
    support::wait_for(
        "prove to remount with noatime",
        Duration::from_secs(150),
        || noatime_in_a_round(mnt),
    );
    child
}

/// SIGINT while the filesystem is switched to noatime: prove puts the
/// mount options back and exits 130.
#[test]
fn sigint_mid_mount_prove_puts_the_mount_options_back() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = mount_options(&mnt.path);
    let child = mount_prove_in_a_round(state.path(), &mnt.path, true);
    child.interrupt();
    assert_eq!(mount_options(&mnt.path), before, "mount options put back");
    nothing_left(&mnt.path);
    drop(mnt);
}

/// SIGKILL while the filesystem is switched to noatime leaves it so; the
/// journal says what to put back, and `innotune restore` does.
#[test]
fn sigkill_mid_mount_prove_then_restore_puts_the_mount_options_back() {
    if !support::live() {
        return;
    }
    let lp = support::Loop::new_in(support::RAM, 512 << 20);
    let mnt = lp.mount_ext4();
    let state = tempfile::tempdir().unwrap();
    let before = mount_options(&mnt.path);
    let child = mount_prove_in_a_round(state.path(), &mnt.path, false);
    child.kill_now();
    assert!(
        mount_options(&mnt.path).contains("noatime"),
        "left switched"
    );
    let journal = std::fs::read_to_string(state.path().join("journal.json")).unwrap();
    assert!(journal.contains("\"remount\""), "{journal}");
    let v = support::restore(state.path());
    let e = v["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "remount")
        .cloned()
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(e["outcome"], "restored", "{e}");
    assert_eq!(e["found"], "noatime");
    assert_eq!(mount_options(&mnt.path), before, "restore put them back");
    nothing_left(&mnt.path);
    drop(mnt);
}
