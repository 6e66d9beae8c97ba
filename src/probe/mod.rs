//! `innotune probe`: the storage stack under a path.
pub mod cli;

use crate::host::Host;
use crate::Ctx;
use anyhow::{bail, Result};
use std::path::Path;

pub fn run(_args: cli::ProbeArgs, _ctx: &Ctx) -> Result<i32> {
    bail!("probe: not implemented yet")
}

/// Kernel names ("loop0", "vda", "sda1", "md0", "dm-0", …) of every block
/// device in the stack under `path`, top (the filesystem's device) first, each
/// once: partitions, their whole disks, md/dm members recursively, and for a
/// loop device the stack under its backing file. Sweep uses this to decide
/// which devices' schedulers to switch (those with a queue/scheduler file).
pub fn stack_device_names(_host: &Host, _path: &Path) -> Result<Vec<String>> {
    bail!("probe: not implemented yet")
}
