//! `innotune sandbox`: a throwaway MySQL/MariaDB server in a private directory.
//!
//! Layout of DIR (everything innotune writes stays in it):
//! `my.cnf` (server + [client] groups), `data/`, `tmp/`, `mysql.sock`,
//! `mysqld.pid`, `error.log`, and `innotune-sandbox.json`, the marker that
//! says innotune owns DIR — stop removes DIR only when the marker is there.
//! The server listens on its own socket and on 127.0.0.1 at a free port;
//! it never touches a system server (3306 is only used if asked for and free).
//!
//! Library use (tests, sweep): `Sandbox::start(SandboxOpts::new(dir))`,
//! then `.socket()`, `.port()`, `.conn_spec()`; dropping it stops it.

pub mod cli;
mod render;

use crate::db::{ConnSpec, ServerVersion};
use crate::error::{exit, Fix};
use crate::Ctx;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MARKER: &str = "innotune-sandbox.json";
/// Longest socket path that fits `sockaddr_un.sun_path` with room to spare.
pub const MAX_SOCKET_PATH: usize = 100;

/// Where the server of the sandbox in `dir` listens.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join("mysql.sock")
}

/// Server variables a sandbox starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profile {
    /// The server's compiled-in defaults.
    Default,
    /// A named set (`before`, `after`) or the contents of a file.
    Vars {
        name: String,
        vars: Vec<(String, String)>,
    },
}

/// The practice's "before" table: a stock-sized server as commonly found.
const BEFORE: &[(&str, &str)] = &[
    ("innodb_buffer_pool_size", "128M"),
    ("innodb_log_file_size", "48M"),
    ("innodb_log_buffer_size", "16M"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_flush_method", "fsync"),
    ("innodb_io_capacity", "200"),
    ("innodb_io_capacity_max", "2000"),
    ("innodb_flush_neighbors", "1"),
];

/// The practice's "after" table: sized buffer pool and redo, O_DIRECT,
/// io_capacity for SSDs, no neighbour flushing. Durability unchanged
/// (flush_log_at_trx_commit=1): a tuning must not trade safety for speed.
const AFTER: &[(&str, &str)] = &[
    ("innodb_buffer_pool_size", "1G"),
    ("innodb_log_file_size", "512M"),
    ("innodb_log_buffer_size", "64M"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_flush_method", "O_DIRECT"),
    ("innodb_io_capacity", "2000"),
    ("innodb_io_capacity_max", "4000"),
    ("innodb_flush_neighbors", "0"),
];

impl Profile {
    /// `default`, `before`, `after`, or a path to a file of `name = value` lines.
    pub fn parse(s: &str) -> Result<Profile> {
        let named = |name: &str, t: &[(&str, &str)]| Profile::Vars {
            name: name.to_string(),
            vars: t
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        match s {
            "default" | "defaults" => Ok(Profile::Default),
            "before" => Ok(named("before", BEFORE)),
            "after" => Ok(named("after", AFTER)),
            path => {
                let text = fs::read_to_string(path).map_err(|e| {
                    Fix::new(
                        format!("profile {path:?} is not a known name and cannot be read as a file: {e}"),
                        "use --profile default, before, after, or a file of `name = value` lines",
                    )
                })?;
                let mut vars = Vec::new();
                for (n, line) in text.lines().enumerate() {
                    let l = line.trim();
                    if l.is_empty()
                        || l.starts_with('#')
                        || l.starts_with(';')
                        || l.starts_with('[')
                    {
                        continue;
                    }
                    let (k, v) = l.split_once('=').ok_or_else(|| {
                        Fix::new(
                            format!("{path}:{}: {l:?} is not `name = value`", n + 1),
                            "write one server variable per line, e.g. innodb_buffer_pool_size = 1G",
                        )
                    })?;
                    vars.push((k.trim().replace('-', "_"), v.trim().to_string()));
                }
                Ok(Profile::Vars {
                    name: path.to_string(),
                    vars,
                })
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Profile::Default => "default",
            Profile::Vars { name, .. } => name,
        }
    }

    /// The value the profile sets for server variable `name`, if any
    /// (`-` and `_` are the same, as for the server).
    pub fn var(&self, name: &str) -> Option<&str> {
        let norm = |s: &str| s.replace('-', "_");
        self.vars()
            .iter()
            .rev()
            .find(|(k, _)| norm(k) == norm(name))
            .map(|(_, v)| v.as_str())
    }

    /// The profile with `name = value` added (it wins over the profile's
    /// own setting: later lines of my.cnf override earlier ones). The name
    /// stays the profile's.
    pub fn with_var(self, name: &str, value: &str) -> Profile {
        let (pname, mut vars) = match self {
            Profile::Default => ("default".to_string(), Vec::new()),
            Profile::Vars { name, vars } => (name, vars),
        };
        vars.push((name.to_string(), value.to_string()));
        Profile::Vars { name: pname, vars }
    }

    fn vars(&self) -> &[(String, String)] {
        match self {
            Profile::Default => &[],
            Profile::Vars { vars, .. } => vars,
        }
    }
}

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxOpts {
    pub dir: PathBuf,
    pub profile: Profile,
    pub port: Option<u16>,
    /// Keep DIR after stop.
    pub keep: bool,
    pub timeout: Duration,
}

impl SandboxOpts {
    pub fn new(dir: impl Into<PathBuf>) -> SandboxOpts {
        SandboxOpts {
            dir: dir.into(),
            profile: Profile::Default,
            port: None,
            keep: false,
            timeout: Duration::from_secs(120),
        }
    }
}

/// What `innotune-sandbox.json` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub pid: u32,
    pub port: u16,
    pub socket: PathBuf,
    pub server_binary: PathBuf,
    pub version: String,
    pub profile: String,
    pub keep: bool,
}

/// A running sandbox server. Dropping it stops it (and removes DIR unless kept).
#[derive(Debug)]
pub struct Sandbox {
    dir: PathBuf,
    state: State,
    child: Option<Child>,
    done: bool,
}

fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    let extra = "/usr/sbin:/usr/local/sbin:/usr/local/mysql/bin:/usr/bin";
    path.push(":");
    path.push(extra);
    names
        .iter()
        .find_map(|n| which::which_in(n, Some(&path), "/").ok())
}

/// `mariadbd --version` → "… Ver 10.11.19-MariaDB-0+deb12u1 for …".
fn binary_version(bin: &Path) -> Result<ServerVersion> {
    let out = Command::new(bin)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", bin.display()))?;
    let s = String::from_utf8_lossy(&out.stdout);
    let v = s
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .unwrap_or("");
    Ok(ServerVersion::parse(v))
}

fn free_port(wanted: Option<u16>) -> Result<u16> {
    let l = std::net::TcpListener::bind(("127.0.0.1", wanted.unwrap_or(0))).map_err(|e| {
        Fix::new(
            format!("port {} on 127.0.0.1 is not free: {e}", wanted.unwrap_or(0)),
            "pick another --port or leave it out to get a free one",
        )
    })?;
    Ok(l.local_addr()?.port())
}

fn pid_alive(pid: u32) -> bool {
    // A zombie has exited; /proc/PID/stat state 'Z' counts as gone.
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Is `pid` the server of the sandbox in `dir`: does its command line
/// carry the argument `--defaults-file=DIR/my.cnf`? Every server a sandbox
/// starts does (and so does mariadb-install-db's bootstrap server); a
/// recycled pid, or a sandbox in `DIR2` whose name starts with DIR, does
/// not. Shared with the journal, which stops sandboxes after a crash.
pub fn runs_from(pid: u32, dir: &Path) -> bool {
    let want = format!("--defaults-file={}", dir.join("my.cnf").display());
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| c.split(|&b| b == 0).any(|a| a == want.as_bytes()))
        .unwrap_or(false)
}

fn tail(path: &Path, n: usize) -> String {
    let t = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

impl Sandbox {
    pub fn socket(&self) -> &Path {
        &self.state.socket
    }
    pub fn port(&self) -> u16 {
        self.state.port
    }
    pub fn pid(&self) -> u32 {
        self.state.pid
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn version(&self) -> ServerVersion {
        ServerVersion::parse(&self.state.version)
    }
    /// Connect as root over the socket (no password: the sandbox is private).
    pub fn conn_spec(&self) -> ConnSpec {
        ConnSpec::socket(&self.state.socket, "root")
    }
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("error.log")
    }

    /// Initialise (unless DIR holds a kept sandbox), start, wait until ready.
    pub fn start(opts: SandboxOpts) -> Result<Sandbox> {
        Self::start_with(opts, &mut |c: &mut Command| {
            c.spawn()
                .with_context(|| format!("starting {}", c.get_program().to_string_lossy()))
        })
    }

    /// [`Sandbox::start`], with `spawn` starting the server process from
    /// the command it is given: a journal records the pid there, at the
    /// moment the server exists (see `journal::Guard::spawn_server`).
    pub fn start_with(
        opts: SandboxOpts,
        spawn: &mut dyn FnMut(&mut Command) -> Result<Child>,
    ) -> Result<Sandbox> {
        let dir = if opts.dir.is_absolute() {
            opts.dir.clone()
        } else {
            std::env::current_dir()?.join(&opts.dir)
        };
        let sock = socket_path(&dir);
        if sock.as_os_str().len() > MAX_SOCKET_PATH {
            anyhow::bail!(Fix::new(
                format!(
                    "socket path {} is too long for a Unix socket",
                    sock.display()
                ),
                "use a shorter --dir"
            ));
        }
        let marker = dir.join(MARKER);
        let reuse = if marker.exists() {
            let st = read_state(&dir)?;
            if pid_alive(st.pid) && runs_from(st.pid, &dir) {
                anyhow::bail!(Fix::new(
                    format!(
                        "a sandbox is already running in {} (pid {})",
                        dir.display(),
                        st.pid
                    ),
                    "use it, or `innotune sandbox stop --dir` first"
                ));
            }
            true
        } else {
            if dir.exists() && fs::read_dir(&dir)?.next().is_some() {
                anyhow::bail!(Fix::new(
                    format!("{} exists and is not empty", dir.display()),
                    "give --dir a new or empty directory (innotune removes it on stop)"
                ));
            }
            false
        };
        let server = std::env::var_os("INNOTUNE_MYSQLD")
            .map(PathBuf::from)
            .or_else(|| find_binary(&["mariadbd", "mysqld"]))
            .ok_or_else(|| {
                Fix::new(
                    "no mariadbd or mysqld found",
                    "install the server package (mariadb-server or mysql-server) or set INNOTUNE_MYSQLD",
                )
            })?;
        let ver = binary_version(&server)?;
        let port = free_port(opts.port)?;
        fs::create_dir_all(dir.join("data"))?;
        fs::create_dir_all(dir.join("tmp"))?;
        let cnf = dir.join("my.cnf");
        fs::write(&cnf, my_cnf(&dir, port, &ver, &opts.profile))?;
        let state = State {
            pid: 0,
            port,
            socket: sock.clone(),
            server_binary: server.clone(),
            version: ver.raw.clone(),
            profile: opts.profile.name().to_string(),
            keep: opts.keep,
        };
        // The marker goes first, so a failed init still lets stop clean DIR.
        write_state(&dir, &state)?;
        let mut sb = Sandbox {
            dir: dir.clone(),
            state,
            child: None,
            done: false,
        };
        if !reuse {
            initialise(&server, &ver, &cnf, &dir)?;
        }
        let mut cmd = Command::new(&server);
        cmd.arg(format!("--defaults-file={}", cnf.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let child = spawn(&mut cmd)?;
        sb.state.pid = child.id();
        sb.child = Some(child);
        write_state(&dir, &sb.state)?;
        let deadline = Instant::now() + opts.timeout;
        let spec = sb.conn_spec();
        loop {
            if let Some(c) = sb.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    sb.child = None;
                    anyhow::bail!(Fix::new(
                        format!(
                            "the sandbox server exited ({st}) before accepting connections: {}",
                            tail(&sb.error_log(), 4)
                        ),
                        format!(
                            "read {} and fix the profile or DIR",
                            sb.error_log().display()
                        )
                    ));
                }
            }
            if sock.exists() {
                if let Ok(mut c) = spec.connect() {
                    if let Ok(v) = crate::db::server_version(&mut c) {
                        sb.state.version = v.raw;
                        write_state(&dir, &sb.state)?;
                        return Ok(sb);
                    }
                }
            }
            if Instant::now() > deadline {
                anyhow::bail!(Fix::new(
                    format!(
                        "the sandbox server did not accept connections within {}s: {}",
                        opts.timeout.as_secs(),
                        tail(&sb.error_log(), 4)
                    ),
                    "raise --timeout, or read the error log in DIR"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Take over a sandbox started earlier (e.g. by `innotune sandbox start`).
    pub fn attach(dir: &Path) -> Result<Sandbox> {
        let state = read_state(dir)?;
        Ok(Sandbox {
            dir: dir.to_path_buf(),
            state,
            child: None,
            done: false,
        })
    }

    /// Leave the server running when this handle goes away (CLI `start`).
    pub fn detach(mut self) -> State {
        self.done = true;
        self.child = None;
        self.state.clone()
    }

    pub fn set_keep(&mut self, keep: bool) {
        self.state.keep = keep;
    }

    /// Shut down cleanly, wait for the process to exit, remove DIR unless kept.
    pub fn stop(mut self) -> Result<()> {
        self.done = true;
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        let pid = self.state.pid;
        let ours =
            pid != 0 && pid_alive(pid) && (self.child.is_some() || runs_from(pid, &self.dir));
        if ours {
            let asked = self
                .conn_spec()
                .connect()
                .and_then(|mut c| {
                    use mysql::prelude::Queryable;
                    c.query_drop("SHUTDOWN").map_err(Into::into)
                })
                .is_ok();
            if !asked {
                unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            }
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut killed = false;
            loop {
                let gone = match self.child.as_mut() {
                    Some(c) => matches!(c.try_wait(), Ok(Some(_))),
                    None => !pid_alive(pid),
                };
                if gone {
                    break;
                }
                if Instant::now() > deadline && !killed {
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    killed = true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            self.child = None;
        }
        if !self.state.keep && self.dir.join(MARKER).exists() {
            fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing sandbox directory {}", self.dir.display()))?;
        } else if self.dir.join(MARKER).exists() {
            self.state.pid = 0;
            write_state(&self.dir, &self.state)?;
        }
        Ok(())
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.done {
            self.done = true;
            if let Err(e) = self.stop_inner() {
                crate::output::warn(format!("stopping sandbox {}: {e:#}", self.dir.display()));
            }
        }
    }
}

fn read_state(dir: &Path) -> Result<State> {
    let p = dir.join(MARKER);
    let text = fs::read_to_string(&p).map_err(|_| {
        Fix::new(
            format!("{} is not an innotune sandbox (no {MARKER})", dir.display()),
            "pass the --dir given to `innotune sandbox start`",
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", p.display()))
}

fn write_state(dir: &Path, st: &State) -> Result<()> {
    fs::write(dir.join(MARKER), serde_json::to_string_pretty(st)?)?;
    Ok(())
}

fn my_cnf(dir: &Path, port: u16, ver: &ServerVersion, profile: &Profile) -> String {
    let d = dir.display();
    let mut s = format!(
        "# Written by innotune sandbox; removed with the sandbox.\n[mysqld]\n\
         datadir={d}/data\nsocket={d}/mysql.sock\nport={port}\nbind-address=127.0.0.1\n\
         pid-file={d}/mysqld.pid\nlog-error={d}/error.log\ntmpdir={d}/tmp\n\
         skip-name-resolve\n"
    );
    if rustix::process::geteuid().is_root() {
        s.push_str("user=root\n");
    }
    if !ver.is_mariadb() && ver.major >= 8 {
        s.push_str("mysqlx=OFF\ndisable-log-bin\n");
    }
    for (k, v) in profile.vars() {
        s.push_str(&format!("{k}={v}\n"));
    }
    s.push_str(&format!("\n[client]\nsocket={d}/mysql.sock\nuser=root\n"));
    s
}

fn initialise(server: &Path, ver: &ServerVersion, cnf: &Path, dir: &Path) -> Result<()> {
    let defaults = format!("--defaults-file={}", cnf.display());
    let mut cmd = if !ver.is_mariadb() && (ver.major, ver.minor) >= (5, 7) {
        let mut c = Command::new(server);
        c.arg(&defaults).arg("--initialize-insecure");
        c
    } else {
        let inst = find_binary(&["mariadb-install-db", "mysql_install_db"]).ok_or_else(|| {
            Fix::new(
                "no mariadb-install-db or mysql_install_db found",
                "install the server package that provides it",
            )
        })?;
        let mut c = Command::new(inst);
        c.arg(&defaults);
        if ver.is_mariadb() && (ver.major, ver.minor) >= (10, 5) {
            c.arg("--skip-test-db");
        }
        if ver.is_mariadb() && (ver.major, ver.minor) >= (10, 4) {
            c.arg("--auth-root-authentication-method=socket");
        }
        c
    };
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .context("initialising the sandbox data directory")?;
    if !out.status.success() {
        let mut msg = String::from_utf8_lossy(&out.stderr).into_owned();
        if msg.trim().is_empty() {
            msg = tail(&dir.join("error.log"), 4);
        }
        let msg: Vec<&str> = msg.lines().filter(|l| !l.trim().is_empty()).collect();
        anyhow::bail!(Fix::new(
            format!(
                "initialising {} failed ({}): {}",
                dir.join("data").display(),
                out.status,
                msg[msg.len().saturating_sub(3)..].join(" | ")
            ),
            "check the profile's variables and the free space under DIR"
        ));
    }
    Ok(())
}

/// `innotune sandbox status`.
#[derive(Debug, Serialize)]
pub struct SandboxReport {
    pub action: &'static str,
    pub dir: String,
    pub running: bool,
    pub pid: Option<u32>,
    pub port: u16,
    pub socket: String,
    pub version: String,
    pub profile: String,
    pub kept: bool,
}

impl SandboxReport {
    fn new(action: &'static str, dir: &Path, st: &State, running: bool) -> SandboxReport {
        SandboxReport {
            action,
            dir: dir.display().to_string(),
            running,
            pid: running.then_some(st.pid),
            port: st.port,
            socket: st.socket.display().to_string(),
            version: st.version.clone(),
            profile: st.profile.clone(),
            kept: st.keep,
        }
    }
}

pub fn run(args: cli::SandboxArgs, ctx: &Ctx) -> Result<i32> {
    use cli::SandboxAction::*;
    match args.action {
        Start(a) => {
            let opts = SandboxOpts {
                dir: a.dir.dir.clone(),
                profile: Profile::parse(&a.profile)?,
                port: a.port,
                keep: a.keep,
                timeout: Duration::from_secs(a.timeout),
            };
            let sb = Sandbox::start(opts)?;
            let dir = sb.dir().to_path_buf();
            let st = sb.detach();
            ctx.emit(&SandboxReport::new("start", &dir, &st, true))
        }
        Stop(a) => {
            let dir = absolute(&a.dir.dir)?;
            let mut sb = Sandbox::attach(&dir)?;
            if a.keep {
                sb.set_keep(true);
            }
            let st = sb.state.clone();
            let keep = sb.state.keep;
            sb.stop()?;
            let mut r = SandboxReport::new("stop", &dir, &st, false);
            r.kept = keep;
            ctx.emit(&r)
        }
        Status(a) => {
            let dir = absolute(&a.dir)?;
            let mut st = read_state(&dir)?;
            let running = st.pid != 0 && pid_alive(st.pid) && runs_from(st.pid, &dir);
            if running {
                if let Ok(mut c) = ConnSpec::socket(&st.socket, "root").connect() {
                    if let Ok(v) = crate::db::server_version(&mut c) {
                        st.version = v.raw;
                    }
                }
            }
            let r = SandboxReport::new("status", &dir, &st, running);
            let code = ctx.emit(&r)?;
            Ok(if running { code } else { exit::FOUND })
        }
    }
}

fn absolute(p: &Path) -> Result<PathBuf> {
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    })
}
