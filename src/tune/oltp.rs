//! The OLTP before/after phase: two throwaway servers whose datadirs are
//! on the tuned filesystem, one with the live server's InnoDB settings
//! ("before") and one with check's recommended values ("after"), both
//! sized to the sandbox's dataset, loaded alike, then driven through the
//! same thread ladder.
//!
//! Why two servers side by side instead of one restarted: a restart would
//! run "after" on the dataset "before"'s writes left behind, and a budget
//! that runs out would leave "before" measured and "after" not. Both run
//! at once (idle while the other is measured), and runs alternate pair by
//! pair (before/after, then after/before), so drift and a cut-off budget
//! hit both sides alike.

use crate::check::facts::{parse_size, Facts};
use crate::check::rules::{Advice, Setting};
use crate::journal::Guard;
use crate::oltp::{self, OltpOptions, OltpResult, Workload};
use crate::sandbox::{Profile, Sandbox, SandboxOpts};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// Server variables carried from the live server into "before" (when it
/// has them): the ones the practice's before/after table is about.
const CARRIED: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_log_buffer_size",
    "innodb_flush_method",
    "innodb_flush_log_at_trx_commit",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
];

/// Sizes that scale with the data: the live value × (sandbox data / live
/// data), with a floor the server accepts.
const SIZED: &[(&str, u64)] = &[
    ("innodb_buffer_pool_size", 16 << 20),
    ("innodb_log_file_size", 16 << 20),
    ("innodb_redo_log_capacity", 16 << 20),
];

/// Bytes a sysbench row takes with its index (as sweep measured).
const ROW_BYTES: u64 = 240;

/// One side's server variables, as given to the sandbox.
#[derive(Debug, Clone, Serialize)]
pub struct SandboxVars {
    /// `before` or `after`.
    pub side: String,
    /// name → value, in the order written to the profile file.
    pub variables: Vec<(String, String)>,
}

/// The profiles of both sides and how they were sized.
#[derive(Debug, Clone, Serialize)]
pub struct Profiles {
    pub before: SandboxVars,
    pub after: SandboxVars,
    /// Bytes of the sandbox's tables (estimated before loading).
    pub dataset_bytes: u64,
    /// Sandbox data / live data; None when the live data size is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// One sentence: where "before" came from and how it was sized.
    pub note: String,
}

/// Build "before" and "after" from the live server's variables and check's
/// advice. Without a reachable server "before" is the server's defaults.
pub fn profiles(facts: &Facts, advice: &[Advice], tables: u32, rows: u32) -> Profiles {
    let dataset = tables as u64 * rows as u64 * ROW_BYTES;
    let server = facts.server.as_ref();
    let live_data = server.and_then(|s| s.innodb_data_bytes).filter(|&b| b > 0);
    let scale = live_data.map(|l| dataset as f64 / l as f64);
    let size = |name: &str, v: &str| -> String {
        let Some(&(_, floor)) = SIZED.iter().find(|(n, _)| *n == name) else {
            return v.to_string();
        };
        let Some(bytes) = parse_size(v) else {
            return v.to_string();
        };
        let scaled = match scale {
            Some(f) => (bytes as f64 * f) as u64,
            // Unknown live data: a third of the dataset for the pool (as
            // sweep's OLTP default), redo left as is up to 256 MiB.
            None if name == "innodb_buffer_pool_size" => dataset / 3,
            None => bytes.min(256 << 20),
        };
        // Whole MiB: what every server version accepts without rounding notes.
        let mib = (scaled.max(floor) + (1 << 20) - 1) >> 20;
        format!("{mib}M")
    };
    let mut before = Vec::new();
    if let Some(s) = server {
        let has_capacity = s.var("innodb_redo_log_capacity").is_some();
        for &name in CARRIED {
            if name == "innodb_log_file_size" && has_capacity {
                continue;
            }
            if let Some(v) = s.var(name) {
                before.push((name.to_string(), size(name, v)));
            }
        }
    } else {
        before.push((
            "innodb_buffer_pool_size".to_string(),
            size("innodb_buffer_pool_size", "0"),
        ));
    }
    let mut after = before.clone();
    for a in advice {
        for st in &a.settings {
            if let Setting::ServerVariable { name, value, .. } = st {
                let v = size(name, value);
                match after.iter_mut().find(|(n, _)| n == name) {
                    Some(e) => e.1 = v,
                    None => after.push((name.clone(), v)),
                }
            }
        }
    }
    let note = match (server, scale) {
        (Some(s), Some(f)) => format!(
            "before: {}'s InnoDB settings; sizes scaled by {f:.3} (sandbox data {} / live data {}); after: the same with check's recommended values",
            s.label(),
            crate::units::fmt_size(dataset),
            crate::units::fmt_size(live_data.unwrap_or(0))
        ),
        (Some(s), None) => format!(
            "before: {}'s InnoDB settings; live data size unknown, so the buffer pool is a third of the sandbox data ({}); after: the same with check's recommended values",
            s.label(),
            crate::units::fmt_size(dataset)
        ),
        (None, _) => format!(
            "no live server reached: before is the server's defaults with a buffer pool of a third of the sandbox data ({}); after adds check's recommended values",
            crate::units::fmt_size(dataset)
        ),
    };
    Profiles {
        before: SandboxVars {
            side: "before".into(),
            variables: before,
        },
        after: SandboxVars {
            side: "after".into(),
            variables: after,
        },
        dataset_bytes: dataset,
        scale,
        note,
    }
}

impl Profiles {
    /// Nothing differs: measuring both would compare a server with itself.
    pub fn identical(&self) -> bool {
        self.before.variables == self.after.variables
    }
}

/// One run's numbers.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct Measure {
    pub tps_per_s: f64,
    pub queries_per_s: f64,
    /// Transaction p95; absent when the run had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_ns: Option<u64>,
}

impl Measure {
    fn of(r: &OltpResult) -> Measure {
        Measure {
            tps_per_s: r.tps,
            queries_per_s: r.qps,
            p95_ns: r
                .latency_ms
                .percentile_value
                .map(crate::oltp::result::ms_to_ns),
        }
    }
}

/// Before and after at one workload and thread count.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Pair {
    pub workload: String,
    pub threads: u32,
    pub before: Measure,
    pub after: Measure,
}

impl Pair {
    /// after / before − 1, in percent.
    pub fn tps_change_pct(&self) -> Option<f64> {
        (self.before.tps_per_s > 0.0)
            .then(|| (self.after.tps_per_s / self.before.tps_per_s - 1.0) * 100.0)
    }
}

/// What the phase measured (JSON: `oltp` of tune.json).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub profiles: Profiles,
    pub tables: u32,
    pub table_size: u32,
    pub server_version: String,
    /// Measured window of each run.
    pub window_s: f64,
    pub pairs: Vec<Pair>,
    /// Pairs planned (workloads × thread counts).
    pub planned: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Every run of each side, for oltp-before.json / oltp-after.json.
    #[serde(skip)]
    pub runs_before: Vec<OltpResult>,
    #[serde(skip)]
    pub runs_after: Vec<OltpResult>,
}

/// The workloads of the practice's table.
pub const WORKLOADS: [Workload; 2] = [Workload::OltpReadOnly, Workload::OltpReadWrite];

struct Side {
    sb: Sandbox,
    /// The journal's handles for the server, undone once it is stopped.
    journaled: Vec<u64>,
}

fn start(
    guard: &Guard,
    dir: &Path,
    vars: &SandboxVars,
    profile_file: &Path,
    opts: &OltpOptions,
) -> Result<Side> {
    let mut text = format!(
        "# innotune tune: the {} sandbox's server variables\n",
        vars.side
    );
    for (k, v) in &vars.variables {
        text.push_str(&format!("{k} = {v}\n"));
    }
    crate::export::write_atomic(profile_file, text.as_bytes())?;
    let profile = Profile::parse(&profile_file.to_string_lossy())?;
    let (sb, journaled) = Sandbox::start_journaled(
        SandboxOpts {
            profile,
            ..SandboxOpts::new(dir)
        },
        guard,
    )
    .with_context(|| format!("starting the {} server", vars.side))?;
    oltp::prepare(&sb.conn_spec(), opts, opts.threads.max(2))
        .with_context(|| format!("loading the {} server's tables", vars.side))?;
    Ok(Side { sb, journaled })
}

fn stop(side: Side, guard: &Guard) -> Result<()> {
    side.sb.stop()?;
    for id in side.journaled {
        guard.undo(id)?;
    }
    Ok(())
}

/// Everything the phase needs.
pub struct Phase<'a> {
    pub guard: &'a Guard,
    /// A journaled directory on the tuned filesystem (short: socket paths).
    pub workdir: &'a Path,
    /// Where the profile files are kept (the report's directory).
    pub profile_dir: &'a Path,
    pub profiles: Profiles,
    pub tables: u32,
    pub table_size: u32,
    pub threads: &'a [u32],
    /// When the phase must be done.
    pub deadline: Instant,
    pub progress: &'a dyn Fn(String),
    /// Called after every pair with what is measured so far.
    pub on_pair: &'a mut dyn FnMut(&Comparison),
}

/// Time a run costs beyond its window: connecting, preparing statements.
const RUN_OVERHEAD: Duration = Duration::from_millis(700);

/// Start both servers, load them, run the ladder, stop them.
pub fn run(p: Phase<'_>) -> Result<Comparison> {
    let base = OltpOptions {
        tables: p.tables,
        table_size: p.table_size,
        threads: 4,
        ..Default::default()
    };
    (p.progress)(format!(
        "starting the before and after servers in {} and loading {} × {} rows each",
        p.workdir.display(),
        p.tables,
        p.table_size
    ));
    let before = start(
        p.guard,
        &p.workdir.join("b"),
        &p.profiles.before,
        &p.profile_dir.join("sandbox-before.cnf"),
        &base,
    )?;
    let after = start(
        p.guard,
        &p.workdir.join("a"),
        &p.profiles.after,
        &p.profile_dir.join("sandbox-after.cnf"),
        &base,
    )?;
    let planned = WORKLOADS.len() * p.threads.len();
    let left = p.deadline.saturating_duration_since(Instant::now());
    // Two warm-ups and two runs per pair share what is left.
    let per_run = left
        .div_f64((2 * planned + 2) as f64)
        .saturating_sub(RUN_OVERHEAD);
    let window = per_run.clamp(Duration::from_secs(1), Duration::from_secs(60));
    let mut cmp = Comparison {
        profiles: p.profiles.clone(),
        tables: p.tables,
        table_size: p.table_size,
        server_version: before.sb.version().raw,
        window_s: window.as_secs_f64(),
        pairs: Vec::new(),
        planned,
        note: None,
        runs_before: Vec::new(),
        runs_after: Vec::new(),
    };
    let run_on = |side: &Side, w: Workload, threads: u32, time: Duration| {
        oltp::run_workload(
            &side.sb.conn_spec(),
            &OltpOptions {
                workload: w,
                threads,
                time: Some(time),
                ..base.clone()
            },
        )
    };
    // A warm-up on each, so neither side's first run is the cold one.
    (p.progress)("warming up both servers".into());
    for s in [&before, &after] {
        run_on(
            s,
            Workload::OltpReadOnly,
            4,
            window.min(Duration::from_secs(3)),
        )
        .context("warm-up")?;
    }
    let mut step = 0usize;
    'ladder: for w in WORKLOADS {
        for &t in p.threads {
            let need = (window + RUN_OVERHEAD) * 2;
            if Instant::now() + need > p.deadline {
                cmp.note = Some(format!(
                    "the budget ran out after {} of {planned} before/after pairs",
                    cmp.pairs.len()
                ));
                break 'ladder;
            }
            (p.progress)(format!(
                "{} at {t} thread(s), before and after · pair {}/{planned}",
                w.name(),
                step + 1
            ));
            // Alternate which side goes first.
            let (rb, ra) = if step % 2 == 0 {
                let rb = run_on(&before, w, t, window).context("before")?;
                let ra = run_on(&after, w, t, window).context("after")?;
                (rb, ra)
            } else {
                let ra = run_on(&after, w, t, window).context("after")?;
                let rb = run_on(&before, w, t, window).context("before")?;
                (rb, ra)
            };
            cmp.pairs.push(Pair {
                workload: w.name().to_string(),
                threads: t,
                before: Measure::of(&rb),
                after: Measure::of(&ra),
            });
            cmp.runs_before.push(rb);
            cmp.runs_after.push(ra);
            (p.on_pair)(&cmp);
            step += 1;
        }
    }
    (p.progress)("stopping the before and after servers".into());
    stop(before, p.guard)?;
    stop(after, p.guard)?;
    Ok(cmp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::ServerFacts;

    fn facts(data: Option<u64>) -> Facts {
        let mut s = ServerFacts {
            flavor: "mariadb".into(),
            version: "10.11.6-MariaDB".into(),
            major: 10,
            minor: 11,
            patch: 6,
            innodb_data_bytes: data,
            ..Default::default()
        };
        for (k, v) in [
            ("innodb_buffer_pool_size", "1073741824"),
            ("innodb_log_file_size", "100663296"),
            ("innodb_flush_method", "fsync"),
            ("innodb_io_capacity", "200"),
        ] {
            s.variables.insert(k.into(), v.into());
        }
        Facts {
            server: Some(s),
            ..Default::default()
        }
    }

    fn advice(name: &str, value: &str) -> Advice {
        let f = crate::finding::Finding::new(
            "server.test",
            crate::finding::Severity::Warning,
            crate::finding::Layer::Server,
            crate::finding::Subject::new(crate::finding::SubjectKind::ServerVariable, name),
            "x",
            "y",
        );
        Advice::new(f).set(Setting::ServerVariable {
            name: name.into(),
            value: value.into(),
            dynamic: true,
            reason: "test".into(),
        })
    }

    #[test]
    fn sizes_scale_with_the_data_and_after_overlays_advice() {
        // 2 × 20,000 rows × 240 B = 9,600,000 B of sandbox data against
        // 4 GiB live: the 1 GiB pool becomes 2.4 MB, floored at 16 MiB.
        let p = profiles(
            &facts(Some(4 << 30)),
            &[
                advice("innodb_io_capacity", "2000"),
                advice("innodb_buffer_pool_size", "8G"),
            ],
            2,
            20_000,
        );
        let get = |v: &SandboxVars, n: &str| {
            v.variables
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get(&p.before, "innodb_buffer_pool_size").unwrap(), "16M");
        assert_eq!(get(&p.before, "innodb_io_capacity").unwrap(), "200");
        assert_eq!(get(&p.after, "innodb_io_capacity").unwrap(), "2000");
        // 8 GiB × 9.6 MB / 4 GiB = 19.2 MB → 19M (whole MiB, rounded up).
        assert_eq!(get(&p.after, "innodb_buffer_pool_size").unwrap(), "19M");
        assert_eq!(get(&p.before, "innodb_flush_method").unwrap(), "fsync");
        assert!(!p.identical());
        assert!(p.note.contains("scaled"), "{}", p.note);
    }

    #[test]
    fn no_server_means_defaults_and_identical_without_advice() {
        let p = profiles(&Facts::default(), &[], 2, 20_000);
        assert!(p.identical());
        assert!(p.note.starts_with("no live server"), "{}", p.note);
    }
}
