//! The OLTP before/after phase: two throwaway servers whose datadirs are
//! on the tuned filesystem, one with the live server's InnoDB settings
//! ("before") and one with check's recommended values ("after"), both
//! sized to the sandbox's dataset, loaded alike, then driven through the
//! same thread ladder.
//!
//! Why two servers side by side instead of one restarted: a restart would
//! run "after" on the dataset "before"'s writes left behind, and a budget
//! that runs out would leave "before" measured and "after" not. Both run
//! at once (idle while the other is measured).
//!
//! The comparison is an experiment, not a table of single runs: both
//! servers are loaded and warmed before anything is timed; the budget left
//! is planned into cells (workload × threads) of at least [`MIN_ROUNDS`]
//! rounds each ([`plan_cells`]: fewer cells, never fewer rounds); each
//! round runs every cell once on each side, the cells in a shuffled order
//! and which side goes first drawn per cell (seeded, `--seed`), so drift
//! and a cut-off budget hit both sides alike. Each cell's TPS per round
//! are compared with [`crate::stats::effect::compare_effect`]: the ratio
//! after/before, its exact interval, and one of the verdict words.

use crate::check::facts::{parse_size, Facts};
use crate::check::rules::{Advice, Setting};
use crate::journal::Guard;
use crate::oltp::{self, OltpOptions, OltpResult, Workload};
use crate::sandbox::{Profile, Sandbox, SandboxOpts};
use crate::stats::effect::{compare_effect, Effect};
use crate::stats::sequential::Boundaries;
use crate::stats::{CompareOpts, Direction};
use anyhow::{Context, Result};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
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
/// data), with a floor the server accepts. The buffer pool's is 6 MiB, the
/// least both take at 16 KiB pages (MariaDB 10.11 refuses to start below
/// it: "innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB";
/// MySQL 8's minimum is 5 MiB): a higher floor changes the ratio
/// of pool to data the sandbox is meant to keep. With 16 MiB, `tune
/// --quick` (about 9 MiB of rows) gave an 8 MiB live pool under ~40 MiB of
/// data the same 16 MiB "before" and "after", a pool larger than the data
/// on both sides, and so nothing to compare (bench/log/2026-11-29.md).
const SIZED: &[(&str, u64)] = &[
    ("innodb_buffer_pool_size", 6 << 20),
    ("innodb_log_file_size", 16 << 20),
    ("innodb_redo_log_capacity", 16 << 20),
];

/// Bytes a sysbench row takes with its index (as sweep measured).
const ROW_BYTES: u64 = 240;

/// One side's server variables, as given to the sandbox.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SandboxVars {
    /// `before` or `after`.
    pub side: String,
    /// name → value, in the order written to the profile file.
    pub variables: Vec<(String, String)>,
}

/// The profiles of both sides and how they were sized.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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
    /// Durability trade-offs check recommended: in "after" only with
    /// `--allow-durability-tradeoffs`, with what a crash loses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub durability: Vec<Tradeoff>,
}

/// Build "before" and "after" from the live server's variables and check's
/// advice. Without a reachable server "before" is the server's defaults.
pub fn profiles(
    facts: &Facts,
    advice: &[Advice],
    tables: u32,
    rows: u32,
    allow_durability_tradeoffs: bool,
) -> Profiles {
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
    let mut durability = Vec::new();
    for a in advice {
        for st in &a.settings {
            if let Setting::ServerVariable { name, value, .. } = st {
                let v = size(name, value);
                let was = before
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.as_str());
                if let Some(loses) = durability_loss(name, &v).filter(|_| was != Some(v.as_str())) {
                    durability.push(Tradeoff {
                        name: name.clone(),
                        value: v.clone(),
                        loses,
                        measured: allow_durability_tradeoffs,
                    });
                    if !allow_durability_tradeoffs {
                        continue;
                    }
                }
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
        durability,
    }
}

/// A durability trade-off check recommended, and whether "after" has it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Tradeoff {
    pub name: String,
    pub value: String,
    /// What a crash loses with it, in words.
    pub loses: String,
    /// In "after" (`--allow-durability-tradeoffs`); else held back.
    pub measured: bool,
}

/// What a crash loses with `name = value`, when that weakens durability
/// (innodb_flush_log_at_trx_commit ≠ 1, sync_binlog ≠ 1, the doublewrite
/// buffer off); None when it does not.
pub fn durability_loss(name: &str, value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    match name {
        "innodb_flush_log_at_trx_commit" => match v.as_str() {
            "0" => Some("up to ~1 s of committed transactions on a mysqld crash, an OS crash or a power loss (the redo log is written and flushed once a second)".into()),
            "2" => Some("up to ~1 s of committed transactions on an OS crash or power loss (the redo log is written at commit but flushed once a second; a mysqld crash alone loses none)".into()),
            _ => None,
        },
        "sync_binlog" => match v.parse::<u64>() {
            Ok(0) => Some("binary log events the OS had not yet written, on an OS crash or power loss: replicas and point-in-time recovery can miss transactions InnoDB kept".into()),
            Ok(n) if n > 1 => Some(format!("up to {n} binary log commit groups on an OS crash or power loss: replicas and point-in-time recovery can miss transactions InnoDB kept")),
            _ => None,
        },
        // MySQL 8.0.30's DETECT_ONLY keeps the metadata but not the pages.
        "innodb_doublewrite" => matches!(v.as_str(), "0" | "off" | "false" | "detect_only").then(|| {
            "the repair of torn pages: an OS crash or power loss during a page write can leave a page half written, and InnoDB cannot recover it (a corrupted table)".to_string()
        }),
        _ => None,
    }
}

/// Server variables whose value a sandbox's OLTP run cannot show: logging
/// (what is logged, where, after how long). A difference only in these is
/// no difference for the comparison.
pub fn invisible(name: &str) -> bool {
    name.starts_with("log_")
        || matches!(
            name,
            "slow_query_log"
                | "slow_query_log_file"
                | "long_query_time"
                | "general_log"
                | "general_log_file"
                | "min_examined_row_limit"
                | "log_output"
        )
}

impl Profiles {
    /// The variables "after" sets differently from "before" that a sandbox
    /// can show (logging variables left out).
    pub fn differences(&self) -> Vec<String> {
        let get = |v: &SandboxVars, n: &str| {
            v.variables
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        let mut names: Vec<&String> = self.before.variables.iter().map(|(k, _)| k).collect();
        for (k, _) in &self.after.variables {
            if !names.contains(&k) {
                names.push(k);
            }
        }
        names
            .into_iter()
            .filter(|n| !invisible(n))
            .filter(|n| get(&self.before, n) != get(&self.after, n))
            .cloned()
            .collect()
    }

    /// Nothing a sandbox can show differs: measuring both would compare a
    /// server with itself.
    pub fn identical(&self) -> bool {
        self.differences().is_empty()
    }

    /// Why there is nothing to compare (one line), or None when "after"
    /// differs from "before" in something a sandbox can show.
    pub fn nothing_to_compare(&self) -> Option<String> {
        if !self.identical() {
            return None;
        }
        let only: Vec<String> = self
            .after
            .variables
            .iter()
            .filter(|(k, v)| {
                self.before
                    .variables
                    .iter()
                    .find(|(b, _)| b == k)
                    .map(|(_, bv)| bv)
                    != Some(v)
            })
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let mut why = if only.is_empty() {
            "check recommends no server variable change, so \"after\" would be \"before\""
                .to_string()
        } else {
            format!(
                "\"after\" differs from \"before\" only in logging ({}), which an OLTP run cannot show",
                only.join(", ")
            )
        };
        let held: Vec<String> = self
            .durability
            .iter()
            .filter(|t| !t.measured)
            .map(|t| format!("{} = {}", t.name, t.value))
            .collect();
        if !held.is_empty() {
            why.push_str(&format!(
                "; held back as durability trade-offs: {} (measure with --allow-durability-tradeoffs)",
                held.join(", ")
            ));
        }
        Some(format!(
            "nothing to compare: {why}; no before/after is presented as the advice's effect"
        ))
    }
}

/// A ratio, or docs/json.md's `{"unknown": reason}` where there is none.
fn known_ratio<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_f64(*x),
        None => crate::host::Known::<f64>::unknown(
            "no ratio: a side has no rounds or a median TPS of 0",
        )
        .serialize(s),
    }
}

fn known_ratio_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let k = <crate::host::Known<f64> as serde::Deserialize>::deserialize(d)?;
    Ok(k.value().copied())
}

/// Significance level of each cell's comparison (as sweep's, uncorrected:
/// each cell answers its own question).
pub const ALPHA: f64 = 0.05;
/// Fewest rounds a cell is planned with: 4 against 4 is the smallest
/// design whose exact rank test can reach [`ALPHA`] (p = 2/70).
pub const MIN_ROUNDS: u32 = 4;
/// Most rounds a cell is planned with (sequential stopping may end it
/// sooner): beyond this, a longer window is worth more than another round.
pub const MAX_ROUNDS: u32 = 10;
/// Shortest measured window of a run: at one thread half a second holds
/// hundreds of transactions. With it the 140 s default's cells matched a
/// 10-minute run's verdicts in 7 and 8 of 10 (the others: small effects
/// called faster by one run and no difference by the other;
/// bench/tune-time.sh, bench/log/2026-11-29.md).
pub const MIN_WINDOW: Duration = Duration::from_millis(500);
/// The window a plan aims at before adding rounds.
pub const TARGET_WINDOW: Duration = Duration::from_secs(3);
/// Longest window of a run.
pub const MAX_WINDOW: Duration = Duration::from_secs(30);
/// Time a run costs beyond its window: connecting, preparing statements,
/// the status reads, joining the threads. Measured: 22–74 ms a run from 1
/// to 32 threads, as a whole `innotune oltp run --time 1` process against
/// a sandbox (bench/log/2026-11-29.md); 700 ms before, which planned the
/// default budget's cells at a 1 s window where they had room for 0.5 s.
pub const RUN_OVERHEAD: Duration = Duration::from_millis(100);
/// Each side's warm-up run per workload, before anything is timed.
pub const WARMUP: Duration = Duration::from_secs(2);

/// One workload at one thread count: the unit of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellKey {
    pub workload: Workload,
    pub threads: u32,
}

/// A cell the budget left out, and why.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Dropped {
    pub workload: String,
    pub threads: u32,
    pub why: String,
}

/// How the phase spends its time: which cells, how many rounds, how long
/// each run.
#[derive(Debug, Clone, PartialEq)]
pub struct CellPlan {
    /// Kept cells, in the ladder's order (workload, then threads).
    pub cells: Vec<CellKey>,
    pub dropped: Vec<Dropped>,
    pub rounds: u32,
    pub window: Duration,
}

/// Cost of one round of one cell: a run on each side.
fn round_cost(window: Duration) -> Duration {
    (window + RUN_OVERHEAD) * 2
}

/// The thread counts of `threads` in the order cells are kept: the
/// ladder's middle first, then outwards (lower before higher), so a small
/// budget measures a typical concurrency rather than one extreme.
fn thread_priority(threads: &[u32]) -> Vec<u32> {
    let n = threads.len();
    if n == 0 {
        return Vec::new();
    }
    let mid = (n - 1) / 2;
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by_key(|&i| {
        let d = (i as i64 - mid as i64).unsigned_abs();
        (d, i > mid)
    });
    idx.into_iter().map(|i| threads[i]).collect()
}

/// Plan the cells of `workloads` × `threads` into `available`. The budget
/// is spent on fewer cells, never on fewer rounds: as many cells as fit
/// with [`MIN_ROUNDS`] rounds of [`MIN_WINDOW`] are kept (in
/// [`thread_priority`] order, every workload at a thread count before the
/// next count), the others are dropped with the reason; then rounds rise
/// towards [`MAX_ROUNDS`] while a round's window stays at least
/// [`TARGET_WINDOW`], and what is left lengthens the window. An error
/// (one line, with the fix) when not even one cell fits.
pub fn plan_cells(
    workloads: &[Workload],
    threads: &[u32],
    available: Duration,
) -> std::result::Result<CellPlan, crate::error::Fix> {
    let all: Vec<CellKey> = workloads
        .iter()
        .flat_map(|&w| {
            threads.iter().map(move |&t| CellKey {
                workload: w,
                threads: t,
            })
        })
        .collect();
    let min_cell = round_cost(MIN_WINDOW) * MIN_ROUNDS;
    let fit = (available.as_secs_f64() / min_cell.as_secs_f64()).floor() as usize;
    if fit == 0 || all.is_empty() {
        return Err(crate::error::Fix::new(
            format!(
                "{:.0} s left for the OLTP comparison, and one cell needs {:.0} s ({MIN_ROUNDS} rounds of a {:.0} s run on each side)",
                available.as_secs_f64(),
                min_cell.as_secs_f64(),
                MIN_WINDOW.as_secs_f64()
            ),
            "give tune a longer --budget, or fewer --threads",
        ));
    }
    let mut order: Vec<CellKey> = Vec::new();
    for t in thread_priority(threads) {
        for &w in workloads {
            order.push(CellKey {
                workload: w,
                threads: t,
            });
        }
    }
    let n = fit.min(all.len());
    let kept: Vec<CellKey> = order[..n].to_vec();
    let cells: Vec<CellKey> = all.iter().copied().filter(|c| kept.contains(c)).collect();
    let dropped = all
        .iter()
        .filter(|c| !kept.contains(c))
        .map(|c| Dropped {
            workload: c.workload.name().to_string(),
            threads: c.threads,
            why: format!(
                "the budget fits {n} of {} cells at {MIN_ROUNDS} rounds ({:.0} s left, {:.0} s a cell at least); cells nearest the middle of the thread ladder were kept",
                all.len(),
                available.as_secs_f64(),
                min_cell.as_secs_f64()
            ),
        })
        .collect();
    let per_cell = available.as_secs_f64() / n as f64;
    let rounds = ((per_cell / round_cost(TARGET_WINDOW).as_secs_f64()).floor() as u32)
        .clamp(MIN_ROUNDS, MAX_ROUNDS);
    let window = Duration::from_secs_f64(
        (per_cell / (2.0 * rounds as f64) - RUN_OVERHEAD.as_secs_f64()).max(0.0),
    )
    .clamp(MIN_WINDOW, MAX_WINDOW);
    Ok(CellPlan {
        cells,
        dropped,
        rounds,
        window,
    })
}

/// One cell's result: every round's TPS on each side, and the comparison
/// of after with before (JSON: `oltp.cells[]`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Cell {
    pub workload: String,
    pub threads: u32,
    /// Rounds measured (one run on each side per round).
    pub rounds: u32,
    /// Medians over the rounds.
    pub before_tps_per_s: f64,
    pub after_tps_per_s: f64,
    /// Hodges–Lehmann ratio after / before of TPS, and its exact interval.
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ratio: Option<f64>,
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ci_low: Option<f64>,
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ci_high: Option<f64>,
    /// The interval's level, percent (95 unless a sequential look's level).
    pub ci_level_pct: f64,
    /// Two-sided exact rank-sum p-value.
    pub p: f64,
    pub verdict: Effect,
    /// The round at which the sequential design declared the verdict
    /// (absent: fixed design, or it ran all its rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at_round: Option<u32>,
    /// Every round's TPS, in round order.
    pub before_rounds_tps_per_s: Vec<f64>,
    pub after_rounds_tps_per_s: Vec<f64>,
    /// Median transaction p95 over the rounds; absent when no run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_p95_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_p95_ns: Option<u64>,
}

impl Cell {
    /// `1.23× (95 % CI 1.10–1.35)`, or why there is no ratio.
    pub fn ratio_text(&self) -> String {
        match (self.ratio, self.ci_low, self.ci_high) {
            (Some(r), Some(l), Some(h)) => {
                format!("{r:.3}× ({:.0} % CI {l:.3}–{h:.3})", self.ci_level_pct)
            }
            (Some(r), _, _) => format!("{r:.3}× (no interval)"),
            _ => "no ratio".into(),
        }
    }
}

/// What the phase measured (JSON: `oltp` of tune.json).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Comparison {
    pub profiles: Profiles,
    pub tables: u32,
    pub table_size: u32,
    pub server_version: String,
    /// Measured window of each run.
    pub window_s: f64,
    /// Rounds planned per cell (each cell gets them all unless sequential
    /// stopping ends it sooner or the budget runs out).
    pub rounds_planned: u32,
    /// Seed of the round order (`--seed` repeats it).
    pub seed: u64,
    /// Each side's warm-up before anything was timed, per workload.
    pub warmup_s: f64,
    /// Whether each cell is looked at after every round (group-sequential,
    /// Pocock-type boundaries at [`ALPHA`]) and stopped once it crosses.
    pub sequential: bool,
    pub cells: Vec<Cell>,
    /// Cells of the ladder the budget left out.
    pub dropped: Vec<Dropped>,
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

/// One cell's rounds so far.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub before: Vec<f64>,
    pub after: Vec<f64>,
    pub before_p95: Vec<u64>,
    pub after_p95: Vec<u64>,
    pub stopped_at: Option<u32>,
}

fn median_u64(xs: &[u64]) -> Option<u64> {
    if xs.is_empty() {
        return None;
    }
    let v: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    Some(crate::stats::median(&v).round() as u64)
}

/// The comparison of one cell's rounds at level `alpha` (0: no look of the
/// sequential design could cross with these rounds: `too few rounds`,
/// with the interval shown at [`ALPHA`]).
pub fn judge(key: CellKey, s: &Samples, alpha: f64, seed: u64) -> Cell {
    let at = if alpha > 0.0 { alpha } else { ALPHA };
    let opts = CompareOpts {
        alpha: at,
        seed,
        ..Default::default()
    };
    let (c, mut e) = compare_effect(&s.before, &s.after, Direction::HigherIsBetter, &opts);
    if alpha <= 0.0 {
        e = Effect::TooFewRounds;
    }
    Cell {
        workload: key.workload.name().to_string(),
        threads: key.threads,
        rounds: s.before.len().min(s.after.len()) as u32,
        before_tps_per_s: crate::stats::median(&s.before),
        after_tps_per_s: crate::stats::median(&s.after),
        ratio: c.ratio,
        ci_low: c.ci_low,
        ci_high: c.ci_high,
        ci_level_pct: c.ci_level * 100.0,
        p: c.p_value,
        verdict: e,
        stopped_at_round: s.stopped_at,
        before_rounds_tps_per_s: s.before.clone(),
        after_rounds_tps_per_s: s.after.clone(),
        before_p95_ns: median_u64(&s.before_p95),
        after_p95_ns: median_u64(&s.after_p95),
    }
}

/// The order of one round: the cells still running, shuffled, each with
/// whether "after" runs first. Seeded: the same rng state gives the same
/// order.
pub fn round_order(active: &[usize], rng: &mut SmallRng) -> Vec<(usize, bool)> {
    let mut order = active.to_vec();
    order.shuffle(rng);
    order.into_iter().map(|i| (i, rng.gen::<bool>())).collect()
}

/// The sequential design's look after `round` at cell `s`: the level to
/// judge at (0 when this look cannot cross).
fn look_level(bounds: Option<&Boundaries>, round: u32) -> f64 {
    match bounds {
        Some(b) => b.level(round),
        None => ALPHA,
    }
}

struct Side {
    sb: Sandbox,
    /// `the before server` or `the after server`, and its process: a run
    /// it dies in says which died.
    who: String,
    process: Option<crate::oltp::ServerProcess>,
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
    let who = format!("the {} server", vars.side);
    let process = crate::oltp::ServerProcess::of_pid(sb.pid());
    let died = |e: anyhow::Error| match &process {
        Some(p) => p.explain(e, &who),
        None => e,
    };
    oltp::prepare(&sb.conn_spec(), opts, opts.threads.max(2))
        .map_err(died)
        .with_context(|| format!("loading the {} server's tables", vars.side))?;
    Ok(Side {
        sb,
        who,
        process,
        journaled,
    })
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
    /// Seed of the round order.
    pub seed: u64,
    /// When the phase must be done.
    pub deadline: Instant,
    pub progress: &'a dyn Fn(String),
    /// Called after every round with what is measured so far.
    pub on_pair: &'a mut dyn FnMut(&Comparison),
}

/// The redo log a profile sets (`innodb_redo_log_capacity`, or
/// `innodb_log_file_size` × `innodb_log_files_in_group`), if any.
fn redo_bytes(vars: &SandboxVars) -> Option<u64> {
    let get = |k: &str| {
        vars.variables
            .iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| parse_size(v))
    };
    get("innodb_redo_log_capacity").or_else(|| {
        get("innodb_log_file_size").map(|s| s * get("innodb_log_files_in_group").unwrap_or(1))
    })
}

/// Both servers must fit on the tuned filesystem before either starts: a
/// server that runs out of space mid-load aborts (SIGABRT on a redo write)
/// rather than saying so, and the phase would fail with that instead of
/// the space it lacks.
fn refuse_without_room(p: &Phase<'_>) -> Result<()> {
    let need: u64 = [&p.profiles.before, &p.profiles.after]
        .iter()
        .map(|v| crate::trial::server::disk_estimate(p.tables, p.table_size, redo_bytes(v)))
        .sum();
    let Some(free) = crate::trial::space::free_bytes(p.workdir) else {
        return Ok(());
    };
    // The same 5 % headroom the sweep's file plan keeps.
    if (need as f64) * 1.05 <= free as f64 {
        return Ok(());
    }
    Err(crate::error::Fix::new(
        format!(
            "the before and after servers need ≈{} ({} × {} rows each, with their redo logs) and {}'s filesystem has {} free",
            crate::units::fmt_size(need),
            p.tables,
            p.table_size,
            p.workdir.display(),
            crate::units::fmt_size(free)
        ),
        "free space there, or tune a filesystem with more room",
    )
    .into())
}

/// Start both servers, load and warm them, plan the cells into what is
/// left, run the rounds, stop the servers.
pub fn run(p: Phase<'_>) -> Result<Comparison> {
    let base = OltpOptions {
        tables: p.tables,
        table_size: p.table_size,
        threads: 4,
        ..Default::default()
    };
    refuse_without_room(&p)?;
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
        .map_err(|e| match &side.process {
            Some(p) => p.explain(e, &side.who),
            None => e,
        })
    };
    // Both loaded and warmed, every workload on each, before anything is
    // timed: neither side's first timed run is its cold one.
    (p.progress)(format!(
        "warming up both servers ({} s per workload each)",
        WARMUP.as_secs()
    ));
    for w in WORKLOADS {
        for s in [&before, &after] {
            run_on(s, w, 4, WARMUP).context("warm-up")?;
        }
    }
    let left = p.deadline.saturating_duration_since(Instant::now());
    let plan = plan_cells(&WORKLOADS, p.threads, left)?;
    let bounds = (plan.rounds > MIN_ROUNDS).then(|| Boundaries::new(ALPHA, plan.rounds));
    let mut cmp = Comparison {
        profiles: p.profiles.clone(),
        tables: p.tables,
        table_size: p.table_size,
        server_version: before.sb.version().raw,
        window_s: plan.window.as_secs_f64(),
        rounds_planned: plan.rounds,
        seed: p.seed,
        warmup_s: WARMUP.as_secs_f64(),
        sequential: bounds.is_some(),
        cells: Vec::new(),
        dropped: plan.dropped.clone(),
        note: None,
        runs_before: Vec::new(),
        runs_after: Vec::new(),
    };
    (p.progress)(format!(
        "{} cell(s) × {} rounds of {:.1} s runs{}{}",
        plan.cells.len(),
        plan.rounds,
        plan.window.as_secs_f64(),
        if bounds.is_some() {
            ", each stopped once its verdict is clear"
        } else {
            ""
        },
        if plan.dropped.is_empty() {
            String::new()
        } else {
            format!("; {} cell(s) dropped for the budget", plan.dropped.len())
        }
    ));
    let mut rng = SmallRng::seed_from_u64(p.seed);
    let mut samples: Vec<Samples> = vec![Samples::default(); plan.cells.len()];
    let mut rounds_run = 0u32;
    let cells_now = |samples: &[Samples], round: u32| -> Vec<Cell> {
        plan.cells
            .iter()
            .zip(samples)
            .map(|(k, s)| {
                let r = s.stopped_at.unwrap_or(round);
                judge(*k, s, look_level(bounds.as_ref(), r), p.seed)
            })
            .collect()
    };
    'rounds: for round in 1..=plan.rounds {
        let active: Vec<usize> = (0..plan.cells.len())
            .filter(|&i| samples[i].stopped_at.is_none())
            .collect();
        if active.is_empty() {
            break;
        }
        for (i, after_first) in round_order(&active, &mut rng) {
            let k = plan.cells[i];
            if Instant::now() + round_cost(plan.window) > p.deadline {
                cmp.note = Some(format!(
                    "the budget ran out in round {round} of {}: cells have fewer rounds than planned",
                    plan.rounds
                ));
                break 'rounds;
            }
            (p.progress)(format!(
                "round {round}/{}: {} at {} thread(s), {} first",
                plan.rounds,
                k.workload.name(),
                k.threads,
                if after_first { "after" } else { "before" }
            ));
            let (rb, ra) = if after_first {
                let ra = run_on(&after, k.workload, k.threads, plan.window).context("after")?;
                let rb = run_on(&before, k.workload, k.threads, plan.window).context("before")?;
                (rb, ra)
            } else {
                let rb = run_on(&before, k.workload, k.threads, plan.window).context("before")?;
                let ra = run_on(&after, k.workload, k.threads, plan.window).context("after")?;
                (rb, ra)
            };
            let s = &mut samples[i];
            s.before.push(rb.tps);
            s.after.push(ra.tps);
            let m = |r: &OltpResult| {
                r.latency_ms
                    .percentile_value
                    .map(crate::oltp::result::ms_to_ns)
            };
            s.before_p95.extend(m(&rb));
            s.after_p95.extend(m(&ra));
            cmp.runs_before.push(rb);
            cmp.runs_after.push(ra);
        }
        rounds_run = round;
        // The sequential look: a cell whose verdict crossed its boundary
        // keeps it and runs no more rounds.
        if let Some(b) = &bounds {
            if round < plan.rounds && b.level(round) > 0.0 {
                for (i, k) in plan.cells.iter().enumerate() {
                    let s = &samples[i];
                    if s.stopped_at.is_none()
                        && judge(*k, s, b.level(round), p.seed).verdict.claims()
                    {
                        samples[i].stopped_at = Some(round);
                    }
                }
            }
        }
        cmp.cells = cells_now(&samples, round);
        (p.on_pair)(&cmp);
    }
    cmp.cells = cells_now(&samples, rounds_run);
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
        // 4 GiB live: the 1 GiB pool becomes 2.4 MB, floored at 6 MiB
        // (the least MariaDB starts with at 16 KiB pages).
        let p = profiles(
            &facts(Some(4 << 30)),
            &[
                advice("innodb_io_capacity", "2000"),
                advice("innodb_buffer_pool_size", "8G"),
            ],
            2,
            20_000,
            false,
        );
        let get = |v: &SandboxVars, n: &str| {
            v.variables
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get(&p.before, "innodb_buffer_pool_size").unwrap(), "6M");
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
        let p = profiles(&Facts::default(), &[], 2, 20_000, false);
        assert!(p.identical());
        assert!(p
            .nothing_to_compare()
            .unwrap()
            .contains("no server variable change"));
        assert!(p.note.starts_with("no live server"), "{}", p.note);
    }

    const W: [Workload; 2] = WORKLOADS;

    #[test]
    fn a_small_budget_drops_cells_not_rounds() {
        // One cell needs 4 × 2 × (0.5 + 0.1) s = 4.8 s: 12 s fits two.
        let p = plan_cells(&W, &[1, 4, 8, 16, 32], Duration::from_secs(12)).unwrap();
        assert_eq!(p.rounds, MIN_ROUNDS);
        assert_eq!(p.cells.len(), 2);
        // The ladder's middle (8 threads), both workloads.
        assert!(p.cells.iter().all(|c| c.threads == 8), "{:?}", p.cells);
        assert_eq!(p.dropped.len(), 8);
        assert!(
            p.dropped[0].why.contains("fits 2 of 10 cells"),
            "{}",
            p.dropped[0].why
        );
        assert!(p.window >= MIN_WINDOW);
        // Everything planned fits the budget.
        let cost = round_cost(p.window) * p.rounds * p.cells.len() as u32;
        assert!(cost <= Duration::from_secs(12), "{cost:?}");
    }

    #[test]
    fn a_large_budget_keeps_every_cell_and_adds_rounds_then_window() {
        let p = plan_cells(&W, &[1, 4, 8], Duration::from_secs(600)).unwrap();
        assert_eq!(p.cells.len(), 6);
        assert!(p.dropped.is_empty());
        assert_eq!(p.rounds, MAX_ROUNDS);
        assert!(p.window > TARGET_WINDOW, "{:?}", p.window);
        let cost = round_cost(p.window) * p.rounds * 6;
        assert!(cost <= Duration::from_secs(600), "{cost:?}");
        // Ladder order in the result: workload, then threads.
        assert_eq!(
            p.cells[0],
            CellKey {
                workload: W[0],
                threads: 1
            }
        );
        assert_eq!(
            p.cells[5],
            CellKey {
                workload: W[1],
                threads: 8
            }
        );
    }

    #[test]
    fn too_small_for_one_cell_is_one_line_with_a_fix() {
        let e = plan_cells(&W, &[4], Duration::from_secs(4)).unwrap_err();
        let line = crate::error::one_line(&anyhow::Error::from(e));
        assert!(line.contains("one cell needs 5 s"), "{line}");
        assert!(line.contains("--budget"), "{line}");
    }

    #[test]
    fn thread_priority_is_middle_out() {
        assert_eq!(thread_priority(&[1, 4, 8, 16, 32]), vec![8, 4, 16, 1, 32]);
        assert_eq!(thread_priority(&[1, 4, 8]), vec![4, 1, 8]);
        assert_eq!(thread_priority(&[2]), vec![2]);
    }

    #[test]
    fn round_order_is_random_but_seeded() {
        let active: Vec<usize> = (0..8).collect();
        let draw = |seed: u64| {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..4)
                .map(|_| round_order(&active, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let rounds = draw(7);
        // Every cell once a round; the order and the first side vary.
        for r in &rounds {
            let mut ids: Vec<usize> = r.iter().map(|x| x.0).collect();
            ids.sort();
            assert_eq!(ids, active);
        }
        assert!(rounds.windows(2).any(|w| w[0] != w[1]));
        let firsts: Vec<bool> = rounds.iter().flatten().map(|x| x.1).collect();
        assert!(firsts.contains(&true) && firsts.contains(&false));
    }

    fn key() -> CellKey {
        CellKey {
            workload: W[0],
            threads: 4,
        }
    }

    #[test]
    fn cells_carry_the_verdict_words() {
        let mut s = Samples {
            before: vec![100.0, 101.0, 99.0, 100.5],
            after: vec![150.0, 151.0, 149.0, 150.5],
            ..Default::default()
        };
        let c = judge(key(), &s, ALPHA, 1);
        assert_eq!(c.verdict, Effect::Faster);
        assert!(c.ci_low.unwrap() > 1.0, "{c:?}");
        assert_eq!(c.rounds, 4);
        s.after = s.before.clone();
        assert_eq!(judge(key(), &s, ALPHA, 1).verdict, Effect::NoDifference);
        // Three rounds cannot reach 5 %: no verdict either way.
        s.before.pop();
        s.after = vec![150.0, 151.0, 149.0];
        assert_eq!(judge(key(), &s, ALPHA, 1).verdict, Effect::TooFewRounds);
        // A sequential look that cannot cross.
        s.before.push(100.2);
        s.after.push(150.2);
        assert_eq!(judge(key(), &s, 0.0, 1).verdict, Effect::TooFewRounds);
    }

    #[test]
    fn cells_json_shape() {
        let s = Samples {
            before: vec![100.0, 101.0, 99.0, 100.5],
            after: vec![80.0, 81.0, 79.0, 80.5],
            ..Default::default()
        };
        let v = serde_json::to_value(judge(key(), &s, ALPHA, 1)).unwrap();
        for k in [
            "workload",
            "threads",
            "rounds",
            "before_tps_per_s",
            "after_tps_per_s",
            "ratio",
            "ci_low",
            "ci_high",
            "p",
            "verdict",
        ] {
            assert!(!v[k].is_null(), "{k} missing: {v}");
        }
        assert_eq!(v["verdict"], "slower");
        assert_eq!(v["workload"], "oltp_read_only");
        assert!(v["ratio"].as_f64().unwrap() < 1.0);
        let back: Cell = serde_json::from_value(v).unwrap();
        assert_eq!(back.verdict, Effect::Slower);
        // No baseline: the ratio is {"unknown": …}, never null.
        let z = Samples {
            before: vec![0.0; 4],
            after: vec![1.0; 4],
            ..Default::default()
        };
        let v = serde_json::to_value(judge(key(), &z, ALPHA, 1)).unwrap();
        assert!(v["ratio"]["unknown"].is_string(), "{v}");
    }

    fn var(p: &SandboxVars, n: &str) -> Option<String> {
        p.variables
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn logging_only_advice_is_nothing_to_compare() {
        // The run: after differed from before only in
        // slow_query_log = ON (long_query_time 10 s).
        let p = profiles(
            &facts(Some(4 << 30)),
            &[
                advice("slow_query_log", "ON"),
                advice("long_query_time", "1"),
            ],
            2,
            20_000,
            false,
        );
        assert_eq!(var(&p.after, "slow_query_log").as_deref(), Some("ON"));
        assert!(p.identical(), "{:?}", p.differences());
        let why = p.nothing_to_compare().unwrap();
        assert!(
            why.contains("only in logging (slow_query_log = ON, long_query_time = 1)"),
            "{why}"
        );
        // One visible change makes it a comparison.
        let p = profiles(
            &facts(Some(4 << 30)),
            &[
                advice("slow_query_log", "ON"),
                advice("innodb_io_capacity", "2000"),
            ],
            2,
            20_000,
            false,
        );
        assert_eq!(p.differences(), vec!["innodb_io_capacity".to_string()]);
        assert!(p.nothing_to_compare().is_none());
    }

    #[test]
    fn durability_tradeoffs_need_the_flag_and_say_what_is_lost() {
        let adv = [
            advice("innodb_flush_log_at_trx_commit", "2"),
            advice("innodb_doublewrite", "OFF"),
            advice("sync_binlog", "1"),
        ];
        let held = profiles(&facts(Some(4 << 30)), &adv, 2, 20_000, false);
        assert_eq!(var(&held.after, "innodb_flush_log_at_trx_commit"), None);
        assert_eq!(var(&held.after, "innodb_doublewrite"), None);
        // sync_binlog = 1 is durable: it goes in.
        assert_eq!(var(&held.after, "sync_binlog").as_deref(), Some("1"));
        assert_eq!(held.durability.len(), 2);
        assert!(held.durability.iter().all(|t| !t.measured));
        let allowed = profiles(&facts(Some(4 << 30)), &adv, 2, 20_000, true);
        assert_eq!(
            var(&allowed.after, "innodb_flush_log_at_trx_commit").as_deref(),
            Some("2")
        );
        assert_eq!(
            var(&allowed.after, "innodb_doublewrite").as_deref(),
            Some("OFF")
        );
        let t = &allowed.durability[0];
        assert!(t.measured);
        assert!(
            t.loses
                .contains("up to ~1 s of committed transactions on an OS crash or power loss"),
            "{}",
            t.loses
        );
        assert!(durability_loss("sync_binlog", "0").is_some());
        assert!(durability_loss("sync_binlog", "1").is_none());
        assert!(durability_loss("innodb_flush_log_at_trx_commit", "1").is_none());
        assert!(durability_loss("innodb_doublewrite", "ON").is_none());
        // Held back and nothing else: nothing to compare, and it says why.
        let only = profiles(&facts(Some(4 << 30)), &adv[..1], 2, 20_000, false);
        let why = only.nothing_to_compare().unwrap();
        assert!(why.contains("--allow-durability-tradeoffs"), "{why}");
    }
}
