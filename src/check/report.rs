//! `innotune check`'s typed result and its document (JSON schema:
//! docs/json-check.md).

use super::emit::Emitted;
use super::facts::Facts;
use super::rules::{Advice, RuleRun};
use super::validate::Validation;
use crate::error::{exit, Fix};
use crate::export::doc::{Cell, Column, KeyValues, Table, Tone};
use crate::export::Document;
use crate::finding::{Layer, Severity};
use crate::host::Host;
use serde::Serialize;
use std::path::Path;

/// The server the rules looked at, or why none.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct ServerSummary {
    pub reached: bool,
    /// Socket or host:port and user (never a password).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Length of the status window, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_s: Option<f64>,
    /// Why the server rules were skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A file written by `--emit`, and what checked it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct EmittedFile {
    #[serde(flatten)]
    pub file: Emitted,
    /// Where it was written under the --emit directory.
    pub written: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}

/// Who runs the server (`check --provider`, or recognised).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ProviderSummary {
    /// `rds`, `aurora`, `azure`, `cloudsql` or `self`: the one used.
    pub name: super::provider::Provider,
    pub label: String,
    /// What the server's variables say (absent without a server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detected: Option<super::provider::Provider>,
    /// The telltale behind `detected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Given with --provider.
    pub forced: bool,
    /// Why the server's host was not read (--no-host-facts, a managed
    /// provider, a capture); absent when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_not_visible: Option<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CheckReport {
    /// The checked path (host path).
    pub path: String,
    /// `argument`, `server_datadir`, `mysqld_datadir` or `current_directory`.
    pub path_source: String,
    pub server: ServerSummary,
    /// Worst first; each with the settings that fix it.
    pub findings: Vec<Advice>,
    /// Every rule, whether it ran, and why not.
    pub rules: Vec<RuleRun>,
    pub notes: Vec<String>,
    /// Files written by `--emit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emitted: Vec<EmittedFile>,
    /// Who runs the server (absent when no server was reached and no
    /// --provider given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderSummary>,
    /// What the rules saw.
    pub facts: Facts,
    /// innotune's own state, for `--format prometheus` (not in the JSON).
    #[serde(skip)]
    pub state: super::metrics::State,
}

impl CheckReport {
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|a| a.finding.severity).max()
    }
}

fn layer_title(l: Layer) -> &'static str {
    match l {
        Layer::Storage => "Storage",
        Layer::Filesystem => "Filesystem",
        Layer::Os => "OS",
        Layer::Server => "Server",
        Layer::Innotune => "innotune",
    }
}

impl crate::export::Report for CheckReport {
    const COMMAND: &'static str = "check";

    const METRICS: bool = true;

    fn metrics(&self) -> Option<Vec<crate::export::prometheus::Metric>> {
        Some(super::metrics::metrics(
            self.server.reached,
            &self.facts,
            &self.findings,
            &self.state,
        ))
    }

    fn document(&self) -> Document {
        let mut d = Document::new(format!("innotune check {}", self.path));
        let mut kv = KeyValues::new();
        if let Some(m) = &self.facts.mount {
            kv.add(
                "Mount",
                format!(
                    "{} ({}, {}, {})",
                    m.mount_point, m.fs_type, m.source, m.atime
                ),
            );
        }
        let disks: Vec<String> = self
            .facts
            .devices
            .iter()
            .filter(|x| x.is_scheduled_disk())
            .map(|x| format!("{} [{}]", x.name, x.scheduler.as_deref().unwrap_or("?")))
            .collect();
        if !disks.is_empty() {
            kv.add("Data disks", disks.join(", "));
        }
        let srv = match (&self.server.version, &self.server.note) {
            (Some(v), _) => format!(
                "{v} at {}{}",
                self.server.endpoint.as_deref().unwrap_or("?"),
                self.server
                    .sample_s
                    .map(|s| format!(", status sampled over {s:.0} s"))
                    .unwrap_or_else(|| ", no sample window".into())
            ),
            (None, Some(_)) => "not checked (below)".into(),
            _ => "not checked".into(),
        };
        kv.add("Server", srv);
        if let Some(p) = &self.provider {
            let mut line = p.label.clone();
            match (&p.evidence, p.forced) {
                (Some(e), false) => line.push_str(&format!(" (recognised: {e})")),
                (_, true) => line.push_str(" (--provider)"),
                _ => {}
            }
            kv.add("Provider", line);
            if let Some(h) = &p.host_not_visible {
                kv.add("Host facts", format!("not read: {h}"));
            }
        }
        let count = |s: Severity| {
            self.findings
                .iter()
                .filter(|a| a.finding.severity == s)
                .count()
        };
        kv.add(
            "Findings",
            Cell::text(format!(
                "{} critical, {} warning, {} notice, {} info",
                count(Severity::Critical),
                count(Severity::Warning),
                count(Severity::Notice),
                count(Severity::Info)
            ))
            .tone(match self.worst() {
                Some(Severity::Critical) => Tone::Bad,
                Some(Severity::Warning) => Tone::Warn,
                _ => Tone::Good,
            }),
        );
        d.key_values(kv);
        // Layers ordered by their worst finding, then bottom of the stack first.
        let mut layers: Vec<Layer> = Vec::new();
        for a in &self.findings {
            if !layers.contains(&a.finding.layer) {
                layers.push(a.finding.layer);
            }
        }
        let worst_of = |l: Layer| {
            self.findings
                .iter()
                .filter(|a| a.finding.layer == l)
                .map(|a| a.finding.severity)
                .max()
        };
        layers.sort_by(|a, b| worst_of(*b).cmp(&worst_of(*a)).then(a.cmp(b)));
        if layers.is_empty() {
            d.findings(&[]);
        }
        for l in layers {
            let f: Vec<_> = self
                .findings
                .iter()
                .filter(|a| a.finding.layer == l)
                .map(|a| a.finding.clone())
                .collect();
            d.heading(format!("{} ({})", layer_title(l), f.len()));
            d.findings(&f);
        }
        let skipped: Vec<&RuleRun> = self
            .rules
            .iter()
            .filter(|r| r.status == "skipped")
            .collect();
        if !skipped.is_empty() {
            let mut t = Table::new(vec![
                Column::text("rule"),
                Column::text("applies to"),
                Column::text("skipped because"),
            ])
            .titled("Skipped rules");
            for r in skipped {
                t.row(vec![
                    r.id.as_ref().into(),
                    r.applies_to.clone().into(),
                    r.reason.clone().unwrap_or_default().into(),
                ]);
            }
            d.table(t);
        }
        if !self.emitted.is_empty() {
            let mut t = Table::new(vec![
                Column::text("file"),
                Column::text("installs to"),
                Column::text("checked by"),
            ])
            .titled("Emitted files");
            for e in &self.emitted {
                let v = match &e.validation {
                    Some(v) if v.ok => Cell::text(format!("{}: ok", v.tool)).tone(Tone::Good),
                    Some(v) => Cell::text(format!("{}: {}", v.tool, v.detail)).tone(Tone::Bad),
                    None => Cell::text(super::validate::not_checked(&e.file.kind)).tone(Tone::Dim),
                };
                t.row(vec![
                    e.written.clone().into(),
                    if e.file.install {
                        e.file.path.clone()
                    } else {
                        format!("({})", e.file.note.clone().unwrap_or_default())
                    }
                    .into(),
                    v,
                ]);
            }
            d.table(t);
        }
        for n in &self.notes {
            d.note(Tone::Plain, n.clone());
        }
        d
    }

    /// 0: nothing of severity warning or worse; 1: a warning or critical finding.
    fn exit_code(&self) -> i32 {
        if self.worst() >= Some(Severity::Warning) {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}

/// Write every emitted file under `dir` (laid out as under /), each
/// checked by the real tool where one is installed.
pub fn emit_to(host: &Host, dir: &Path, r: &CheckReport) -> anyhow::Result<Vec<EmittedFile>> {
    let files = super::emit::files(host, &r.facts, &r.findings);
    let base = open_emit_dir(dir)?;
    let mut out = Vec::new();
    for f in files {
        let rel = Path::new(f.path.trim_start_matches('/'));
        let target = dir.join(rel);
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            continue;
        };
        let (fd, _) = emit_subdir(&base, dir, parent)?;
        // The file is written in the directory just opened (through its
        // descriptor), so a link swapped in above it is never followed.
        use std::os::fd::AsRawFd;
        let at = Path::new("/proc/self/fd")
            .join(fd.as_raw_fd().to_string())
            .join(name);
        let written = match &f.symlink {
            // An emitted link replaces the link an earlier --emit wrote,
            // never anything but a file or a link.
            Some(t) => {
                let opts = crate::durable::Options {
                    replace_symlink: true,
                    ..crate::durable::Options::SHARED
                };
                crate::durable::symlink(&at, Path::new(t), &opts)
            }
            None => {
                crate::durable::write(&at, f.content.as_bytes(), &crate::durable::Options::SHARED)
            }
        };
        written.map_err(|e| emit_write_error(&target, e))?;
        drop(fd);
        let validation = super::validate::check(host, &f);
        out.push(EmittedFile {
            written: target.display().to_string(),
            file: f,
            validation,
        });
    }
    Ok(out)
}

/// The `--emit` directory, created with its parents when absent (the
/// user named it; it may itself be a link), opened as a directory.
fn open_emit_dir(dir: &Path) -> anyhow::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{openat, Mode, OFlags, CWD};
    std::fs::create_dir_all(dir).map_err(|e| emit_io_error(dir, "create", &e))?;
    openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| emit_io_error(dir, "open", &e.into()))
}

/// `rel` under the `--emit` directory, each component created when absent
/// and opened without following a link (`O_NOFOLLOW|O_DIRECTORY` from its
/// parent's descriptor): a symbolic link anywhere below DIR (`DIR/etc ->
/// /etc`) is refused, never written through.
fn emit_subdir(
    base: &std::os::fd::OwnedFd,
    dir: &Path,
    rel: &Path,
) -> anyhow::Result<(std::os::fd::OwnedFd, std::path::PathBuf)> {
    use rustix::fs::{mkdirat, openat, statat, AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    let mut fd = base
        .try_clone()
        .map_err(|e| emit_io_error(dir, "open", &e))?;
    let mut shown = dir.to_path_buf();
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            continue;
        };
        shown.push(name);
        match mkdirat(&fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(emit_io_error(&shown, "create", &e.into())),
        }
        let next = openat(
            &fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        );
        fd = match next {
            Ok(n) => n,
            Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                let what = match statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                        "a symbolic link"
                    }
                    Ok(_) => "not a directory",
                    Err(_) => return Err(emit_io_error(&shown, "open", &e.into())),
                };
                return Err(Fix::new(
                    format!(
                        "--emit {}: {} is {what}; innotune writes only inside the directory, never through a link",
                        dir.display(),
                        shown.display()
                    ),
                    format!(
                        "remove {} (or give --emit a new directory)",
                        shown.display()
                    ),
                )
                .into());
            }
            Err(e) => return Err(emit_io_error(&shown, "open", &e.into())),
        };
    }
    Ok((fd, shown))
}

/// One line naming the path, what failed and how to get past it (an
/// immutable or read-only directory said only "Operation not permitted").
/// The error's own text is its errno's (a temporary file's error would
/// name the descriptor path it was made through).
fn emit_io_error(path: &Path, doing: &str, e: &std::io::Error) -> anyhow::Error {
    let errno = errno_of(e);
    let msg = match errno {
        Some(n) => std::io::Error::from_raw_os_error(n).to_string(),
        None => e.to_string(),
    };
    let fix = match errno {
        Some(libc::EPERM) => format!(
            "{} or the directory it is in may be immutable (lsattr -d; chattr -i), or give --emit another directory",
            path.display()
        ),
        Some(libc::EROFS) => {
            "the filesystem is read-only: give --emit a directory on a writable one".to_string()
        }
        Some(libc::ENOSPC | libc::EDQUOT) => {
            "free space on its filesystem, or give --emit a directory on another".to_string()
        }
        _ => "give --emit a directory you can write to".to_string(),
    };
    Fix::new(
        format!("cannot {doing} --emit {}: {msg}", path.display()),
        fix,
    )
    .into()
}

/// The errno under `e`, also when it is wrapped (tempfile's path errors).
fn errno_of(e: &std::io::Error) -> Option<i32> {
    if let Some(n) = e.raw_os_error() {
        return Some(n);
    }
    let mut cur: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    while let Some(c) = cur {
        if let Some(n) = c
            .downcast_ref::<std::io::Error>()
            .and_then(|i| i.raw_os_error())
        {
            return Some(n);
        }
        cur = c.source();
    }
    None
}

/// A failed write of an emitted file, naming the file (not the descriptor
/// path it was written through).
pub(crate) fn emit_write_error(target: &Path, e: crate::durable::Error) -> anyhow::Error {
    match e {
        crate::durable::Error::NotRegular { what, .. } => Fix::new(
            format!(
                "{} is {what}, not a regular file; innotune writes only regular files",
                target.display()
            ),
            "remove it, or give --emit another directory",
        )
        .into(),
        crate::durable::Error::Io(e) => emit_io_error(target, "write", &e),
    }
}
