//! Text rendering of a sweep: the practice's summary table (scheduler ×
//! workload: IOPS, MiB/s, p99, each with its CI), verdicts, one recommendation.

use super::report::SweepReport;
use crate::journal::Outcome;
use crate::output::{table, Style};
use crate::stats::{Summary, Verdict};
use std::io::{self, Write};

fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn with_ci(s: &Summary) -> String {
    format!("{} [{}–{}]", num(s.median), num(s.ci_low), num(s.ci_high))
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

pub(super) fn text(r: &SweepReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let devs: Vec<String> = r
        .devices
        .iter()
        .map(|d| format!("{} (was {})", d.name, d.scheduler))
        .collect();
    writeln!(
        out,
        "{} {} — switched: {}",
        style.bold("innotune sweep"),
        r.path.display(),
        devs.join(", ")
    )?;
    writeln!(out, "Stack: {}", r.stack.join(" → "))?;
    writeln!(out, "Plan: {}", r.plan.note)?;
    if let Some(o) = &r.oltp {
        let data = o
            .dataset_bytes
            .map(|b| format!(" ≈ {}", crate::units::fmt_size(b)))
            .unwrap_or_default();
        writeln!(
            out,
            "OLTP: {} on {} in {} (profile {}, buffer pool {}; {} × {} rows{data}, loaded in {:.0}s; {} threads). Throughput is transactions/s (tps), p99 the transaction's.",
            o.workloads.join(", "),
            o.server_version,
            o.sandbox_dir.display(),
            o.profile,
            crate::units::fmt_size(o.buffer_pool_bytes),
            o.tables,
            o.table_size,
            o.prepare_s,
            o.threads
        )?;
    }
    let n = &r.noise;
    let cv = |name: &str, m: Option<f64>, x: Option<f64>| match (m, x) {
        (Some(m), Some(x)) => Some(format!("{name} CV median {} (max {})", pct(m), pct(x))),
        _ => None,
    };
    let noise: Vec<String> = [
        cv("IOPS", n.iops_cv_median, n.iops_cv_max),
        cv("tps", n.tps_cv_median, n.tps_cv_max),
        cv("p99", n.p99_cv_median, n.p99_cv_max),
    ]
    .into_iter()
    .flatten()
    .collect();
    writeln!(
        out,
        "Ran {} trials in {:.0}s (seed {}); noise: {}",
        r.trials_run,
        r.elapsed_s,
        r.seed,
        noise.join(", ")
    )?;
    writeln!(out)?;

    let mut t = table::new(&[
        "workload",
        "candidate",
        "throughput [95% CI]",
        "MiB/s [95% CI]",
        "p99 µs [95% CI]",
        &format!("vs {}", r.baseline),
    ]);
    for c in &r.results {
        let verdict = if c.candidate == r.baseline {
            style.dim("baseline")
        } else {
            match r
                .verdicts
                .iter()
                .find(|v| v.candidate == c.candidate && v.workload == c.workload)
            {
                Some(v) => {
                    let s = v.verdict.as_str().to_string();
                    match v.verdict {
                        Verdict::Better => style.good(&s),
                        Verdict::Worse => style.bad(&s),
                        Verdict::NoSignificantDifference => s,
                    }
                }
                None => "-".into(),
            }
        };
        t.add_row(vec![
            c.workload.clone(),
            c.candidate.clone(),
            format!(
                "{} {}",
                with_ci(c.throughput.get()),
                c.throughput_unit.label()
            ),
            c.mib_s.as_ref().map(with_ci).unwrap_or_else(|| "-".into()),
            c.p99_us.as_ref().map(with_ci).unwrap_or_else(|| "-".into()),
            verdict,
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out)?;
    let alpha = 0.05 / r.workloads.len().max(1) as f64;
    writeln!(
        out,
        "Verdicts need a {} CI of the ratio to {} that excludes 1, an effect ≥ {}, and an exact rank test p ≤ {} (0.05 over {} workload{}).",
        pct(1.0 - alpha),
        r.baseline,
        pct(r.min_effect),
        num(alpha),
        r.workloads.len(),
        if r.workloads.len() == 1 { "" } else { "s" }
    )?;
    for v in r
        .verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::NoSignificantDifference)
    {
        let ratio = |c: &crate::stats::Comparison| match (c.ratio, c.ci_low, c.ci_high) {
            (Some(x), Some(l), Some(h)) => format!("{x:.2}× [{l:.2}–{h:.2}]"),
            _ => "-".into(),
        };
        writeln!(
            out,
            "  {} on {}: {} ({} {}, p99 {})",
            v.candidate,
            v.workload,
            v.verdict.as_str(),
            v.throughput_unit.label(),
            ratio(v.throughput.get()),
            v.p99_us.as_ref().map(ratio).unwrap_or_else(|| "-".into())
        )?;
    }
    let rec = &r.recommendation;
    writeln!(
        out,
        "{} {} — {}",
        style.bold("Recommendation:"),
        style.bold(&rec.candidate),
        rec.reason
    )?;
    let restored: Vec<String> = r
        .restored
        .iter()
        .filter(|x| x.kind == "sysfs" || matches!(x.outcome, Outcome::Failed { .. }))
        .map(|x| {
            let what = x.original.as_deref().unwrap_or("-");
            match &x.outcome {
                Outcome::Failed { reason } => {
                    style.bad(&format!("{} NOT restored: {reason}", x.path.display()))
                }
                _ => format!("{}={what}", x.path.display()),
            }
        })
        .collect();
    writeln!(out, "Restored: {}", restored.join(", "))?;
    Ok(())
}
