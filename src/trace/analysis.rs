//! btt's method on a stream of [`Event`]s: where each bio's time went.
//!
//! The rules (blktrace's `btt/trace_*.c`, summarised in the reference
//! notes):
//! - every Q (`block_bio_queue`) starts an "iop" keyed by device and start
//!   sector, covering `[sector, sector + nr)`;
//! - G, I and M are matched to the iop whose range holds the event's start
//!   sector, and record Q2G, G2I (only after a G) and Q2M when they happen;
//! - D and C are matched to every iop whose range lies inside the D's or
//!   C's range: D records I2D (or M2D for a merged bio), C records Q2C and
//!   D2C and retires the iop. A partial completion retires the bios inside
//!   its part, so a request completed in pieces is counted bio by bio;
//!   where btt would lose a bio that one completion covers only in part,
//!   innotune retires it at the completion that covers its last sector
//!   (its Q2C runs to the end of its I/O);
//! - every figure is per bio: a request of four bios gives four D2C samples;
//! - events of 0 sectors are not data and btt drops them. innotune keeps
//!   the flushes among them (a preflush bio with no data, `FWS 0 + 0`, its
//!   `FF` request, whose completion prints sector -1, and the original
//!   request's `0 + 0` completion) and matches them first in, first out per
//!   device, since they carry no sector to correlate by: D2C runs to the
//!   `FF` completion, Q2C to the request's (or the `FF`'s when a kernel
//!   prints no second one).
//!
//! Events are fed through a small reordering window: trace_pipe merges the
//! per-CPU buffers as it reads them, so an event of one CPU can arrive after
//! a later one of another.

use super::event::{Action, Dev, Event, Op};
use super::latency::{Bucket, Samples, Summary};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// How far back in time a late event may arrive and still be put in order.
pub const REORDER_WINDOW_NS: u64 = 200_000_000;

const NONE: u64 = u64::MAX;

/// The I/O classes a report is split by (from the Q's RWBS).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Read,
    Write,
    /// A write with REQ_SYNC or FUA (O_DIRECT, O_DSYNC, journal commits).
    SyncWrite,
    /// A flush request with no data (fsync's cache flush).
    Flush,
    /// Discards, write-zeroes, zone operations.
    Other,
    /// Every direction together (a report's summary row).
    All,
}

impl Direction {
    pub fn of(e: &Event) -> Direction {
        match e.rwbs.op {
            Op::Flush => Direction::Flush,
            _ if e.nr_sectors == 0 && e.rwbs.preflush => Direction::Flush,
            Op::Read => Direction::Read,
            Op::Write if e.rwbs.sync || e.rwbs.fua => Direction::SyncWrite,
            Op::Write => Direction::Write,
            Op::Other => Direction::Other,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::SyncWrite => "sync write",
            Direction::Flush => "flush",
            Direction::Other => "other",
            Direction::All => "all",
        }
    }
}

/// The intervals of one direction, as samples.
#[derive(Debug, Clone, Default)]
pub struct Intervals {
    pub q2g: Samples,
    pub g2i: Samples,
    pub q2m: Samples,
    pub i2d: Samples,
    pub m2d: Samples,
    pub d2c: Samples,
    pub q2c: Samples,
}

impl Intervals {
    fn merge(&mut self, o: &Intervals) {
        self.q2g.merge(&o.q2g);
        self.g2i.merge(&o.g2i);
        self.q2m.merge(&o.q2m);
        self.i2d.merge(&o.i2d);
        self.m2d.merge(&o.m2d);
        self.d2c.merge(&o.d2c);
        self.q2c.merge(&o.q2c);
    }
}

/// Counts and samples of one device and direction.
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub t: Intervals,
    /// Q events (bios).
    pub queued: u64,
    /// Sectors queued.
    pub sectors: u64,
    /// D events (requests; a re-issue after a requeue is not counted again).
    pub issued: u64,
    /// M events (bios merged into a request).
    pub merged: u64,
    /// Bios retired by a completion.
    pub completed: u64,
    /// Requests issued although none of their bios was inserted: direct
    /// issue (scheduler `none`, or a flush bypassing the scheduler).
    pub issued_without_insert: u64,
}

impl DirStats {
    fn merge(&mut self, o: &DirStats) {
        self.t.merge(&o.t);
        self.queued += o.queued;
        self.sectors += o.sectors;
        self.issued += o.issued;
        self.merged += o.merged;
        self.completed += o.completed;
        self.issued_without_insert += o.issued_without_insert;
    }
}

/// Events that matched no bio: lost events (a full buffer), or bios
/// queued before the capture began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Unmatched {
    pub getrq: u64,
    pub insert: u64,
    pub merge: u64,
    pub issue: u64,
    pub complete: u64,
}

#[derive(Debug, Clone, Copy)]
struct Iop {
    q: u64,
    end: u64,
    dir: Direction,
    g: u64,
    i: u64,
    m: u64,
    d: u64,
}

#[derive(Debug, Clone, Copy)]
struct FlushIop {
    q: u64,
    g: u64,
    i: u64,
    d: u64,
    c_dev: u64,
}

#[derive(Debug, Default)]
struct DevState {
    /// In-flight bios by (start sector, arrival number).
    iops: BTreeMap<(u64, u64), Iop>,
    flushes: VecDeque<FlushIop>,
    dirs: BTreeMap<Direction, DirStats>,
    unmatched: Unmatched,
}

/// Feed events in; [`Analyzer::finish`] gives the per-device figures.
#[derive(Debug)]
pub struct Analyzer {
    /// Events not yet handled, in time order (arrival order among equal
    /// times). Why a deque rather than a heap: events arrive almost in
    /// order, so inserting from the back costs nothing in the common case.
    pending: VecDeque<Event>,
    seq: u64,
    newest: u64,
    /// Few devices per trace: a list beats hashing every event's key.
    devs: Vec<(Dev, DevState)>,
    events: u64,
    first_ns: u64,
    last_ns: u64,
    buf: Vec<(u64, u64)>,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer {
            pending: VecDeque::new(),
            seq: 0,
            newest: 0,
            devs: Vec::new(),
            events: 0,
            first_ns: NONE,
            last_ns: 0,
            buf: Vec::new(),
        }
    }
}

/// The result for one device.
#[derive(Debug, Clone)]
pub struct DeviceResult {
    pub dev: Dev,
    /// Per direction that had any bio, in [`Direction`] order.
    pub dirs: BTreeMap<Direction, DirStats>,
    pub unmatched: Unmatched,
    /// Bios still in flight at the end (or whose completion was lost).
    pub incomplete: u64,
}

impl DeviceResult {
    /// Every direction together.
    pub fn all(&self) -> DirStats {
        let mut a = DirStats::default();
        for d in self.dirs.values() {
            a.merge(d);
        }
        a
    }
}

/// Everything one trace said.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub devices: Vec<DeviceResult>,
    /// Events used (Q, G, I, M, D, C).
    pub events: u64,
    /// Time from the first to the last event.
    pub span_ns: u64,
}

impl Analyzer {
    pub fn push(&mut self, e: Event) {
        self.events += 1;
        self.first_ns = self.first_ns.min(e.time_ns);
        self.last_ns = self.last_ns.max(e.time_ns);
        self.newest = self.newest.max(e.time_ns);
        let mut at = self.pending.len();
        while at > 0 && self.pending[at - 1].time_ns > e.time_ns {
            at -= 1;
        }
        self.pending.insert(at, e);
        let horizon = self.newest.saturating_sub(REORDER_WINDOW_NS);
        while self.pending.front().is_some_and(|f| f.time_ns <= horizon) {
            if let Some(e) = self.pending.pop_front() {
                self.handle(e);
            }
        }
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn finish(mut self) -> Analysis {
        while let Some(e) = self.pending.pop_front() {
            self.handle(e);
        }
        let mut devices: Vec<DeviceResult> = self
            .devs
            .into_iter()
            .map(|(dev, mut st)| {
                // Flushes whose request completion never came: their
                // device completion ends them.
                for f in st.flushes.drain(..) {
                    if f.c_dev != NONE {
                        let s = st.dirs.entry(Direction::Flush).or_default();
                        s.t.q2c.record(f.c_dev.saturating_sub(f.q));
                        s.completed += 1;
                    }
                }
                DeviceResult {
                    dev,
                    incomplete: st.iops.len() as u64,
                    dirs: st.dirs,
                    unmatched: st.unmatched,
                }
            })
            .collect();
        devices.sort_by_key(|d| d.dev);
        Analysis {
            devices,
            events: self.events,
            span_ns: self.last_ns.saturating_sub(self.first_ns.min(self.last_ns)),
        }
    }

    fn handle(&mut self, e: Event) {
        let i = match self.devs.iter().position(|(d, _)| *d == e.dev) {
            Some(i) => i,
            None => {
                self.devs.push((e.dev, DevState::default()));
                self.devs.len() - 1
            }
        };
        let st = &mut self.devs[i].1;
        if e.nr_sectors == 0 {
            flush_event(st, &e);
            return;
        }
        let t = e.time_ns;
        match e.action {
            Action::Queue => {
                let dir = Direction::of(&e);
                let s = st.dirs.entry(dir).or_default();
                s.queued += 1;
                s.sectors += e.nr_sectors as u64;
                self.seq += 1;
                st.iops.insert(
                    (e.sector, self.seq),
                    Iop {
                        q: t,
                        end: e.end(),
                        dir,
                        g: NONE,
                        i: NONE,
                        m: NONE,
                        d: NONE,
                    },
                );
            }
            Action::GetRq => match containing(&mut st.iops, e.sector, |i| i.g == NONE) {
                Some(iop) => {
                    iop.g = t;
                    let q2g = t.saturating_sub(iop.q);
                    st.dirs.entry(iop.dir).or_default().t.q2g.record(q2g);
                }
                None => st.unmatched.getrq += 1,
            },
            Action::Insert => match containing(&mut st.iops, e.sector, |i| i.i == NONE) {
                Some(iop) => {
                    iop.i = t;
                    if iop.g != NONE {
                        let g2i = t.saturating_sub(iop.g);
                        st.dirs.entry(iop.dir).or_default().t.g2i.record(g2i);
                    }
                }
                None => st.unmatched.insert += 1,
            },
            Action::Merge => match containing(&mut st.iops, e.sector, |i| i.m == NONE) {
                Some(iop) => {
                    iop.m = t;
                    let s = st.dirs.entry(iop.dir).or_default();
                    s.merged += 1;
                    s.t.q2m.record(t.saturating_sub(iop.q));
                }
                None => st.unmatched.merge += 1,
            },
            Action::Issue => {
                let (mut matched, mut inserted, mut fresh) = (0u64, false, false);
                let mut dir = None;
                for (_, iop) in st
                    .iops
                    .range_mut((e.sector, 0)..(e.end(), 0))
                    .filter(|(_, i)| i.end <= e.end())
                {
                    matched += 1;
                    dir.get_or_insert(iop.dir);
                    if iop.d != NONE {
                        // Issued again after a requeue: D2C from the last issue.
                        iop.d = t;
                        continue;
                    }
                    fresh = true;
                    let s = st.dirs.entry(iop.dir).or_default();
                    if iop.i != NONE {
                        inserted = true;
                        s.t.i2d.record(t.saturating_sub(iop.i));
                    } else if iop.m != NONE {
                        s.t.m2d.record(t.saturating_sub(iop.m));
                    }
                    iop.d = t;
                }
                match dir {
                    None => st.unmatched.issue += 1,
                    Some(_) if !fresh => {}
                    Some(dir) => {
                        let s = st.dirs.entry(dir).or_default();
                        s.issued += 1;
                        if !inserted && matched > 0 {
                            s.issued_without_insert += 1;
                        }
                    }
                }
            }
            Action::Complete => {
                self.buf.clear();
                // A bio begun before this completion whose last sectors it
                // covers: an earlier partial completion did the rest.
                self.buf.extend(
                    st.iops
                        .range(..(e.sector, 0))
                        .rev()
                        .take(4)
                        .filter(|(_, i)| i.end > e.sector && i.end <= e.end())
                        .map(|(k, _)| *k),
                );
                self.buf.extend(
                    st.iops
                        .range((e.sector, 0)..(e.end(), 0))
                        .filter(|(_, i)| i.end <= e.end())
                        .map(|(k, _)| *k),
                );
                if self.buf.is_empty() {
                    st.unmatched.complete += 1;
                }
                for k in &self.buf {
                    let Some(iop) = st.iops.remove(k) else {
                        continue;
                    };
                    let s = st.dirs.entry(iop.dir).or_default();
                    s.completed += 1;
                    s.t.q2c.record(t.saturating_sub(iop.q));
                    if iop.d != NONE {
                        s.t.d2c.record(t.saturating_sub(iop.d));
                    }
                }
            }
        }
    }
}

/// The in-flight bio holding `sector` (the nearest start at or below it;
/// among bios with the same start, the oldest `want` accepts).
fn containing(
    iops: &mut BTreeMap<(u64, u64), Iop>,
    sector: u64,
    want: impl Fn(&Iop) -> bool,
) -> Option<&mut Iop> {
    let mut found = None;
    let mut start = None;
    for (k, iop) in iops.range(..=(sector, u64::MAX)).rev() {
        if *start.get_or_insert(k.0) != k.0 {
            break;
        }
        if iop.end > sector && want(iop) {
            found = Some(*k);
        }
    }
    iops.get_mut(&found?)
}

/// A zero-sector event: part of a flush, matched first in, first out.
fn flush_event(st: &mut DevState, e: &Event) {
    let t = e.time_ns;
    let dir = Direction::of(e);
    match e.action {
        Action::Queue if dir == Direction::Flush => {
            st.flushes.push_back(FlushIop {
                q: t,
                g: NONE,
                i: NONE,
                d: NONE,
                c_dev: NONE,
            });
            st.dirs.entry(Direction::Flush).or_default().queued += 1;
        }
        Action::GetRq => {
            if let Some(f) = st.flushes.iter_mut().find(|f| f.g == NONE) {
                f.g = t;
                let v = t.saturating_sub(f.q);
                st.dirs.entry(Direction::Flush).or_default().t.q2g.record(v);
            }
        }
        Action::Insert => {
            if let Some(f) = st.flushes.iter_mut().find(|f| f.i == NONE && f.d == NONE) {
                f.i = t;
                let g = f.g;
                if g != NONE {
                    let v = t.saturating_sub(g);
                    st.dirs.entry(Direction::Flush).or_default().t.g2i.record(v);
                }
            }
        }
        Action::Issue => {
            if let Some(f) = st.flushes.iter_mut().find(|f| f.d == NONE) {
                f.d = t;
                let i = f.i;
                let s = st.dirs.entry(Direction::Flush).or_default();
                s.issued += 1;
                if i != NONE {
                    s.t.i2d.record(t.saturating_sub(i));
                } else {
                    s.issued_without_insert += 1;
                }
            }
        }
        Action::Complete if dir == Direction::Flush || e.sector == u64::MAX => {
            if let Some(f) = st
                .flushes
                .iter_mut()
                .find(|f| f.d != NONE && f.c_dev == NONE)
            {
                f.c_dev = t;
                let v = t.saturating_sub(f.d);
                st.dirs.entry(Direction::Flush).or_default().t.d2c.record(v);
            }
        }
        Action::Complete => {
            // The original request's completion: ends the oldest flush the
            // device has finished.
            if let Some(pos) = st.flushes.iter().position(|f| f.c_dev != NONE) {
                let f = st.flushes.remove(pos).expect("position is in range");
                let s = st.dirs.entry(Direction::Flush).or_default();
                s.completed += 1;
                s.t.q2c.record(t.saturating_sub(f.q));
            }
        }
        _ => {}
    }
}

// ------------------------------------------------------------ summaries

/// Share of the summed Q2C time spent in each interval (btt's "Device
/// Overhead"), in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Shares {
    pub q2g_pct: f64,
    pub g2i_pct: f64,
    pub q2m_pct: f64,
    pub i2d_pct: f64,
    pub m2d_pct: f64,
    pub d2c_pct: f64,
}

/// One direction's figures, as reported.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DirectionFigures {
    pub direction: Direction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q2g: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub g2i: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q2m: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub i2d: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub m2d: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d2c: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q2c: Option<Summary>,
    pub bios_queued: u64,
    pub bytes_queued: u64,
    pub requests_issued: u64,
    pub bios_merged: u64,
    pub bios_completed: u64,
    /// Bios per request (btt's #Q / #D); absent without requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_ratio: Option<f64>,
    pub requests_issued_without_insert: u64,
    /// Absent when no bio completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<Shares>,
    /// log2 histograms of Q2C and D2C.
    pub q2c_histogram: Vec<Bucket>,
    pub d2c_histogram: Vec<Bucket>,
}

impl DirectionFigures {
    pub fn of(direction: Direction, s: &DirStats) -> DirectionFigures {
        let total = s.t.q2c.sum_ns() as f64;
        let pct = |x: &Samples| x.sum_ns() as f64 / total * 100.0;
        DirectionFigures {
            direction,
            q2g: s.t.q2g.summary(),
            g2i: s.t.g2i.summary(),
            q2m: s.t.q2m.summary(),
            i2d: s.t.i2d.summary(),
            m2d: s.t.m2d.summary(),
            d2c: s.t.d2c.summary(),
            q2c: s.t.q2c.summary(),
            bios_queued: s.queued,
            bytes_queued: s.sectors * 512,
            requests_issued: s.issued,
            bios_merged: s.merged,
            bios_completed: s.completed,
            merge_ratio: (s.issued > 0).then(|| s.queued as f64 / s.issued as f64),
            requests_issued_without_insert: s.issued_without_insert,
            share: (total > 0.0).then(|| Shares {
                q2g_pct: pct(&s.t.q2g),
                g2i_pct: pct(&s.t.g2i),
                q2m_pct: pct(&s.t.q2m),
                i2d_pct: pct(&s.t.i2d),
                m2d_pct: pct(&s.t.m2d),
                d2c_pct: pct(&s.t.d2c),
            }),
            q2c_histogram: s.t.q2c.buckets(),
            d2c_histogram: s.t.d2c.buckets(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{parse_line, Line};
    use super::*;

    /// Events from blkparse-style shorthand: `TIME_US ACTION RWBS SECTOR NR`.
    fn run(script: &str) -> Analysis {
        let mut a = Analyzer::default();
        for l in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let w: Vec<&str> = l.split_whitespace().collect();
            let line = format!(
                "7,0 0 1 0.{:09} 1 {} {} {} + {} [x]",
                w[0].parse::<u64>().unwrap() * 1000,
                w[1],
                w[2],
                w[3],
                w[4]
            );
            match parse_line(&line) {
                Line::Event(e) => a.push(e),
                other => panic!("{line}: {other:?}"),
            }
        }
        a.finish()
    }

    fn us(s: &Samples) -> Vec<u64> {
        let m = s.summary().expect("samples");
        vec![m.min_ns / 1000, m.max_ns / 1000, m.count]
    }

    #[test]
    fn one_bio_through_the_scheduler() {
        let a = run("0 Q R 8 8\n 2 G R 8 8\n 5 I R 8 8\n 9 D R 8 8\n 109 C R 8 8");
        let d = &a.devices[0];
        let r = &d.dirs[&Direction::Read];
        assert_eq!(us(&r.t.q2g), [2, 2, 1]);
        assert_eq!(us(&r.t.g2i), [3, 3, 1]);
        assert_eq!(us(&r.t.i2d), [4, 4, 1]);
        assert_eq!(us(&r.t.d2c), [100, 100, 1]);
        assert_eq!(us(&r.t.q2c), [109, 109, 1]);
        assert_eq!((r.queued, r.issued, r.completed), (1, 1, 1));
        assert_eq!(r.issued_without_insert, 0);
        assert_eq!(d.incomplete, 0);
        let f = DirectionFigures::of(Direction::Read, r);
        let sh = f.share.unwrap();
        assert!((sh.d2c_pct - 100.0 * 100.0 / 109.0).abs() < 1e-9);
        assert!((sh.i2d_pct - 400.0 / 109.0).abs() < 1e-9);
        assert_eq!(f.merge_ratio, Some(1.0));
    }

    #[test]
    fn merged_bios_get_q2m_and_m2d_and_count_per_bio() {
        let a = run("0 Q WS 0 8\n 1 G WS 0 8\n 2 Q WS 8 8\n 3 M WS 8 8\n 4 I WS 0 16\n 10 D WS 0 16\n 110 C WS 0 16");
        let w = &a.devices[0].dirs[&Direction::SyncWrite];
        assert_eq!(us(&w.t.q2m), [1, 1, 1]);
        assert_eq!(us(&w.t.m2d), [7, 7, 1]);
        assert_eq!(us(&w.t.i2d), [6, 6, 1]);
        assert_eq!(us(&w.t.d2c), [100, 100, 2], "one D2C per bio");
        assert_eq!(us(&w.t.q2c), [108, 110, 2]);
        assert_eq!((w.queued, w.issued, w.merged), (2, 1, 1));
        assert_eq!(
            DirectionFigures::of(Direction::SyncWrite, w).merge_ratio,
            Some(2.0)
        );
    }

    #[test]
    fn partial_completions_retire_bios_piece_by_piece() {
        // Two bios in one request, completed in two parts.
        let a = run("0 Q R 0 8\n 0 Q R 8 8\n 1 G R 0 8\n 1 M R 8 8\n 2 I R 0 16\n 3 D R 0 16\n 50 C R 0 8\n 80 C R 8 8");
        let r = &a.devices[0].dirs[&Direction::Read];
        assert_eq!(us(&r.t.q2c), [50, 80, 2]);
        // One bio completed in two parts: retired by the part covering its end.
        let a = run("0 Q R 0 16\n 1 G R 0 16\n 2 I R 0 16\n 3 D R 0 16\n 50 C R 0 8\n 80 C R 8 8");
        let d = &a.devices[0];
        assert_eq!(us(&d.dirs[&Direction::Read].t.q2c), [80, 80, 1]);
        assert_eq!((d.incomplete, d.unmatched.complete), (0, 1));
    }

    #[test]
    fn direct_issue_has_no_insert_and_is_counted() {
        let a = run("0 Q R 8 8\n 1 G R 8 8\n 2 D R 8 8\n 52 C R 8 8");
        let r = &a.devices[0].dirs[&Direction::Read];
        assert!(r.t.i2d.summary().is_none());
        assert_eq!(us(&r.t.d2c), [50, 50, 1]);
        assert_eq!(us(&r.t.q2c), [52, 52, 1]);
        assert_eq!(r.issued_without_insert, 1);
    }

    #[test]
    fn events_out_of_order_within_the_window_are_sorted() {
        // The completion (from another CPU) is read before the issue.
        let a = run("0 Q R 8 8\n 1 G R 8 8\n 2 I R 8 8\n 60 C R 8 8\n 10 D R 8 8");
        let r = &a.devices[0].dirs[&Direction::Read];
        assert_eq!(us(&r.t.d2c), [50, 50, 1]);
        assert_eq!(us(&r.t.i2d), [8, 8, 1]);
    }

    #[test]
    fn flushes_are_matched_in_order() {
        let text = "\
 fio-1 [001] ..... 284.441632: block_bio_queue: 7,0 FWS 0 + 0 [fio]
 fio-1 [001] ..... 284.441633: block_getrq: 7,0 FWS 0 + 0 [fio]
 kworker/1:1H-44 [001] ..... 284.441643: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:1H]
 ksoftirqd/1-22 [001] ..s.. 284.441831: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]
 ksoftirqd/1-22 [001] d.s1. 284.441833: block_rq_complete: 7,0 WS () 0 + 0 be,0,4 [0]";
        let mut a = Analyzer::default();
        for l in text.lines() {
            if let Line::Event(e) = parse_line(l) {
                a.push(e);
            }
        }
        let a = a.finish();
        let f = &a.devices[0].dirs[&Direction::Flush];
        assert_eq!(us(&f.t.q2g), [1, 1, 1]);
        assert_eq!(us(&f.t.d2c), [188, 188, 1]);
        assert_eq!(us(&f.t.q2c), [201, 201, 1]);
        assert_eq!((f.queued, f.issued, f.issued_without_insert), (1, 1, 1));
    }

    #[test]
    fn events_matching_nothing_are_counted_not_guessed() {
        let a = run("5 D R 8 8\n 9 C R 8 8\n 10 G R 100 8\n 11 Q R 200 8");
        let d = &a.devices[0];
        assert_eq!(
            (d.unmatched.issue, d.unmatched.complete, d.unmatched.getrq),
            (1, 1, 1)
        );
        assert_eq!(d.incomplete, 1);
        assert!(d.dirs[&Direction::Read].t.q2c.summary().is_none());
    }
}
