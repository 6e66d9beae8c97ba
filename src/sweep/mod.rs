//! `innotune sweep`: scheduler comparison with confidence intervals.
pub mod cli;

use crate::Ctx;
use anyhow::{bail, Result};

pub fn run(_args: cli::SweepArgs, _ctx: &Ctx) -> Result<i32> {
    bail!("sweep: not implemented yet")
}
