//! `innotune sandbox`: a throwaway MySQL/MariaDB server in a private directory.
pub mod cli;

use crate::Ctx;
use anyhow::{bail, Result};

pub fn run(_args: cli::SandboxArgs, _ctx: &Ctx) -> Result<i32> {
    bail!("sandbox: not implemented yet")
}
