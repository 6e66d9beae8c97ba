//! `innotune probe`: the storage stack under a path.
//!
//! Measurement first: probe reads, never changes, and exits 0 whenever it
//! produced a report; what it notices that is not a value (an ignored
//! `elevator=`, an unreadable link, a filesystem with no device) comes as
//! informational [`Finding`]s. The host is read through the
//! [`HostModel`](crate::model::HostModel) (so a fixture tree under `--root`
//! replays a whole host); probe adds what only it needs: [`persist`] (rules
//! that set schedulers at boot), [`findings`], and [`document`] (the report
//! as a document for text and markdown).
//!
//! Library entry points: [`execute`] (what the CLI's [`Command`] impl
//! runs), [`report`] (for a command that already holds a model and a
//! resolved path: check, tune), [`stack_device_names`].
pub mod cli;
pub mod document;
pub mod findings;
pub mod mysqld;
pub mod persist;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::finding::Finding;
use crate::host::{normalize, Host, Known};
use crate::model::mount::Mount;
use crate::model::server::Mysqld;
use crate::model::stack::{Overlay, StackDevice};
use crate::model::system::System;
use crate::model::HostModel;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Everything probe knows about a path (the `result` of `--format json`,
/// documented in docs/json-probe.md).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ProbeReport {
    /// The root all host reads went through (`/` = this machine).
    pub root: String,
    /// The probed path, absolute, as a host path.
    pub path: String,
    /// `argument`, `mysqld_datadir` or `current_directory`.
    pub path_source: String,
    /// The mount holding `path`.
    pub mount: Known<Mount>,
    /// Overlay mounts on the way down (the top mount first), each with the
    /// mount holding its upperdir; `[]` when none.
    pub overlays: Vec<Overlay>,
    /// The device stack, top (the filesystem's device) first, depth-first.
    pub stack: Vec<StackDevice>,
    pub host: System,
    /// Running mysqld/mariadbd processes (empty when none runs).
    pub mysqld: Vec<Mysqld>,
    /// udev rules / systemd units / tmpfiles entries setting a scheduler on a stack device.
    pub persistence: Vec<persist::SchedulerRule>,
    /// What probe noticed that is not a value, worst first.
    pub findings: Vec<Finding>,
}

impl crate::export::Report for ProbeReport {
    const COMMAND: &'static str = "probe";

    fn document(&self) -> crate::export::Document {
        document::document(self)
    }
}

/// What to probe (the CLI's arguments, as a library caller gives them).
#[derive(Debug, Clone, Default)]
pub struct ProbeOptions {
    /// The path to probe; `None`: the datadir of the running server with
    /// the lowest pid, else (live host only) the current directory.
    pub path: Option<PathBuf>,
}

/// The command: its options → [`execute`].
impl Command for cli::ProbeArgs {
    type Report = ProbeReport;

    fn execute(env: &Env, args: Self) -> Result<ProbeReport> {
        execute(&env.host, ProbeOptions { path: args.path })
    }
}

/// Probe a path on `host`. Fails (one line with a fix) only when the path
/// cannot be probed; unreadable host files become unknowns and findings.
pub fn execute(host: &Host, opts: ProbeOptions) -> Result<ProbeReport> {
    if !host.root().is_dir() {
        return Err(Fix::new(
            format!("--root {} is not a directory", host.root().display()),
            "give a host tree laid out like / (with sys/, proc/, etc/), or drop --root",
        )
        .into());
    }
    let model = HostModel::read(host);
    let (path, source) = resolve_path(host, opts.path.as_deref(), model.servers())?;
    let mut r = report(&model, &path);
    r.path_source = source.into();
    let servers = model.servers();
    if source == "mysqld_datadir" && servers.len() > 1 {
        r.findings.push(findings::several_servers(
            servers.len(),
            servers[0].pid,
            &servers[0].datadir,
        ));
        crate::finding::sort(&mut r.findings);
    }
    Ok(r)
}

/// Decide which host path to probe. On the live root the path must exist and
/// is canonicalised (symlinks followed); on a fixture root it is taken
/// lexically, since it only has to exist in the fixture's mountinfo.
fn resolve_path(
    host: &Host,
    arg: Option<&Path>,
    servers: &[Mysqld],
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
    let shown = document::escape(&p.display().to_string());
    if host.is_live() {
        match std::fs::canonicalize(&p) {
            Ok(c) => Ok((c, source)),
            Err(e) if source == "mysqld_datadir" => Err(Fix::new(
                format!("the running server's datadir {shown} is not accessible: {e}"),
                "give the PATH to probe explicitly",
            )
            .into()),
            Err(e) => Err(Fix::new(
                format!("PATH {shown} cannot be probed: {e}"),
                "give an existing file or directory, e.g. the MySQL datadir",
            )
            .into()),
        }
    } else if p.is_absolute() {
        Ok((normalize(&p), source))
    } else {
        Err(Fix::new(
            format!("PATH {shown} is relative but --root replays another host"),
            "give an absolute host path such as /var/lib/mysql",
        )
        .into())
    }
}

/// The report for an already-resolved absolute host path, from a model the
/// caller holds (check and tune read the host once and probe several
/// paths). `path_source` is `argument`.
pub fn report(model: &HostModel, path: &Path) -> ProbeReport {
    let mount = match model.mount_for(path) {
        Known::Value(m) => Known::Value(m.clone()),
        Known::Unknown { unknown } => Known::Unknown { unknown },
    };
    let stack = model.stack_under(path);
    let mut found: Vec<Finding> = stack.problems.iter().map(findings::from_problem).collect();
    let system = model.system().clone();
    found.extend(findings::elevator_ignored(&system));
    crate::finding::sort(&mut found);
    let persistence = persist::find(model.host(), &stack.devices);
    ProbeReport {
        root: model.host().root().display().to_string(),
        path: path.display().to_string(),
        path_source: "argument".into(),
        mount,
        overlays: stack.overlays,
        stack: stack.devices,
        host: system,
        mysqld: model.servers().to_vec(),
        persistence,
        findings: found,
    }
}

/// Probe an already-resolved absolute host path with a model of its own.
pub fn probe_path(host: &Host, path: &Path) -> Result<ProbeReport> {
    Ok(report(&HostModel::read(host), path))
}

/// Kernel names ("loop0", "vda", "sda1", "md0", "dm-0", …) of every block
/// device in the stack under `path`, top (the filesystem's device) first, each
/// once: partitions, their whole disks, md/dm members recursively, for a
/// loop device the stack under its backing file, for an overlay the stack
/// under its upperdir. See [`HostModel::device_names_under`].
pub fn stack_device_names(host: &Host, path: &Path) -> Result<Vec<String>> {
    HostModel::read(host).device_names_under(path)
}
