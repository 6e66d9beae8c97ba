use super::super::plan;
use super::super::recommend::{current, recommend};
use super::super::verdicts::{cells, noise, tests::cand, verdicts};
use super::*;
use crate::export::doc::{Block, ChartKind, Series, Table};
use crate::export::{Exporter, Report};
use crate::stats::CompareOpts;
use crate::stats::Verdict;
use crate::trial::space::{FilePlan, Sizing};
use crate::trial::trials::tests::{bench_trial, mixed_trial, oltp_trial};

fn report() -> SweepReport {
    let cands = vec![cand("none", "none"), cand("mq-deadline", "mq-deadline")];
    let ws = vec!["mixed".to_string(), "oltp_read_write".to_string()];
    let mut trials = vec![];
    for r in 0..5u32 {
        let j = r as f64;
        trials.push(bench_trial(
            r,
            "none",
            "mixed",
            1000.0 + j,
            20_000.0 + 300.0 * j,
        ));
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "mixed",
            1001.0 - j,
            900.0 + 25.0 * j,
        ));
        trials.push(oltp_trial(r, "none", 800.0 + j, 20.0 + j));
        trials.push(oltp_trial(r, "mq-deadline", 805.0 - j, 20.0 - j / 2.0));
    }
    let devices = vec![Device {
        name: "loop0".into(),
        offered: vec!["none".into(), "mq-deadline".into()],
        scheduler: "none".into(),
        nr_requests: Some(128),
        read_ahead_kb: Some(128),
        rotational: Some(false),
        hw_queues: Some(1),
        kernel_default: "none".into(),
        class_schedulers: vec!["none".into(), "mq-deadline".into()],
    }];
    let o = Objective::Latency;
    let copts = CompareOpts::default();
    let base = current(&cands, &devices).unwrap();
    let results = cells(&trials, &cands, &ws, 500, 1);
    let vs = verdicts(&trials, &cands, base, &ws, o, &copts);
    let recommendation = recommend(&cands, base, &vs, &[], &trials, &devices, o, false);
    SweepReport {
        path: "/mnt/x".into(),
        stack: vec!["loop0".into()],
        devices,
        baseline: cands[base].label.clone(),
        candidates: cands,
        workloads: ws,
        objective: o,
        min_effect: 0.03,
        choose: false,
        seed: 1,
        resamples: 500,
        plan: plan::plan(&plan::Request {
            rounds: 5,
            trial: std::time::Duration::from_secs(1),
            warmup: Default::default(),
            budget: None,
            sequential: false,
            workloads: &["mixed".to_string(), "oltp_read_write".to_string()],
            candidates: &["none".to_string(), "mq-deadline".to_string()],
            priority: &[],
        })
        .unwrap(),
        files: FilePlan {
            work_dir: "/mnt/x/.innotune-sweep.1".into(),
            free_bytes: Some(10 << 30),
            need_bytes: 2 << 30,
            oltp_estimate_bytes: 0,
            sizing: Sizing::Workloads,
            workloads: vec![],
        },
        trials_run: trials.len(),
        elapsed_s: 179.6,
        rounds_s: 170.0,
        sequential: None,
        noise: noise(&results),
        results,
        verdicts: vs,
        pairwise: vec![],
        recommendation,
        oltp: None,
        restored: vec![],
        not_on_device: vec![],
        trials,
    }
}

fn render(r: &SweepReport, e: &dyn Exporter) -> String {
    let mut out = Vec::new();
    e.export(&r.document(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_pairwise_duplicate_of_a_verdict_is_noted_once() {
    let mut r = report();
    let v = r
        .verdicts
        .iter()
        .find(|v| v.verdict != Verdict::NoSignificantDifference)
        .expect("the sample report has a verdict")
        .clone();
    let key = format!("{} vs {} on {}", v.candidate, v.baseline, v.workload);
    r.pairwise = vec![v];
    let doc = format!("{:?}", r.document());
    assert_eq!(doc.matches(&key).count(), 1, "{doc}");
}

#[test]
fn starved_trials_get_a_note() {
    let mut r = report();
    let plain = format!("{:?}", r.document());
    assert!(!plain.contains("starved"), "{plain}");
    let (c, w) = (r.trials[0].candidate.clone(), r.trials[0].workload.clone());
    let n = r
        .trials
        .iter()
        .filter(|t| t.candidate == c && t.workload == w)
        .count();
    r.trials[0].starved = vec!["read".into()];
    let doc = format!("{:?}", r.document());
    let want = format!("{w} under {c}: no read completed in 1 of {n} trial windows");
    assert!(doc.contains(&want), "{want} not in {doc}");
    // Listed as stalled too (as from_bench does), it is still one
    // starved window and no stall note.
    r.trials[0].stalled = vec!["read".into()];
    let doc = format!("{:?}", r.document());
    assert!(doc.contains(&want) && !doc.contains("waited over"), "{doc}");
    // Two windows whose longest read passed the limit: a stall note
    // with the longest of them.
    let more: Vec<usize> = (1..r.trials.len())
        .filter(|&i| r.trials[i].candidate == c && r.trials[i].workload == w)
        .take(2)
        .collect();
    for (&i, ms) in more.iter().zip([700u64, 2640]) {
        r.trials[i].stalled = vec!["read".into()];
        r.trials[i].read_max_ns = Some(ms * 1_000_000);
    }
    let doc = format!("{:?}", r.document());
    let want = format!(
        "{w} under {c}: a read waited over 500 ms in 2 of {n} trial windows (longest 2.64 s), a stall the p99 does not show"
    );
    assert!(doc.contains(&want), "{want} not in {doc}");
}

#[test]
fn steal_is_summed_up_under_noise_and_warned_about_from_five_percent() {
    use crate::model::cpustat::HostCpu;
    let mut r = report();
    let quiet = format!("{:?}", r.document());
    assert!(!quiet.contains("steal"), "no host_cpu, no steal: {quiet}");
    let n = r.trials.len();
    for (i, t) in r.trials.iter_mut().enumerate() {
        // Every trial 1 % steal, two of them 5 % and 12 %.
        let steal = match i {
            0 => 12.0,
            1 => 5.0,
            _ => 1.0,
        };
        t.host_cpu = Some(HostCpu {
            busy_pct: 50.0,
            iowait_pct: 10.0,
            steal_pct: steal,
            idle_pct: 40.0 - steal,
        });
    }
    r.noise = r.noise.clone().with_steal(&r.trials);
    assert_eq!(r.noise.steal_trials, Some(2));
    assert!((r.noise.steal_max.unwrap() - 0.12).abs() < 1e-12);
    assert!((r.noise.steal_median.unwrap() - 0.01).abs() < 1e-12);
    let doc = format!("{:?}", r.document());
    assert!(
        doc.contains("host CPU steal median 1.0% (max 12.0%)"),
        "{doc}"
    );
    let want = format!("5 % or more of this VM's CPU time in 2 of {n} trial windows");
    assert!(doc.contains(&want), "{want} not in {doc}");
    let j = serde_json::to_value(&r.noise).unwrap();
    assert_eq!(j["steal_trials"], 2);
    assert!((j["steal_max_pct"].as_f64().unwrap() - 12.0).abs() < 1e-9);
    // Below the threshold everywhere: the figure stays, the warning goes.
    for t in r.trials.iter_mut() {
        t.host_cpu.as_mut().unwrap().steal_pct = 4.9;
    }
    r.noise = noise(&r.results).with_steal(&r.trials);
    assert_eq!(r.noise.steal_trials, Some(0));
    let doc = format!("{:?}", r.document());
    assert!(doc.contains("host CPU steal median 4.9%"), "{doc}");
    assert!(!doc.contains("of this VM's CPU time"), "{doc}");
}

#[test]
fn document_has_tables_with_units_series_and_the_recommendation() {
    let r = report();
    assert_eq!(r.recommendation.setting.as_deref(), Some("mq-deadline"));
    let doc = r.document();
    let tables: Vec<&Table> = doc
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .collect();
    // One per workload (nothing was restored in this synthetic run).
    assert_eq!(tables.len(), 2);
    let heads = |t: &Table| t.columns.iter().map(|c| c.header()).collect::<Vec<_>>();
    let mixed = heads(tables[0]);
    assert!(
        mixed.contains(&"throughput (IOPS)".to_string()),
        "{mixed:?}"
    );
    // none's mixed p99 is 20 ms: shown in ms.
    assert!(mixed.contains(&"read p99 (ms)".to_string()), "{mixed:?}");
    assert!(
        mixed.contains(&"bandwidth (MiB/s)".to_string()),
        "{mixed:?}"
    );
    let oltp = heads(tables[1]);
    assert!(oltp.contains(&"throughput (tps)".to_string()), "{oltp:?}");
    assert!(!oltp.iter().any(|h| h.contains("MiB/s")), "{oltp:?}");
    let series: Vec<&Series> = doc
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Series(s) => Some(s),
            _ => None,
        })
        .collect();
    let (with_ci, pcts): (Vec<&Series>, Vec<&Series>) = series
        .iter()
        .partition(|s| s.title.ends_with("(median, 95% CI)"));
    assert_eq!(with_ci.len(), 4, "throughput and p99 per workload");
    for s in &with_ci {
        assert_eq!(s.kind, ChartKind::Bar);
        for p in &s.lines[0].points {
            let (lo, hi) = p.ci.unwrap();
            assert!(lo <= p.y && p.y <= hi, "{s:?}");
        }
    }
    // And the latency percentiles per candidate, medians of the trials.
    assert_eq!(pcts.len(), 2, "one per workload: {pcts:?}");
    for s in &pcts {
        assert!(
            s.title.contains("latency percentiles per candidate"),
            "{s:?}"
        );
        for l in &s.lines {
            assert_eq!(l.points.len(), 2, "both candidates: {l:?}");
        }
    }

    let text = render(
        &r,
        &crate::export::text::Text::new(crate::output::Style::plain()),
    );
    assert!(
        text.contains("Recommendation: change to mq-deadline (a pending change, exit 1)"),
        "{text}"
    );
    assert!(text.contains("mixed (IOPS)"), "{text}");
    assert!(text.contains("Ran:"), "{text}");
    assert!(text.contains("3m00s"), "elapsed 179.6 s: {text}");
    assert!(!text.contains("\n\n\n"), "no empty blocks: {text}");
    let md = render(&r, &crate::export::markdown::Markdown);
    assert!(
        md.contains("| candidate | throughput (IOPS) | 95% CI (IOPS) |"),
        "{md}"
    );
    assert!(md.contains("p99 (ms)"), "{md}");
}

/// A sequential sweep's report names where it stopped, what that
/// saved, and the round of each verdict (text and JSON).
#[test]
fn sequential_report_names_the_round_of_each_verdict() {
    let mut r = report();
    let mut s = super::super::verdicts::Sequential::new(0.05, 2, 2, 10, false);
    s.rounds_run = 5;
    for (i, v) in r.verdicts.iter_mut().enumerate() {
        v.sequential = Some(super::super::verdicts::Reached {
            round: 5,
            crossed: i == 0,
            level: 0.0043,
            ran_to_budget: false,
        });
    }
    s.verdicts = r.verdicts.clone();
    r.sequential = Some(SequentialSummary::new(&s, Some(5), 50.0));
    let sq = r.sequential.as_ref().unwrap();
    assert!(sq.stopped_early && sq.saved_rounds == 5);
    assert!((sq.saved_s - 50.0).abs() < 1e-9);
    let text = render(
        &r,
        &crate::export::text::Text::new(crate::output::Style::plain()),
    );
    assert!(
        text.contains("stopped after round 5 of at most 10"),
        "{text}"
    );
    assert!(text.contains("saved ≈ 50.0s (5 rounds)"), "{text}");
    assert!(text.contains("reached at round 5"), "{text}");
    assert!(
        text.contains("open when the sweep stopped at round 5"),
        "{text}"
    );
    assert!(text.contains("Sequential design"), "{text}");
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["sequential"]["rounds_run"], 5);
    assert_eq!(j["sequential"]["spending"], "pocock");
    assert_eq!(j["verdicts"][0]["sequential"]["round"], 5);
    assert_eq!(j["verdicts"][0]["sequential"]["crossed"], true);
    assert!(j["sequential"].get("settled").is_none(), "{j}");

    // A stop on a settled answer says why, in text and JSON.
    s.settled = Some(
        "none is vetoed: none starved reads in 1 of 5 mixed windows, mq-deadline in none of 5"
            .into(),
    );
    r.sequential = Some(SequentialSummary::new(&s, Some(5), 50.0));
    let text = render(
        &r,
        &crate::export::text::Text::new(crate::output::Style::plain()),
    );
    assert!(
        text.contains("stopped after round 5 of at most 10, the answer was settled: none is vetoed: none starved reads in 1 of 5"),
        "{text}"
    );
    let j = serde_json::to_value(&r).unwrap();
    assert!(j["sequential"]["settled"]
        .as_str()
        .unwrap()
        .starts_with("none is vetoed"));
    assert_reads_back(&r);
    // A run to the budget never reports a settled stop.
    s.rounds_run = 10;
    let sq = SequentialSummary::new(&s, None, 100.0);
    assert!(!sq.stopped_early && sq.settled.is_none());
    // `--sequential --rounds N` without `--budget`: all its rounds ran,
    // and the words do not claim a budget.
    let d = sq.describe();
    assert!(
        d.contains("ran all 10 planned rounds") && !d.contains("budget"),
        "{d}"
    );
    // Fixed designs keep their JSON: no sequential keys anywhere.
    let fixed = serde_json::to_value(report()).unwrap();
    assert!(fixed.get("sequential").is_none());
    assert!(fixed["verdicts"][0].get("sequential").is_none());
}

#[test]
fn json_has_units_in_keys() {
    let r = report();
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["min_effect_pct"], 3.0);
    assert!(j["plan"]["trial_s"].is_number(), "{}", j["plan"]);
    assert_eq!(j["recommendation"]["action"], "change");
    assert_eq!(j["recommendation"]["current_measured"], true);
    assert!(j.get("pairwise").is_none());
    // No key anywhere holds a slash, a dash or the old µs suffix.
    fn walk(v: &serde_json::Value, path: &str) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    // Device names are values, not keys; sysfs names
                    // (read_ahead_kb) are the attribute's own.
                    assert!(
                        !k.contains('/') && !k.contains('-') && !k.ends_with("_us"),
                        "{path}.{k}"
                    );
                    assert!(!x.is_null(), "{path}.{k} is null");
                    walk(x, &format!("{path}.{k}"));
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, path)),
            _ => {}
        }
    }
    walk(&j, "result");
}

/// `innotune report` reads the JSON back: every field (units converted
/// back), the same document.
fn assert_reads_back(r: &SweepReport) {
    let j = serde_json::to_value(r).unwrap();
    let back: SweepReport = serde_json::from_value(j.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), j);
    assert_eq!(
        format!("{:?}", back.document()),
        format!("{:?}", r.document())
    );
}

#[test]
fn reads_back_from_its_json() {
    assert_reads_back(&report());
}

/// The table and the recommendation agree: when an A/A pair measured
/// different, the recommendation calls the run's differences noise and the
/// table's verdict says it was vetoed; ratio intervals carry their level.
#[test]
fn a_a_noise_vetoes_the_table_verdict_and_intervals_name_their_level() {
    let plain = || crate::export::text::Text::new(crate::output::Style::plain());
    let r = report();
    assert!(r
        .verdicts
        .iter()
        .any(|v| v.verdict != Verdict::NoSignificantDifference));
    let text = render(&r, &plain());
    assert!(!text.contains("vetoed: A/A noise"), "{text}");
    // Two workloads: verdicts at 0.025, intervals at 97.5 %.
    assert!(text.contains("(97.5% CI), p = "), "{text}");
    // The same run, but the second candidate holds the baseline's setting.
    let mut aa = report();
    aa.candidates[1] = cand("mq-deadline", "none");
    let text = render(&aa, &plain());
    assert!(text.contains("vetoed: A/A noise"), "{text}");
    // Columns say what they are: OLTP's p99 is the transaction's; a bench
    // p99 names its direction.
    assert!(text.contains("transaction p99 (ms)"), "{text}");
    assert!(
        text.contains("read p99 (ms)") || text.contains("write p99 (ms)"),
        "{text}"
    );
}

/// mixed: 16 KiB reads (~3000 IOPS, p99 ~0.4 ms) beside 1 MiB writes
/// (~200 IOPS, p99 ~20 ms). The workload table's throughput adds them and
/// says so; a second table shows each direction with its own IOPS and
/// p99 and their intervals, and the JSON carries them apart.
#[test]
fn mixed_reads_and_writes_are_shown_apart() {
    let mut r = report();
    r.trials.retain(|t| t.workload != "mixed");
    for round in 0..5u32 {
        let j = round as f64;
        for c in ["none", "mq-deadline"] {
            r.trials.push(mixed_trial(
                round,
                c,
                (3000.0 + 10.0 * j, 400.0 + j),
                (200.0 + j, 20_000.0 + 100.0 * j),
            ));
        }
    }
    let t = &r.trials.last().unwrap();
    assert_eq!(t.throughput.value, 3004.0 + 40.0 + 204.0 - 4.0);
    assert_eq!(
        (t.read_iops_per_s, t.write_iops_per_s),
        (Some(3040.0), Some(204.0))
    );
    assert_eq!(t.write_bytes_per_s, Some(204.0 * 1048576.0));
    r.results = cells(&r.trials, &r.candidates, &r.workloads, 500, 1);

    let j = serde_json::to_value(&r).unwrap();
    let mixed = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == "mixed" && c["candidate"] == "none")
        .unwrap()
        .clone();
    let d = &mixed["directions"];
    assert_eq!(d["read_iops_per_s"]["median"], 3020.0, "{mixed:#}");
    assert_eq!(d["write_iops_per_s"]["median"], 202.0);
    assert_eq!(d["read_p99_ns"]["median"], 402_000);
    assert_eq!(d["write_p99_ns"]["median"], 20_200_000);
    assert_eq!(mixed["throughput"]["median"], 3222.0, "reads + writes");
    assert_eq!(mixed["p99_ns"]["median"], 402_000, "the reads' p99");
    // OLTP has no directions.
    let oltp = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == "oltp_read_write")
        .unwrap();
    assert!(oltp.get("directions").is_none(), "{oltp:#}");
    // It reads back.
    let back: SweepReport = serde_json::from_value(j).unwrap();
    assert!(back.results.iter().any(|c| c.directions.is_some()));

    let text = render(
        &r,
        &crate::export::text::Text::new(crate::output::Style::plain()),
    );
    assert!(
        text.contains("throughput, reads + writes (IOPS)") && text.contains("read p99 (ms)"),
        "{text}"
    );
    assert!(text.contains("mixed: reads and writes apart"), "{text}");
    let md = render(&r, &crate::export::markdown::Markdown);
    assert!(
        md.contains("| candidate | read IOPS | 95% CI | read p99 (ms) | 95% CI (ms) | write IOPS | 95% CI | write p99 (ms) | 95% CI (ms) |"),
        "{md}"
    );
    // The row of `none`: its own medians per direction.
    let row = md
        .lines()
        .find(|l| l.starts_with("| none | 3020 "))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        row.contains("| 202.0 |") && row.contains("| 20.20 |"),
        "{row}"
    );
    // A read-only workload gets no such table.
    let mut ro = report();
    ro.results = cells(&ro.trials, &ro.candidates, &ro.workloads, 500, 1);
    let text = render(
        &ro,
        &crate::export::text::Text::new(crate::output::Style::plain()),
    );
    assert!(!text.contains("reads and writes apart"), "{text}");
}
