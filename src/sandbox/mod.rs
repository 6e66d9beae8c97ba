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
//! ([`crate::safety::refuse_near_datadir`]), before anything is created;
//! and when it, its manifest or a name in it is not provably innotune's
//! for the running user (`trust.rs`): only a server whose pid, start time,
//! executable and command line are those recorded when it was started is
//! ever signalled.
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
pub mod live;
mod process;
mod profile;
mod render;
mod report;
mod trust;

pub use crate::change::server::runs_from;
pub use profile::{Profile, CAPACITY, CAPACITY_THREADS};
pub use report::{Advised, Copied, SandboxReport};

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
use trust::{FileId, SandboxDir, ServerIdentity};

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
    /// Starting a sandbox kept by `stop --keep`: take the profile its
    /// manifest recorded instead of [`SandboxOpts::profile`] (`sandbox
    /// start` without `--profile`).
    pub recorded_profile: bool,
    /// Likewise the port it recorded, when that port is still free
    /// (`sandbox start` without `--port`; a taken one is said, and a free
    /// one used).
    pub recorded_port: bool,
    /// `--from-live`: the data comes from this server (a new DIR only).
    pub from_live: Option<live::Live>,
}

impl SandboxOpts {
    pub fn new(dir: impl Into<PathBuf>) -> SandboxOpts {
        SandboxOpts {
            dir: dir.into(),
            profile: Profile::Default,
            port: None,
            keep: false,
            timeout: Duration::from_secs(120),
            recorded_profile: false,
            recorded_port: false,
            from_live: None,
        }
    }
}

/// What `innotune-sandbox.json` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub pid: u32,
    pub port: u16,
    /// Shown to people; innotune itself only ever connects to DIR/mysql.sock.
    pub socket: PathBuf,
    pub server_binary: PathBuf,
    pub version: String,
    pub profile: String,
    /// The profile's variables as written to my.cnf, so a kept sandbox
    /// started again without `--profile` gets the same server (absent in
    /// manifests written before they were recorded, and for `default`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_vars: Vec<(String, String)>,
    pub keep: bool,
    /// The server process as innotune started it (start time, executable,
    /// command line): only a process that still matches is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerIdentity>,
    /// Device and inode of DIR: this manifest vouches for no other
    /// directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir_id: Option<FileId>,
}

impl State {
    /// The profile this sandbox was started with, for starting it again:
    /// its recorded variables, or (manifests from before they were
    /// recorded) the built-in profile of that name.
    pub fn recorded_profile(&self) -> Result<Profile> {
        if self.profile == "default" || !self.profile_vars.is_empty() {
            return Ok(if self.profile_vars.is_empty() {
                Profile::Default
            } else {
                Profile::Vars {
                    name: self.profile.clone(),
                    vars: self.profile_vars.clone(),
                }
            });
        }
        match self.profile.as_str() {
            // `after` without its variables: derived again by check.
            "before" | "after" => Profile::parse(&self.profile),
            other => Err(Fix::new(
                format!("this kept sandbox was started with --profile {other}, whose variables it did not record"),
                format!("give --profile {other} (or another) again"),
            )
            .into()),
        }
    }

    /// Is the server innotune recorded here running, provably (pid, start
    /// time, executable and command line as recorded, naming DIR/my.cnf)?
    pub fn server_running(&self, dir: &Path) -> bool {
        self.server.as_ref().is_some_and(|id| id.is(self.pid, dir))
    }
}

/// `dir` as a sandbox directory innotune may use, or one error line.
fn open_dir(dir: &Path, start: bool) -> Result<SandboxDir> {
    if !start && dir.symlink_metadata().is_err() {
        return Err(not_a_sandbox(dir));
    }
    SandboxDir::open(dir).map_err(|why| {
        Fix::new(
            format!(
                "{} is not a sandbox directory only you can write: {why}; nothing was {}",
                dir.display(),
                if start {
                    "started"
                } else {
                    "stopped or removed"
                }
            ),
            if start {
                "give --dir a new directory, or one only you can write (e.g. under /var/tmp)"
            } else {
                "pass the --dir of a sandbox you started"
            },
        )
        .into()
    })
}

/// The trusted manifest of `d`, or one error line.
fn load_state(d: &SandboxDir, start: bool) -> Result<Option<State>> {
    d.load().map_err(|why| {
        Fix::new(
            format!(
                "{} is not a sandbox innotune {} for you: {why}; nothing was {}",
                d.path.display(),
                if start { "kept" } else { "started" },
                if start {
                    "started"
                } else {
                    "stopped or removed"
                }
            ),
            "inspect and remove it if you did not make it, or choose another --dir",
        )
        .into()
    })
}

/// A running sandbox server. Dropping it stops it (and removes DIR unless kept).
#[derive(Debug)]
pub struct Sandbox {
    dir: PathBuf,
    /// DIR, held open and verified (`trust.rs`).
    sdir: SandboxDir,
    state: State,
    child: Option<Child>,
    done: bool,
}

/// `dir` from the root: the path the server's `--defaults-file` names,
/// and so the one its journal entries and `runs_from` compare.
pub fn absolute(dir: &Path) -> Result<PathBuf> {
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
    /// What its manifest records.
    pub fn state(&self) -> &State {
        &self.state
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
        underived(&opts.profile)?;
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
        let sdir = if dir.symlink_metadata().is_ok() {
            // A directory at or around a datadir is refused as such first
            // (it is usually the server user's, not ours).
            open_dir(&dir, true).or_else(|e| near_datadir().and(Err(e)))?
        } else {
            near_datadir()?;
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            open_dir(&dir, true)?
        };
        let recorded = load_state(&sdir, true)?;
        let reuse = match &recorded {
            Some(st) => {
                if st.server_running(&dir) {
                    anyhow::bail!(Fix::new(
                        format!(
                            "a sandbox is already running in {} (pid {})",
                            dir.display(),
                            st.pid
                        ),
                        "use it, or `innotune sandbox stop --dir` first"
                    ));
                }
                sdir.check_entries().map_err(|why| {
                    Fix::new(
                        format!(
                            "{} is not a sandbox innotune kept for you: {why}; nothing was started",
                            dir.display()
                        ),
                        "inspect and remove it if you did not make it, or choose another --dir",
                    )
                })?;
                near_datadir()?;
                true
            }
            None => {
                near_datadir()?;
                if !sdir.is_empty()? {
                    anyhow::bail!(Fix::new(
                        format!("{} exists and is not empty", dir.display()),
                        "give --dir a new or empty directory (innotune removes it on stop)"
                    ));
                }
                false
            }
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
        let mut opts = opts;
        let mut wanted_port = opts.port;
        if let Some(st) = recorded.as_ref().filter(|_| reuse) {
            if opts.recorded_profile {
                opts.profile = st.recorded_profile()?;
            }
            if opts.recorded_port && wanted_port.is_none() {
                match free_port(Some(st.port)) {
                    Ok(p) => wanted_port = Some(p),
                    Err(_) => crate::output::warn(format!(
                        "port {} that {} used before is taken now: starting on a free one (--port N to choose)",
                        st.port,
                        dir.display()
                    )),
                }
            }
        }
        underived(&opts.profile)?;
        let port = free_port(wanted_port)?;
        let cnf = dir.join("my.cnf");
        let state = State {
            pid: 0,
            port,
            socket: sock.clone(),
            server_binary: server.clone(),
            version: ver.raw.clone(),
            profile: opts.profile.name().to_string(),
            profile_vars: opts.profile.vars().to_vec(),
            keep: opts.keep,
            server: None,
            dir_id: Some(sdir.id()),
        };
        let mut sb = Sandbox {
            dir: dir.clone(),
            sdir,
            state,
            child: None,
            done: false,
        };
        // The marker goes first, so a failed start still lets stop clean
        // DIR (and a fresh DIR is removed by `sb`'s drop).
        sb.write_state()?;
        for d in ["data", "tmp"] {
            sb.sdir
                .mkdir(d)
                .with_context(|| format!("creating {}", dir.join(d).display()))?;
        }
        sb.sdir
            .write(
                "my.cnf",
                init::my_cnf(&dir, port, &ver, &opts.profile).as_bytes(),
            )
            .with_context(|| format!("writing {}", cnf.display()))?;
        if reuse && opts.from_live.is_some() {
            anyhow::bail!(Fix::new(
                format!(
                    "{} holds a kept sandbox; --from-live copies into a new one",
                    dir.display()
                ),
                "give --dir a new or empty directory"
            ));
        }
        if !reuse {
            match &opts.from_live {
                Some(l) if l.method == live::CopyMethod::Backup => {
                    l.backup_into(&dir, &dir.join("data"))?
                }
                _ => init::initialise(&server, &ver, &cnf, &dir)?,
            }
        }
        let mut cmd = Command::new(&server);
        cmd.arg(format!("--defaults-file={}", cnf.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let argv: Vec<std::ffi::OsString> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|s| s.to_os_string())
            .collect();
        let child = spawn(cmd)?;
        sb.state.pid = child.id();
        // What the process is about to show: right after exec the kernel
        // may still show an empty command line (or the old executable),
        // so what was spawned is recorded now, and what /proc shows once
        // the server answers.
        sb.state.server = ServerIdentity::spawned(child.id(), &argv);
        sb.child = Some(child);
        sb.write_state()?;
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
                        if let Some(id) = ServerIdentity::of(sb.state.pid) {
                            sb.state.server = Some(id);
                        }
                        sb.write_state()?;
                        if let Some(l) = opts
                            .from_live
                            .as_ref()
                            .filter(|l| l.method == live::CopyMethod::Logical)
                        {
                            // A failed load drops `sb`: the server is
                            // stopped and DIR removed.
                            l.dump_into(&dir, &cnf)?;
                        }
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

    /// Take over a sandbox started earlier (e.g. by `innotune sandbox
    /// start`): only one whose directory and manifest are provably the
    /// running user's (`trust.rs`).
    pub fn attach(dir: &Path) -> Result<Sandbox> {
        let sdir = open_dir(dir, false)?;
        let state = load_state(&sdir, false)?.ok_or_else(|| not_a_sandbox(dir))?;
        Ok(Sandbox {
            dir: dir.to_path_buf(),
            sdir,
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

    /// Is the server innotune started here running (provably it)?
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => self.state.server_running(&self.dir),
        }
    }

    fn write_state(&self) -> Result<()> {
        self.sdir
            .write(
                MARKER,
                serde_json::to_string_pretty(&self.state)?.as_bytes(),
            )
            .with_context(|| format!("writing {}", self.dir.join(MARKER).display()))
    }

    /// Shut down cleanly, wait for the process to exit, remove DIR unless kept.
    pub fn stop(mut self) -> Result<()> {
        self.done = true;
        self.stop_inner()
    }

    /// Send `sig` to the server: our own (unreaped, so its pid cannot be
    /// reused) child directly, an attached one through a pidfd after
    /// checking it is still the recorded process. Never a SHUTDOWN over a
    /// socket: a socket proves nothing about who listens on it.
    fn signal(&self, sig: rustix::process::Signal) -> bool {
        let pid = self.state.pid;
        match (&self.child, &self.state.server) {
            (Some(_), _) => unsafe { libc::kill(pid as i32, sig.as_raw()) == 0 },
            (None, Some(id)) => trust::signal(pid, id, &self.dir, sig),
            (None, None) => false,
        }
    }

    fn stop_inner(&mut self) -> Result<()> {
        use rustix::process::Signal;
        let pid = self.state.pid;
        let running = pid != 0 && self.is_running();
        if !running && pid != 0 && self.child.is_none() && runs_from(pid, &self.dir) {
            // Something runs from DIR/my.cnf that is not what innotune
            // recorded: neither signal it nor pull DIR from under it.
            anyhow::bail!(Fix::new(
                format!(
                    "pid {pid} runs from {} but is not the server innotune started there (its start time, executable or command line differ from those recorded); it and the directory were left alone",
                    self.dir.join("my.cnf").display()
                ),
                format!("stop pid {pid} yourself if it is yours, then run this again")
            ));
        }
        if !running && pid != 0 && self.child.is_none() && pid_alive(pid) {
            crate::output::warn(format!(
                "left pid {pid} alone: it is not the server innotune started in {} (its start time, executable or command line differ from those recorded)",
                self.dir.display()
            ));
        }
        // Gone: reaped (our child), or no longer the process with the
        // recorded start time (exited, a zombie, or its pid reused). Not
        // the full identity: while a process exits, its executable and
        // command line already read as empty.
        let ticks = self.state.server.as_ref().map(|id| id.start_ticks);
        let alive = |sb: &mut Sandbox| match sb.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => ticks.is_some() && crate::journal::process_start_ticks(pid) == ticks,
        };
        if running && self.signal(Signal::TERM) {
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut killed = false;
            while alive(self) {
                if Instant::now() > deadline && !killed {
                    self.signal(Signal::KILL);
                    killed = true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.child = None;
        if !self.state.keep {
            fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing sandbox directory {}", self.dir.display()))?;
        } else {
            self.state.pid = 0;
            self.state.server = None;
            self.write_state()?;
        }
        Ok(())
    }
}

/// `after` is check's advice, derived by `check::sandbox::start` before a
/// server starts with it: refused here as it is.
fn underived(p: &Profile) -> Result<()> {
    if p.needs_advice() {
        anyhow::bail!(Fix::new(
            "the `after` profile is check's advice for this host, derived before a sandbox starts with it",
            "start it with innotune::check::sandbox::start (as `innotune sandbox start --profile after` does)"
        ));
    }
    Ok(())
}

/// The profile the kept sandbox in `dir` recorded (None when `dir` holds
/// no sandbox of the running user's, or it recorded no profile to reuse).
pub fn recorded_profile(dir: &Path) -> Option<Profile> {
    read_state(dir).ok()?.recorded_profile().ok()
}

fn not_a_sandbox(dir: &Path) -> anyhow::Error {
    Fix::new(
        format!("{} is not an innotune sandbox (no {MARKER})", dir.display()),
        "pass the --dir given to `innotune sandbox start`",
    )
    .into()
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

/// The manifest of the sandbox in `dir`, read only when `dir` and the
/// manifest are provably the running user's (`trust.rs`).
pub fn read_state(dir: &Path) -> Result<State> {
    let sdir = open_dir(dir, false)?;
    load_state(&sdir, false)?.ok_or_else(|| not_a_sandbox(dir))
}
