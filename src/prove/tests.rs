use super::*;
use crate::change::Change;
use crate::stats::Effect;
use crate::trial::trials::tests::bench_trial;
use rand::{Rng, SeedableRng};

fn virtio() -> Host {
    Host::with_root(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/virtio"))
}

fn devs() -> Vec<String> {
    vec!["vda".to_string()]
}

fn err(s: &str) -> String {
    parse_change(&virtio(), s, &devs()).unwrap_err().to_string()
}

#[test]
fn changes_are_checked_against_the_devices_and_the_allow_list() {
    let h = virtio();
    let c = parse_change(&h, "read_ahead_kb=1024", &devs()).unwrap();
    assert_eq!(
        (c.kind.as_str(), c.label().as_str()),
        ("sysfs", "read_ahead_kb=1024")
    );
    let c = parse_change(&h, "vm.swappiness=1", &devs()).unwrap();
    assert_eq!(c.kind, "sysctl");
    // In the allow-list, absent from this device's sysfs.
    let e = err("add_random=0");
    assert!(
        e.contains("vda has no /sys/block/vda/queue/add_random") && e.contains("fix:"),
        "{e}"
    );
    let e = err("bogus=1");
    assert!(
        e.contains("not a block-queue attribute, sysctl or server variable")
            && e.contains("rq_affinity")
            && e.contains("innodb_io_capacity"),
        "{e}"
    );
    // No '.' and no queue attribute: a server variable, checked against
    // the server later (before any round).
    let c = parse_change(&h, "innodb_io_capacity=2000", &devs()).unwrap();
    assert_eq!(c.kind, "server_variable");
    assert!(c.is_server_variable());
    let e = err("general_log_file=x");
    assert!(e.contains("not a block-queue attribute"), "{e}");
    let e = err("vm.overcommit_memory=1");
    assert!(e.contains("not a sysctl innotune may change"), "{e}");
    // Allowed, but this kernel lacks it.
    let e = err("vm.vfs_cache_pressure=50");
    assert!(
        e.contains("this kernel has no /proc/sys/vm/vfs_cache_pressure"),
        "{e}"
    );
    let e = err("scheduler=cfq");
    assert!(
        e.contains("does not offer it") && e.contains("mq-deadline"),
        "{e}"
    );
    assert!(err("read_ahead_kb").contains("not KEY=VALUE"));
    assert!(err("read_ahead_kb=1;rm").contains("not a value innotune writes"));
    // Every accepted change is one `innotune restore` would accept.
    let ep = crate::db::ServerEndpoint {
        socket: Some("/x/sandbox/mysql.sock".into()),
        user: "root".into(),
        no_defaults: true,
        ..Default::default()
    };
    for k in crate::change::allowed::SERVER_VARIABLES {
        assert_eq!(
            parse_change(&h, &format!("{k}=1"), &devs()).unwrap().kind,
            "server_variable"
        );
        assert!(
            crate::change::ServerVariable::new(&ep, k, "1", false)
                .validate()
                .is_ok(),
            "{k}"
        );
    }
    for k in crate::change::allowed::SYSCTLS {
        assert!(crate::change::Sysctl::new(k, "1").validate().is_ok(), "{k}");
    }
}

#[test]
fn arms_are_current_each_change_and_all_with_the_scheduler_first() {
    let h = virtio();
    let cs: Vec<ChangeSpec> = ["read_ahead_kb=1024", "scheduler=none"]
        .iter()
        .map(|s| parse_change(&h, s, &devs()).unwrap())
        .collect();
    let a = arms(&h, &cs, &devs(), None).unwrap();
    let labels: Vec<&str> = a.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(
        labels,
        ["current", "read_ahead_kb=1024", "scheduler=none", "all"]
    );
    let vals = |arm: &Arm| -> Vec<(String, String)> {
        arm.settings
            .iter()
            .map(|s| match s {
                Setting::Sysfs { path, value } => (
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    value.clone(),
                ),
                Setting::Sysctl { key, value } => (key.clone(), value.clone()),
                Setting::ServerVariable { name, value, .. } => (name.clone(), value.clone()),
                Setting::Mount { value, .. } => ("mount".into(), value.clone()),
            })
            .collect()
    };
    let p = |k: &str, v: &str| (k.to_string(), v.to_string());
    // The current state, read from the fixture; nr_requests put back after
    // the scheduler (a switch resets it).
    assert_eq!(
        vals(&a[0]),
        [
            p("scheduler", "mq-deadline"),
            p("nr_requests", "256"),
            p("read_ahead_kb", "128")
        ]
    );
    assert_eq!(
        vals(&a[1]),
        [
            p("scheduler", "mq-deadline"),
            p("nr_requests", "256"),
            p("read_ahead_kb", "1024")
        ]
    );
    assert_eq!(
        vals(&a[2]),
        [p("scheduler", "none"), p("read_ahead_kb", "128")]
    );
    assert_eq!(
        vals(&a[3]),
        [p("scheduler", "none"), p("read_ahead_kb", "1024")]
    );
    // One change: no `all` arm.
    assert_eq!(arms(&h, &cs[..1], &devs(), None).unwrap().len(), 2);
    let twice = [cs[0].clone(), cs[0].clone()];
    let e = arms(&h, &twice, &devs(), None).unwrap_err().to_string();
    assert!(e.contains("given twice"), "{e}");
}

#[test]
fn rounds_that_cannot_reach_the_corrected_level_are_refused_up_front() {
    // One change, one workload: 0.05, reachable at 4 rounds (p ≥ 0.029).
    assert!(refuse_unreachable(4, corrected_alpha(2, 1), 1).is_ok());
    // Three comparisons: 0.0167 needs 5 rounds.
    let e = refuse_unreachable(4, corrected_alpha(4, 1), 3)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--rounds 5 or more"), "{e}");
    assert_eq!(rounds_needed(corrected_alpha(4, 1)), 5);
    let e = plan_rounds(Some(3), false, None, Duration::from_secs(1)).unwrap_err();
    assert!(e.to_string().contains("at least 4"), "{e}");
    let e = plan_rounds(
        None,
        false,
        Some(Duration::from_secs(30)),
        Duration::from_secs(10),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("fits 3 round(s)") && e.contains("--budget 40.0s or more"),
        "{e}"
    );
    assert_eq!(
        plan_rounds(
            None,
            false,
            Some(Duration::from_secs(95)),
            Duration::from_secs(10)
        )
        .unwrap(),
        9
    );
    assert_eq!(
        plan_rounds(None, false, None, Duration::from_secs(1)).unwrap(),
        5
    );
}

/// Synthetic trials: `arms` × `rounds` on one workload, throughput drawn
/// from one log-normal-ish distribution (or scaled by `effect` for the
/// second arm).
fn synthetic(seed: u64, rounds: u32, arms: &[Arm], effect: f64) -> Vec<Trial> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for r in 0..rounds {
        for (i, a) in arms.iter().enumerate() {
            // A sum of uniforms: roughly normal, 10% spread.
            let z: f64 = (0..6).map(|_| rng.gen::<f64>()).sum::<f64>() - 3.0;
            let scale = if i == 1 { effect } else { 1.0 };
            let iops = 10_000.0 * (1.0 + 0.1 * z) * scale;
            let p99 = 500.0 * (1.0 + 0.1 * z);
            out.push(bench_trial(r, &a.label, "page-read", iops, p99));
        }
    }
    out
}

fn two_arms() -> Vec<Arm> {
    ["current", "read_ahead_kb=1024"]
        .iter()
        .map(|l| Arm {
            label: l.to_string(),
            settings: Vec::new(),
        })
        .collect()
}

#[test]
fn aa_runs_claim_a_difference_in_at_most_one_cell_in_twenty() {
    let arms = two_arms();
    let w = vec!["page-read".to_string()];
    let alpha = corrected_alpha(arms.len(), w.len());
    let mut claims = 0;
    for seed in 0..20u64 {
        let t = synthetic(1000 + seed, 5, &arms, 1.0);
        let cs = cells(&t, &arms, &w, alpha, 0.03, seed);
        assert_eq!(cs.len(), 1);
        assert_ne!(cs[0].verdict, Effect::TooFewRounds);
        claims += cs.iter().filter(|c| c.verdict.claims()).count();
    }
    assert!(claims <= 1, "{claims} of 20 A/A cells claimed a difference");
    // The same comparison does see a real 30% effect (so the A/A count is
    // not low because nothing could ever be claimed).
    let t = synthetic(7, 5, &arms, 1.3);
    let cs = cells(&t, &arms, &w, alpha, 0.03, 7);
    assert_eq!(cs[0].verdict, Effect::Faster, "{:?}", cs[0]);
    assert!(cs[0].throughput.ci_low.unwrap() > 1.0);
    assert_eq!(report::tone(cs[0].verdict), crate::export::doc::Tone::Good);
}

/// prove's page says what its figures are: a mixed workload's median adds
/// reads and writes and its p99 is the reads'; and a run whose I/O did
/// not reach a device says so before the tables (text and markdown).
#[test]
fn the_page_labels_mixed_figures_and_flags_io_that_missed_the_device() {
    use crate::export::Report;
    use crate::trial::trials::tests::mixed_trial;
    let arms = vec![
        Arm {
            label: "current".into(),
            settings: vec![],
        },
        Arm {
            label: "read_ahead_kb=512".into(),
            settings: vec![],
        },
    ];
    let mut trials = Vec::new();
    for r in 0..5u32 {
        let j = r as f64;
        trials.push(mixed_trial(
            r,
            "current",
            (3000.0 + j, 400.0),
            (200.0, 20_000.0),
        ));
        trials.push(mixed_trial(
            r,
            "read_ahead_kb=512",
            (3002.0 - j, 401.0),
            (201.0, 20_100.0),
        ));
    }
    let names = vec!["mixed".to_string()];
    let report = ProveReport {
        path: "/mnt/x".into(),
        devices: vec!["loop0".into()],
        changes: vec![],
        cells: cells(&trials, &arms, &names, 0.05, 0.03, 1),
        arms,
        workloads: names,
        rounds: 5,
        rounds_run: 5,
        sequential: false,
        trial_s: 1.0,
        warmup_s: 0.0,
        alpha: ALPHA,
        level: 0.05,
        min_effect: 0.03,
        seed: 1,
        files: crate::trial::space::FilePlan {
            work_dir: "/mnt/x/.innotune-prove.1".into(),
            free_bytes: None,
            need_bytes: 0,
            oltp_estimate_bytes: 0,
            sizing: crate::trial::space::Sizing::Workloads,
            workloads: vec![],
        },
        elapsed_s: 1.0,
        rounds_s: 1.0,
        oltp: None,
        restored: vec![],
        not_on_device: vec![crate::bench::reach::NotOnDevice::LoopBuffered {
            device: "loop0".into(),
            backing_file: Some("/dev/shm/d.img".into()),
        }],
        trials,
    };
    let render = |e: &dyn crate::export::Exporter| {
        let mut out = Vec::new();
        e.export(&report.document(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let md = render(&crate::export::markdown::Markdown);
    assert!(
        md.contains("| arm | median, reads + writes (IOPS) | ratio | interval | p | verdict | read p99 ratio | read p99 interval | read p99 verdict |"),
        "{md}"
    );
    let text = render(&crate::export::text::Text::new(
        crate::output::Style::plain(),
    ));
    let warn = text
        .find("loop0 reads and writes its backing file /dev/shm/d.img through the page cache")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warn < text.find("median, reads + writes").unwrap(),
        "{text}"
    );
}

/// MySQL 8 has no information_schema.SYSTEM_VARIABLES: a restart-only
/// variable is found by its SET GLOBAL failing with error 1238, which
/// reaches prove wrapped in the journal's context. That error (and only
/// it) becomes the one-line "needs a restart" refusal; a rejected value
/// (1231) stays the server's own words.
#[test]
fn mysql8_read_only_error_1238_is_a_restart_refusal() {
    let server = |code: u16, message: &str| {
        anyhow::Error::from(mysql::Error::MySqlError(mysql::MySqlError {
            state: "HY000".into(),
            message: message.into(),
            code,
        }))
        .context("SET GLOBAL innodb_log_file_size = 1073741824 at 127.0.0.1:3306")
        .context("applying server_variable innodb_log_file_size")
    };
    let ro = server(
        1238,
        "Variable 'innodb_log_file_size' is a read only variable",
    );
    assert!(is_read_only_error(&ro));
    assert!(!is_read_only_error(&server(
        1231,
        "Variable 'innodb_io_capacity' can't be set to the value of 'x'"
    )));
    assert!(!is_read_only_error(&anyhow::anyhow!("connection refused")));
    for live in [true, false] {
        let e = needs_restart("innodb_log_file_size", live);
        let line = crate::error::one_line(&e);
        assert!(line.contains("needs a server restart"), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }
    let live = crate::error::one_line(&needs_restart("innodb_log_file_size", true));
    assert!(live.contains("never restarts the live server"), "{live}");
}
