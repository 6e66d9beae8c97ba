//! The change kinds `apply` journals: a sysfs/procfs value, a server
//! variable, a file innotune installs, a directory it creates.
//!
//! Minimal implementations of [`Change`] kept in this one file so they can
//! be swapped for the shared kinds (src/change/) when those land: every
//! other part of `apply` builds changes through the constructors at the
//! bottom ([`sysfs`], [`server_variable`], [`installed_file`],
//! [`created_dir`]).
//!
//! Every kind stores the `--root` its host path lives under (`/` on the
//! live host), so `innotune restore` puts back a replayed tree's files in
//! that tree, never on the machine running it.

use crate::change::{Change, Hook, Outcome, Priority, Undone};
use crate::check::facts::ServerEndpoint;
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

fn slash() -> PathBuf {
    PathBuf::from("/")
}

fn no_dots(p: &Path) -> bool {
    !p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// The comparable form of a sysfs value: the bracketed choice of a choice
/// file, whitespace collapsed, and for CPU masks the hex number without
/// separators or leading zeros (`00000000,00000003` == `3`).
pub fn norm(path: &Path, raw: &str) -> String {
    let v = crate::journal::sysfs_value(raw);
    let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
    if path.ends_with("rps_cpus") {
        let hex: String = v.chars().filter(|c| *c != ',').collect();
        let t = hex.trim_start_matches('0');
        return if t.is_empty() {
            "0".into()
        } else {
            t.to_ascii_lowercase()
        };
    }
    v
}

// ---------------------------------------------------------------- sysfs

/// One sysfs or /proc/sys value. A scheduler switch resets the queue's
/// nr_requests, so a scheduler change also remembers nr_requests
/// (`companions`) and may set a new one after switching (`then_set`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SysfsValue {
    /// Host-absolute path (`/sys/block/sda/queue/scheduler`, `/proc/sys/vm/swappiness`).
    pub path: PathBuf,
    pub value: String,
    /// How people name it: `sda scheduler`, `vm.swappiness`.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// Attributes this change resets as a side effect, to remember.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remember: Vec<PathBuf>,
    /// What they held before: (path, value), those that could be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<(PathBuf, String)>,
    /// Attributes set right after `value`: (path, value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then_set: Vec<(PathBuf, String)>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

const SYSFS_ALLOWED: [&str; 5] = [
    "/sys/block/",
    "/sys/class/block/",
    "/proc/sys/",
    "/sys/kernel/mm/transparent_hugepage/",
    "/sys/class/net/",
];

impl SysfsValue {
    fn host(&self) -> Host {
        Host::with_root(&self.root)
    }
    fn read(&self, h: &Host, p: &Path) -> Result<String> {
        h.read(p)
            .map(|s| norm(p, &s))
            .with_context(|| format!("reading {}", p.display()))
    }
    fn write(&self, h: &Host, p: &Path, v: &str) -> Result<()> {
        h.write(p, v).map_err(|e| {
            crate::error::Fix::new(
                format!("cannot write {v:?} to {}: {e}", p.display()),
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    "run as root"
                } else {
                    "check that the kernel accepts this value for this device"
                },
            )
            .into()
        })
    }
}

#[typetag::serde(name = "apply_sysfs")]
impl Change for SysfsValue {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        match &self.original {
            Some(o) => format!("{}: {o} → {}", self.label, self.value),
            None => format!("{}: set {}", self.label, self.value),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        self.original = Some(self.read(host, &self.path)?);
        self.companions = self
            .remember
            .iter()
            .filter_map(|p| Some((p.clone(), norm(p, &host.read(p).ok()?))))
            .collect();
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        self.write(host, &self.path, &self.value)?;
        for (p, v) in &self.then_set {
            self.write(host, p, v)?;
        }
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        if self.read(host, &self.path)? != norm(&self.path, &self.value) {
            return Ok(false);
        }
        for (p, v) in &self.then_set {
            if self.read(host, p)? != norm(p, v) {
                return Ok(false);
            }
        }
        Ok(true)
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let h = self.host();
        let Some(orig) = &self.original else {
            return Undone::outcome(Outcome::Gone);
        };
        let now = match h.read(&self.path) {
            Ok(s) => norm(&self.path, &s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Undone::outcome(Outcome::Gone)
            }
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: format!("cannot read: {e}"),
                })
            }
        };
        let mut u = Undone::outcome(Outcome::Restored);
        u.original = Some(orig.clone());
        u.found = Some(now.clone());
        let companions_ok = self
            .companions
            .iter()
            .all(|(p, o)| h.read(p).map(|s| norm(p, &s) == *o).unwrap_or(true));
        if &now == orig && companions_ok {
            u.outcome = Outcome::AlreadyOriginal;
            return u;
        }
        if dry_run {
            u.outcome = Outcome::WouldRestore;
            return u;
        }
        if &now != orig {
            if let Err(e) = h.write(&self.path, orig) {
                u.outcome = Outcome::Failed {
                    reason: format!("cannot write {orig:?}: {e}"),
                };
                return u;
            }
        }
        for (p, o) in &self.companions {
            if h.read(p).map(|s| norm(p, &s) != *o).unwrap_or(false) {
                if let Err(e) = h.write(p, o) {
                    u.outcome = Outcome::Failed {
                        reason: format!("cannot write {o:?} to {}: {e}", p.display()),
                    };
                    return u;
                }
            }
        }
        match h.read(&self.path).map(|s| norm(&self.path, &s)) {
            Ok(v) if &v == orig => u,
            Ok(v) => {
                u.outcome = Outcome::Failed {
                    reason: format!("wrote {orig:?} but it reads {v:?}"),
                };
                u
            }
            Err(e) => {
                u.outcome = Outcome::Failed {
                    reason: format!("cannot read back: {e}"),
                };
                u
            }
        }
    }
    fn priority(&self) -> Priority {
        if self.path.ends_with("queue/scheduler") {
            Priority::SCHEDULER
        } else {
            Priority::ATTRIBUTE
        }
    }
    fn validate(&self) -> Result<(), String> {
        let ok = |p: &Path| {
            no_dots(p)
                && SYSFS_ALLOWED
                    .iter()
                    .any(|a| p.to_string_lossy().starts_with(a))
        };
        if !ok(&self.path)
            || !self.companions.iter().all(|(p, _)| ok(p))
            || !self.remember.iter().all(|p| ok(p))
            || !self.then_set.iter().all(|(p, _)| ok(p))
        {
            return Err(format!(
                "{} is not a sysfs/procfs attribute innotune sets",
                self.path.display()
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------- server variable

/// `SET GLOBAL` (or `SET PERSIST` on MySQL 8) of one variable. The
/// connection is stored as an endpoint (socket or host:port, user, the
/// option file innotune was given): the password is read from option files
/// again when undoing, never stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerVariable {
    pub endpoint: ServerEndpoint,
    pub name: String,
    pub value: String,
    /// SET PERSIST instead of SET GLOBAL.
    pub persist: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// MySQL 8: whether it was already in mysqld-auto.cnf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was_persisted: Option<bool>,
}

fn valid_var_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value as an SQL literal: numbers and keywords bare, else quoted.
fn literal(v: &str) -> String {
    if v.parse::<f64>().is_ok()
        || ["ON", "OFF", "TRUE", "FALSE", "DEFAULT"].contains(&v.to_ascii_uppercase().as_str())
    {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''"))
    }
}

impl ServerVariable {
    fn connect(&self) -> Result<mysql::Conn> {
        let e = &self.endpoint;
        let args = crate::db::ConnArgs {
            socket: e.socket.as_ref().map(PathBuf::from),
            host: e.host.clone(),
            port: e.port,
            user: Some(e.user.clone()),
            defaults_file: e.defaults_file.as_ref().map(PathBuf::from),
            no_defaults: e.no_defaults,
            ..Default::default()
        };
        args.resolve(&Host::live())?.connect()
    }
    fn read(&self, c: &mut mysql::Conn) -> Result<Option<String>> {
        use mysql::prelude::Queryable;
        let r: Option<(String, String)> =
            c.query_first(format!("SHOW GLOBAL VARIABLES LIKE '{}'", self.name))?;
        Ok(r.map(|(_, v)| v))
    }
    fn set(&self, c: &mut mysql::Conn, v: &str, persist: bool) -> Result<()> {
        use mysql::prelude::Queryable;
        let verb = if persist { "PERSIST" } else { "GLOBAL" };
        c.query_drop(format!("SET {verb} {} = {}", self.name, literal(v)))
            .with_context(|| format!("SET {verb} {} = {v}", self.name))
    }
    /// Compare as the server shows values (ON/1, sizes as bytes).
    fn same(a: &str, b: &str) -> bool {
        let n = |s: &str| match s.to_ascii_uppercase().as_str() {
            "ON" | "TRUE" => "1".to_string(),
            "OFF" | "FALSE" => "0".to_string(),
            _ => crate::check::facts::parse_size(s)
                .map(|x| x.to_string())
                .unwrap_or_else(|| s.to_ascii_uppercase()),
        };
        n(a) == n(b)
    }
}

#[typetag::serde(name = "apply_server_variable")]
impl Change for ServerVariable {
    fn target(&self) -> String {
        let at = self.endpoint.socket.clone().unwrap_or_else(|| {
            format!(
                "{}:{}",
                self.endpoint.host.as_deref().unwrap_or("?"),
                self.endpoint.port.unwrap_or(3306)
            )
        });
        format!("{}@{at}", self.name)
    }
    fn describe(&self) -> String {
        let verb = if self.persist {
            "SET PERSIST"
        } else {
            "SET GLOBAL"
        };
        match &self.original {
            Some(o) => format!("{verb} {}: {o} → {}", self.name, self.value),
            None => format!("{verb} {} = {}", self.name, self.value),
        }
    }
    fn capture(&mut self, _host: &Host) -> Result<()> {
        let mut c = self.connect()?;
        self.original = self.read(&mut c)?;
        if self.original.is_none() {
            bail!("the server has no variable {}", self.name);
        }
        if self.persist {
            use mysql::prelude::Queryable;
            let n: Option<u64> = c
                .query_first(format!(
                    "SELECT COUNT(*) FROM performance_schema.persisted_variables WHERE VARIABLE_NAME = '{}'",
                    self.name
                ))
                .ok()
                .flatten();
            self.was_persisted = n.map(|n| n > 0);
        }
        Ok(())
    }
    fn apply(&mut self, _host: &Host) -> Result<()> {
        let mut c = self.connect()?;
        self.set(&mut c, &self.value, self.persist)
    }
    fn is_applied(&self, _host: &Host) -> Result<bool> {
        let mut c = self.connect()?;
        Ok(self
            .read(&mut c)?
            .is_some_and(|v| Self::same(&v, &self.value)))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let Some(orig) = &self.original else {
            return Undone::outcome(Outcome::Gone);
        };
        let mut c = match self.connect() {
            Ok(c) => c,
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: crate::error::one_line(&e),
                })
            }
        };
        let now = match self.read(&mut c) {
            Ok(Some(v)) => v,
            Ok(None) => return Undone::outcome(Outcome::Gone),
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: crate::error::one_line(&e),
                })
            }
        };
        let mut u = Undone::outcome(Outcome::Restored);
        u.original = Some(orig.clone());
        u.found = Some(now.clone());
        if Self::same(&now, orig) && !self.persist {
            u.outcome = Outcome::AlreadyOriginal;
            return u;
        }
        if dry_run {
            u.outcome = Outcome::WouldRestore;
            return u;
        }
        let r = if self.persist && self.was_persisted != Some(true) {
            use mysql::prelude::Queryable;
            self.set(&mut c, orig, false).and_then(|_| {
                c.query_drop(format!("RESET PERSIST IF EXISTS {}", self.name))
                    .map_err(Into::into)
            })
        } else {
            self.set(&mut c, orig, self.persist)
        };
        if let Err(e) = r {
            u.outcome = Outcome::Failed {
                reason: crate::error::one_line(&e),
            };
        }
        u
    }
    /// A `_max` variable raised by apply is undone after its base, one
    /// lowered before it: the server adjusts the pair to keep max ≥ base
    /// (MariaDB lowers innodb_io_capacity with innodb_io_capacity_max).
    fn priority(&self) -> Priority {
        let base = Priority::SERVER_VARIABLE.0;
        if !self.name.ends_with("_max") {
            return Priority::SERVER_VARIABLE;
        }
        let num = |s: &str| s.parse::<f64>().ok();
        match (self.original.as_deref().and_then(num), num(&self.value)) {
            (Some(o), Some(v)) if v > o => Priority(base + 1),
            (Some(o), Some(v)) if v < o => Priority(base - 1),
            _ => Priority::SERVER_VARIABLE,
        }
    }
    fn validate(&self) -> Result<(), String> {
        if !valid_var_name(&self.name) {
            return Err(format!("{:?} is not a server variable name", self.name));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ installed file

/// Marker every file innotune installs starts with; innotune overwrites or
/// removes only files that carry it.
pub const MARKER: &str = "# Managed by innotune";

/// A configuration file innotune writes (a udev rule, a sysctl.d file, a
/// my.cnf drop-in). Undo puts back what was there (nothing, or an earlier
/// innotune version of it), unless someone edited it since: then it
/// reports a conflict and leaves it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstalledFile {
    /// Host-absolute path.
    pub path: PathBuf,
    pub content: String,
    /// A symlink to this target instead of a file (a unit's .wants entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink: Option<String>,
    /// What was there before: absent = nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// SHA-256 of what innotune wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

pub fn sha256(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

const FILE_DIRS: [&str; 4] = [
    "/etc/udev/rules.d/",
    "/etc/sysctl.d/",
    "/etc/tmpfiles.d/",
    "/etc/systemd/system/",
];

impl InstalledFile {
    fn current(&self, h: &Host) -> std::io::Result<Option<String>> {
        let p = h.path(&self.path);
        match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
            Ok(m) if m.file_type().is_symlink() => Ok(Some(format!(
                "symlink:{}",
                std::fs::read_link(&p)?.display()
            ))),
            Ok(_) => std::fs::read_to_string(&p).map(Some),
        }
    }
    fn wanted(&self) -> String {
        match &self.symlink {
            Some(t) => format!("symlink:{t}"),
            None => self.content.clone(),
        }
    }
    /// Replace the file: a temporary file created exclusively next to it
    /// (never following a symlink), fsynced, renamed over it.
    fn write(&self, h: &Host, text: &str) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = h.path(&self.path);
        let dir = p.parent().unwrap_or(Path::new("/"));
        let tmp = dir.join(format!(
            ".{}.innotune-tmp.{}",
            p.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        if let Some(t) = text.strip_prefix("symlink:") {
            std::os::unix::fs::symlink(t, &tmp)?;
        } else {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &p)?;
        std::fs::File::open(dir)?.sync_all()
    }
}

#[typetag::serde(name = "apply_file")]
impl Change for InstalledFile {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        match (&self.symlink, &self.original) {
            (Some(t), _) => format!("link {} → {t}", self.path.display()),
            (None, Some(_)) => format!("update {}", self.path.display()),
            (None, None) => format!("install {}", self.path.display()),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        let cur = self.current(host)?;
        if let Some(c) = &cur {
            if self.symlink.is_none() && !c.starts_with(MARKER) {
                bail!(crate::error::Fix::new(
                    format!("{} exists and was not written by innotune", self.path.display()),
                    "move it away or merge innotune's settings into it by hand (innotune check --emit DIR)"
                ));
            }
        }
        self.original = cur;
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        let w = self.wanted();
        self.write(host, &w)
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.written_sha256 = Some(sha256(&w));
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(self.current(host)?.as_deref() == Some(self.wanted().as_str()))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let h = Host::with_root(&self.root);
        let cur = match self.current(&h) {
            Ok(Some(c)) => c,
            Ok(None) => return Undone::outcome(Outcome::Gone),
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: e.to_string(),
                })
            }
        };
        if self.written_sha256.as_deref() != Some(sha256(&cur).as_str()) {
            return Undone::outcome(Outcome::Conflict {
                reason: "changed since innotune wrote it; left alone".into(),
            });
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        let r = match &self.original {
            Some(o) => self.write(&h, o).map(|_| Outcome::Restored),
            None => std::fs::remove_file(h.path(&self.path)).map(|_| Outcome::Removed),
        };
        Undone::outcome(r.unwrap_or_else(|e| Outcome::Failed {
            reason: e.to_string(),
        }))
    }
    fn priority(&self) -> Priority {
        Priority::FILE
    }
    fn validate(&self) -> Result<(), String> {
        let p = self.path.to_string_lossy();
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir_ok = FILE_DIRS.iter().any(|d| p.starts_with(d)) || name.ends_with(".cnf");
        if !self.path.is_absolute() || !no_dots(&self.path) || !dir_ok || !name.contains("innotune")
        {
            return Err(format!(
                "{} is not a file innotune installs",
                self.path.display()
            ));
        }
        Ok(())
    }
    fn after_apply(&self) -> Vec<Hook> {
        hooks_for(&self.path, &self.root)
    }
    fn after_undo(&self) -> Vec<Hook> {
        hooks_for(&self.path, &self.root)
    }
}

/// What the system must re-read after a file changes (live host only).
fn hooks_for(path: &Path, root: &Path) -> Vec<Hook> {
    if root != Path::new("/") {
        return Vec::new();
    }
    let p = path.to_string_lossy();
    if p.starts_with("/etc/udev/") {
        vec![Hook::UdevReload]
    } else if p.starts_with("/etc/systemd/") {
        vec![Hook::SystemdReload]
    } else {
        Vec::new()
    }
}

// -------------------------------------------------------------- created dir

/// A directory innotune creates for a file of its own (a unit's `.d`
/// drop-in directory); undo removes it when empty.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedDir {
    pub path: PathBuf,
    #[serde(default)]
    pub created: bool,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

#[typetag::serde(name = "apply_dir")]
impl Change for CreatedDir {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        format!("create directory {}", self.path.display())
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        if host.path(&self.path).exists() {
            bail!("{} exists already", self.path.display());
        }
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        std::fs::create_dir(host.path(&self.path))
            .with_context(|| format!("creating {}", self.path.display()))?;
        self.created = true;
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(host.path(&self.path).is_dir())
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let p = Host::with_root(&self.root).path(&self.path);
        if !self.created || !p.exists() {
            return Undone::outcome(Outcome::Gone);
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        Undone::outcome(match std::fs::remove_dir(&p) {
            Ok(()) => Outcome::Removed,
            Err(_)
                if std::fs::read_dir(&p)
                    .map(|mut d| d.next().is_some())
                    .unwrap_or(false) =>
            {
                Outcome::Conflict {
                    reason: "not empty: files innotune did not write are in it; left alone".into(),
                }
            }
            Err(e) => Outcome::Failed {
                reason: e.to_string(),
            },
        })
    }
    fn priority(&self) -> Priority {
        Priority::DIR
    }
    fn validate(&self) -> Result<(), String> {
        let p = self.path.to_string_lossy();
        let dir_kind = p.ends_with(".d") || p.ends_with(".wants");
        if !p.starts_with("/etc/systemd/system/") || !dir_kind || !no_dots(&self.path) {
            return Err(format!(
                "{} is not a directory innotune creates",
                self.path.display()
            ));
        }
        Ok(())
    }
}

// ------------------------------------------------------------ constructors

pub fn sysfs(path: &str, value: &str, label: &str) -> Box<dyn Change> {
    Box::new(SysfsValue {
        path: PathBuf::from(path),
        value: value.into(),
        label: label.into(),
        original: None,
        remember: Vec::new(),
        companions: Vec::new(),
        then_set: Vec::new(),
        root: slash(),
    })
}

/// A scheduler switch: remembers nr_requests (the switch resets it) and
/// sets `nr_requests` afterwards when given.
pub fn scheduler(device: &str, value: &str, nr_requests: Option<&str>) -> Box<dyn Change> {
    let q = format!("/sys/block/{device}/queue");
    let nr = PathBuf::from(format!("{q}/nr_requests"));
    Box::new(SysfsValue {
        path: PathBuf::from(format!("{q}/scheduler")),
        value: value.into(),
        label: format!("{device} scheduler"),
        original: None,
        remember: vec![nr.clone()],
        companions: Vec::new(),
        then_set: nr_requests
            .map(|v| (nr, v.to_string()))
            .into_iter()
            .collect(),
        root: slash(),
    })
}

pub fn server_variable(
    endpoint: &ServerEndpoint,
    name: &str,
    value: &str,
    persist: bool,
) -> Box<dyn Change> {
    Box::new(ServerVariable {
        endpoint: endpoint.clone(),
        name: name.into(),
        value: value.into(),
        persist,
        original: None,
        was_persisted: None,
    })
}

pub fn installed_file(path: &str, content: String) -> Box<dyn Change> {
    Box::new(InstalledFile {
        path: PathBuf::from(path),
        content,
        symlink: None,
        original: None,
        written_sha256: None,
        root: slash(),
    })
}

pub fn installed_symlink(path: &str, target: &str) -> Box<dyn Change> {
    Box::new(InstalledFile {
        path: PathBuf::from(path),
        content: String::new(),
        symlink: Some(target.into()),
        original: None,
        written_sha256: None,
        root: slash(),
    })
}

pub fn created_dir(path: &str) -> Box<dyn Change> {
    Box::new(CreatedDir {
        path: PathBuf::from(path),
        created: false,
        root: slash(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_change_on_a_tree_round_trips() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        let q = t.path().join("sys/block/sda/queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("scheduler"), "none [mq-deadline] kyber bfq\n").unwrap();
        std::fs::write(q.join("nr_requests"), "64\n").unwrap();
        let mut c = scheduler("sda", "none", Some("128"));
        assert!(!c.is_applied(&h).unwrap());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        // A fixture file is not a choice file: it now holds "none".
        assert!(c.is_applied(&h).unwrap());
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "128"
        );
        let json = serde_json::to_string(&c).unwrap();
        let back: Box<dyn Change> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.priority(), Priority::SCHEDULER);
        let u = back.undo(false);
        assert_eq!(u.outcome, Outcome::Restored);
        assert_eq!(
            std::fs::read_to_string(q.join("scheduler")).unwrap(),
            "mq-deadline"
        );
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "64"
        );
        assert!(back.validate().is_ok());
        let bad = sysfs("/etc/passwd", "x", "x");
        assert!(bad.validate().is_err());
    }

    #[test]
    fn installed_file_conflicts_and_restores() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        std::fs::create_dir_all(t.path().join("etc/sysctl.d")).unwrap();
        let p = "/etc/sysctl.d/99-innotune.conf";
        let mut c = installed_file(p, format!("{MARKER}\nvm.swappiness = 1\n"));
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(c.is_applied(&h).unwrap());
        assert_eq!(c.undo(false).outcome, Outcome::Removed);
        c.apply(&h).unwrap();
        std::fs::write(h.path(p), "edited\n").unwrap();
        assert!(matches!(c.undo(false).outcome, Outcome::Conflict { .. }));
        assert!(h.path(p).exists());
        // A file innotune did not write is never taken over.
        let mut other = installed_file(p, format!("{MARKER}\n"));
        assert!(other.capture(&h).is_err());
        assert!(installed_file("/etc/passwd", String::new())
            .validate()
            .is_err());
        assert!(
            installed_file("/etc/mysql/conf.d/99-innotune.cnf", String::new())
                .validate()
                .is_ok()
        );
    }
}
