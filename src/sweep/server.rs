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
#[derive(Debug, Clone, Serialize)]
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
    pub buffer_pool_source: &'static str,
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
            buffer_pool_source: source,
            sandbox_dir: dir,
            server_version: String::new(),
            prepare_s: 0.0,
            dataset_bytes: None,
        },
        profile,
        opts,
    })
}

impl OltpPlan {
    /// Disk space the server's directory will take, estimated before it
    /// exists (for the sweep's free-space plan): the tables with half again
    /// for write workloads' growth and page splits, plus a fresh server.
    pub fn disk_estimate(&self) -> u64 {
        let rows = self.setup.tables as u64 * self.setup.table_size as u64;
        rows * ROW_BYTES * 3 / 2 + SERVER_BYTES
    }
}

/// The running, loaded server. Dropping it (an error path) stops it
/// cleanly; the journal entry then finds it gone.
pub struct OltpServer {
    sb: Sandbox,
    /// The journal's handles for the server, undone once it is stopped.
    journaled: Vec<u64>,
    spec: ConnSpec,
    opts: OltpOptions,
    pub setup: OltpSetup,
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
        let (sb, journaled) = Sandbox::start_journaled(
            SandboxOpts {
                profile,
                ..SandboxOpts::new(&dir)
            },
            guard,
        )
        .context("starting the OLTP server")?;
        let spec = sb.conn_spec();
        setup.server_version = sb.version().raw;
        let prep = oltp::prepare(&spec, &opts, opts.threads).context("loading the OLTP tables")?;
        setup.prepare_s = prep.seconds;
        setup.dataset_bytes = dataset_bytes(&spec, &opts.db);
        Ok(OltpServer {
            sb,
            journaled,
            spec,
            opts,
            setup,
        })
    }

    /// Run `workload` for `window` (no printing).
    pub fn run(&self, workload: oltp::Workload, window: Duration) -> Result<OltpResult> {
        let o = OltpOptions {
            workload,
            time: Some(window),
            ..self.opts.clone()
        };
        oltp::run_workload(&self.spec, &o)
    }

    /// Shut the server down cleanly, remove its directory, and undo its
    /// journal entries (they find it gone).
    pub fn stop(self, guard: &Guard) -> Result<OltpSetup> {
        self.sb.stop().context("stopping the OLTP server")?;
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
