//! The general query log as replay input, and which kind of log LOG is.
//!
//! A general log (MariaDB and MySQL: `general_log = ON`) is one record a
//! command, `[TIME]<TAB>  ID COMMAND<TAB>ARGUMENT`, a statement's further
//! lines following as they are. MariaDB writes TIME (`YYMMDD HH:MM:SS`,
//! the server's local time) only when the second changes; MySQL writes it
//! on every record (`2024-11-28T17:47:01.123456Z`). `Connect … on DB` and
//! `Init DB` set the session's database, `Query` and `Execute` (a prepared
//! statement with its parameters in place) are statements; every other
//! command (Prepare, Close stmt, Quit, Ping…) is not and is skipped. The
//! log has no Query_time: classes have no logged time, and pacing
//! (`--speed 1`) follows the records' times (to the second on MariaDB).
//!
//! [`Source`] decides the kind before a statement runs: a file is scanned
//! whole (plain or gzip) and a log holding both slow-log entries and
//! general-log records is refused in one line; stdin (`-`) by its first
//! MiB, the general reader refusing a slow-log entry met later.

use super::log::{Dispatcher, Logged};
use super::run::Stmt;
use crate::error::Fix;
use crate::slowlog::parse::is_header;
use anyhow::Result;
use rustc_hash::FxHashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

/// What kind of log LOG is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Slow,
    General,
}

/// The commands a general log names (`enum_server_command`, as both
/// servers spell them in the log).
const COMMANDS: &[&[u8]] = &[
    b"Sleep",
    b"Quit",
    b"Init DB",
    b"Query",
    b"Field List",
    b"Create DB",
    b"Drop DB",
    b"Refresh",
    b"Shutdown",
    b"Statistics",
    b"Processlist",
    b"Connect",
    b"Kill",
    b"Debug",
    b"Ping",
    b"Time",
    b"Delayed insert",
    b"Change user",
    b"Binlog Dump",
    b"Table Dump",
    b"Connect Out",
    b"Register Slave",
    b"Prepare",
    b"Execute",
    b"Long Data",
    b"Close stmt",
    b"Reset stmt",
    b"Set option",
    b"Fetch",
    b"Daemon",
    b"Error",
    b"Reset connection",
    b"Bulk_execute",
    b"Slave_worker",
    b"Slave_IO",
    b"Slave_SQL",
    b"Binlog Dump GTID",
];

/// One record line of a general log.
#[derive(Debug, PartialEq)]
pub struct Record<'a> {
    pub time: Option<&'a [u8]>,
    pub id: u64,
    pub command: &'a [u8],
    pub arg: &'a [u8],
}

/// `line` (without its newline) as a general-log record, if it is one.
pub fn record(line: &[u8]) -> Option<Record<'_>> {
    let tab = memchr::memchr(b'\t', line)?;
    let prefix = &line[..tab];
    let time = if prefix.is_empty() {
        None
    } else {
        // `241128 17:47:01`, `2024-11-28T17:47:01.123456Z`.
        let ok = prefix[0].is_ascii_digit()
            && memchr::memchr(b':', prefix).is_some()
            && prefix
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b" :-.+".contains(b));
        if !ok {
            return None;
        }
        Some(prefix)
    };
    let rest = &line[tab..];
    let rest = &rest[rest
        .iter()
        .position(|b| *b != b'\t' && *b != b' ')
        .unwrap_or(rest.len())..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 20 {
        return None;
    }
    let id: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let rest = rest[digits..].strip_prefix(b" ")?;
    let (command, arg) = match memchr::memchr(b'\t', rest) {
        Some(t) => (&rest[..t], &rest[t + 1..]),
        None => (rest, &b""[..]),
    };
    COMMANDS.contains(&command).then_some(Record {
        time,
        id,
        command,
        arg,
    })
}

/// Does `line` start a slow-log entry (what a general log never holds)?
fn slow_marker(line: &[u8]) -> bool {
    line.starts_with(b"# Query_time:")
        || line.starts_with(b"# User@Host:")
        || line.starts_with(b"# Time:")
}

/// A record's time as ns since the epoch (read as UTC: only the gaps
/// between records matter).
pub fn time_ns(t: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(t).ok()?.trim();
    let (y, mo, d, rest) = if s.len() >= 10 && s.as_bytes()[4] == b'-' {
        // 2024-11-28T17:47:01.123456Z (or +01:00)
        (
            s[0..4].parse::<i64>().ok()?,
            s[5..7].parse::<u32>().ok()?,
            s[8..10].parse::<u32>().ok()?,
            s.get(11..)?,
        )
    } else {
        // 241128 17:47:01, 241128  9:05:01
        let (date, rest) = s.split_once(' ')?;
        if date.len() != 6 {
            return None;
        }
        (
            2000 + date[0..2].parse::<i64>().ok()?,
            date[2..4].parse::<u32>().ok()?,
            date[4..6].parse::<u32>().ok()?,
            rest.trim_start(),
        )
    };
    let mut it = rest.splitn(3, ':');
    let h: u64 = it.next()?.trim().parse().ok()?;
    let mi: u64 = it.next()?.parse().ok()?;
    let sec_part = it.next()?;
    let end = sec_part
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(sec_part.len());
    let (sec, frac) = match sec_part[..end].split_once('.') {
        Some((a, f)) => (a, f),
        None => (&sec_part[..end], ""),
    };
    let sec: u64 = sec.parse().ok()?;
    let mut ns = 0u64;
    for (i, c) in frac.chars().take(9).enumerate() {
        ns += u64::from(c.to_digit(10)?) * 10u64.pow(8 - i as u32);
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + mi * 60 + sec;
    Some(secs * 1_000_000_000 + ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Bytes of stdin looked at to tell its kind.
const HEAD: usize = 1 << 20;

/// LOG, its kind decided.
pub struct Source<'a> {
    path: &'a Path,
    pub format: Format,
    /// stdin's first bytes, read to tell its kind: replayed first.
    head: Option<Vec<u8>>,
}

impl<'a> Source<'a> {
    /// Tell LOG's kind: a file scanned whole, stdin by its first MiB. A log
    /// with both kinds of records is refused.
    pub fn open(path: &'a Path) -> Result<Source<'a>> {
        if path.as_os_str() == "-" {
            let mut head = Vec::new();
            std::io::stdin()
                .lock()
                .take(HEAD as u64)
                .read_to_end(&mut head)?;
            let (r, _) = decoded(Box::new(std::io::Cursor::new(head.clone())))?;
            let format = scan(r, path)?;
            return Ok(Source {
                path,
                format,
                head: Some(head),
            });
        }
        let (r, _) = decoded(Box::new(crate::slowlog::input::SLOW_LOG.open(path)?))?;
        let format = scan(r, path)?;
        Ok(Source {
            path,
            format,
            head: None,
        })
    }

    /// The log's bytes as stored (gzip still compressed).
    pub fn reader(&mut self) -> Result<Box<dyn Read + '_>> {
        Ok(match self.head.take() {
            Some(h) => Box::new(std::io::Cursor::new(h).chain(std::io::stdin().lock())),
            None if self.path.as_os_str() == "-" => Box::new(std::io::stdin().lock()),
            None => Box::new(crate::slowlog::input::SLOW_LOG.open(self.path)?),
        })
    }

    /// How the error lines name it.
    pub fn what(&self) -> String {
        if self.path.as_os_str() == "-" {
            "the log on stdin".into()
        } else {
            format!("log {}", self.path.display())
        }
    }
}

/// `r` decoded when it is gzip (by its magic bytes), and whether it was.
fn decoded<'r>(r: Box<dyn Read + 'r>) -> Result<(Box<dyn BufRead + 'r>, bool)> {
    let mut b = BufReader::with_capacity(1 << 16, r);
    let gz = b.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        (
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(b),
            )),
            true,
        )
    } else {
        (Box::new(b), false)
    })
}

/// The kind of the log `r` holds: general when it has general-log
/// records, else slow; both is refused. A damaged gzip ends the scan
/// (the replay says where it stops).
fn scan(mut r: Box<dyn BufRead + '_>, path: &Path) -> Result<Format> {
    let mut line = Vec::new();
    let mut n = 0u64;
    let mut slow: Option<u64> = None;
    let mut general: Option<u64> = None;
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        n += 1;
        let l = line.strip_suffix(b"\n").unwrap_or(&line);
        if slow.is_none() && slow_marker(l) {
            slow = Some(n);
        } else if general.is_none() && record(l).is_some() {
            general = Some(n);
        }
        if let (Some(s), Some(g)) = (slow, general) {
            return Err(mixed(path, s, g));
        }
    }
    Ok(if general.is_some() {
        Format::General
    } else {
        Format::Slow
    })
}

fn mixed(path: &Path, slow: u64, general: u64) -> anyhow::Error {
    Fix::new(
        format!(
            "{} mixes a slow log (an entry at line {slow}) and a general query log (a record at line {general}): their statements cannot be put in one order",
            path.display()
        ),
        "replay each log on its own (a slow log captured with long_query_time = 0 holds what a general log does, with timings)",
    )
    .into()
}

/// What reading a general log gave.
pub struct Read_ {
    pub bytes: u64,
    pub gzip: bool,
    pub stopped: Option<String>,
}

/// Replay a general log: records in file order into `d`, statements to
/// `send`. No record may be longer than `max_entry` bytes.
pub fn stream(
    src: &mut Source<'_>,
    max_entry: usize,
    flag: &str,
    d: &mut Dispatcher,
    send: &mut dyn FnMut(usize, Stmt),
) -> Result<Read_> {
    let what = src.what();
    let path = src.path.to_path_buf();
    let (mut r, gzip) = decoded(src.reader()?)?;
    let mut st = State::default();
    let mut line = Vec::new();
    let mut bytes = 0u64;
    let mut n = 0u64;
    let mut stopped = None;
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(k) => bytes += k as u64,
            Err(e) if gzip => {
                let msg = format!(
                    "{what}: the gzip data stops after {bytes} bytes of log ({e}); the replay covers what came before"
                );
                crate::output::warn(&msg);
                stopped = Some(msg);
                break;
            }
            Err(e) => {
                return Err(Fix::new(
                    format!("cannot read {what}: {e}"),
                    "check the file or pipe is readable",
                )
                .into())
            }
        }
        n += 1;
        let l = line.strip_suffix(b"\n").unwrap_or(&line);
        if slow_marker(l) {
            return Err(mixed(&path, n, st.first_record.unwrap_or(0)));
        }
        if let Some(rec) = record(l) {
            st.first_record.get_or_insert(n);
            st.flush(d, send);
            if let Some(t) = rec.time.and_then(time_ns) {
                st.time = Some(t);
            }
            st.cur = Some((rec.id, rec.command.to_vec(), rec.arg.to_vec()));
        } else if is_header(l) {
            // The log reopened (a restart, FLUSH LOGS): no part of a statement.
            st.flush(d, send);
        } else if let Some((_, _, arg)) = &mut st.cur {
            arg.push(b'\n');
            arg.extend_from_slice(l);
        }
        if st.cur.as_ref().is_some_and(|c| c.2.len() > max_entry) {
            return Err(Fix::new(
                format!(
                    "{what} holds a record longer than {flag} {} (at line {n})",
                    crate::units::fmt_size(max_entry as u64)
                ),
                format!("raise {flag} if the log really holds statements that long; else check the file is a general query log"),
            )
            .into());
        }
    }
    st.flush(d, send);
    Ok(Read_ {
        bytes,
        gzip,
        stopped,
    })
}

/// The reader's state between lines.
#[derive(Default)]
struct State {
    /// The record being read: session, command, argument so far.
    cur: Option<(u64, Vec<u8>, Vec<u8>)>,
    /// The last time written (MariaDB writes it when the second changes).
    time: Option<u64>,
    /// Each session's database.
    dbs: FxHashMap<u64, Arc<str>>,
    first_record: Option<u64>,
}

impl State {
    fn flush(&mut self, d: &mut Dispatcher, send: &mut dyn FnMut(usize, Stmt)) {
        let Some((id, command, arg)) = self.cur.take() else {
            return;
        };
        match command.as_slice() {
            b"Query" | b"Execute" => {
                // A statement's text ends where the next record starts; the
                // newline before it is no part of it.
                let q = arg.strip_suffix(b"\r").unwrap_or(&arg);
                d.statement(
                    Logged {
                        session: id,
                        query: q,
                        db: self.dbs.get(&id).cloned(),
                        start: self.time,
                        end: None,
                        query_time: None,
                    },
                    send,
                );
                return;
            }
            b"Connect" => {
                // `user@host on DB using Socket` (DB empty when none).
                let a = String::from_utf8_lossy(&arg);
                if let Some((_, r)) = a.split_once(" on ") {
                    let db = r.rsplit_once(" using ").map_or(r, |(db, _)| db).trim();
                    if !db.is_empty() {
                        self.dbs.insert(id, Arc::from(db));
                    } else {
                        self.dbs.remove(&id);
                    }
                }
            }
            b"Init DB" => {
                let db = String::from_utf8_lossy(&arg).trim().to_string();
                if !db.is_empty() {
                    self.dbs.insert(id, Arc::from(db));
                }
            }
            b"Quit" => {
                self.dbs.remove(&id);
            }
            _ => {}
        }
        d.admin();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_both_servers_are_read() {
        let r = record(b"261128 17:47:01\t     4 Quit\t").unwrap();
        assert_eq!(
            (r.time, r.id, r.command, r.arg),
            (Some(&b"261128 17:47:01"[..]), 4, &b"Quit"[..], &b""[..])
        );
        let r = record(b"\t\t     6 Init DB\td1").unwrap();
        assert_eq!(
            (r.time, r.id, r.command, r.arg),
            (None, 6, &b"Init DB"[..], &b"d1"[..])
        );
        let r = record(b"2024-11-28T17:47:01.123456Z\t    8 Query\tselect 1").unwrap();
        assert_eq!(
            (r.id, r.command, r.arg),
            (8, &b"Query"[..], &b"select 1"[..])
        );
        // A statement's further lines, slow-log lines, headers: not records.
        for l in [
            &b"where a = 2"[..],
            b"# Query_time: 0.000215  Lock_time: 0.000000",
            b"Time\t\t    Id Command\tArgument",
            b"\t\t     6 Frobnicate\tx",
            b"SET timestamp=1732812421;",
        ] {
            assert!(record(l).is_none(), "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn times_of_both_servers_are_read() {
        let maria = time_ns(b"241128 17:47:01").unwrap();
        let mysql = time_ns(b"2024-11-28T17:47:01.250000Z").unwrap();
        assert_eq!(mysql - maria, 250_000_000);
        assert_eq!(maria / 1_000_000_000, 1_732_816_021);
        assert_eq!(
            time_ns(b"241128  9:05:01").unwrap()
                + 8 * 3600 * 1_000_000_000
                + 42 * 60 * 1_000_000_000,
            maria
        );
        assert!(time_ns(b"241399 17:47:01").is_none());
    }

    /// (connection, database, start offset, statement).
    type Sent = (usize, Option<String>, u64, String);

    /// What the dispatcher hands out for a general log.
    fn dispatched(log: &str) -> (Vec<Sent>, Dispatcher) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(log);
        let mut src = Source::open(&path).unwrap();
        assert_eq!(src.format, Format::General);
        let mut d = Dispatcher::new(None, false, usize::MAX);
        let mut got = Vec::new();
        let mut send = |c: usize, s: Stmt| {
            got.push((
                c,
                s.db.map(|d| d.to_string()),
                s.at_ns,
                String::from_utf8_lossy(&s.sql).into_owned(),
            ))
        };
        stream(&mut src, 1 << 20, "--max-entry-size", &mut d, &mut send).unwrap();
        d.end_round();
        (got, d)
    }

    /// Sessions by id, their databases from Connect and Init DB,
    /// statements over several lines, Execute replayed, Prepare and the
    /// like skipped, times to the second (MariaDB) or the microsecond (MySQL).
    #[test]
    fn general_logs_are_dispatched_per_session() {
        let (got, d) = dispatched("tests/fixtures/replay/general-mariadb.log");
        let want = [
            (0, None, 0, "create database d1"),
            (0, Some("d1"), 0, "select b\nfrom t\nwhere a = 2"),
            (
                1,
                Some("sbtest"),
                1_000_000_000,
                "SELECT c FROM sbtest1 WHERE id=51",
            ),
            (1, Some("sbtest"), 1_000_000_000, "BEGIN"),
            (0, Some("d1"), 2_000_000_000, "select 1"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, g.1.as_deref(), g.2, g.3.as_str()), w);
        }
        assert_eq!(d.totals.entries, 5);
        assert_eq!(d.totals.sessions, 2);
        assert_eq!(d.totals.min_query_ns, None);
        assert!(d.totals.admin >= 5, "{}", d.totals.admin);
        let (got, _) = dispatched("tests/fixtures/replay/general-mysql.log");
        let at: Vec<u64> = got.iter().map(|g| g.2).collect();
        assert_eq!(at, [0, 1_000, 250_000_000]);
        assert_eq!(got[1].1.as_deref(), Some("shop"));
    }

    /// A slow log and a general log in one file: one line naming both.
    #[test]
    fn a_mixed_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut both = std::fs::read(root.join("tests/fixtures/slowlog/mysql80.log")).unwrap();
        both.extend(std::fs::read(root.join("tests/fixtures/replay/general-mysql.log")).unwrap());
        let p = dir.path().join("both.log");
        std::fs::write(&p, both).unwrap();
        let e = Source::open(&p).err().unwrap().to_string();
        assert!(
            e.contains("mixes a slow log") && e.contains("general query log"),
            "{e}"
        );
        let slow_log = root.join("tests/fixtures/slowlog/mysql80.log");
        assert_eq!(Source::open(&slow_log).unwrap().format, Format::Slow);
    }
}
