//! Measuring the server: variables, a SHOW GLOBAL STATUS window sampled
//! once a second (rates over the window, never since-uptime averages),
//! the option files it reads, and the size of its InnoDB data.

use super::facts::{ServerEndpoint, ServerFacts, Window};
use crate::db::{ConnArgs, ConnSpec};
use crate::host::Host;
use crate::model::optfile::{Groups, Options};
use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Did the connection flags name a server (rather than leave the default)?
pub fn names_a_server(c: &ConnArgs) -> bool {
    c.socket.is_some() || c.host.is_some() || c.port.is_some() || c.defaults_file.is_some()
}

/// The endpoint of a resolved spec, for journaled changes (no password).
pub fn endpoint(spec: &ConnSpec, args: &ConnArgs) -> ServerEndpoint {
    spec.server_endpoint(args)
}

fn status(conn: &mut mysql::Conn) -> Result<BTreeMap<String, u64>> {
    let rows: Vec<(String, String)> = conn.query("SHOW GLOBAL STATUS")?;
    Ok(rows
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.trim().parse::<u64>().ok()?)))
        .collect())
}

fn dirty_pct(s: &BTreeMap<String, u64>) -> Option<f64> {
    let d = *s.get("innodb_buffer_pool_pages_dirty")?;
    let t = *s.get("innodb_buffer_pool_pages_total")?;
    (t > 0).then(|| d as f64 / t as f64 * 100.0)
}

/// Connect, read variables, sample status over `window` (none when zero),
/// and read what the server's option files configure. `on_tick` gets the
/// seconds left, for a progress line.
pub fn sample(
    host: &Host,
    spec: &ConnSpec,
    endpoint: ServerEndpoint,
    window: Duration,
    on_tick: &mut dyn FnMut(u64),
) -> Result<(ServerFacts, Option<u32>)> {
    let mut conn = spec.connect()?;
    let v = crate::db::server_version(&mut conn)?;
    let rows: Vec<(String, String)> = conn
        .query("SHOW GLOBAL VARIABLES")
        .context("SHOW GLOBAL VARIABLES")?;
    let variables: BTreeMap<String, String> = rows
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let first = status(&mut conn)?;
    let start = Instant::now();
    let mut last = first.clone();
    let mut pending = Vec::new();
    let mut dirty: Option<f64> = dirty_pct(&first);
    let win = if window.is_zero() {
        None
    } else {
        let mut tick = 1u64;
        loop {
            let due = start + Duration::from_secs(tick);
            let now = Instant::now();
            on_tick(window.as_secs().saturating_sub(tick - 1));
            if due > now {
                // The sampling cadence itself (one status read a second).
                std::thread::sleep(due - now);
            }
            last = status(&mut conn)?;
            if let Some(p) = last.get("innodb_data_pending_reads") {
                pending.push(*p as f64);
            }
            if let Some(d) = dirty_pct(&last) {
                dirty = Some(dirty.map_or(d, |x: f64| x.max(d)));
            }
            if start.elapsed() >= window {
                break;
            }
            tick += 1;
        }
        let seconds = start.elapsed().as_secs_f64();
        let delta = last
            .iter()
            .filter_map(|(k, b)| Some((k.clone(), *b as i64 - *first.get(k)? as i64)))
            .collect();
        Some(Window {
            seconds,
            delta,
            pending_reads_avg: (!pending.is_empty())
                .then(|| pending.iter().sum::<f64>() / pending.len() as f64),
            dirty_pct_max: dirty,
        })
    };
    let pid = server_pid(host, &variables);
    let (configured, option_files, includedirs) = option_files(host, pid, &variables);
    let blob_q = if v.is_mariadb() {
        "SET STATEMENT max_statement_time=5 FOR SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys') AND DATA_TYPE IN ('tinyblob','blob','mediumblob','longblob','tinytext','text','mediumtext','longtext') LIMIT 1"
    } else {
        "SELECT /*+ MAX_EXECUTION_TIME(5000) */ 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys') AND DATA_TYPE IN ('tinyblob','blob','mediumblob','longblob','tinytext','text','mediumtext','longtext') LIMIT 1"
    };
    // Bounded by a statement timeout: information_schema scans on servers
    // with many tables are what made MySQLTuner hang.
    let has_blob_columns = conn.query_first::<u64, _>(blob_q).ok().map(|r| r.is_some());
    let innodb_data_bytes = variables
        .get("datadir")
        .and_then(|d| innodb_bytes(host, Path::new(d)));
    Ok((
        ServerFacts {
            flavor: v.flavor.clone(),
            version: v.raw.clone(),
            major: v.major,
            minor: v.minor,
            patch: v.patch,
            endpoint,
            variables,
            status: last,
            window: win,
            configured,
            option_files,
            includedirs,
            innodb_data_bytes,
            has_blob_columns,
        },
        pid,
    ))
}

/// The server's pid from its pid file (on this host only).
fn server_pid(host: &Host, vars: &BTreeMap<String, String>) -> Option<u32> {
    let f = vars.get("pid_file")?;
    let p = if Path::new(f).is_absolute() {
        PathBuf::from(f)
    } else {
        Path::new(vars.get("datadir")?).join(f)
    };
    let pid: u32 = host.read_trim(&p).ok()?.parse().ok()?;
    let comm = crate::model::process::comm(host, pid).ok()?;
    crate::model::process::SERVER_COMMS
        .contains(&comm.as_str())
        .then_some(pid)
}

/// What the server's option files (and command line) set: the files it
/// reads (`--defaults-file` alone, else /etc/my.cnf and /etc/mysql/my.cnf,
/// then `--defaults-extra-file`), their `!includedir` directories, and for
/// every server variable the value set and where.
#[allow(clippy::type_complexity)]
pub fn option_files(
    host: &Host,
    pid: Option<u32>,
    vars: &BTreeMap<String, String>,
) -> (BTreeMap<String, (String, String)>, Vec<String>, Vec<String>) {
    let args: Vec<String> = pid
        .and_then(|p| crate::model::process::cmdline(host, p).ok())
        .unwrap_or_default();
    let arg = |name: &str| {
        args.iter().find_map(|a| {
            let o = a.strip_prefix("--")?;
            let (k, v) = o.split_once('=')?;
            (k.replace('_', "-") == name).then(|| v.to_string())
        })
    };
    let mut files: Vec<String> = match arg("defaults-file") {
        Some(f) => vec![f],
        None => vec!["/etc/my.cnf".into(), "/etc/mysql/my.cnf".into()],
    };
    if let Some(f) = arg("defaults-extra-file") {
        files.push(f);
    }
    let mut opts = Options::new(Groups::Server);
    for f in &files {
        let _ = opts.read_host_file(host, Path::new(f));
    }
    let mut configured = BTreeMap::new();
    for name in vars.keys() {
        if let (Some(v), Some(o)) = (opts.get(name), opts.origin(name)) {
            configured.insert(name.clone(), (v.to_string(), o.to_string()));
        }
    }
    // The command line wins over every option file.
    for a in args.iter().skip(1) {
        if let Some((k, v)) = a.strip_prefix("--").and_then(|o| o.split_once('=')) {
            let k = k.replace('-', "_").to_ascii_lowercase();
            let k = k.strip_prefix("loose_").unwrap_or(&k).to_string();
            if vars.contains_key(&k) {
                configured.insert(k, (v.to_string(), "command line".into()));
            }
        }
    }
    let read: Vec<String> = opts.files.iter().map(|p| p.display().to_string()).collect();
    let mut includedirs = Vec::new();
    for f in &opts.files {
        if let Ok(t) = host.read(f) {
            for l in t.lines() {
                if let Some(d) = l.trim().strip_prefix("!includedir") {
                    let d = d.trim().trim_end_matches('/').to_string();
                    if !d.is_empty() && !includedirs.contains(&d) {
                        includedirs.push(d);
                    }
                }
            }
        }
    }
    (configured, read, includedirs)
}

/// Bytes of InnoDB tablespaces (ibdata*, undo*, *.ibd one level down),
/// from file sizes: no information_schema scan.
pub fn innodb_bytes(host: &Host, datadir: &Path) -> Option<u64> {
    let root = host.path(datadir);
    let mut total = 0u64;
    let is_ts = |n: &str| n.starts_with("ibdata") || n.starts_with("undo") || n.ends_with(".ibd");
    for e in std::fs::read_dir(&root).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(md) = e.metadata() else { continue };
        if md.is_file() && is_ts(&name) {
            total += md.len();
        } else if md.is_dir() {
            if let Ok(rd) = std::fs::read_dir(e.path()) {
                for f in rd.flatten() {
                    let n = f.file_name().to_string_lossy().into_owned();
                    if n.ends_with(".ibd") {
                        total += f.metadata().map(|m| m.len()).unwrap_or(0);
                    }
                }
            }
        }
    }
    Some(total)
}
