//! btt's method on a stream of [`Event`]s: where each bio's time went.
//!
//! The rules (blktrace's `btt/trace_*.c`, summarised in the reference
//! notes):
//! - every Q (`block_bio_queue`) starts an "iop" keyed by device and start
//!   sector, covering `[sector, sector + nr)`;
//! - G, I and M are matched to the iop whose range holds the event's start
//!   sector, and record Q2G, G2I (only after a G) and Q2M when they happen;
//! - D and C are matched to every iop that shares sectors with the D's or
//!   C's range and was queued before it. D records I2D (or M2D for a
//!   merged bio) at a bio's first issue; a bio split into several requests
//!   is issued piece by piece, and its D2C runs from its first piece's
//!   issue. C counts the sectors it completes of each bio and retires a
//!   bio (recording Q2C and D2C) when all its sectors are complete, so a
//!   request completed in parts, or a split bio completed piece by piece,
//!   gives each bio one Q2C from its queueing to its last sector's
//!   completion, and a D2C that is never longer than its Q2C. A
//!   completion goes to the bios that were issued when some were (a bio
//!   queued again at the same sectors waits for its own);
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
    /// Request allocated → issued, for bios issued with no insert (direct
    /// issue). Not one of btt's figures and not reported: it is the part
    /// of such a bio's Q2C the others leave out, for [`DirStats::explained_pct`].
    pub g2d: Samples,
}

impl Intervals {
    fn merge(&mut self, o: &Intervals) {
        self.g2d.merge(&o.g2d);
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
    /// The share of the summed Q2C that the summed intervals explain
    /// (Q2G + G2I + I2D + G2D + Q2M + M2D + D2C), percent; `None` without
    /// completed bios. Each bio's intervals add up to its Q2C, so this is
    /// near 100 unless events were missing or matched to the wrong bio
    /// (a trace whose CPUs' buffers begin at different times).
    pub fn explained_pct(&self) -> Option<f64> {
        let total = self.t.q2c.sum_ns();
        if total == 0 {
            return None;
        }
        let t = &self.t;
        let parts = t.q2g.sum_ns()
            + t.g2i.sum_ns()
            + t.i2d.sum_ns()
            + t.g2d.sum_ns()
            + t.q2m.sum_ns()
            + t.m2d.sum_ns()
            + t.d2c.sum_ns();
        Some(parts as f64 / total as f64 * 100.0)
    }

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
    /// Events whose sector range runs past 2⁶⁴ (a corrupt record): skipped.
    /// Absent in results written before it was counted: read as 0.
    #[serde(default)]
    pub out_of_range: u64,
}

#[derive(Debug, Clone, Copy)]
struct Iop {
    q: u64,
    end: u64,
    /// Sectors (end − start).
    size: u64,
    dir: Direction,
    g: u64,
    i: u64,
    m: u64,
    /// The first issue of any of its sectors (a split bio's first piece),
    /// or the last re-issue after a requeue.
    d: u64,
    /// Sectors issued so far (the pieces of a split bio).
    issued: u64,
    /// Sectors completed so far (a completion in parts): the bio is done
    /// when all are.
    done: u64,
    /// Insert events matched to it (one per inserted piece).
    inserts: u32,
    /// Pieces issued.
    pieces: u32,
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
    /// Events before this time are dropped ([`Analyzer::set_window_start`]).
    window_start: u64,
    before_window: u64,
    /// In-flight bios an event touches, with the sectors they share.
    buf: Vec<((u64, u64), u64)>,
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
            window_start: 0,
            before_window: 0,
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
    /// Events dropped for being before [`Analyzer::set_window_start`].
    pub before_window: u64,
}

/// What an analysis counted, per device and direction, without its
/// timings: [`Analysis::counts`].
pub type Counts = Vec<(Dev, u64, Unmatched, Vec<(Direction, [u64; 3])>)>;

impl Analysis {
    /// Per device: its numbers, bios in flight at the end, unmatched
    /// events, and per direction the bios queued, requests issued and bios
    /// completed. Two readings of one trace (its text and its raw pages,
    /// or pages handed over in rounds) must agree on these exactly; their
    /// timings differ by the text's rounding to microseconds.
    pub fn counts(&self) -> Counts {
        self.devices
            .iter()
            .map(|d| {
                let dirs = d
                    .dirs
                    .iter()
                    .map(|(k, v)| (*k, [v.queued, v.issued, v.completed]))
                    .collect();
                (d.dev, d.incomplete, d.unmatched, dirs)
            })
            .collect()
    }
}

impl Analyzer {
    /// Analyse only events at or after `ns`: where a CPU's older events
    /// were overwritten, the bios queued before every CPU's buffer begins
    /// lose their completions (or get another bio's).
    pub fn set_window_start(&mut self, ns: u64) {
        self.window_start = ns;
    }

    pub fn push(&mut self, e: Event) {
        if e.time_ns < self.window_start {
            self.before_window += 1;
            return;
        }
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
            before_window: self.before_window,
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
        if !e.range_fits() {
            // The text parsers refuse these; a raw record could hold one.
            st.unmatched.out_of_range += 1;
            return;
        }
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
                        size: e.nr_sectors as u64,
                        dir,
                        g: NONE,
                        i: NONE,
                        m: NONE,
                        d: NONE,
                        issued: 0,
                        done: 0,
                        inserts: 0,
                        pieces: 0,
                    },
                );
            }
            Action::GetRq => {
                match containing(&mut st.iops, e.sector, |i| i.g == NONE && i.q <= t) {
                    Some(iop) => {
                        iop.g = t;
                        let q2g = t.saturating_sub(iop.q);
                        st.dirs.entry(iop.dir).or_default().t.q2g.record(q2g);
                    }
                    None => {
                        // Else a later piece of a split bio: its Q2G was its first's.
                        if containing(&mut st.iops, e.sector, |i| i.q <= t).is_none() {
                            st.unmatched.getrq += 1;
                        }
                    }
                }
            }
            Action::Insert => match containing(&mut st.iops, e.sector, |i| i.i == NONE && i.q <= t)
            {
                Some(iop) => {
                    iop.i = t;
                    iop.inserts += 1;
                    if iop.g != NONE {
                        let g2i = t.saturating_sub(iop.g);
                        st.dirs.entry(iop.dir).or_default().t.g2i.record(g2i);
                    }
                }
                None => match containing(&mut st.iops, e.sector, |i| i.q <= t) {
                    // A later piece of a split bio (or a re-insert).
                    Some(iop) => iop.inserts += 1,
                    None => st.unmatched.insert += 1,
                },
            },
            Action::Merge => {
                match containing(&mut st.iops, e.sector, |i| i.m == NONE && i.q <= t) {
                    Some(iop) => {
                        iop.m = t;
                        let s = st.dirs.entry(iop.dir).or_default();
                        s.merged += 1;
                        s.t.q2m.record(t.saturating_sub(iop.q));
                    }
                    None => st.unmatched.merge += 1,
                }
            }
            Action::Issue => {
                overlapping(&st.iops, e.sector, e.end(), t, &mut self.buf);
                let (mut fresh, mut inserted) = (false, false);
                let mut dir = None;
                for &(k, overlap) in &self.buf {
                    let Some(iop) = st.iops.get_mut(&k) else {
                        continue;
                    };
                    dir.get_or_insert(iop.dir);
                    if iop.d == NONE {
                        let s = st.dirs.entry(iop.dir).or_default();
                        if iop.i != NONE {
                            s.t.i2d.record(t.saturating_sub(iop.i));
                        } else if iop.m != NONE {
                            s.t.m2d.record(t.saturating_sub(iop.m));
                        } else if iop.g != NONE {
                            s.t.g2d.record(t.saturating_sub(iop.g));
                        }
                        iop.d = t;
                    } else if iop.issued + overlap > iop.size {
                        // Its sectors issued again after a requeue: D2C
                        // from the last issue; not a new request.
                        iop.d = t;
                        continue;
                    }
                    // The bio, or a piece of it.
                    iop.issued += overlap;
                    iop.pieces += 1;
                    fresh = true;
                    if iop.inserts >= iop.pieces {
                        inserted = true;
                    }
                }
                match dir {
                    None => st.unmatched.issue += 1,
                    Some(_) if !fresh => {}
                    Some(dir) => {
                        let s = st.dirs.entry(dir).or_default();
                        s.issued += 1;
                        if !inserted {
                            s.issued_without_insert += 1;
                        }
                    }
                }
            }
            Action::Complete => {
                overlapping(&st.iops, e.sector, e.end(), t, &mut self.buf);
                if self.buf.is_empty() {
                    st.unmatched.complete += 1;
                }
                let iops = &st.iops;
                if self
                    .buf
                    .iter()
                    .any(|(k, _)| iops.get(k).is_some_and(|i| i.d != NONE))
                {
                    self.buf
                        .retain(|(k, _)| iops.get(k).is_some_and(|i| i.d != NONE));
                }
                for &(k, overlap) in &self.buf {
                    let Some(iop) = st.iops.get_mut(&k) else {
                        continue;
                    };
                    iop.done += overlap;
                    if iop.done < iop.size {
                        // Completed in parts: more to come.
                        continue;
                    }
                    let Some(iop) = st.iops.remove(&k) else {
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

/// The in-flight bios queued at or before `t` that share sectors with
/// `[start, end)`, each with the number of sectors shared, into `out`.
/// Bios begun before `start` that reach into it are looked for among the
/// nearest few: bios in flight rarely overlap.
fn overlapping(
    iops: &BTreeMap<(u64, u64), Iop>,
    start: u64,
    end: u64,
    t: u64,
    out: &mut Vec<((u64, u64), u64)>,
) {
    out.clear();
    for (k, iop) in iops.range(..(start, 0)).rev().take(8) {
        if iop.end > start && iop.q <= t {
            out.push((*k, iop.end.min(end) - start));
        }
    }
    for (k, iop) in iops.range((start, 0)..(end, 0)) {
        if iop.q <= t {
            out.push((*k, iop.end.min(end) - k.0));
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
        assert_eq!(us(&d.dirs[&Direction::Read].t.d2c), [77, 77, 1]);
        assert_eq!((d.incomplete, d.unmatched.complete), (0, 0));
        // Parts that do not follow the bios' bounds: each bio is done when
        // its last sector is.
        let a = run("0 Q W 0 8\n 0 Q W 8 8\n 1 G W 0 8\n 1 M W 8 8\n 2 I W 0 16\n 3 D W 0 16\n 40 C W 0 4\n 50 C W 4 8\n 90 C W 12 4");
        let w = &a.devices[0].dirs[&Direction::Write];
        assert_eq!(us(&w.t.q2c), [50, 90, 2]);
        assert_eq!(us(&w.t.d2c), [47, 87, 2]);
        assert_eq!(a.devices[0].unmatched, Unmatched::default());
    }

    /// A bio split into requests (a loop device under `none` splits a
    /// 1 MiB write into 128 KiB pieces), each issued and completed on its
    /// own: one bio, one Q2C to its last piece's completion, one D2C from
    /// its first piece's issue (issue 39 #8: D2C > Q2C when the pieces
    /// were not matched and only small bios had a D2C).
    #[test]
    fn a_split_bio_is_one_bio_issued_and_completed_in_pieces() {
        let mut script = String::from("0 Q W 0 2048\n");
        for p in 0..8u64 {
            let s = p * 256;
            script.push_str(&format!(
                "{} G W {s} 256\n {} D W {s} 256\n",
                1 + p * 2,
                2 + p * 2
            ));
        }
        for p in 0..8u64 {
            script.push_str(&format!("{} C W {} 256\n", 100 + p * 10, p * 256));
        }
        // A small bio with a long D2C alongside.
        script.push_str("300 Q W 9000 8\n 301 G W 9000 8\n 302 D W 9000 8\n 5000 C W 9000 8\n");
        let a = run(&script);
        let d = &a.devices[0];
        let w = &d.dirs[&Direction::Write];
        assert_eq!(us(&w.t.q2c), [170, 4700, 2]);
        assert_eq!(us(&w.t.d2c), [168, 4698, 2]);
        assert_eq!(us(&w.t.q2g), [1, 1, 2]);
        assert_eq!((w.queued, w.issued, w.completed), (2, 9, 2));
        assert_eq!(w.issued_without_insert, 9);
        assert_eq!(d.unmatched, Unmatched::default());
        assert_eq!(d.incomplete, 0);
        let f = DirectionFigures::of(Direction::Write, w);
        let (q, dc) = (f.q2c.unwrap(), f.d2c.unwrap());
        assert!(dc.avg_ns <= q.avg_ns && dc.max_ns <= q.max_ns);
        let e = w.explained_pct().unwrap();
        assert!((99.0..=100.0).contains(&e), "explained {e}");
    }

    #[test]
    fn events_before_the_window_are_dropped_and_counted() {
        let mut a = Analyzer::default();
        a.set_window_start(1_000_000);
        for l in [
            "7,0 0 1 0.000000000 1 Q R 8 + 8 [x]",
            "7,0 0 1 0.001000000 1 Q R 8 + 8 [x]",
            "7,0 0 1 0.001100000 1 D R 8 + 8 [x]",
            "7,0 0 1 0.001200000 1 C R 8 + 8 [x]",
        ] {
            if let Line::Event(e) = parse_line(l) {
                a.push(e);
            }
        }
        let a = a.finish();
        assert_eq!((a.events, a.before_window), (3, 1));
        let r = &a.devices[0].dirs[&Direction::Read];
        assert_eq!(us(&r.t.q2c), [200, 200, 1]);
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
