//! `check --measure`: ten seconds of InnoDB-style page writes (16 KiB
//! random O_DIRECT writes, bench's `page-write` preset) in a scratch
//! directory on the datadir's filesystem, for the io_capacity rule.
//!
//! The scratch directory is never a datadir, inside one or around one
//! (`crate::safety`), is created by innotune and journaled, so it is
//! removed on return, on a signal, and by `innotune restore` after a crash.

use super::facts::Measured;
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Journal;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where to measure: `scratch` if given, else next to the datadir (its
/// parent) when that is on the same filesystem.
pub fn scratch_dir(datadir: &Path, scratch: Option<&Path>) -> Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let base = match scratch {
        Some(s) => s.to_path_buf(),
        None => {
            let parent = datadir.parent().unwrap_or(Path::new("/"));
            let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
            if dev(parent).is_none() || dev(parent) != dev(datadir) {
                return Err(Fix::new(
                    format!("{} is a mount point of its own: no directory next to it is on its filesystem", datadir.display()),
                    "give --scratch DIR, a directory on the datadir's filesystem outside the datadir",
                )
                .into());
            }
            parent.to_path_buf()
        }
    };
    Ok(base.join(format!(".innotune-check.{}", std::process::id())))
}

/// Run the bench and return the write IOPS.
pub fn page_write_iops(host: &Host, datadir: &Path, scratch: Option<&Path>) -> Result<Measured> {
    let dir = scratch_dir(datadir, scratch)?;
    crate::safety::refuse_near_datadir(host, &dir, "check --measure scratch directory")?;
    let command = crate::journal::command_line();
    let guard = Journal::begin(&command)?;
    std::fs::create_dir(&dir).map_err(|e| {
        Fix::new(
            format!("cannot create {}: {e}", dir.display()),
            "give --scratch DIR on the datadir's filesystem that you can write to",
        )
    })?;
    guard.apply(
        &Host::live(),
        Box::new(crate::change::CreatedDir::adopt(&dir)),
    )?;
    let mut w = crate::bench::load_workload("page-write", &dir)?;
    for j in &mut w.jobs {
        // 24 threads over 256 MiB: the layout is written once in a few
        // seconds, and random writes still spread over many blocks.
        j.set("size", "256m")?;
    }
    let r = crate::bench::run_workload(
        &w,
        &crate::bench::RunOpts {
            runtime: Duration::from_secs(10),
            ramp: Duration::from_secs(1),
            progress: true,
        },
    )?;
    drop(guard); // removes the scratch directory
    let iops: f64 = r
        .jobs
        .iter()
        .filter_map(|j| j.write.as_ref())
        .map(|w| w.iops)
        .sum();
    Ok(Measured {
        value: iops,
        source: format!("page-write bench, 10 s in {}", dir.display()),
    })
}
