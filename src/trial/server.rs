//! OLTP workloads in a sweep: one throwaway server per sweep, its datadir
//! in the sweep's work directory (so on the swept filesystem), journaled
//! from before it exists so that every exit path stops it, loaded once,
//! then driven by `oltp::run_workload` trial after trial.
//!
//! Why one server for the whole sweep and not one per trial: initialising
//! and loading take longer than a trial, and a fresh server starts cold;
//! one server keeps the buffer pool in the steady state the warm-up
//! restores after each switch. The dataset drifts as write workloads run
//! (as in any sysbench run), and dirty pages of one trial are flushed in
//! the next: both land on candidates in the sweep's random order, so they
//! widen the intervals instead of biasing a candidate.

use crate::db::ConnSpec;
use crate::error::Fix;
use crate::journal::Guard;
use crate::oltp::{self, OltpOptions, OltpResult};
use crate::sandbox::{self, Profile, Sandbox, SandboxOpts};
use anyhow::{Context, Result};
use clap::ValueEnum;
use mysql::prelude::Queryable;
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Buffer pool when neither `--oltp-buffer-pool` nor the profile sets one:
/// a third of the default dataset, so reads reach the device.
pub const DEFAULT_BUFFER_POOL: &str = "32M";
/// The sandbox's directory inside the sweep's work directory.
const SANDBOX_DIR: &str = "sandbox";

/// The OLTP workload `name` names, if it is one of sysbench's five.
pub fn oltp_workload(name: &str) -> Option<oltp::Workload> {
    oltp::Workload::from_str(name, false).ok()
}

/// What the OLTP workloads ran against (JSON: `oltp`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OltpSetup {
    /// The OLTP workloads of the sweep.
    pub workloads: Vec<String>,
    pub threads: u32,
    pub tables: u32,
    pub table_size: u32,
    /// The sandbox profile (`default`, `before`, `after` or a file).
    pub profile: String,
    /// innodb_buffer_pool_size given to the server, in bytes.
    pub buffer_pool_bytes: u64,
    /// Where that size came from: `option` (--oltp-buffer-pool),
    /// `profile`, or `default` (32M).
    pub buffer_pool_source: Cow<'static, str>,
    /// The sandbox directory (datadir, redo log, tmpdir, socket).
    pub sandbox_dir: PathBuf,
    /// Server version (`SELECT VERSION()`); empty until started.
    pub server_version: String,
    /// Seconds to create and load the tables (not part of any trial).
    pub prepare_s: f64,
    /// Data + index bytes of the tables after loading (information_schema,
    /// InnoDB's estimate), to compare with the buffer pool; absent when the
    /// server would not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset_bytes: Option<u64>,
    /// `prove --live-server`: the server the workloads ran on instead of a
    /// sandbox (its existing sbtest tables; nothing loaded or dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_server: Option<String>,
}

/// How OLTP workloads run (see `--oltp-*` in `innotune sweep --help`).
#[derive(Debug, Clone)]
pub struct OltpSettings {
    /// Client threads (sysbench --threads).
    pub threads: u32,
    /// Tables to load (sysbench --tables).
    pub tables: u32,
    /// Rows per table (sysbench --table-size).
    pub table_size: u32,
    /// `default`, `before`, `after`, or a file of `name = value` lines.
    pub sandbox_profile: String,
    /// innodb_buffer_pool_size; None: the profile's, else 32M.
    pub buffer_pool: Option<String>,
}

impl Default for OltpSettings {
    fn default() -> Self {
        OltpSettings {
            threads: 8,
            tables: 4,
            table_size: 100_000,
            sandbox_profile: "default".into(),
            buffer_pool: None,
        }
    }
}

/// Bytes a row of sysbench's table takes on disk with its index (measured:
/// about 92 MiB for 4 × 100,000 rows).
const ROW_BYTES: u64 = 240;
/// What a fresh MariaDB/MySQL datadir takes before any table: redo log
/// (MariaDB 10.11's default innodb_log_file_size is 96 MiB), system and
/// undo tablespaces, the mysql schema, Aria logs.
const SERVER_BYTES: u64 = 192 << 20;

/// Everything checked before the host is touched.
pub struct OltpPlan {
    pub setup: OltpSetup,
    profile: Profile,
    opts: OltpOptions,
}

fn positive(v: u32, flag: &str) -> Result<()> {
    if v == 0 {
        anyhow::bail!(Fix::new(
            format!("{flag} must be at least 1"),
            format!("pass {flag} 1 or more")
        ));
    }
    Ok(())
}

/// Validate the OLTP options for `workloads` (OLTP names only) and the
/// sandbox's place under `workdir`. Bad input fails here, one line, with
/// nothing changed.
pub fn plan(args: &OltpSettings, workloads: &[String], workdir: &Path) -> Result<OltpPlan> {
    positive(args.threads, "--oltp-threads")?;
    positive(args.tables, "--oltp-tables")?;
    positive(args.table_size, "--oltp-table-size")?;
    // The sandbox's own error names `sandbox start --profile`.
    let profile = Profile::parse(&args.sandbox_profile).map_err(|e| {
        Fix::new(
            format!(
                "--sandbox-profile: {}",
                e.downcast_ref::<Fix>()
                    .map(|f| f.what.clone())
                    .unwrap_or_else(|| crate::error::one_line(&e))
            ),
            "give --sandbox-profile default, before, after, or a file of `name = value` lines",
        )
    })?;
    let (bp, source) = match (&args.buffer_pool, profile.var("innodb_buffer_pool_size")) {
        (Some(s), _) => (s.clone(), "option"),
        (None, Some(v)) => (v.to_string(), "profile"),
        (None, None) => (DEFAULT_BUFFER_POOL.to_string(), "default"),
    };
    let bytes = crate::units::parse_size(&bp)
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| {
            Fix::new(
                format!("buffer pool size {bp:?} ({source}) is not a size"),
                "give --oltp-buffer-pool a size such as 32M or 1G",
            )
        })?;
    // The server gets bytes: a profile's `1G` and innotune's parse agree.
    let profile = profile.with_var("innodb_buffer_pool_size", &bytes.to_string());
    let dir = workdir.join(SANDBOX_DIR);
    let sock = sandbox::socket_path(&dir);
    if sock.as_os_str().len() > sandbox::MAX_SOCKET_PATH {
        anyhow::bail!(Fix::new(
            format!(
                "the OLTP server's socket {} would be longer than a Unix socket path allows ({} bytes)",
                sock.display(),
                sandbox::MAX_SOCKET_PATH
            ),
            "sweep a shorter path on the same filesystem (e.g. its mount point)"
        ));
    }
    let opts = OltpOptions {
        threads: args.threads,
        tables: args.tables,
        table_size: args.table_size,
        ..Default::default()
    };
    Ok(OltpPlan {
        setup: OltpSetup {
            workloads: workloads.to_vec(),
            threads: args.threads,
            tables: args.tables,
            table_size: args.table_size,
            profile: profile.name().to_string(),
            buffer_pool_bytes: bytes,
            buffer_pool_source: source.into(),
            sandbox_dir: dir,
            server_version: String::new(),
            prepare_s: 0.0,
            dataset_bytes: None,
            live_server: None,
        },
        profile,
        opts,
    })
}

impl OltpPlan {
    /// Where the sandbox will be reached once started: its socket, as
    /// root, reading no option files (what `Sandbox::conn_spec` connects
    /// with), for the journal's `server_variable` entries.
    pub fn endpoint(&self) -> crate::db::ServerEndpoint {
        crate::db::ServerEndpoint {
            socket: Some(
                sandbox::socket_path(&self.setup.sandbox_dir)
                    .to_string_lossy()
                    .into_owned(),
            ),
            user: "root".into(),
            no_defaults: true,
            ..Default::default()
        }
    }

    /// Start the server with `vars` as well (later lines win: a live
    /// server's InnoDB settings sized for the sandbox's data, as tune's
    /// "before"), the profile named `name`; an `--oltp-buffer-pool` given
    /// still wins over a carried pool.
    pub fn carry(mut self, name: &str, vars: &[(String, String)]) -> OltpPlan {
        let mut all = match self.profile {
            Profile::Default => Vec::new(),
            // The carried settings are "before": `after`'s own are dropped.
            Profile::Vars { vars, .. } | Profile::After { extra: vars } => vars,
        };
        let keep_pool = self.setup.buffer_pool_source == "option";
        for (k, v) in vars {
            if k == "innodb_buffer_pool_size" {
                match crate::units::parse_size(v).ok().filter(|_| !keep_pool) {
                    Some(b) => {
                        self.setup.buffer_pool_bytes = b;
                        self.setup.buffer_pool_source = "profile".into();
                        all.push((k.clone(), b.to_string()));
                    }
                    None => continue,
                }
            } else {
                all.push((k.clone(), v.clone()));
            }
        }
        if keep_pool {
            all.push((
                "innodb_buffer_pool_size".into(),
                self.setup.buffer_pool_bytes.to_string(),
            ));
        }
        self.setup.profile = name.to_string();
        self.profile = Profile::Vars {
            name: name.to_string(),
            vars: all,
        };
        self
    }

    /// Disk space the server's directory will take, estimated before it
    /// exists (for the sweep's free-space plan): the tables with half again
    /// for write workloads' growth and page splits, plus a fresh server.
    pub fn disk_estimate(&self) -> u64 {
        disk_estimate(self.setup.tables, self.setup.table_size, None)
    }
}

/// Disk space a sandbox with `tables` × `table_size` sysbench rows will
/// take: the tables with half again for growth, plus a fresh server whose
/// redo log is `redo_bytes` when its profile sets one (the default's
/// 96 MiB otherwise).
pub fn disk_estimate(tables: u32, table_size: u32, redo_bytes: Option<u64>) -> u64 {
    const DEFAULT_REDO: u64 = 96 << 20;
    let rows = tables as u64 * table_size as u64;
    let redo_extra = redo_bytes.map_or(0, |r| r.saturating_sub(DEFAULT_REDO));
    rows * ROW_BYTES * 3 / 2 + SERVER_BYTES + redo_extra
}

/// The running, loaded server. Dropping it (an error path) stops it
/// cleanly; the journal entry then finds it gone.
pub struct OltpServer {
    /// None: a server innotune did not start (`prove --live-server`).
    sb: Option<Sandbox>,
    /// Its process, so a trial it dies in says so.
    process: Option<oltp::ServerProcess>,
    /// The journal's handles for the server, undone once it is stopped.
    journaled: Vec<u64>,
    spec: ConnSpec,
    opts: OltpOptions,
    pub setup: OltpSetup,
    /// The profile it was started with (a restart adds to it).
    profile: Profile,
}

impl OltpServer {
    /// Journal, initialise, start and load the server. The journal entry
    /// is on disk before mariadb-install-db runs, and the pid before
    /// `spawn` returns.
    pub fn start(plan: OltpPlan, guard: &Guard) -> Result<OltpServer> {
        let OltpPlan {
            mut setup,
            profile,
            opts,
        } = plan;
        let dir = setup.sandbox_dir.clone();
        let started_with = profile.clone();
        // `after` starts `before` first and asks check (both journaled).
        let mut journaled = Vec::new();
        let (sb, _) = crate::check::sandbox::start(
            &crate::host::Host::live(),
            SandboxOpts {
                profile,
                ..SandboxOpts::new(&dir)
            },
            &mut |o| {
                let (sb, ids) = Sandbox::start_journaled(o, guard)?;
                journaled.extend(ids);
                Ok(sb)
            },
        )
        .context("starting the OLTP server")?;
        let spec = sb.conn_spec();
        let process = oltp::ServerProcess::of_pid(sb.pid());
        setup.server_version = sb.version().raw;
        let prep = oltp::prepare(&spec, &opts, opts.threads).context("loading the OLTP tables")?;
        setup.prepare_s = prep.seconds;
        setup.dataset_bytes = dataset_bytes(&spec, &opts.db);
        Ok(OltpServer {
            sb: Some(sb),
            process,
            journaled,
            spec,
            opts,
            setup,
            profile: started_with,
        })
    }

    /// The server `spec` reaches, as it is (`prove --live-server`): its
    /// sbtest tables must exist (`innotune oltp WORKLOAD prepare` with the
    /// same --oltp-tables and --oltp-table-size); nothing is loaded,
    /// started or dropped, and nothing is journaled here.
    pub fn live(spec: ConnSpec, args: &OltpSettings, workloads: &[String]) -> Result<OltpServer> {
        positive(args.threads, "--threads")?;
        positive(args.tables, "--oltp-tables")?;
        positive(args.table_size, "--oltp-table-size")?;
        let opts = OltpOptions {
            threads: args.threads,
            tables: args.tables,
            table_size: args.table_size,
            workload: workloads
                .first()
                .and_then(|w| oltp_workload(w))
                .unwrap_or(oltp::Workload::OltpReadWrite),
            ..Default::default()
        };
        let mut c = spec.connect()?;
        crate::oltp::check_tables(&mut c, &spec, &opts)?;
        let version = crate::db::server_version(&mut c)?;
        let bp: Option<String> = c
            .query_first("SELECT @@GLOBAL.innodb_buffer_pool_size")
            .ok()
            .flatten();
        drop(c);
        let setup = OltpSetup {
            workloads: workloads.to_vec(),
            threads: args.threads,
            tables: args.tables,
            table_size: args.table_size,
            profile: "live server".into(),
            buffer_pool_bytes: bp.and_then(|b| b.parse().ok()).unwrap_or(0),
            buffer_pool_source: "server".into(),
            sandbox_dir: PathBuf::new(),
            server_version: version.raw,
            prepare_s: 0.0,
            // No ANALYZE TABLE on a server innotune did not start.
            dataset_bytes: None,
            live_server: Some(spec.describe()),
        };
        Ok(OltpServer {
            sb: None,
            process: None,
            journaled: Vec::new(),
            spec,
            opts,
            setup,
            profile: Profile::Default,
        })
    }

    /// How to reach the server.
    pub fn spec(&self) -> &ConnSpec {
        &self.spec
    }

    /// Run `workload` for `window` (no printing).
    pub fn run(&self, workload: oltp::Workload, window: Duration) -> Result<OltpResult> {
        self.run_threads(workload, window, self.opts.threads)
    }

    /// Run `workload` for `window` with `threads` client threads.
    pub fn run_threads(
        &self,
        workload: oltp::Workload,
        window: Duration,
        threads: u32,
    ) -> Result<OltpResult> {
        let o = OltpOptions {
            workload,
            time: Some(window),
            threads,
            ..self.opts.clone()
        };
        oltp::run_workload(&self.spec, &o).map_err(|e| match &self.process {
            Some(p) => p.explain(e, "the OLTP server"),
            None => e,
        })
    }

    /// Restart the server innotune started with `vars` added to the
    /// profile it started with (later lines win: `vars` replace the
    /// profile's own values), for settings a server reads only at start
    /// (`tune --search`'s restart knobs). The shutdown is clean and the
    /// directory, data and tables are kept; the new process is journaled
    /// as the first was, before it exists, and the old one's entries are
    /// undone once it is gone. The buffer pool is dumped at shutdown
    /// (`innodb_buffer_pool_dump_pct` as the server holds it) and loaded at
    /// start; this returns once the load says it is done, so the first
    /// trial after a restart does not start from a cold pool.
    ///
    /// On a failed start (a value the server refuses at start) the
    /// directory is kept and no server runs: restart again with other
    /// values, or stop.
    pub fn restart(&mut self, guard: &Guard, vars: &[(String, String)]) -> Result<()> {
        let dir = self.setup.sandbox_dir.clone();
        if let Some(mut sb) = self.sb.take() {
            sb.set_keep(true);
            sb.stop()
                .context("stopping the OLTP server to restart it")?;
        } else if self.setup.live_server.is_some() {
            anyhow::bail!("internal: a live server is never restarted");
        }
        for id in std::mem::take(&mut self.journaled) {
            guard.undo(id)?;
        }
        let profile = vars
            .iter()
            .fold(self.profile.clone(), |p, (k, v)| p.with_var(k, v));
        // Kept until it answers: a start that fails leaves the data.
        let (mut sb, ids) = Sandbox::start_journaled(
            SandboxOpts {
                profile,
                keep: true,
                ..SandboxOpts::new(&dir)
            },
            guard,
        )
        .with_context(|| {
            format!(
                "restarting the OLTP server with {}",
                vars.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })?;
        sb.set_keep(false);
        self.journaled = ids;
        self.process = oltp::ServerProcess::of_pid(sb.pid());
        self.spec = sb.conn_spec();
        self.sb = Some(sb);
        self.wait_pool_loaded()
    }

    /// Until `Innodb_buffer_pool_load_status` says the load at start is
    /// over (completed, aborted, never started, or no dump file to load:
    /// "Cannot open …"), at most a minute: the server loads in the
    /// background and says so in that status.
    fn wait_pool_loaded(&self) -> Result<()> {
        let mut c = self.spec.connect()?;
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let st: Option<(String, String)> =
                c.query_first("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_load_status'")?;
            let st = st.map(|(_, v)| v.to_ascii_lowercase()).unwrap_or_default();
            let over = st.is_empty()
                || ["completed", "aborted", "not started", "error", "cannot"]
                    .iter()
                    .any(|w| st.contains(w));
            if over || std::time::Instant::now() > deadline {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Is the server innotune started running now (false after a failed
    /// restart)?
    pub fn is_up(&self) -> bool {
        self.sb.is_some() || self.setup.live_server.is_some()
    }

    /// Shut the server down cleanly, remove its directory, and undo its
    /// journal entries (they find it gone).
    /// A live server (`--live-server`) is left running, as found.
    pub fn stop(self, guard: &Guard) -> Result<OltpSetup> {
        if let Some(sb) = self.sb {
            sb.stop().context("stopping the OLTP server")?;
        }
        for id in self.journaled {
            guard.undo(id)?;
        }
        Ok(self.setup)
    }
}

/// Data + index bytes of the sbtest tables, as InnoDB estimates them.
fn dataset_bytes(spec: &ConnSpec, db: &str) -> Option<u64> {
    let mut c = spec.connect().ok()?;
    // ANALYZE refreshes InnoDB's estimate after the bulk load.
    let tables: Vec<String> = c
        .exec(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
            (db,),
        )
        .ok()?;
    for t in &tables {
        let _ = c.query_drop(format!("ANALYZE TABLE `{db}`.`{t}`"));
    }
    c.exec_first::<Option<u64>, _, _>(
        "SELECT CAST(SUM(data_length + index_length) AS UNSIGNED) \
         FROM information_schema.tables WHERE table_schema = ?",
        (db,),
    )
    .ok()
    .flatten()
    .flatten()
}
