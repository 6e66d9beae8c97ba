//! `innotune slowlog --capture DURATION`: a replayable slow log from a
//! window of the server's own traffic. The variables that make every
//! statement logged (`long_query_time = 0`, the log on and going to a
//! file, no row or rate filter) are set through the journal
//! ([`crate::change::ServerVariable`] via [`Env::guard`]), the window is
//! waited (Ctrl-C or SIGTERM ends it early), and every variable is put
//! back; a crash leaves the journal for `innotune restore`. The report
//! says where the window's entries are: the log file and the byte range
//! written during the window, and, when the file is readable here, what
//! it holds.

use super::cli::SlowlogArgs;
use super::input::{Limit, Regions, DEFAULT_MAX_ENTRY};
use super::parse::{self, Parsed};
use crate::change::ServerVariable;
use crate::command::{Command, Env};
use crate::error::Fix;
use crate::export::doc::{Cell, Column, Document, KeyValues, Table, Tone};
use crate::export::Report;
use anyhow::Result;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// `innotune slowlog --capture`: the slowlog flags, run as a capture.
pub struct Capture(pub SlowlogArgs);

/// What `innotune slowlog --capture` reports (JSON: docs/json-slowlog.md,
/// `slowlog-capture/2`).
#[derive(Debug, Serialize, Deserialize)]
pub struct CaptureReport {
    /// `VERSION()` of the server.
    pub server: String,
    /// Where it was reached (no password).
    pub from: String,
    /// The slow log as the server names it (absolute: a relative
    /// `slow_query_log_file` is under the datadir).
    pub log_file: String,
    /// The window: when long_query_time = 0 took effect and when it was put back.
    pub started_at: String,
    pub ended_at: String,
    pub requested_s: f64,
    pub window_s: f64,
    /// Ctrl-C or SIGTERM ended the window early.
    pub interrupted: bool,
    /// The log's size when the window began and when it ended: the
    /// window's entries are the bytes between (null when the file is not
    /// readable from here: a remote server, another user's file).
    pub start_offset_bytes: Option<u64>,
    pub end_offset_bytes: Option<u64>,
    /// A shell line that cuts the window out of the log.
    pub extract: Option<String>,
    /// Statements in the window (administrator commands left out), their
    /// sessions; null when the file is not readable from here.
    pub entries: Option<u64>,
    pub sessions: Option<u64>,
    /// Every variable set for the window.
    pub variables: Vec<VariableReport>,
    /// Every variable holds its value from before the window again.
    pub restored: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct VariableReport {
    pub name: String,
    pub before: String,
    pub during: String,
    /// What the server holds after it was put back.
    pub after: Option<String>,
}

/// The variables the window sets, in the order they are set (undone in
/// the reverse order): the log's destination first, `long_query_time`
/// last so that the window opens after everything else is in place.
fn plan(current: &std::collections::BTreeMap<String, String>) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(o) = current.get("log_output") {
        // TABLE or NONE: entries would go to mysql.slow_log or nowhere.
        // A value naming FILE already writes the file (a list like
        // FILE,TABLE is left alone).
        if !o.to_ascii_uppercase().split(',').any(|w| w == "FILE") {
            out.push(("log_output", "FILE".to_string()));
        }
    }
    if current
        .get("min_examined_row_limit")
        .is_some_and(|v| v != "0")
    {
        out.push(("min_examined_row_limit", "0".into()));
    }
    // MariaDB: log 1 in N sessions' statements.
    if current.get("log_slow_rate_limit").is_some_and(|v| v != "1") {
        out.push(("log_slow_rate_limit", "1".into()));
    }
    if current
        .get("slow_query_log")
        .is_some_and(|v| !ServerVariable::same(v, "ON"))
    {
        out.push(("slow_query_log", "ON".into()));
    }
    if current
        .get("long_query_time")
        .is_some_and(|v| v.parse::<f64>() != Ok(0.0))
    {
        out.push(("long_query_time", "0".into()));
    }
    out
}

const READ: &[&str] = &[
    "log_output",
    "min_examined_row_limit",
    "log_slow_rate_limit",
    "slow_query_log",
    "long_query_time",
    "slow_query_log_file",
    "datadir",
];

impl Command for Capture {
    type Report = CaptureReport;

    fn execute(env: &Env, opts: Self) -> Result<CaptureReport> {
        capture(env, &opts.0)
    }
}

fn capture(env: &Env, args: &SlowlogArgs) -> Result<CaptureReport> {
    let window = args.capture.unwrap_or(Duration::from_secs(60));
    let spec = args.conn.resolve(&env.host)?;
    let endpoint = spec.server_endpoint(&args.conn);
    let mut c = spec.connect()?;
    let server = crate::db::server_version(&mut c)?.raw;
    let rows: Vec<(String, String)> = c.query(format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
        READ.iter()
            .map(|v| format!("'{v}'"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    drop(c);
    let current: std::collections::BTreeMap<String, String> = rows
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    for need in ["long_query_time", "slow_query_log", "slow_query_log_file"] {
        if !current.contains_key(need) {
            return Err(Fix::new(
                format!("the server has no variable {need}: it has no slow log to capture"),
                "capture on a MySQL or MariaDB server",
            )
            .into());
        }
    }
    let log_file = {
        let f = PathBuf::from(&current["slow_query_log_file"]);
        match current.get("datadir") {
            Some(d) if f.is_relative() => Path::new(d).join(f),
            _ => f,
        }
    };
    let size = || std::fs::metadata(&log_file).ok().map(|m| m.len());

    // Signals end the window; the journal restores when this returns.
    let _catch = env.stop.catch(&[libc::SIGINT, libc::SIGTERM])?;
    let guard = env.guard()?;
    let plan = plan(&current);
    let mut ids = Vec::new();
    let mut start_offset = None;
    for (name, value) in &plan {
        if *name == "long_query_time" {
            start_offset = size();
        }
        let id = guard
            .apply(
                &env.host,
                Box::new(ServerVariable::new(&endpoint, name, value, false)),
            )
            .map_err(|e| {
                Fix::new(
                    format!(
                        "SET GLOBAL {name} = {value} on {}: {}",
                        endpoint.describe(),
                        crate::error::one_line(&e)
                    ),
                    "connect as a user with SUPER or SYSTEM_VARIABLES_ADMIN (what was set is put back)",
                )
            })?;
        ids.push((*name, value.clone(), id));
    }
    if start_offset.is_none() {
        start_offset = size();
    }
    let started = SystemTime::now();
    let t0 = Instant::now();
    let bar = env.progress.status_line();
    while t0.elapsed() < window && !env.stop.requested() {
        let left = window.saturating_sub(t0.elapsed());
        bar.set_message(format!(
            "capturing to {}: {}s left (Ctrl-C ends it now)",
            log_file.display(),
            left.as_secs()
        ));
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
    bar.finish_and_clear();
    let interrupted = env.stop.requested();
    let window_s = t0.elapsed().as_secs_f64();
    // Before anything is put back: the undo's own connections would be
    // logged (they open while long_query_time is 0).
    let end_offset = size();
    let ended = SystemTime::now();
    let mut variables = Vec::new();
    let mut restored = true;
    for (name, value, id) in ids.into_iter().rev() {
        let u = guard.undo(id)?;
        let after = ServerVariable::new(&endpoint, name, &value, false).current()?;
        let before = current.get(name).cloned().unwrap_or_default();
        if !after
            .as_deref()
            .is_some_and(|a| ServerVariable::same(a, &before))
        {
            restored = false;
            crate::output::warn(format!(
                "{name} was {before} before the window and is {} now ({:?})",
                after.as_deref().unwrap_or("gone"),
                u.outcome
            ));
        }
        variables.push(VariableReport {
            name: name.into(),
            before,
            during: value,
            after,
        });
    }
    variables.reverse();
    drop(guard);
    let (entries, sessions) = match (start_offset, end_offset) {
        (Some(a), Some(b)) if b >= a => match count(&log_file, a, b) {
            Ok((e, s)) => (Some(e), Some(s)),
            Err(e) => {
                crate::output::warn(format!(
                    "{}: the window's entries could not be counted: {}",
                    log_file.display(),
                    crate::error::one_line(&e)
                ));
                (None, None)
            }
        },
        _ => (None, None),
    };
    let extract = match (start_offset, end_offset) {
        (Some(a), Some(b)) if b >= a => Some(format!(
            "tail -c +{} {} | head -c {} > window.log",
            a + 1,
            crate::output::shell_quote(&log_file.display().to_string()),
            b - a
        )),
        _ => None,
    };
    if plan.is_empty() {
        crate::output::warn(
            "the server already logged every statement (long_query_time = 0, slow log on, to a file): nothing was set",
        );
    }
    Ok(CaptureReport {
        server,
        from: endpoint.describe(),
        log_file: log_file.display().to_string(),
        started_at: humantime::format_rfc3339_seconds(started).to_string(),
        ended_at: humantime::format_rfc3339_seconds(ended).to_string(),
        requested_s: window.as_secs_f64(),
        window_s,
        interrupted,
        start_offset_bytes: start_offset,
        end_offset_bytes: end_offset,
        extract,
        entries,
        sessions,
        variables,
        restored,
    })
}

/// Statements (administrator commands left out) and sessions in bytes
/// `from..to` of the log, streamed.
fn count(path: &Path, from: u64, to: u64) -> Result<(u64, u64)> {
    let mut f = std::fs::File::open(path)?;
    f.seek(std::io::SeekFrom::Start(from))?;
    let mut r = std::io::BufReader::new(f).take(to - from);
    let mut c = Counter::default();
    let limit = Limit {
        bytes: DEFAULT_MAX_ENTRY,
        flag: "--max-entry-size",
    };
    super::input::stream_reader(
        &mut r,
        &format!("slow log {}", path.display()),
        limit,
        &mut c,
    )?;
    Ok((c.entries, c.sessions.len() as u64))
}

#[derive(Default)]
struct Counter {
    entries: u64,
    sessions: HashSet<u64>,
    oversized: Option<usize>,
}

impl Regions for Counter {
    fn region(&mut self, region: &[u8], at_eof: bool) {
        parse::for_each(region, at_eof, |p| match p {
            Parsed::Entry(e) if e.size > DEFAULT_MAX_ENTRY as usize => {
                self.oversized.get_or_insert(e.size);
            }
            Parsed::Entry(e) if !e.admin && e.query != parse::NO_QUERY => {
                self.entries += 1;
                self.sessions.insert(e.thread_id.unwrap_or(0));
            }
            _ => {}
        });
    }
    fn oversized(&self) -> Option<usize> {
        self.oversized
    }
}

impl Report for CaptureReport {
    const COMMAND: &'static str = "slowlog-capture";

    fn document(&self) -> Document {
        let mut d = Document::new(format!("Slow log capture: {}", self.log_file));
        let mut kv = KeyValues::new();
        kv.add("server", format!("{} ({})", self.server, self.from))
            .add("log file", self.log_file.as_str())
            .add(
                "window",
                format!(
                    "{} to {} ({:.1} s of {:.0} s{})",
                    self.started_at,
                    self.ended_at,
                    self.window_s,
                    self.requested_s,
                    if self.interrupted {
                        ", ended early by a signal"
                    } else {
                        ""
                    }
                ),
            );
        match (self.start_offset_bytes, self.end_offset_bytes) {
            (Some(a), Some(b)) => {
                kv.add(
                    "bytes",
                    format!(
                        "{a} to {b} ({})",
                        crate::units::fmt_size(b.saturating_sub(a))
                    ),
                );
            }
            _ => {
                kv.add(
                    "bytes",
                    Cell::text("the log file is not readable from here: the window is the entries timed between the two instants above").tone(Tone::Warn),
                );
            }
        }
        if let (Some(e), Some(s)) = (self.entries, self.sessions) {
            kv.add("statements", format!("{e} in {s} sessions"));
        }
        kv.add(
            "variables",
            if self.restored {
                Cell::text("all put back").tone(Tone::Good)
            } else {
                Cell::text("not all put back: see the table (innotune restore retries)")
                    .tone(Tone::Bad)
            },
        );
        d.key_values(kv);
        if !self.variables.is_empty() {
            let mut t = Table::new(vec![
                Column::text("variable"),
                Column::text("before"),
                Column::text("during"),
                Column::text("after"),
            ]);
            for v in &self.variables {
                t.row(vec![
                    Cell::text(v.name.as_str()),
                    Cell::text(v.before.as_str()),
                    Cell::text(v.during.as_str()),
                    Cell::text(v.after.as_deref().unwrap_or("?")),
                ]);
            }
            d.table(t);
        }
        if let Some(x) = &self.extract {
            d.paragraph("The window's entries, cut out of the log (then `innotune replay window.log` on a copy):");
            d.preformatted(x.as_str());
        }
        d.note(
            Tone::Dim,
            "Sessions connected before the window kept their own long_query_time: only their slow statements are in it. A replay warns when a log lacks fast statements.",
        );
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;

    fn vars(kv: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Only what would leave statements out is set, long_query_time last.
    #[test]
    fn the_plan_sets_what_keeps_statements_out_and_long_query_time_last() {
        let p = plan(&vars(&[
            ("log_output", "TABLE"),
            ("min_examined_row_limit", "10"),
            ("log_slow_rate_limit", "1"),
            ("slow_query_log", "OFF"),
            ("long_query_time", "10.000000"),
        ]));
        let names: Vec<_> = p.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "log_output",
                "min_examined_row_limit",
                "slow_query_log",
                "long_query_time"
            ]
        );
        let p = plan(&vars(&[
            ("log_output", "FILE,TABLE"),
            ("min_examined_row_limit", "0"),
            ("slow_query_log", "ON"),
            ("long_query_time", "0.000000"),
        ]));
        assert!(p.is_empty(), "{p:?}");
    }

    /// Every variable the plan may set is one `innotune restore` accepts
    /// in a journal, with the values it sets and the originals servers show.
    #[test]
    fn every_planned_change_validates() {
        let ep = crate::db::ServerEndpoint {
            socket: Some("/tmp/x/mysql.sock".into()),
            user: "root".into(),
            ..Default::default()
        };
        let p = plan(&vars(&[
            ("log_output", "NONE"),
            ("min_examined_row_limit", "100"),
            ("log_slow_rate_limit", "5"),
            ("slow_query_log", "OFF"),
            ("long_query_time", "10.000000"),
        ]));
        assert_eq!(p.len(), 5);
        for (n, v) in p {
            let mut c = ServerVariable::new(&ep, n, &v, false);
            c.original = Some("10.000000".into());
            assert!(c.validate().is_ok(), "{n}: {:?}", c.validate());
        }
    }

    #[test]
    fn paths_are_quoted_for_the_shell_when_needed() {
        assert_eq!(
            crate::output::shell_quote("/var/lib/mysql/h-slow.log"),
            "/var/lib/mysql/h-slow.log"
        );
        assert_eq!(
            crate::output::shell_quote("/tmp/a b's.log"),
            "'/tmp/a b'\\''s.log'"
        );
    }
}
