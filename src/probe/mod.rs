//! `innotune probe`: the storage stack under a path.
//!
//! Measurement only — probe reads, never changes, and has no findings (exit 0).
//! Split by concern: [`mount`] (mountinfo), [`stack`] (walking sysfs from the
//! mount's device down), [`device`] (one device's queue), [`hostinfo`]
//! (host-wide knobs), [`mysqld`] (running servers), [`persist`] (rules that
//! set schedulers at boot), [`render`] (text). Every read goes through
//! [`Host`], so a fixture tree under `--root` replays a whole host.
pub mod cli;
pub mod device;
pub mod hostinfo;
pub mod mount;
pub mod mysqld;
pub mod persist;
pub mod render;
pub mod stack;

use crate::error::Fix;
use crate::host::{normalize, Host, Known};
use crate::Ctx;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Everything probe knows about a path (the `result` of `--format json`,
/// documented in docs/json-probe.md).
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// The root all host reads went through (`/` = this machine).
    pub root: String,
    /// The probed path, absolute, as a host path.
    pub path: String,
    /// `argument`, `mysqld_datadir` or `current_directory`.
    pub path_source: String,
    /// The mount holding `path`.
    pub mount: Known<mount::Mount>,
    /// The device stack, top (the filesystem's device) first, depth-first.
    pub stack: Vec<stack::StackDevice>,
    pub host: hostinfo::HostInfo,
    /// Running mysqld/mariadbd processes (empty when none runs).
    pub mysqld: Vec<mysqld::Mysqld>,
    /// udev rules / systemd units / tmpfiles entries setting a scheduler on a stack device.
    pub persistence: Vec<persist::SchedulerRule>,
    /// Things worth knowing that are not values: walk problems, ignored boot parameters.
    pub notes: Vec<String>,
}

impl crate::output::Report for ProbeReport {
    const COMMAND: &'static str = "probe";

    fn render_text(
        &self,
        out: &mut dyn std::io::Write,
        style: crate::output::Style,
    ) -> std::io::Result<()> {
        render::render(self, out, style)
    }
}

pub fn run(args: cli::ProbeArgs, ctx: &Ctx) -> Result<i32> {
    let host = &ctx.host;
    if !host.root().is_dir() {
        return Err(Fix::new(
            format!("--root {} is not a directory", host.root().display()),
            "give a host tree laid out like / (with sys/, proc/, etc/), or drop --root",
        )
        .into());
    }
    let servers = mysqld::find(host);
    let (path, source) = resolve_path(host, args.path.as_deref(), &servers)?;
    let n_servers = servers.len();
    let mut report = build(host, &path, servers);
    report.path_source = source.into();
    if source == "mysqld_datadir" && n_servers > 1 {
        let pid = report.mysqld[0].pid;
        report.notes.push(format!(
            "{n_servers} mysqld/mariadbd processes run; PATH defaulted to the datadir of the lowest pid, {pid} (give PATH to choose)"
        ));
    }
    ctx.emit(&report)
}

/// Decide which host path to probe. On the live root the path must exist and
/// is canonicalised (symlinks followed); on a fixture root it is taken
/// lexically, since it only has to exist in the fixture's mountinfo.
fn resolve_path(
    host: &Host,
    arg: Option<&Path>,
    servers: &[mysqld::Mysqld],
) -> Result<(PathBuf, &'static str)> {
    let (p, source) = match (arg, servers.first()) {
        (Some(p), _) => (p.to_path_buf(), "argument"),
        (None, Some(m)) => (PathBuf::from(&m.datadir), "mysqld_datadir"),
        (None, None) if host.is_live() => (
            std::env::current_dir().map_err(|e| {
                Fix::new(
                    format!("cannot read the current directory: {e}"),
                    "give a PATH to probe",
                )
            })?,
            "current_directory",
        ),
        (None, None) => {
            return Err(Fix::new(
                "no PATH given and no mysqld/mariadbd in the replayed host",
                "give a PATH (a host path inside the --root tree's mountinfo)",
            )
            .into())
        }
    };
    if host.is_live() {
        match std::fs::canonicalize(&p) {
            Ok(c) => Ok((c, source)),
            Err(e) if source == "mysqld_datadir" => Err(Fix::new(
                format!(
                    "the running server's datadir {} is not accessible: {e}",
                    p.display()
                ),
                "give the PATH to probe explicitly",
            )
            .into()),
            Err(e) => Err(Fix::new(
                format!("PATH {} cannot be probed: {e}", p.display()),
                "give an existing file or directory, e.g. the MySQL datadir",
            )
            .into()),
        }
    } else if p.is_absolute() {
        Ok((normalize(&p), source))
    } else {
        Err(Fix::new(
            format!(
                "PATH {} is relative but --root replays another host",
                p.display()
            ),
            "give an absolute host path such as /var/lib/mysql",
        )
        .into())
    }
}

/// Probe an already-resolved absolute host path (the library entry point
/// for sweep, check and tune). Never fails on unreadable host files: they
/// become unknowns and notes.
pub fn probe_path(host: &Host, path: &Path) -> Result<ProbeReport> {
    let servers = mysqld::find(host);
    Ok(build(host, path, servers))
}

fn build(host: &Host, path: &Path, servers: Vec<mysqld::Mysqld>) -> ProbeReport {
    let mut notes = Vec::new();
    let mounts = match mount::read_mounts(host) {
        Ok(m) => m,
        Err(e) => {
            notes.push(format!("{e:#}"));
            Vec::new()
        }
    };
    let mnt = match mount::mount_for(&mounts, path) {
        Some(m) => Known::Value(m.clone()),
        None => Known::unknown(format!(
            "no mount in {} contains {}",
            host.path("/proc/self/mountinfo").display(),
            path.display()
        )),
    };
    let mut walker = stack::Walker::new(host, &mounts);
    if let Known::Value(m) = &mnt {
        walker.walk_mount(m, 0, None, stack::Relation::Mounted);
    }
    notes.append(&mut walker.notes);
    let devices = walker.devices;
    let hostinfo = hostinfo::read(host);
    if let Some(e) = &hostinfo.cmdline_elevator {
        notes.push(format!(
            "the kernel command line has elevator={e}: blk-mq kernels ignore it; schedulers are set per device (queue/scheduler, made persistent with a udev rule)"
        ));
    }
    let persistence = persist::find(host, &devices);
    ProbeReport {
        root: host.root().display().to_string(),
        path: path.display().to_string(),
        path_source: "argument".into(),
        mount: mnt,
        stack: devices,
        host: hostinfo,
        mysqld: servers,
        persistence,
        notes,
    }
}

/// Kernel names ("loop0", "vda", "sda1", "md0", "dm-0", …) of every block
/// device in the stack under `path`, top (the filesystem's device) first, each
/// once: partitions, their whole disks, md/dm members recursively, and for a
/// loop device the stack under its backing file. Sweep uses this to decide
/// which devices' schedulers to switch (those with a queue/scheduler file).
pub fn stack_device_names(host: &Host, path: &Path) -> Result<Vec<String>> {
    let mounts = mount::read_mounts(host)?;
    let m = mount::mount_for(&mounts, path).ok_or_else(|| {
        Fix::new(
            format!("no mount contains {}", path.display()),
            "give a path on a mounted filesystem",
        )
    })?;
    let mut walker = stack::Walker::new(host, &mounts);
    walker.walk_mount(m, 0, None, stack::Relation::Mounted);
    let mut names: Vec<String> = Vec::new();
    for d in walker.devices {
        if !names.contains(&d.name) {
            names.push(d.name);
        }
    }
    Ok(names)
}
