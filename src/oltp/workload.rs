//! The five sysbench 1.0.20 OLTP workloads: statement text, order,
//! parameters, and how each query is counted (read/write/other, as
//! sysbench's `drv_mysql.c`: a result set is a read; otherwise affected
//! rows > 0 is a write, else other).

use super::rand::{Rand, Unique, C_TEMPLATE, PAD_TEMPLATE};
use super::wire::Wire;
use super::OltpOptions;
use crate::db::ConnSpec;
use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[clap(rename_all = "snake_case")]
pub enum Workload {
    OltpReadOnly,
    OltpWriteOnly,
    OltpReadWrite,
    OltpPointSelect,
    OltpInsert,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::OltpReadOnly => "oltp_read_only",
            Workload::OltpWriteOnly => "oltp_write_only",
            Workload::OltpReadWrite => "oltp_read_write",
            Workload::OltpPointSelect => "oltp_point_select",
            Workload::OltpInsert => "oltp_insert",
        }
    }
}

/// Statement kinds, in `oltp_common.lua`'s order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PointSelects = 0,
    SimpleRanges,
    SumRanges,
    OrderRanges,
    DistinctRanges,
    IndexUpdates,
    NonIndexUpdates,
    Deletes,
    Inserts,
}

const KINDS: usize = 9;

/// sysbench 1.0.20's statement text; `{}` is the table number.
pub fn statement_text(k: Kind, table: u32) -> String {
    let t = table;
    match k {
        Kind::PointSelects => format!("SELECT c FROM sbtest{t} WHERE id=?"),
        Kind::SimpleRanges => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        Kind::SumRanges => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        Kind::OrderRanges => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
        Kind::DistinctRanges => {
            format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        Kind::IndexUpdates => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
        Kind::NonIndexUpdates => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
        Kind::Deletes => format!("DELETE FROM sbtest{t} WHERE id=?"),
        Kind::Inserts => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
    }
}

/// Which kinds a workload prepares (sysbench prepares only what it runs).
fn kinds_for(w: Workload, o: &OltpOptions) -> Vec<Kind> {
    use Kind::*;
    let ranges = [SimpleRanges, SumRanges, OrderRanges, DistinctRanges];
    let writes = [IndexUpdates, NonIndexUpdates, Deletes, Inserts];
    let mut v = Vec::new();
    match w {
        Workload::OltpReadOnly | Workload::OltpReadWrite => {
            v.push(PointSelects);
            if o.range_selects {
                v.extend(ranges);
            }
            if w == Workload::OltpReadWrite {
                v.extend(writes);
            }
        }
        Workload::OltpWriteOnly => v.extend(writes),
        Workload::OltpPointSelect => v.push(PointSelects),
        Workload::OltpInsert => {}
    }
    v
}

/// Server-side prepared statements one worker connection holds (what
/// `max_prepared_stmt_count` must allow per thread).
pub fn statements_per_connection(o: &OltpOptions) -> u64 {
    if !o.ps {
        return 0;
    }
    let trx = !o.skip_trx
        && matches!(
            o.workload,
            Workload::OltpReadOnly | Workload::OltpWriteOnly | Workload::OltpReadWrite
        );
    (if trx { 2 } else { 0 }) + o.tables as u64 * kinds_for(o.workload, o).len() as u64
}

/// Query counters shared by all workers.
#[derive(Default)]
pub struct Counters {
    pub read: AtomicU64,
    pub write: AtomicU64,
    pub other: AtomicU64,
    pub errors: AtomicU64,
    pub reconnects: AtomicU64,
    pub events: AtomicU64,
}

/// A prepared statement, or its text when the server cannot prepare it
/// (ER_UNSUPPORTED_PS, as sysbench's fallback) or `--db-ps-mode=disable`.
enum Stmt {
    Prepared(mysql::Statement),
    Text(String),
}

/// Why an event attempt failed.
pub enum EventError {
    /// An ignorable server error (deadlock, lock wait timeout…): re-run the event.
    Retry,
    /// The connection was lost: reconnect, re-prepare, re-run.
    Reconnect,
    Fatal(anyhow::Error),
}

/// Codes sysbench reconnects on (CR_SERVER_LOST, _GONE_ERROR, CR_TCP_CONNECTION, _LOST_EXTENDED).
pub const RECONNECT_CODES: [u16; 4] = [2013, 2006, 2011, 2055];

/// `--mysql-ignore-errors`. JSON: `"all"` or a list of codes.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum IgnoreErrors {
    #[serde(serialize_with = "ser_all")]
    All,
    Codes(Vec<u16>),
}

fn ser_all<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("all")
}

impl<'de> serde::Deserialize<'de> for IgnoreErrors {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Codes(Vec<u16>),
        }
        match <Raw as serde::Deserialize>::deserialize(d)? {
            Raw::Word(w) if w == "all" => Ok(IgnoreErrors::All),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "ignore_errors {w:?} is neither \"all\" nor a list of codes"
            ))),
            Raw::Codes(c) => Ok(IgnoreErrors::Codes(c)),
        }
    }
}

impl IgnoreErrors {
    pub fn parse(s: &str) -> Result<IgnoreErrors> {
        if s.eq_ignore_ascii_case("all") {
            return Ok(IgnoreErrors::All);
        }
        if s.eq_ignore_ascii_case("none") || s.is_empty() {
            return Ok(IgnoreErrors::Codes(vec![]));
        }
        s.split(',')
            .map(|c| {
                c.trim().parse::<u16>().map_err(|_| {
                    crate::error::Fix::new(
                        format!("--mysql-ignore-errors: {c:?} is not an error number"),
                        "give a comma-separated list such as 1213,1020,1205, or all, or none",
                    )
                    .into()
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(IgnoreErrors::Codes)
    }
    pub fn contains(&self, code: u16) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(v) => v.contains(&code),
        }
    }
}

/// One worker's connection, statements and generator.
pub struct Session<'a> {
    spec: &'a ConnSpec,
    opts: &'a OltpOptions,
    counters: &'a Counters,
    unique: &'a Unique,
    conn: mysql::Conn,
    stmts: Vec<[Option<Stmt>; KINDS]>,
    begin: Option<Stmt>,
    commit: Option<Stmt>,
    pub rng: Rand,
    buf: String,
    wire: Wire,
    /// How the wait limits read in an error ("the run's end plus 60 s").
    limit_text: String,
}

fn lost(e: &mysql::Error) -> bool {
    matches!(
        e,
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_)
    )
}

impl<'a> Session<'a> {
    pub fn open(
        spec: &'a ConnSpec,
        opts: &'a OltpOptions,
        counters: &'a Counters,
        unique: &'a Unique,
        rng: Rand,
    ) -> Result<Session<'a>> {
        let conn = spec.connect()?;
        let mut s = Session {
            spec,
            opts,
            counters,
            unique,
            conn,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            rng,
            buf: String::with_capacity(256),
            wire: Wire::default(),
            limit_text: String::new(),
        };
        s.prepare_all()?;
        Ok(s)
    }

    fn prepare(&mut self, sql: String) -> Result<Stmt> {
        if !self.opts.ps {
            return Ok(Stmt::Text(sql));
        }
        match self.conn.prep(&sql) {
            Ok(s) => Ok(Stmt::Prepared(s)),
            Err(mysql::Error::MySqlError(e)) if e.code == 1295 => Ok(Stmt::Text(sql)),
            Err(e) => Err(anyhow::anyhow!(
                "mysql_stmt_prepare() failed for query '{sql}': {e}"
            )),
        }
    }

    fn prepare_all(&mut self) -> Result<()> {
        let w = self.opts.workload;
        let trx = !self.opts.skip_trx
            && matches!(
                w,
                Workload::OltpReadOnly | Workload::OltpWriteOnly | Workload::OltpReadWrite
            );
        self.begin = if trx {
            Some(self.prepare("BEGIN".into())?)
        } else {
            None
        };
        self.commit = if trx {
            Some(self.prepare("COMMIT".into())?)
        } else {
            None
        };
        let kinds = kinds_for(w, self.opts);
        self.stmts.clear();
        for t in 1..=self.opts.tables {
            let mut row: [Option<Stmt>; KINDS] = Default::default();
            for &k in &kinds {
                row[k as usize] = Some(self.prepare(statement_text(k, t))?);
            }
            self.stmts.push(row);
        }
        Ok(())
    }

    /// Reconnect after a lost connection; retries for up to 10 s.
    pub fn reconnect(&mut self) -> Result<()> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self.spec.connect() {
                Ok(c) => {
                    self.conn = c;
                    return self.prepare_all();
                }
                Err(e) if std::time::Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
            }
        }
    }

    /// Bound every wait for the server (see [`Wire::set_limits`]);
    /// `text` says what the bound was, for the error.
    pub fn set_wait_limits(
        &mut self,
        give_up_at: Option<std::time::Instant>,
        each_wait: Option<std::time::Duration>,
        text: String,
    ) {
        self.wire.set_limits(give_up_at, each_wait);
        self.limit_text = text;
    }

    fn classify(&self, e: mysql::Error, sql: &str) -> EventError {
        if super::wire::is_stall(&e) {
            // Not a lost connection to re-open: the server is there and
            // silent, and the run's time is up.
            return EventError::Fatal(
                crate::error::Fix::new(
                    format!(
                        "the server at {} did not answer '{sql}' within {}",
                        self.spec.describe(),
                        self.limit_text
                    ),
                    "check the server (a stalled disk, a paused process, a lock held elsewhere), or raise --stall-timeout if statements really take that long",
                )
                .into(),
            );
        }
        let code = match &e {
            // The server closes the connection after these (MariaDB's
            // ER_CONNECTION_KILLED, ER_SERVER_SHUTDOWN): a lost connection.
            mysql::Error::MySqlError(me) if me.code == 1927 || me.code == 1053 => Some(2013),
            mysql::Error::MySqlError(me) => Some(me.code),
            e if lost(e) => Some(2013),
            _ => None,
        };
        match code {
            Some(c) if self.opts.ignore_errors.contains(c) => {
                if RECONNECT_CODES.contains(&c) {
                    EventError::Reconnect
                } else {
                    EventError::Retry
                }
            }
            Some(c) => {
                // sysbench's words, which scripts match on.
                let what = format!(
                    "mysql_stmt_execute() returned error {c} ({}) for query '{sql}'",
                    e.to_string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                // ER_RECORD_FILE_FULL ("The table is full"), ER_DISK_FULL:
                // the server's filesystem is full; say where the fix is.
                EventError::Fatal(if c == 1114 || c == 1021 {
                    crate::error::Fix::new(
                        what,
                        "the server's disk is full: free space on the filesystem of its datadir, or load fewer rows",
                    )
                    .into()
                } else {
                    anyhow::anyhow!(what)
                })
            }
            None => EventError::Fatal(anyhow::anyhow!("query '{sql}': {e}")),
        }
    }

    fn count(&self, has_rows: bool, affected: u64) {
        let c = if has_rows {
            &self.counters.read
        } else if affected > 0 {
            &self.counters.write
        } else {
            &self.counters.other
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn run_text(&mut self, sql: &str) -> Result<(), EventError> {
        let r = self.wire.query(self.conn.as_raw_fd(), sql);
        match r {
            Ok(o) => {
                self.count(o.has_rows, o.affected);
                Ok(())
            }
            Err(e) => Err(self.classify(e, sql)),
        }
    }

    fn exec(&mut self, which: Which, params: Vec<Value>) -> Result<(), EventError> {
        let stmt = match which {
            Which::Begin => self.begin.as_ref(),
            Which::Commit => self.commit.as_ref(),
            Which::Table(t, k) => self.stmts[t as usize - 1][k as usize].as_ref(),
        };
        let stmt = match stmt {
            Some(s) => s,
            None => return Err(EventError::Fatal(anyhow::anyhow!("statement not prepared"))),
        };
        match stmt {
            Stmt::Text(sql) => {
                let sql = inline_params(sql, &params);
                self.run_text(&sql)
            }
            Stmt::Prepared(st) => {
                let r = self.wire.execute(self.conn.as_raw_fd(), st.id(), &params);
                match r {
                    Ok(o) => {
                        self.count(o.has_rows, o.affected);
                        Ok(())
                    }
                    Err(e) => {
                        let sql = match which {
                            Which::Begin => "BEGIN".to_string(),
                            Which::Commit => "COMMIT".to_string(),
                            Which::Table(t, k) => statement_text(k, t),
                        };
                        Err(self.classify(e, &sql))
                    }
                }
            }
        }
    }

    fn id(&mut self) -> u32 {
        self.rng.default(1, self.opts.table_size.max(1))
    }

    fn table(&mut self) -> u32 {
        self.rng.uniform(1, self.opts.tables)
    }

    fn ranges(&mut self, k: Kind, n: u32) -> Result<(), EventError> {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            let hi = id + self.opts.range_size - 1;
            self.exec(
                Which::Table(t, k),
                vec![Value::Int(id as i64), Value::Int(hi as i64)],
            )?;
        }
        Ok(())
    }

    /// One sysbench event (a transaction unless --skip-trx).
    pub fn event(&mut self) -> Result<(), EventError> {
        let o = self.opts;
        match o.workload {
            Workload::OltpInsert => return self.insert_event(),
            Workload::OltpPointSelect => {
                let t = self.table();
                let id = self.id();
                return self.exec(
                    Which::Table(t, Kind::PointSelects),
                    vec![Value::Int(id as i64)],
                );
            }
            _ => {}
        }
        if self.begin.is_some() {
            self.exec(Which::Begin, vec![])?;
        }
        if o.workload != Workload::OltpWriteOnly {
            let t = self.table();
            for _ in 0..o.point_selects {
                let id = self.id();
                self.exec(
                    Which::Table(t, Kind::PointSelects),
                    vec![Value::Int(id as i64)],
                )?;
            }
            if o.range_selects {
                self.ranges(Kind::SimpleRanges, o.simple_ranges)?;
                self.ranges(Kind::SumRanges, o.sum_ranges)?;
                self.ranges(Kind::OrderRanges, o.order_ranges)?;
                self.ranges(Kind::DistinctRanges, o.distinct_ranges)?;
            }
        }
        if o.workload != Workload::OltpReadOnly {
            let t = self.table();
            for _ in 0..o.index_updates {
                let id = self.id();
                self.exec(
                    Which::Table(t, Kind::IndexUpdates),
                    vec![Value::Int(id as i64)],
                )?;
            }
            let t = self.table();
            for _ in 0..o.non_index_updates {
                let c = self.rng.string(C_TEMPLATE);
                let id = self.id();
                self.exec(
                    Which::Table(t, Kind::NonIndexUpdates),
                    vec![Value::Bytes(c.into_bytes()), Value::Int(id as i64)],
                )?;
            }
            let t = self.table();
            for _ in 0..o.delete_inserts {
                let id = self.id();
                let k = self.id();
                self.exec(Which::Table(t, Kind::Deletes), vec![Value::Int(id as i64)])?;
                let c = self.rng.string(C_TEMPLATE);
                let pad = self.rng.string(PAD_TEMPLATE);
                self.exec(
                    Which::Table(t, Kind::Inserts),
                    vec![
                        Value::Int(id as i64),
                        Value::Int(k as i64),
                        Value::Bytes(c.into_bytes()),
                        Value::Bytes(pad.into_bytes()),
                    ],
                )?;
            }
        }
        if self.commit.is_some() {
            self.exec(Which::Commit, vec![])?;
        }
        Ok(())
    }

    /// oltp_insert: a plain-text INSERT (sysbench uses con:query here).
    fn insert_event(&mut self) -> Result<(), EventError> {
        let t = self.table();
        let k = self.id();
        let id: i64 = if self.opts.auto_inc {
            0
        } else {
            self.unique.next() as i64 - 2_147_483_648
        };
        let mut sql = std::mem::take(&mut self.buf);
        sql.clear();
        use std::fmt::Write;
        let _ = write!(
            sql,
            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '"
        );
        self.rng.fill_template(C_TEMPLATE, &mut sql);
        sql.push_str("', '");
        self.rng.fill_template(PAD_TEMPLATE, &mut sql);
        sql.push_str("')");
        let r = self.run_text(&sql);
        self.buf = sql;
        r
    }

    pub fn close(mut self) {
        let mut all: Vec<Stmt> = self
            .begin
            .take()
            .into_iter()
            .chain(self.commit.take())
            .collect();
        for row in self.stmts.drain(..) {
            all.extend(row.into_iter().flatten());
        }
        for s in all {
            if let Stmt::Prepared(s) = s {
                let _ = self.conn.close(s);
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Which {
    Begin,
    Commit,
    Table(u32, Kind),
}

/// Client-side substitution for the text fallback. Values are integers or
/// digit/hyphen strings generated here, so quoting them is safe.
fn inline_params(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + 200);
    let mut it = params.iter();
    for ch in sql.chars() {
        if ch == '?' {
            match it.next() {
                Some(Value::Int(i)) => out.push_str(&i.to_string()),
                Some(Value::Bytes(b)) => {
                    out.push('\'');
                    out.push_str(&String::from_utf8_lossy(b).replace('\'', "''"));
                    out.push('\'');
                }
                Some(v) => out.push_str(&v.as_sql(false)),
                None => out.push('?'),
            }
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fallback_inlines() {
        let s = inline_params(
            "UPDATE sbtest1 SET c=? WHERE id=?",
            &[Value::Bytes(b"12-34".to_vec()), Value::Int(7)],
        );
        assert_eq!(s, "UPDATE sbtest1 SET c='12-34' WHERE id=7");
    }

    #[test]
    fn ignore_list() {
        let l = IgnoreErrors::parse("1213,1020,1205").unwrap();
        assert!(l.contains(1213) && !l.contains(2013));
        assert!(IgnoreErrors::parse("all").unwrap().contains(2013));
        assert!(IgnoreErrors::parse("12x").is_err());
    }

    #[test]
    fn ignore_errors_reads_back() {
        for v in [IgnoreErrors::All, IgnoreErrors::Codes(vec![1213, 1205])] {
            let j = serde_json::to_value(&v).unwrap();
            let back: IgnoreErrors = serde_json::from_value(j.clone()).unwrap();
            assert_eq!(serde_json::to_value(&back).unwrap(), j);
        }
        assert!(serde_json::from_str::<IgnoreErrors>(r#""some""#).is_err());
    }
}
