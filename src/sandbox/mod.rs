//! `innotune sandbox`: a throwaway MySQL/MariaDB server in a private directory.
//!
//! Layout of DIR (everything innotune writes stays in it):
//! `my.cnf` (server + [client] groups), `data/`, `tmp/`, `mysql.sock`,
//! `mysqld.pid`, `error.log`, and `innotune-sandbox.json`, the marker that
//! says innotune owns DIR — stop removes DIR only when the marker is there.
//! The server listens on its own socket and on 127.0.0.1 at a free port;
//! it never touches a system server (3306 is only used if asked for and free).
//!
//! DIR is refused when it is, is inside, or contains the datadir of a
//! running server or the one the server option files name
//! ([`crate::safety::refuse_near_datadir`]), before anything is created.
//!
//! Library use (tests, sweep): `Sandbox::start(SandboxOpts::new(dir))`,
//! then `.socket()`, `.port()`, `.conn_spec()`; dropping it stops it.
//!
//! Files: this one is the lifecycle (start, attach, stop); `profile.rs`
//! the server variables, `process.rs` binaries, ports and pids, `init.rs`
//! my.cnf and the datadir's initialisation, `report.rs` the command
//! (options → its `Command` impl → [`SandboxReport`]), `render.rs` its document.

pub mod cli;
mod init;
mod process;
mod profile;
mod render;
mod report;

pub use crate::change::server::runs_from;
pub use profile::{Profile, CAPACITY, CAPACITY_THREADS};
pub use report::SandboxReport;

use crate::change::ServerStarted;
use crate::db::{ConnSpec, ServerVersion};
use crate::error::Fix;
use crate::journal::Guard;
use anyhow::{Context, Result};
use process::{binary_version, find_binary, free_port, pid_alive, tail};
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

/// `dir` from the root: the path the server's `--defaults-file` names,
/// and so the one its journal entries and `runs_from` compare.
fn absolute(dir: &Path) -> Result<PathBuf> {
    Ok(if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    })
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
        Self::start_with(opts, &mut |mut c: Command| {
            c.spawn()
                .with_context(|| format!("starting {}", c.get_program().to_string_lossy()))
        })
    }

    /// [`Sandbox::start`] under a journal: the server is journaled before
    /// its data directory is initialised ([`ServerStarted::new`]: any
    /// server naming DIR's my.cnf, the bootstrap one too), and again as it
    /// is spawned ([`ServerStarted::spawn`]: its pid and start time are on
    /// disk before a signal's restore can run). Returns the journal's
    /// handles for both, to undo once the sandbox is stopped cleanly (they
    /// then find nothing left to stop).
    pub fn start_journaled(opts: SandboxOpts, guard: &Guard) -> Result<(Sandbox, Vec<u64>)> {
        let live = crate::host::Host::live();
        let dir = absolute(&opts.dir)?;
        let mut ids = vec![guard.apply(&live, Box::new(ServerStarted::new(&dir)))?];
        let sb = Self::start_with(opts, &mut |cmd: Command| {
            let (change, spawned) = ServerStarted::spawn(&dir, cmd);
            let journaled = guard.apply(&live, Box::new(change));
            let child = spawned.child();
            match (journaled, child) {
                (Ok(id), Some(child)) => {
                    ids.push(id);
                    Ok(child)
                }
                (Ok(_), None) => {
                    anyhow::bail!("internal: the server of {} was not spawned", dir.display())
                }
                (Err(e), child) => {
                    // Spawned but its pid could not be journaled: stop it now.
                    if let Some(mut c) = child {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                    Err(e)
                }
            }
        })?;
        Ok((sb, ids))
    }

    /// [`Sandbox::start`], with `spawn` starting the server process from
    /// the command it is given (a journal records the pid there, at the
    /// moment the server exists: [`Sandbox::start_journaled`]).
    pub fn start_with(
        opts: SandboxOpts,
        spawn: &mut dyn FnMut(Command) -> Result<Child>,
    ) -> Result<Sandbox> {
        let dir = absolute(&opts.dir)?;
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
        // Nothing is created before this check (a stray directory in a
        // datadir is a bogus database to the server); a running sandbox in
        // DIR is reported as such first.
        let near_datadir = || {
            crate::safety::refuse_near_datadir(
                &crate::host::Host::live(),
                &dir,
                "sandbox directory",
            )
        };
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
            near_datadir()?;
            true
        } else {
            near_datadir()?;
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
        fs::write(&cnf, init::my_cnf(&dir, port, &ver, &opts.profile))?;
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
            init::initialise(&server, &ver, &cnf, &dir)?;
        }
        let mut cmd = Command::new(&server);
        cmd.arg(format!("--defaults-file={}", cnf.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let child = spawn(cmd)?;
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

pub(crate) fn read_state(dir: &Path) -> Result<State> {
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
