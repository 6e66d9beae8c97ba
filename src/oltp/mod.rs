//! `innotune oltp`: sysbench-compatible OLTP load.
pub mod cli;

use crate::Ctx;
use anyhow::{bail, Result};

pub fn run(_args: cli::OltpArgs, _ctx: &Ctx) -> Result<i32> {
    bail!("oltp: not implemented yet")
}
