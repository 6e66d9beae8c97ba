//! The server side of a replay: one thread per connection, each running
//! its sessions' statements in order on the OLTP wire path
//! ([`crate::oltp::wire::Wire::query`]), timing each, counting errors by
//! class and code.

use super::cli::Speed;
use crate::db::ConnSpec;
use crate::oltp::wire::Wire;
use crate::slowlog::aggregate::LogBuckets;
use anyhow::Result;
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// One statement to run.
#[derive(Debug)]
pub struct Stmt {
    pub class: u32,
    /// The database it ran in, if the log says.
    pub db: Option<Arc<str>>,
    pub sql: Box<[u8]>,
    /// When it started, from the log's first statement (ns, unscaled).
    pub at_ns: u64,
}

/// One class's figures on one connection in one round.
#[derive(Debug, Clone, Default)]
pub struct ClassRun {
    pub count: u64,
    pub errors: u64,
    pub total_ns: u64,
    /// Successful statements only.
    pub ok_ns: u64,
    pub ok: u64,
    pub buckets: LogBuckets,
}

impl ClassRun {
    pub fn merge(&mut self, o: &ClassRun) {
        self.count += o.count;
        self.errors += o.errors;
        self.total_ns += o.total_ns;
        self.ok_ns += o.ok_ns;
        self.ok += o.ok;
        self.buckets.merge(&o.buckets);
    }
}

/// Errors of one code: how many, and the first one's words and statement.
#[derive(Debug, Clone)]
pub struct ErrorRun {
    pub count: u64,
    pub message: String,
    pub statement: String,
    pub class: u32,
}

/// What one connection did in one round.
#[derive(Debug, Default)]
pub struct ConnRun {
    pub classes: Vec<ClassRun>,
    pub errors: BTreeMap<u16, ErrorRun>,
    /// Rounds run from memory ([`from_memory`]): the time from the round's
    /// start until the first connection ran out of statements, while every
    /// connection was busy, and the statements finished in it (summed over
    /// rounds by [`ConnRun::merge`]). The rest of a round is a tail on
    /// fewer connections than the concurrency asked for.
    pub all_busy: Option<(f64, u64)>,
}

impl ConnRun {
    fn class(&mut self, i: u32) -> &mut ClassRun {
        let i = i as usize;
        if self.classes.len() <= i {
            self.classes.resize(i + 1, ClassRun::default());
        }
        &mut self.classes[i]
    }

    pub fn merge(&mut self, o: ConnRun) {
        self.all_busy = match (self.all_busy, o.all_busy) {
            (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1)),
            (a, None) => a,
            (None, b) => b,
        };
        for (i, c) in o.classes.iter().enumerate() {
            self.class(i as u32).merge(c);
        }
        for (code, e) in o.errors {
            match self.errors.get_mut(&code) {
                Some(m) => m.count += e.count,
                None => {
                    self.errors.insert(code, e);
                }
            }
        }
    }
}

/// Longest statement text kept as an error's sample.
const SAMPLE_CHARS: usize = 300;

/// Client-side error codes for what is not a server error (as the mysql
/// client numbers them): lost connection.
const CR_SERVER_LOST: u16 = 2013;

/// One connection's side of a round: it runs statements one at a time,
/// paced from the round's origin, and keeps their figures.
struct Runner<'a> {
    spec: &'a ConnSpec,
    conn: mysql::Conn,
    wire: Wire,
    db: Option<Arc<str>>,
    speed: Speed,
    start: Instant,
    out: ConnRun,
}

impl<'a> Runner<'a> {
    fn new(spec: &'a ConnSpec, conn: mysql::Conn, speed: Speed, start: Instant) -> Self {
        Runner {
            spec,
            conn,
            wire: Wire::default(),
            db: None,
            speed,
            start,
            out: ConnRun::default(),
        }
    }

    /// Run one statement. A connection lost midway is counted as an error
    /// and opened again; an error here means it could not be.
    fn run(&mut self, s: &Stmt) -> Result<()> {
        if let Speed::Factor(f) = self.speed {
            let due = self.start + Duration::from_nanos((s.at_ns as f64 / f) as u64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        if s.db.is_some() && s.db != self.db {
            if let Some(d) = &s.db {
                let use_db = format!("USE `{}`", d.replace('`', "``"));
                match self.wire.query(self.conn.as_raw_fd(), &use_db) {
                    Ok(_) => self.db = s.db.clone(),
                    Err(e) => {
                        // The statement cannot run where it ran: it is
                        // counted as failed, with USE's error.
                        let c = self.out.class(s.class);
                        c.count += 1;
                        c.errors += 1;
                        let (code, message) = match &e {
                            mysql::Error::MySqlError(me) => (me.code, me.message.clone()),
                            other => (CR_SERVER_LOST, crate::db::one_line(other)),
                        };
                        self.out
                            .errors
                            .entry(code)
                            .and_modify(|g| g.count += 1)
                            .or_insert_with(|| ErrorRun {
                                count: 1,
                                message,
                                statement: use_db.clone(),
                                class: s.class,
                            });
                        return Ok(());
                    }
                }
            }
        }
        let t0 = Instant::now();
        let r = self.wire.query_bytes(self.conn.as_raw_fd(), &s.sql);
        let ns = t0.elapsed().as_nanos() as u64;
        let c = self.out.class(s.class);
        c.count += 1;
        c.total_ns += ns;
        match r {
            Ok(_) => {
                c.ok += 1;
                c.ok_ns += ns;
                c.buckets.add(ns);
            }
            Err(e) => {
                c.errors += 1;
                let (code, message, lost) = match &e {
                    mysql::Error::MySqlError(me) => (me.code, me.message.clone(), false),
                    other => (CR_SERVER_LOST, crate::db::one_line(other), true),
                };
                self.out
                    .errors
                    .entry(code)
                    .and_modify(|g| g.count += 1)
                    .or_insert_with(|| ErrorRun {
                        count: 1,
                        message,
                        statement: String::from_utf8_lossy(&s.sql)
                            .chars()
                            .take(SAMPLE_CHARS)
                            .collect(),
                        class: s.class,
                    });
                if lost {
                    self.conn = self.spec.connect()?;
                    self.wire = Wire::default();
                    self.db = None;
                }
            }
        }
        Ok(())
    }
}

/// Run the statements arriving on `rx` on one connection, paced from
/// `origin` (set by the first connection of the round to be open, so that
/// connecting does not make the log's first statement late and every
/// later one early against it); returns when the sender is dropped.
pub fn connection(
    spec: &ConnSpec,
    rx: Receiver<Vec<Stmt>>,
    speed: Speed,
    origin: &OnceLock<Instant>,
) -> Result<ConnRun> {
    let conn = match spec.connect() {
        Ok(c) => c,
        Err(e) => {
            // Drain, so the reader never blocks on this queue.
            for _ in rx.iter() {}
            return Err(e);
        }
    };
    let mut r = Runner::new(spec, conn, speed, *origin.get_or_init(Instant::now));
    for batch in rx.iter() {
        for s in &batch {
            if let Err(e) = r.run(s) {
                for _ in rx.iter() {}
                return Err(e);
            }
        }
    }
    Ok(r.out)
}

/// A round from memory ([`super::Loaded`]): one thread per connection,
/// each running its own statements. Every connection is opened before
/// any statement runs and the round is timed from then to the last
/// statement's end, so neither reading the log nor connecting is in it.
/// Returns the round's time (s) and what the connections did.
///
/// It also measures the part of the round when every connection was busy
/// ([`ConnRun::all_busy`]): each connection looks, after each statement,
/// whether one has finished (one relaxed load), and counts what it had
/// done when it first sees so; the first to finish counts all it did.
/// A count can hold one statement that ended just after the first
/// connection's end, at most one a connection.
pub fn from_memory(spec: &ConnSpec, conns: &[Vec<Stmt>], speed: Speed) -> Result<(f64, ConnRun)> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let ready = std::sync::Barrier::new(conns.len());
    let origin = OnceLock::new();
    let one_done = AtomicBool::new(false);
    let first_end = OnceLock::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .iter()
            .map(|stmts| {
                let (ready, origin, one_done, first_end) = (&ready, &origin, &one_done, &first_end);
                scope.spawn(move || -> Result<(Instant, ConnRun, u64)> {
                    let conn = spec.connect();
                    // Every thread waits, a failed one too: the others
                    // would wait for it for ever.
                    ready.wait();
                    let mut r = Runner::new(spec, conn?, speed, *origin.get_or_init(Instant::now));
                    let mut busy: Option<u64> = None;
                    for (n, s) in stmts.iter().enumerate() {
                        r.run(s)?;
                        if busy.is_none() && one_done.load(Ordering::Relaxed) {
                            busy = Some(n as u64 + 1);
                        }
                    }
                    let end = Instant::now();
                    // A connection given nothing to run (every statement of
                    // its sessions skipped) ends no busy period.
                    if !stmts.is_empty() {
                        first_end.get_or_init(|| end);
                        one_done.store(true, Ordering::Relaxed);
                    }
                    Ok((end, r.out, busy.unwrap_or(stmts.len() as u64)))
                })
            })
            .collect();
        let mut all = ConnRun::default();
        let mut end: Option<Instant> = None;
        let mut failed = None;
        let mut busy_statements = 0;
        for h in handles {
            match h.join() {
                Ok(Ok((t, r, busy))) => {
                    end = Some(end.map_or(t, |e| e.max(t)));
                    busy_statements += busy;
                    all.merge(r);
                }
                Ok(Err(e)) => {
                    failed.get_or_insert(e);
                }
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let secs = match (origin.get(), end) {
            (Some(o), Some(e)) => e.duration_since(*o).as_secs_f64(),
            _ => 0.0,
        };
        if let (Some(o), Some(f)) = (origin.get(), first_end.get()) {
            all.all_busy = Some((f.duration_since(*o).as_secs_f64(), busy_statements));
        }
        Ok((secs, all))
    })
}

/// Sends statements to connection threads, starting one on first use.
/// With `--speed max` they go in batches: one channel message (and, when a
/// connection waits for work or the reader for room, one thread wake-up)
/// per statement cost more client CPU than the statement's own round trip
/// (measured: 14–17 µs a statement against the OLTP client's 9 on the
/// same load, bench/log/2026-11-29.md). Paced replays send each statement
/// alone: one held in a partial batch could start late.
///
/// A batch is sent when its connection holds [`BATCH`] statements, and
/// then every connection's partial batch goes too, oldest first (by the
/// log order of its first statement). So when the reader waits for room
/// on a queue, everything that queue holds was read before anything still
/// held: as without batches, a statement that waits on a lock (a row
/// another session's COMMIT releases, which the log holds earlier) never
/// waits on a statement the reader keeps back.
pub struct Senders<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    spec: &'env ConnSpec,
    speed: Speed,
    /// The round's pacing origin ([`connection`]).
    origin: &'env OnceLock<Instant>,
    txs: Vec<SyncSender<Vec<Stmt>>>,
    /// Per connection, the batch being filled and the log position of
    /// its first statement.
    pending: Vec<(Vec<Stmt>, u64)>,
    /// Statements handed to [`Senders::send`] so far.
    seq: u64,
    handles: Vec<std::thread::ScopedJoinHandle<'scope, Result<ConnRun>>>,
}

/// Statements queued per connection before the reader waits: bounds memory
/// (a log larger than memory streams through) while letting a connection
/// that waits on a lock fall behind the others for a while.
const QUEUE: usize = 4096;
/// Statements a batch holds with `--speed max`.
pub const BATCH: usize = 64;

impl<'scope, 'env> Senders<'scope, 'env> {
    pub fn new(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        spec: &'env ConnSpec,
        speed: Speed,
        origin: &'env OnceLock<Instant>,
    ) -> Self {
        Senders {
            scope,
            spec,
            speed,
            origin,
            txs: Vec::new(),
            pending: Vec::new(),
            seq: 0,
            handles: Vec::new(),
        }
    }

    fn batch(&self) -> usize {
        match self.speed {
            Speed::Max => BATCH,
            Speed::Factor(_) => 1,
        }
    }

    pub fn send(&mut self, conn: usize, s: Stmt) {
        let batch = self.batch();
        while self.txs.len() <= conn {
            let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE / batch);
            let (spec, speed, origin) = (self.spec, self.speed, self.origin);
            self.handles.push(
                self.scope
                    .spawn(move || connection(spec, rx, speed, origin)),
            );
            self.txs.push(tx);
            self.pending.push((Vec::with_capacity(batch), 0));
        }
        let (b, first) = &mut self.pending[conn];
        if b.is_empty() {
            *first = self.seq;
        }
        b.push(s);
        self.seq += 1;
        if b.len() >= batch {
            self.flush();
        }
    }

    /// Send every partial batch, oldest first.
    fn flush(&mut self) {
        let mut order: Vec<usize> = (0..self.pending.len())
            .filter(|&c| !self.pending[c].0.is_empty())
            .collect();
        order.sort_by_key(|&c| self.pending[c].1);
        let cap = self.batch();
        for c in order {
            let b = std::mem::replace(&mut self.pending[c].0, Vec::with_capacity(cap));
            // A connection that failed drains its queue; a send to one
            // that ended cannot fail otherwise.
            let _ = self.txs[c].send(b);
        }
    }

    /// Send what the batches hold and close the queues: the connections
    /// end once they ran it. Their results, in connection order.
    pub fn finish(mut self) -> Vec<std::thread::ScopedJoinHandle<'scope, Result<ConnRun>>> {
        self.flush();
        self.txs.clear();
        self.handles
    }
}
