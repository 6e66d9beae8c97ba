//! Per-class statistics: entries in, one [`Class`] per fingerprint out.
//! An [`Aggregator`] per thread; [`Aggregator::merge`] joins them.

use super::fingerprint::Fingerprinter;
use super::parse::{Entry, Parsed};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Distinct values kept per class for databases, users and hosts; the rest
/// are counted under [`OTHERS`] so a class cannot grow without bound.
const MAX_DISTINCT: usize = 32;
pub const OTHERS: &str = "(others)";

/// pt-query-digest's query-time histogram: 1 µs, 10 µs, … 1 s, 10 s+.
pub const HISTOGRAM_BUCKETS: [&str; 8] =
    ["1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s+"];

/// Sum, min and max of one attribute, in integers (nanoseconds for times):
/// exact, so the result does not depend on how the file was split.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    pub sum: u64,
    pub min: u64,
    pub max: u64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat {
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Stat {
    // Sums saturate: a forged log of 2⁶⁴−1 rows twice must not wrap (or
    // panic); a real log's sums are far below.
    fn add(&mut self, v: u64) {
        self.sum = self.sum.saturating_add(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
    /// The minimum, 0 when nothing was added.
    pub fn min_or_zero(&self) -> u64 {
        if self.min == u64::MAX {
            0
        } else {
            self.min
        }
    }
    fn merge(&mut self, o: &Stat) {
        self.sum = self.sum.saturating_add(o.sum);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// Query times in buckets 5 % wide (pt's `1.05` base), so p95 costs a few
/// counters per class instead of every value.
#[derive(Debug, Clone, Default)]
pub struct LogBuckets(Vec<u32>);

const BASE_LN: f64 = 0.048_790_164_169_432; // ln(1.05)
/// 1 µs in ns: the first bucket's upper edge.
const MIN_T: f64 = 1e3;
const MAX_BUCKET: usize = 1000;

impl LogBuckets {
    fn index(ns: u64) -> usize {
        let v = ns as f64;
        if v < MIN_T {
            0
        } else {
            (((v / MIN_T).ln() / BASE_LN) as usize + 1).min(MAX_BUCKET - 1)
        }
    }
    pub fn add(&mut self, v: u64) {
        self.add_at(Self::index(v));
    }
    /// Count one value in bucket `i` (its [`Self::index`]).
    fn add_at(&mut self, i: usize) {
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] += 1;
    }
    pub fn merge(&mut self, o: &LogBuckets) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a += b;
        }
    }
    /// The lower bound of the bucket holding the `p`-th fraction (pt reports
    /// its percentiles the same way: a bucket's value, not an exact one).
    pub fn percentile(&self, p: f64) -> u64 {
        let total: u64 = self.0.iter().map(|&c| u64::from(c)).sum();
        if total == 0 {
            return 0;
        }
        let want = ((total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.0.iter().enumerate() {
            seen += u64::from(c);
            if seen >= want {
                return if i == 0 {
                    0
                } else {
                    (MIN_T * (BASE_LN * (i - 1) as f64).exp()) as u64
                };
            }
        }
        0
    }
}

/// A query time's two buckets ([`LogBuckets::index`], [`histogram_bucket`])
/// remembered by value in a direct-mapped table: `ln` was ~5 % of the
/// digest's time (perf, bench/log/2026-11-29.md) and a log repeats its
/// times (whole microseconds, a few thousand distinct). Exact: a slot
/// answers only for the very microsecond value it was computed from; a
/// time that is not whole microseconds (or past 2³² µs) is computed.
/// 4096 slots of 8 bytes: the synthetic log's 2980 distinct times thrashed
/// 1024.
struct BucketMemo(Box<[(u32, u32)]>);

const MEMO_SLOTS: usize = 4096;

impl Default for BucketMemo {
    fn default() -> Self {
        // Slot s starts with s µs, which maps to slot s: every slot holds a
        // true pair from the start, no "empty" mark needed.
        BucketMemo(
            (0..MEMO_SLOTS as u32)
                .map(|s| (s, Self::compute(u64::from(s) * 1000)))
                .collect(),
        )
    }
}

impl BucketMemo {
    fn compute(ns: u64) -> u32 {
        LogBuckets::index(ns) as u32 | (histogram_bucket(ns) as u32) << 16
    }
    /// (the 5 % bucket, the histogram bucket) of `ns`.
    fn get(&mut self, ns: u64) -> (usize, usize) {
        let us = ns / 1000;
        let v = match u32::try_from(us) {
            Ok(k) if us * 1000 == ns => {
                let slot = k as usize & (MEMO_SLOTS - 1);
                let (key, v) = self.0[slot];
                if key == k {
                    v
                } else {
                    let v = Self::compute(ns);
                    self.0[slot] = (k, v);
                    v
                }
            }
            _ => Self::compute(ns),
        };
        ((v & 0xffff) as usize, (v >> 16) as usize)
    }
}

/// Counts of distinct values, capped at [`MAX_DISTINCT`]. A short list
/// searched linearly: a class has one or a few databases, users and hosts,
/// and comparing bytes costs less than hashing or UTF-8 checks per entry.
#[derive(Debug, Clone, Default)]
pub struct Counter(pub Vec<(Box<[u8]>, u64)>);

impl Counter {
    fn add_bytes(&mut self, v: &[u8], n: u64) {
        if let Some(e) = self.0.iter_mut().find(|(k, _)| &**k == v) {
            e.1 += n;
        } else if self.0.len() < MAX_DISTINCT {
            self.0.push((v.into(), n));
        } else {
            self.add_bytes(OTHERS.as_bytes(), n);
        }
    }
    fn merge(&mut self, o: Counter) {
        for (k, n) in o.0 {
            self.add_bytes(&k, n);
        }
    }
    /// Names (lossy UTF-8) → counts.
    pub fn to_map(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (k, n) in &self.0 {
            *m.entry(String::from_utf8_lossy(k).into_owned())
                .or_insert(0) += n;
        }
        m
    }
}

/// The worst (longest) statement of a class.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub query: String,
    pub query_time: u64,
    pub ts: Option<i64>,
    pub db: Option<String>,
}

/// One fingerprint's statistics.
#[derive(Debug, Clone, Default)]
pub struct Class {
    pub count: u64,
    pub query_time: Stat,
    pub lock_time: Stat,
    pub rows_sent: Stat,
    pub rows_examined: Stat,
    pub rows_affected: Stat,
    pub buckets: LogBuckets,
    pub histogram: [u64; 8],
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    pub dbs: Counter,
    pub users: Counter,
    pub hosts: Counter,
    pub tmp_table_on_disk: u64,
    pub full_scan: u64,
    pub filesort: u64,
    pub sample: Sample,
}

fn opt_min(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

fn opt_max(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) | (None, x) => x,
    }
}

impl Class {
    /// `buckets`: `qt`'s (5 % bucket, histogram bucket), from [`BucketMemo`].
    fn add(&mut self, e: &Entry<'_>, qt: u64, db: Option<&[u8]>, buckets: (usize, usize)) {
        self.count += 1;
        self.query_time.add(qt);
        self.lock_time.add(e.lock_time);
        self.rows_sent.add(e.rows_sent);
        self.rows_examined.add(e.rows_examined);
        if let Some(r) = e.rows_affected {
            self.rows_affected.add(r);
        }
        self.buckets.add_at(buckets.0);
        self.histogram[buckets.1] += 1;
        self.first_ts = opt_min(self.first_ts, e.ts);
        self.last_ts = opt_max(self.last_ts, e.ts);
        if let Some(d) = db {
            self.dbs.add_bytes(d, 1);
        }
        if let Some(u) = e.user {
            self.users.add_bytes(u, 1);
        }
        if let Some(h) = e.host {
            self.hosts.add_bytes(h, 1);
        }
        self.tmp_table_on_disk += u64::from(e.tmp_table_on_disk);
        self.full_scan += u64::from(e.full_scan);
        self.filesort += u64::from(e.filesort || e.filesort_on_disk);
        if self.count == 1 || qt > self.sample.query_time {
            self.sample = Sample {
                query: String::from_utf8_lossy(e.query).into_owned(),
                query_time: qt,
                ts: e.ts,
                db: db.map(|d| String::from_utf8_lossy(d).into_owned()),
            };
        }
    }

    fn merge(&mut self, o: Class) {
        // Ties keep the earlier range's sample: the same as one thread.
        let better = self.count == 0 || o.sample.query_time > self.sample.query_time;
        self.count += o.count;
        self.query_time.merge(&o.query_time);
        self.lock_time.merge(&o.lock_time);
        self.rows_sent.merge(&o.rows_sent);
        self.rows_examined.merge(&o.rows_examined);
        self.rows_affected.merge(&o.rows_affected);
        self.buckets.merge(&o.buckets);
        for (a, b) in self.histogram.iter_mut().zip(o.histogram) {
            *a += b;
        }
        self.first_ts = opt_min(self.first_ts, o.first_ts);
        self.last_ts = opt_max(self.last_ts, o.last_ts);
        self.dbs.merge(o.dbs);
        self.users.merge(o.users);
        self.hosts.merge(o.hosts);
        self.tmp_table_on_disk += o.tmp_table_on_disk;
        self.full_scan += o.full_scan;
        self.filesort += o.filesort;
        if better {
            self.sample = o.sample;
        }
    }
}

fn histogram_bucket(ns: u64) -> usize {
    let mut b = 0;
    let mut edge = 10_000; // 10 µs
    while b < 7 && ns >= edge {
        b += 1;
        edge *= 10;
    }
    b
}

/// Which entries count (`--since`, `--until`, `--filter`).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub db: Option<String>,
    pub user: Option<String>,
    pub host: Option<String>,
}

impl Filter {
    fn keeps(&self, e: &Entry<'_>, db: Option<&[u8]>) -> bool {
        if self.since.is_some() || self.until.is_some() {
            let Some(ts) = e.ts else { return false };
            if self.since.is_some_and(|s| ts < s) || self.until.is_some_and(|u| ts >= u) {
                return false;
            }
        }
        let eq = |want: &Option<String>, got: Option<&[u8]>| match want {
            None => true,
            Some(w) => got == Some(w.as_bytes()),
        };
        eq(&self.db, db) && eq(&self.user, e.user) && eq(&self.host, e.host)
    }
}

/// Totals over every entry read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    pub entries: u64,
    pub malformed: u64,
    pub filtered_out: u64,
    pub query_time: u64,
    pub lock_time: u64,
    pub rows_sent: u64,
    pub rows_examined: u64,
    /// Entries with query-plan attributes (see [`Entry::plan`]).
    pub with_plan: u64,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
}

/// The shape cache's slots: (shape key, class index).
type ShapeSlots = Vec<Option<(Box<[u8]>, usize)>>;

/// The class index of a statement: from the shape cache, or by
/// fingerprinting it (fields passed apart so the inherited database can
/// stay borrowed meanwhile).
fn class_of(
    q: &[u8],
    fp: &mut Fingerprinter,
    shape: &mut Vec<u8>,
    shapes: &mut ShapeSlots,
    index: &mut FxHashMap<Box<[u8]>, usize>,
    classes: &mut Vec<(Box<[u8]>, Class)>,
) -> usize {
    use std::hash::BuildHasher;
    let slot = if super::fingerprint::shape_key(q, shape) {
        if shapes.is_empty() {
            shapes.resize(SHAPE_SLOTS, None);
        }
        let slot = rustc_hash::FxBuildHasher.hash_one(&shape[..]) as usize % SHAPE_SLOTS;
        if let Some((k, i)) = &shapes[slot] {
            if **k == shape[..] {
                return *i;
            }
        }
        Some(slot)
    } else {
        None
    };
    let f = fp.fingerprint(q);
    let i = match index.get(f) {
        Some(&i) => i,
        None => {
            let key: Box<[u8]> = f.into();
            index.insert(key.clone(), classes.len());
            classes.push((key, Class::default()));
            classes.len() - 1
        }
    };
    if let Some(slot) = slot {
        shapes[slot] = Some((shape[..].into(), i));
    }
    i
}

/// Slots of the shape cache ([`super::fingerprint::shape_key`]): bounded,
/// so a log of all-different statements costs at most this many keys.
const SHAPE_SLOTS: usize = 4096;

/// Classes by fingerprint, plus the state entries inherit from the ones
/// before them (pt's `--inherit-attributes db,ts`).
#[derive(Default)]
pub struct Aggregator {
    fp: Fingerprinter,
    shape: Vec<u8>,
    /// Direct-mapped: slot = hash of the shape key; (key, class index).
    shapes: ShapeSlots,
    index: FxHashMap<Box<[u8]>, usize>,
    pub classes: Vec<(Box<[u8]>, Class)>,
    buckets: BucketMemo,
    pub totals: Totals,
    filter: Filter,
    /// The database of the last entry that named one (`use`), inherited.
    pub last_db: Option<Vec<u8>>,
    last_ts: Option<i64>,
    /// Records longer than this are not digested (see [`Self::oversized`]).
    max_entry: usize,
    /// The size of the first record longer than the limit, if any: the
    /// reader then refuses the log (a statement that long is not what a
    /// slow log holds, and fingerprinting it would cost its size again).
    pub oversized: Option<usize>,
}

impl Aggregator {
    pub fn new(filter: Filter) -> Self {
        Aggregator {
            filter,
            max_entry: usize::MAX,
            ..Default::default()
        }
    }

    /// Records longer than `bytes` are not digested; [`Self::oversized`]
    /// says the first one's size.
    pub fn with_max_entry(mut self, bytes: usize) -> Self {
        self.max_entry = bytes;
        self
    }

    /// Add everything in `region` (entry-aligned bytes; `at_eof`: it ends
    /// the input).
    pub fn region(&mut self, region: &[u8], at_eof: bool) {
        super::parse::for_each(region, at_eof, |p| self.parsed(p));
    }

    pub fn parsed(&mut self, p: Parsed<'_>) {
        let size = match &p {
            Parsed::Entry(e) => e.size,
            Parsed::Malformed { size } => *size,
        };
        if size > self.max_entry {
            self.oversized.get_or_insert(size);
            return;
        }
        let mut e = match p {
            Parsed::Entry(e) => e,
            Parsed::Malformed { .. } => {
                self.totals.malformed += 1;
                return;
            }
        };
        if let Some(d) = e.db {
            if self.last_db.as_deref() != Some(d) {
                self.last_db = Some(d.to_vec());
            }
        }
        match e.ts {
            Some(t) => self.last_ts = Some(t),
            None => e.ts = self.last_ts,
        }
        let db: Option<&[u8]> = e.db.or(e.schema).or(self.last_db.as_deref());
        let qt = e.query_time.unwrap_or(0);
        if !self.filter.keeps(&e, db) {
            self.totals.filtered_out += 1;
            return;
        }
        let t = &mut self.totals;
        t.entries += 1;
        t.query_time = t.query_time.saturating_add(qt);
        t.lock_time = t.lock_time.saturating_add(e.lock_time);
        t.rows_sent = t.rows_sent.saturating_add(e.rows_sent);
        t.rows_examined = t.rows_examined.saturating_add(e.rows_examined);
        t.with_plan += u64::from(e.plan);
        t.first_ts = opt_min(t.first_ts, e.ts);
        t.last_ts = opt_max(t.last_ts, e.ts);
        let i = class_of(
            e.query,
            &mut self.fp,
            &mut self.shape,
            &mut self.shapes,
            &mut self.index,
            &mut self.classes,
        );
        let buckets = self.buckets.get(qt);
        self.classes[i].1.add(&e, qt, db, buckets);
    }

    /// Join another thread's aggregate (of a later byte range) into this one.
    pub fn merge(&mut self, o: Aggregator) {
        let t = &mut self.totals;
        t.entries += o.totals.entries;
        t.malformed += o.totals.malformed;
        t.filtered_out += o.totals.filtered_out;
        t.query_time = t.query_time.saturating_add(o.totals.query_time);
        t.lock_time = t.lock_time.saturating_add(o.totals.lock_time);
        t.rows_sent = t.rows_sent.saturating_add(o.totals.rows_sent);
        t.rows_examined = t.rows_examined.saturating_add(o.totals.rows_examined);
        t.with_plan += o.totals.with_plan;
        t.first_ts = opt_min(t.first_ts, o.totals.first_ts);
        t.last_ts = opt_max(t.last_ts, o.totals.last_ts);
        if self.oversized.is_none() {
            self.oversized = o.oversized;
        }
        for (k, c) in o.classes {
            match self.index.get(&k) {
                Some(&i) => self.classes[i].1.merge(c),
                None => {
                    self.index.insert(k.clone(), self.classes.len());
                    self.classes.push((k, c));
                }
            }
        }
        if o.last_db.is_some() {
            self.last_db = o.last_db;
        }
        if o.last_ts.is_some() {
            self.last_ts = o.last_ts;
        }
    }

    /// Seed the inherited state (a thread starting mid-file).
    pub fn inherit(&mut self, db: Option<Vec<u8>>, ts: Option<i64>) {
        self.last_db = db;
        self.last_ts = ts;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_edges() {
        assert_eq!(histogram_bucket(500), 0);
        assert_eq!(histogram_bucket(10_000), 1);
        assert_eq!(histogram_bucket(500_000_000), 5);
        assert_eq!(histogram_bucket(1_000_000_000), 6);
        assert_eq!(histogram_bucket(100_000_000_000), 7);
    }

    #[test]
    fn bucket_memo_gives_the_computed_buckets() {
        let mut m = BucketMemo::default();
        let want = |ns: u64| (LogBuckets::index(ns), histogram_bucket(ns));
        // Whole microseconds, values sharing a slot (4096 µs apart) one
        // after the other, times that are not whole microseconds, past
        // 2³² µs, the ends of u64; twice, so the second pass reads what
        // the first stored.
        let mut vals: Vec<u64> = (0..9000).map(|us| us * 1000).collect();
        vals.extend((0..200).flat_map(|k| {
            [
                k * 4_096_000,
                k * 4_096_000 + 3,
                1_000_000_000 + k * 4_096_000,
            ]
        }));
        vals.extend([(1 << 32) * 1000, ((1 << 32) + 4096) * 1000, 4_096_000_000]);
        vals.extend([1, 7, 999, 1001, u64::MAX, u64::MAX - 8192, 10_000, 9_999]);
        for _ in 0..2 {
            for &v in &vals {
                assert_eq!(m.get(v), want(v), "{v}");
            }
        }
    }

    #[test]
    fn p95_is_within_a_bucket() {
        let mut b = LogBuckets::default();
        for i in 1..=100 {
            b.add(i * 1_000_000);
        }
        let p = b.percentile(0.95);
        assert!((90_000_000..=95_000_000).contains(&p), "{p}");
    }
}
