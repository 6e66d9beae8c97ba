//! `check --client`: the machine that runs the load against a remote
//! server. On tests/fixtures/hosts/client-planted (made by
//! make-client-fixture.py: one receive queue, RPS and RFS off, 8 CPUs, no
//! cpufreq) and client-irq (four receive interrupts pinned to CPU 0, the
//! powersave governor) the planted problems are found with their values,
//! `apply --client --yes` makes them true on a copy of the tree and
//! `restore` puts every value back; on this machine's real NIC files the
//! rules read what sysfs and /proc show, and (live) the IRQ affinity
//! change round-trips on this machine's real /proc/irq files, leaving
//! them exactly as found.

mod support;

use serde_json::Value;
use std::path::Path;

fn run(root: Option<&Path>, state: &Path, args: &[&str]) -> (i32, Value) {
    let mut c = support::innotune_in(state);
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    let out = c.args(args).args(["--format", "json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v["result"].clone())
}

#[test]
fn planted_rps_is_found_and_nothing_else_runs() {
    let st = tempfile::tempdir().unwrap();
    let (code, r) = run(
        Some(&support::fixture_host("client-planted")),
        st.path(),
        &["check", "--client"],
    );
    assert_eq!(code, 0, "a notice only");
    let f = r["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["id"], "os.rps");
    assert_eq!(f[0]["subject"]["name"], "eth0");
    assert_eq!(
        settings(&f[0]),
        [
            ("rps_cpus".to_string(), "ff".to_string()),
            ("rps_flow_cnt".into(), "32768".into()),
            ("net.core.rps_sock_flow_entries".into(), "32768".into())
        ]
    );
    assert_eq!(r["server"]["reached"], false);
    for x in r["rules"].as_array().unwrap() {
        if x["id"] == "os.rps" || x["id"] == "os.irq_affinity" {
            assert_eq!(x["status"], "ran");
        } else if x["id"] == "os.governor" {
            assert_eq!(x["status"], "skipped", "no cpufreq in this tree: {x}");
            assert!(x["reason"].as_str().unwrap().starts_with("no cpufreq here"));
        } else {
            assert_eq!(x["status"], "skipped", "{x}");
        }
    }
}

/// (kind-specific name, value) of each setting of a finding: `irq N`,
/// `cpuN`, a sysfs attribute or a sysctl's name.
fn settings(f: &Value) -> Vec<(String, String)> {
    f["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let what = match s["kind"].as_str().unwrap() {
                "irq_affinity" => format!("irq {}", s["irq"]),
                "cpu_governor" => format!("cpu{}", s["cpu"]),
                k => s["attr"]
                    .as_str()
                    .or(s["name"].as_str())
                    .map_or_else(|| format!("{k}?"), str::to_string),
            };
            (what, s["value"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn planted_irq_affinity_and_governor_are_found() {
    let st = tempfile::tempdir().unwrap();
    let (code, r) = run(
        Some(&support::fixture_host("client-irq")),
        st.path(),
        &["check", "--client"],
    );
    assert_eq!(code, 0, "notices only");
    let f = r["findings"].as_array().unwrap();
    let ids: Vec<&str> = f.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["os.governor", "os.irq_affinity"], "{f:#?}");
    let gov = &f[0];
    assert_eq!(gov["observed"], "powersave on CPU 0-7 (intel_pstate)");
    // Eight policies of one CPU each: one write per policy.
    let want: Vec<(String, String)> = (0..8)
        .map(|c| (format!("cpu{c}"), "performance".to_string()))
        .collect();
    assert_eq!(settings(gov), want);
    let irq = &f[1];
    assert_eq!(irq["subject"]["name"], "eth0");
    assert_eq!(
        irq["observed"],
        "4 receive interrupts (40,41,42,43) all on CPU 0"
    );
    assert!(
        irq["reason"]
            .as_str()
            .unwrap()
            .contains("while CPU 1-7 take none"),
        "{irq}"
    );
    assert_eq!(
        settings(irq),
        [
            ("irq 40".to_string(), "1".to_string()),
            ("irq 41".into(), "2".into()),
            ("irq 42".into(), "4".into()),
            ("irq 43".into(), "8".into())
        ]
    );
    // Four balanced queues: not RPS's problem.
    assert!(!ids.contains(&"os.rps"));
    // The governor's boot form, as systemd-tmpfiles reads it (its glob
    // expanded in a scratch tree); no file for the IRQ masks.
    let out = tempfile::tempdir().unwrap();
    let (_, r) = run(
        Some(&support::fixture_host("client-irq")),
        st.path(),
        &["check", "--client", "--emit", out.path().to_str().unwrap()],
    );
    let emitted = r["emitted"].as_array().unwrap();
    let paths: Vec<&str> = emitted
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/etc/tmpfiles.d/innotune-cpufreq.conf"]);
    if which::which("systemd-tmpfiles").is_ok() {
        assert_eq!(emitted[0]["validation"]["ok"], true, "{}", emitted[0]);
    } else {
        eprintln!("systemd-tmpfiles not installed: the tmpfiles.d line is not validated");
    }
}

/// Every regular file under `a` holds (trimmed) what the same file under
/// `b` holds, and `b` has no file `a` lacks.
fn same_tree(a: &Path, b: &Path) {
    fn files(root: &Path, dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                files(root, &e.path(), out);
            } else {
                out.push(e.path().strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    files(a, a, &mut fa);
    files(b, b, &mut fb);
    fa.sort();
    fb.sort();
    assert_eq!(fa, fb);
    for f in fa {
        let (pa, pb) = (a.join(&f), b.join(&f));
        if std::fs::symlink_metadata(&pa)
            .unwrap()
            .file_type()
            .is_symlink()
        {
            assert_eq!(
                std::fs::read_link(&pa).unwrap(),
                std::fs::read_link(&pb).unwrap()
            );
            continue;
        }
        let (ta, tb) = (std::fs::read(&pa).unwrap(), std::fs::read(&pb).unwrap());
        assert_eq!(
            String::from_utf8_lossy(&ta).trim(),
            String::from_utf8_lossy(&tb).trim(),
            "{}",
            f.display()
        );
    }
}

#[test]
fn apply_client_then_restore_round_trips_irq_affinity_and_governor_on_a_tree_copy() {
    let st = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let fixture = support::fixture_host("client-irq");
    let root = work.path().join("host");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(&fixture)
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    let rd = |p: &str| {
        std::fs::read_to_string(root.join(p))
            .unwrap()
            .trim()
            .to_string()
    };
    let (code, _) = run(Some(&root), st.path(), &["apply", "--client", "--yes"]);
    assert_eq!(code, 0);
    for (irq, mask) in [(40, "1"), (41, "2"), (42, "4"), (43, "8")] {
        // 40 held 01 (= 1) already: left as it was.
        let now = rd(&format!("proc/irq/{irq}/smp_affinity"));
        assert_eq!(now.trim_start_matches('0'), mask);
    }
    assert_eq!(rd("proc/irq/44/smp_affinity"), "ff", "transmit left alone");
    for c in 0..8 {
        // Written through cpuN/cpufreq, the link to its policy.
        assert_eq!(
            rd(&format!(
                "sys/devices/system/cpu/cpufreq/policy{c}/scaling_governor"
            )),
            "performance"
        );
    }
    let tmpfiles = rd("etc/tmpfiles.d/innotune-cpufreq.conf");
    assert!(
        tmpfiles.contains(
            "w /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor - - - - performance"
        ),
        "{tmpfiles}"
    );
    let (code, _) = run(Some(&root), st.path(), &["apply", "--client", "--check"]);
    assert_eq!(code, 0, "nothing pending after apply");
    let (code, r) = run(Some(&root), st.path(), &["check", "--client"]);
    assert_eq!(
        (code, r["findings"].as_array().unwrap().len()),
        (0, 0),
        "{r:#}"
    );
    let out = support::innotune_in(st.path())
        .arg("--root")
        .arg(&root)
        .arg("restore")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every file as the fixture has it, the tmpfiles.d line gone.
    same_tree(&fixture, &root);
}

#[test]
fn apply_client_then_restore_round_trips_on_a_tree_copy() {
    let st = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("host");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(support::fixture_host("client-planted"))
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    let rd = |p: &str| {
        std::fs::read_to_string(root.join(p))
            .unwrap()
            .trim()
            .to_string()
    };
    let q = "sys/class/net/eth0/queues/rx-0";
    let (code, _) = run(Some(&root), st.path(), &["apply", "--client", "--yes"]);
    assert_eq!(code, 0);
    assert_eq!(rd(&format!("{q}/rps_cpus")), "ff");
    assert_eq!(rd(&format!("{q}/rps_flow_cnt")), "32768");
    assert_eq!(rd("proc/sys/net/core/rps_sock_flow_entries"), "32768");
    assert!(rd("etc/udev/rules.d/99-innotune.rules").contains("ATTR{queues/rx-0/rps_cpus}=\"ff\""));
    let (code, _) = run(Some(&root), st.path(), &["apply", "--client", "--check"]);
    assert_eq!(code, 0, "nothing pending after apply");
    let (code, r) = run(Some(&root), st.path(), &["check", "--client"]);
    assert_eq!((code, r["findings"].as_array().unwrap().len()), (0, 0));
    let out = support::innotune_in(st.path())
        .arg("--root")
        .arg(&root)
        .arg("restore")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rd(&format!("{q}/rps_cpus")), "0");
    assert_eq!(rd(&format!("{q}/rps_flow_cnt")), "0");
    assert_eq!(rd("proc/sys/net/core/rps_sock_flow_entries"), "0");
    assert!(!root.join("etc/udev/rules.d/99-innotune.rules").exists());
    assert!(!root.join("etc/sysctl.d/99-innotune.conf").exists());
}

/// This machine's NIC, read straight from /proc and /sys here, against
/// what `check --client` says (nothing is written).
#[test]
fn this_machines_nic_files_are_read_as_they_are() {
    let st = tempfile::tempdir().unwrap();
    let (_, r) = run(None, st.path(), &["check", "--client"]);
    let rule = r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "os.rps")
        .unwrap()
        .clone();
    assert_eq!(rule["status"], "ran", "{rule}");
    let route = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    let Some(nic) = route.lines().skip(1).find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.get(1) == Some(&"00000000")).then(|| w[0].to_string())
    }) else {
        assert_eq!(rule["findings"], 0, "no default route, no client NIC");
        return;
    };
    let qdir = format!("/sys/class/net/{nic}/queues");
    let rx: Vec<String> = std::fs::read_dir(&qdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rx-"))
        .collect();
    let off = rx.iter().all(|q| {
        std::fs::read_to_string(format!("{qdir}/{q}/rps_cpus"))
            .is_ok_and(|m| m.trim().chars().all(|c| c == '0' || c == ','))
    });
    let facts_nic = r["facts"]["nics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == nic.as_str())
        .unwrap_or_else(|| panic!("{nic} not in facts: {:#}", r["facts"]["nics"]))
        .clone();
    assert_eq!(facts_nic["rx_queues"].as_array().unwrap().len(), rx.len());
    // Online CPUs as the rule counts them (/sys/devices/system/cpu/online).
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus: u64 = online
        .trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum();
    let found = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["id"] == "os.rps" && f["subject"]["name"] == nic.as_str());
    if rx.len() == 1 && cpus > 1 {
        assert_eq!(
            found, off,
            "one queue: found exactly when RPS is off ({facts_nic})"
        );
    } else if !off {
        assert!(!found, "RPS already on: {facts_nic}");
    }
}
