//! The log side of a replay: entries in file order ([`crate::slowlog::input::stream_into`]),
//! each classed by the slowlog module's fingerprint, its database and
//! session resolved, and handed to the connection its session runs on.

use super::run::Stmt;
use crate::slowlog::fingerprint::{checksum, Fingerprinter};
use crate::slowlog::input::Regions;
use crate::slowlog::parse::{self, Entry, Parsed};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A class as the log holds it.
#[derive(Debug, Clone)]
pub struct LogClass {
    pub fingerprint: String,
    pub id: String,
    /// Entries of this class in the log (replayed or not).
    pub count: u64,
    /// Their Query_time, summed (ns).
    pub total_ns: u64,
}

/// What the log held, over and above its classes.
#[derive(Debug, Clone, Default)]
pub struct LogTotals {
    pub entries: u64,
    pub malformed: u64,
    /// `administrator command: …` entries (Prepare, Close stmt, Quit…).
    pub admin: u64,
    /// Statements that change data, skipped by --read-only.
    pub writes_skipped: u64,
    pub sessions: u64,
    /// The fastest statement's Query_time (ns).
    pub min_query_ns: Option<u64>,
    /// Query_time summed over the entries.
    pub query_ns: u64,
    /// Each session's span (first start to last end), summed (ns).
    pub session_span_ns: u64,
}

/// Reads entries and hands them out; kept across rounds (classes keep
/// their indices; the log's own figures are counted in the first round).
pub struct Dispatcher {
    fp: Fingerprinter,
    index: FxHashMap<Box<[u8]>, u32>,
    pub classes: Vec<LogClass>,
    pub totals: LogTotals,
    /// Session (thread id) → connection.
    sessions: FxHashMap<u64, usize>,
    /// Per session: (first start, last end), ns since the epoch (first round).
    spans: FxHashMap<u64, (u64, u64)>,
    concurrency: Option<usize>,
    max_connections: usize,
    pub connections: usize,
    read_only: bool,
    last_db: Option<Arc<str>>,
    /// The first statement's start (ns since the epoch), the pacing origin.
    origin: Option<u64>,
    first_round: bool,
    max_entry: usize,
    oversized: Option<usize>,
}

impl Dispatcher {
    pub fn new(concurrency: Option<usize>, read_only: bool, max_entry: usize) -> Dispatcher {
        Dispatcher {
            fp: Fingerprinter::new(),
            index: FxHashMap::default(),
            classes: Vec::new(),
            totals: LogTotals::default(),
            sessions: FxHashMap::default(),
            spans: FxHashMap::default(),
            concurrency,
            max_connections: super::MAX_CONNECTIONS,
            connections: 0,
            read_only,
            last_db: None,
            origin: None,
            first_round: true,
            max_entry,
            oversized: None,
        }
    }

    /// One round's reader: entries go to `send(connection, statement)`.
    pub fn round<'a>(&'a mut self, send: &'a mut dyn FnMut(usize, Stmt)) -> Round<'a> {
        self.begin_round();
        Round { d: self, send }
    }

    /// Start a round read by another reader than [`Dispatcher::round`]
    /// (the general log's).
    pub fn begin_round(&mut self) {
        self.last_db = None;
    }

    /// End a round (the log's own figures are complete after the first).
    pub fn end_round(&mut self) {
        if self.first_round {
            self.totals.sessions = self.spans.len() as u64;
            self.totals.session_span_ns = self.spans.values().map(|(a, b)| b - a).sum();
        }
        self.first_round = false;
    }

    fn conn_of(&mut self, session: u64) -> usize {
        if let Some(&c) = self.sessions.get(&session) {
            return c;
        }
        let n = self.sessions.len();
        let cap = self.concurrency.unwrap_or(self.max_connections).max(1);
        let c = n % cap;
        self.connections = self.connections.max(c + 1);
        self.sessions.insert(session, c);
        c
    }

    /// A record that is no statement (an administrator command; in a
    /// general log Connect, Init DB, Prepare, Quit…): counted, not sent.
    pub fn admin(&mut self) {
        if self.first_round {
            self.totals.admin += 1;
        }
    }

    fn entry(&mut self, e: Entry<'_>, send: &mut dyn FnMut(usize, Stmt)) {
        if let Some(d) = e.db {
            let name = unquote(d);
            if self.last_db.as_deref() != Some(name.as_str()) {
                self.last_db = Some(Arc::from(name));
            }
        }
        if e.admin || e.query == parse::NO_QUERY {
            self.admin();
            return;
        }
        let db = match e.schema.filter(|s| !s.is_empty() && e.db.is_none()) {
            Some(s) => Some(Arc::from(unquote(s))),
            None => self.last_db.clone(),
        };
        let qt = e.query_time.unwrap_or(0);
        let end = end_ns(&e);
        let start = end.map(|t| t.saturating_sub(qt));
        self.statement(
            Logged {
                session: e.thread_id.unwrap_or(0),
                query: e.query,
                db,
                start,
                end,
                query_time: Some(qt),
            },
            send,
        );
    }

    /// One logged statement: classed, counted (first round), and sent to
    /// its session's connection unless --read-only skips it.
    pub fn statement(&mut self, l: Logged<'_>, send: &mut dyn FnMut(usize, Stmt)) {
        let Logged {
            session,
            query,
            db,
            start,
            end,
            query_time,
        } = l;
        let class = match self.index.get(self.fp.fingerprint(query)) {
            Some(&i) => i,
            None => {
                let f = self.fp.fingerprint(query).to_vec();
                let i = self.classes.len() as u32;
                self.classes.push(LogClass {
                    fingerprint: String::from_utf8_lossy(&f).into_owned(),
                    id: checksum(&f),
                    count: 0,
                    total_ns: 0,
                });
                self.index.insert(f.into_boxed_slice(), i);
                i
            }
        };
        if self.first_round {
            let t = &mut self.totals;
            t.entries += 1;
            if let Some(qt) = query_time {
                t.query_ns = t.query_ns.saturating_add(qt);
                t.min_query_ns = Some(t.min_query_ns.map_or(qt, |m| m.min(qt)));
            }
            let c = &mut self.classes[class as usize];
            c.count += 1;
            c.total_ns = c.total_ns.saturating_add(query_time.unwrap_or(0));
            if let (Some(s), Some(en)) = (start, end) {
                let span = self.spans.entry(session).or_insert((s, en));
                span.0 = span.0.min(s);
                span.1 = span.1.max(en);
            } else {
                self.spans.entry(session).or_insert((0, 0));
            }
        }
        if self.read_only && changes_data(query) {
            if self.first_round {
                self.totals.writes_skipped += 1;
            }
            return;
        }
        if self.origin.is_none() {
            self.origin = start;
        }
        let at_ns = match (start, self.origin) {
            (Some(s), Some(o)) => s.saturating_sub(o),
            _ => 0,
        };
        let conn = self.conn_of(session);
        let s = Stmt {
            class,
            db,
            sql: query.into(),
            at_ns,
        };
        send(conn, s);
    }
}

/// A statement as a log gives it.
pub struct Logged<'a> {
    /// The thread id that ran it.
    pub session: u64,
    pub query: &'a [u8],
    /// The database it ran in.
    pub db: Option<Arc<str>>,
    /// When it started and ended, ns since the epoch.
    pub start: Option<u64>,
    pub end: Option<u64>,
    /// The server's timing (a slow log's Query_time; a general log has none).
    pub query_time: Option<u64>,
}

/// A round of the log: the dispatcher and where its statements go.
pub struct Round<'a> {
    d: &'a mut Dispatcher,
    send: &'a mut dyn FnMut(usize, Stmt),
}

impl Regions for Round<'_> {
    fn region(&mut self, region: &[u8], at_eof: bool) {
        let d = &mut *self.d;
        let send = &mut *self.send;
        parse::for_each(region, at_eof, |p| {
            let size = match &p {
                Parsed::Entry(e) => e.size,
                Parsed::Malformed { size } => *size,
            };
            if size > d.max_entry {
                d.oversized.get_or_insert(size);
                return;
            }
            match p {
                Parsed::Entry(e) => d.entry(e, send),
                Parsed::Malformed { .. } => {
                    if d.first_round {
                        d.totals.malformed += 1;
                    }
                }
            }
        });
    }

    fn oversized(&self) -> Option<usize> {
        self.d.oversized
    }
}

/// A database name as `use` writes it: MariaDB quotes it (`` `db` ``,
/// a backtick inside doubled), MySQL does not.
fn unquote(d: &[u8]) -> String {
    let s = String::from_utf8_lossy(d);
    match s.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        Some(inner) => inner.replace("``", "`"),
        None => s.into_owned(),
    }
}

/// When the entry ended, ns since the epoch: `SET timestamp` (or `# Time:`)
/// plus the fraction `# Time:` carries (MySQL writes microseconds; MariaDB
/// whole seconds only, so its pacing is to the second).
fn end_ns(e: &Entry<'_>) -> Option<u64> {
    let ts = u64::try_from(e.ts?).ok()?;
    let mut ns = ts.checked_mul(1_000_000_000)?;
    if let Some(t) = e.time {
        if let Some(dot) = memchr::memchr(b'.', t) {
            let digits: Vec<u8> = t[dot + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .take(9)
                .copied()
                .collect();
            if !digits.is_empty() {
                let mut frac: u64 = std::str::from_utf8(&digits).ok()?.parse().ok()?;
                for _ in digits.len()..9 {
                    frac *= 10;
                }
                ns += frac;
            }
        }
    }
    Some(ns)
}

/// Does the statement change data or schema (skipped by --read-only)? Its
/// first keyword, after comments, whitespace and opening parentheses.
pub fn changes_data(q: &[u8]) -> bool {
    let mut s = q;
    loop {
        s = s.trim_ascii_start();
        if let Some(r) = s.strip_prefix(b"/*") {
            // `/*!…*/` and `/*+…*/` hold SQL, but they do not start a
            // statement's verb: skipped like comments.
            s = match parse::find(r, b"*/") {
                Some(i) => &r[i + 2..],
                None => return false,
            };
        } else if let Some(r) = s.strip_prefix(b"(") {
            s = r;
        } else if s.starts_with(b"--") || s.starts_with(b"#") {
            s = match memchr::memchr(b'\n', s) {
                Some(i) => &s[i + 1..],
                None => return false,
            };
        } else {
            break;
        }
    }
    let word: Vec<u8> = s
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .map(u8::to_ascii_lowercase)
        .collect();
    const WRITES: &[&[u8]] = &[
        b"insert",
        b"update",
        b"delete",
        b"replace",
        b"create",
        b"drop",
        b"alter",
        b"truncate",
        b"rename",
        b"grant",
        b"revoke",
        b"load",
        b"call",
        b"optimize",
        b"repair",
        b"install",
        b"uninstall",
        b"import",
        b"handler",
    ];
    WRITES.contains(&word.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (connection, class, database, start offset, statement).
    type Sent = (usize, u32, Option<String>, u64, String);

    /// What the dispatcher hands out for `log`: (connection, class,
    /// database, start offset, statement) per statement, and the log's
    /// totals.
    fn dispatched(
        log: &str,
        concurrency: Option<usize>,
        read_only: bool,
    ) -> (Vec<Sent>, Dispatcher) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(log);
        let mut d = Dispatcher::new(concurrency, read_only, usize::MAX);
        let mut got = Vec::new();
        let mut send = |c: usize, s: Stmt| {
            got.push((
                c,
                s.class,
                s.db.map(|d| d.to_string()),
                s.at_ns,
                String::from_utf8_lossy(&s.sql).into_owned(),
            ))
        };
        let limit = crate::slowlog::input::Limit {
            bytes: 1 << 20,
            flag: "--max-entry-size",
        };
        crate::slowlog::input::stream_into(&path, limit, &mut d.round(&mut send)).unwrap();
        d.end_round();
        (got, d)
    }

    /// Sessions by thread id, each on its connection; the database each
    /// statement ran in (MySQL writes `use` only when the log's last one
    /// changes, for any thread); start offsets from `# Time:` (µs) minus
    /// Query_time; the log's own figures.
    #[test]
    fn statements_go_to_their_session_in_their_database() {
        let (got, d) = dispatched("tests/fixtures/slowlog/mysql80.log", None, false);
        let want = [
            (0, 0, Some("sbtest"), 0, "SELECT c FROM sbtest1 WHERE id=4973"),
            (1, 1, Some("shop"), 1_000_000_000, "SELECT customer, SUM(total) FROM orders GROUP BY customer ORDER BY 2 DESC LIMIT 10"),
            (0, 0, Some("shop"), 2_000_000_000, "SELECT c FROM sbtest1 WHERE id=1"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, g.1, g.2.as_deref(), g.3, g.4.as_str()), w);
        }
        assert_eq!(d.connections, 2);
        assert_eq!(d.totals.entries, 3);
        assert_eq!(d.totals.sessions, 2);
        assert_eq!(d.totals.min_query_ns, Some(215_000));
        assert_eq!(d.classes[0].count, 2);
        assert_eq!(
            d.classes[0].id,
            crate::slowlog::fingerprint::checksum(b"select c from sbtest? where id=?")
        );
        // Folded onto one connection, in the log's order.
        let (got, d) = dispatched("tests/fixtures/slowlog/mysql80.log", Some(1), false);
        assert!(got.iter().all(|g| g.0 == 0));
        assert_eq!(d.connections, 1);
    }

    /// MariaDB's format: `Schema:`, administrator commands skipped
    /// (counted), --read-only leaves out what changes data (counted).
    #[test]
    fn admin_commands_and_writes_are_counted_not_sent() {
        let (all, d) = dispatched("tests/fixtures/slowlog/edge.log", None, false);
        let (ro, r) = dispatched("tests/fixtures/slowlog/edge.log", None, true);
        assert_eq!(d.totals.admin, 1);
        assert_eq!(r.totals.writes_skipped, 1);
        assert!(
            all.iter().all(|g| g.2.as_deref() == Some("test")),
            "{all:?}"
        );
        assert_eq!(all.len() as u64, d.totals.entries);
        assert_eq!(r.totals.entries, d.totals.entries);
        assert_eq!(ro.len() as u64 + r.totals.writes_skipped, d.totals.entries);
        assert!(ro.iter().all(|g| !changes_data(g.4.as_bytes())));
        assert!(all
            .iter()
            .all(|g| !g.4.starts_with("administrator command")));
    }

    #[test]
    fn use_names_are_unquoted() {
        assert_eq!(unquote(b"`sbtest`"), "sbtest");
        assert_eq!(unquote(b"shop"), "shop");
        assert_eq!(unquote(b"`a``b`"), "a`b");
    }

    #[test]
    fn writes_are_told_from_reads() {
        for q in [
            "INSERT INTO t VALUES (1)",
            "  /* app */ update t set a=1",
            "DELETE FROM t",
            "REPLACE INTO t VALUES (1)",
            "-- c\nDROP TABLE t",
            "ALTER TABLE t ADD INDEX (a)",
        ] {
            assert!(changes_data(q.as_bytes()), "{q}");
        }
        for q in [
            "SELECT * FROM t",
            "(SELECT 1) UNION (SELECT 2)",
            "BEGIN",
            "COMMIT",
            "SET autocommit=0",
            "SHOW TABLES",
            "SELECT c FROM t WHERE id=1 FOR UPDATE",
        ] {
            assert!(!changes_data(q.as_bytes()), "{q}");
        }
    }
}
