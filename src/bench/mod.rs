//! `innotune bench`: the I/O load generator.
pub mod cli;
pub mod result;

use crate::Ctx;
use anyhow::{bail, Result};
use std::path::Path;
use std::time::Duration;

pub fn run(_args: cli::BenchArgs, _ctx: &Ctx) -> Result<i32> {
    bail!("bench: not implemented yet")
}

/// A set of jobs that run together (e.g. `mixed` = a random reader and a
/// sequential writer), as named by a preset or a job file.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
}

/// Options for one measured run of a workload.
#[derive(Debug, Clone)]
pub struct RunOpts {
    /// Measured window.
    pub runtime: Duration,
    /// Warm-up before the window, excluded from results.
    pub ramp: Duration,
    /// Show a live progress line (only honoured on a terminal).
    pub progress: bool,
}

/// A preset (`page-read`, `mixed`, …) or a TOML job file, with its files in `directory`.
pub fn load_workload(_name_or_file: &str, _directory: &Path) -> Result<Workload> {
    bail!("bench: not implemented yet")
}

/// Lay out (or reuse) the workload's files, then run it once.
pub fn run_workload(_w: &Workload, _opts: &RunOpts) -> Result<result::WorkloadResult> {
    bail!("bench: not implemented yet")
}
