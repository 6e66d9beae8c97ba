//! Reading a slow log: a plain file is mapped and cut into one byte range
//! per thread; gzip (detected by its magic bytes, whatever the name) and
//! stdin are streamed through one thread in bounded memory: a constant-size
//! block plus the unfinished entry, which may grow to [`Limit::bytes`]
//! (`--max-entry-size`) and no further. A record longer than that stops the
//! digest with one line naming the limit and the flag that raises it,
//! whether the log was mapped or streamed. Only a regular file is opened
//! (a FIFO or device is refused without blocking: [`crate::input`]); a
//! stream is read from stdin (`-`). A gzip stream cut short (or corrupt)
//! gives the digest of what came before the damage, with a warning saying
//! where it stopped.

use super::aggregate::{Aggregator, Filter};
use super::parse;
use crate::error::Fix;
use anyhow::Result;
use memchr::memmem;
use std::io::Read;
use std::path::Path;

/// What a stream hands its entry-aligned regions to: the aggregator
/// (`innotune slowlog`), or a replay's dispatcher (`innotune replay`).
pub trait Regions {
    /// Entries in `region` (starts and ends at entry boundaries; `at_eof`:
    /// it ends the input).
    fn region(&mut self, region: &[u8], at_eof: bool);
    /// The size of the first record longer than the limit, if any.
    fn oversized(&self) -> Option<usize>;
}

impl Regions for Aggregator {
    fn region(&mut self, region: &[u8], at_eof: bool) {
        Aggregator::region(self, region, at_eof);
    }
    fn oversized(&self) -> Option<usize> {
        self.oversized
    }
}

/// What a stream read: bytes (decompressed), whether it was gzip, and
/// where a damaged gzip stream stopped.
pub struct Streamed {
    pub bytes: u64,
    pub gzip: bool,
    pub stopped: Option<String>,
}

/// Stream `path` (`-` = stdin; plain or gzip, by its magic bytes) into
/// `sink` in file order, one thread, memory bounded by `limit`: for a
/// reader that needs the entries in order (replay), not in parallel.
pub fn stream_into(path: &Path, limit: Limit, sink: &mut dyn Regions) -> Result<Streamed> {
    let what = if path.as_os_str() == "-" {
        "the slow log on stdin".to_string()
    } else {
        format!("slow log {}", path.display())
    };
    if path.as_os_str() == "-" {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        return stream(&mut lock, sink, limit, &what, None);
    }
    let file = SLOW_LOG.open(path)?;
    // `stream` recognises gzip by its first bytes and decodes the rest.
    let mut r = std::io::BufReader::new(file);
    stream(&mut r, sink, limit, &what, None)
}

/// Stream `r` (plain or gzip) into `sink` in order, as [`stream_into`]
/// does a file; `what` names it in the error lines.
pub fn stream_reader(
    r: &mut dyn Read,
    what: &str,
    limit: Limit,
    sink: &mut dyn Regions,
) -> Result<Streamed> {
    stream(r, sink, limit, what, None)
}

/// What was read, and how.
pub struct Digested {
    pub agg: Aggregator,
    pub bytes: u64,
    pub threads: usize,
    pub gzip: bool,
    /// Where reading stopped before the end (a gzip stream cut short or
    /// corrupt): the digest covers what came before. Also said as a
    /// warning.
    pub stopped: Option<String>,
}

/// The largest record (entry header and statement) read, and the flag
/// that sets it, for the error line.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub bytes: u64,
    /// `--max-entry-size` (slowlog) or `--slowlog-max-entry-size` (check).
    pub flag: &'static str,
}

/// The default [`Limit::bytes`]: far above any statement a slow log holds
/// (the server's `max_allowed_packet` default is 16 MiB or 64 MiB), far
/// below the memory of the hosts innotune runs on.
pub const DEFAULT_MAX_ENTRY: u64 = 64 << 20;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Streaming buffer: bytes read per step.
const BLOCK: usize = 8 << 20;
/// How far back a thread starting mid-file looks for the `use db;` and
/// `SET timestamp` its first entries inherit.
const INHERIT_WINDOW: usize = 4 << 20;

/// The path as opened, for the error lines.
pub const SLOW_LOG: crate::input::Input = crate::input::Input {
    what: "slow log",
    fix: "give the path of a slow query log (SELECT @@slow_query_log_file), or - to read it from stdin (e.g. `innotune slowlog - < FIFO`)",
    max: None,
};

/// The error for a record past the limit; `detail` says which (its size,
/// or where an unfinished one started).
fn too_long(limit: Limit, detail: String, what: &str) -> anyhow::Error {
    Fix::new(
        format!(
            "{what} holds an entry longer than {} {} ({detail})",
            limit.flag,
            crate::units::fmt_size(limit.bytes)
        ),
        format!(
            "raise {} if the log really holds statements that long; else check the file is a slow query log",
            limit.flag
        ),
    )
    .into()
}

/// Read `path` (`-` = stdin) with up to `threads` threads; no record may
/// be longer than `limit`.
pub fn read(path: &Path, threads: usize, filter: &Filter, limit: Limit) -> Result<Digested> {
    let max_entry = usize::try_from(limit.bytes).unwrap_or(usize::MAX);
    let what = if path.as_os_str() == "-" {
        "the slow log on stdin".to_string()
    } else {
        format!("slow log {}", path.display())
    };
    if path.as_os_str() == "-" {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut agg = Aggregator::new(filter.clone()).with_max_entry(max_entry);
        let s = stream(&mut lock, &mut agg, limit, &what, None)?;
        return Ok(Digested::of(agg, s));
    }
    let shown = path.display();
    let file = SLOW_LOG.open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Digested {
            agg: Aggregator::new(filter.clone()),
            bytes: 0,
            threads: 1,
            gzip: false,
            stopped: None,
        });
    }
    // SAFETY: the map is read-only; a log appended to while mapped only
    // grows past the mapped length. A log truncated meanwhile could SIGBUS;
    // logs are rotated by rename, which is harmless.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| {
        Fix::new(
            format!("cannot map {shown}: {e}"),
            "check the file is readable",
        )
    })?;
    if map.starts_with(&GZIP_MAGIC) {
        drop(map);
        // The map never moved the file's offset: this reads from byte 0.
        let counted = Counted::new(std::io::BufReader::new(file));
        let read = counted.read.clone();
        let mut gz = flate2::read::MultiGzDecoder::new(counted);
        let mut agg = Aggregator::new(filter.clone()).with_max_entry(max_entry);
        let mut s = stream(&mut gz, &mut agg, limit, &what, Some((read, Some(len))))?;
        s.gzip = true;
        return Ok(Digested::of(agg, s));
    }
    let _ = map.advise(memmap2::Advice::Sequential);
    let (agg, used) = parallel(&map, threads, filter, max_entry);
    if let Some(n) = agg.oversized {
        return Err(too_long(limit, format!("one of {n} bytes"), &what));
    }
    Ok(Digested {
        agg,
        bytes: map.len() as u64,
        threads: used,
        gzip: false,
        stopped: None,
    })
}

impl Digested {
    fn of(agg: Aggregator, s: Streamed) -> Digested {
        Digested {
            agg,
            bytes: s.bytes,
            threads: 1,
            gzip: s.gzip,
            stopped: s.stopped,
        }
    }
}

/// A reader that counts the bytes read through it (the compressed bytes
/// under a gzip decoder), to say where a damaged stream stopped.
struct Counted<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R> Counted<R> {
    fn new(inner: R) -> Self {
        Counted {
            inner,
            read: Default::default(),
        }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// Entry-aligned cut points: `[0, c1, …, len]`.
pub fn ranges(buf: &[u8], n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut cuts = vec![0];
    for k in 1..n {
        let c = parse::next_boundary(buf, buf.len() * k / n);
        if c > *cuts.last().unwrap_or(&0) && c < buf.len() {
            cuts.push(c);
        }
    }
    cuts.push(buf.len());
    cuts
}

/// The `use db;` and `SET timestamp=` in force at `at`, looked for in the
/// window before it.
fn inherited(buf: &[u8], at: usize) -> (Option<Vec<u8>>, Option<i64>) {
    let window = &buf[at.saturating_sub(INHERIT_WINDOW)..at];
    let db = memmem::rfind(window, b"\nuse ").map(|i| {
        let v = &window[i + 5..];
        let end = v
            .iter()
            .position(|&b| b == b';' || b == b'\n')
            .unwrap_or(v.len());
        v[..end].trim_ascii().to_vec()
    });
    let ts = memmem::rfind(window, b"\nSET timestamp=").and_then(|i| {
        let v = &window[i + 15..];
        let n = v.iter().take_while(|b| b.is_ascii_digit()).count();
        std::str::from_utf8(&v[..n]).ok()?.parse().ok()
    });
    (db, ts)
}

/// One aggregator per range on scoped threads, merged in file order; and
/// how many ranges (threads) there were.
fn parallel(buf: &[u8], threads: usize, filter: &Filter, max_entry: usize) -> (Aggregator, usize) {
    let cuts = ranges(buf, threads);
    let used = cuts.len() - 1;
    let parts: Vec<Aggregator> = std::thread::scope(|s| {
        let handles: Vec<_> = cuts
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0], w[1]);
                let filter = filter.clone();
                s.spawn(move || {
                    let mut agg = Aggregator::new(filter).with_max_entry(max_entry);
                    if a > 0 {
                        let (db, ts) = inherited(buf, a);
                        agg.inherit(db, ts);
                    }
                    agg.region(&buf[a..b], b == buf.len());
                    agg
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut it = parts.into_iter();
    let mut first = it.next().unwrap_or_else(|| Aggregator::new(filter.clone()));
    for p in it {
        first.merge(p);
    }
    (first, used)
}

/// Compressed bytes read so far, and the compressed length when known.
type GzPos = (std::rc::Rc<std::cell::Cell<u64>>, Option<u64>);

/// Single-threaded streaming: read blocks, parse every complete entry,
/// carry the unfinished tail into the next block. Memory: the block plus
/// the tail, which may not grow past `limit`. `gz`: the input is a gzip
/// decoder over a counted reader (a damaged stream then ends the digest
/// with a warning instead of an error).
fn stream(
    r: &mut dyn Read,
    agg: &mut dyn Regions,
    limit: Limit,
    what: &str,
    gz: Option<GzPos>,
) -> Result<Streamed> {
    let max_entry = usize::try_from(limit.bytes).unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK * 2);
    let mut bytes = 0u64;
    let mut gzip_checked = gz.is_some();
    let mut stopped = None;
    loop {
        let old = buf.len();
        buf.resize(old + BLOCK, 0);
        // Fill the block (a pipe gives 64 KiB a read): a block per
        // boundary search, not a search per read.
        let mut n = 0;
        let mut eof = false;
        while n < BLOCK {
            match r.read(&mut buf[old + n..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => match &gz {
                    Some((read, len)) => {
                        let of = len.map_or(String::new(), |l| format!(" of {l}"));
                        let msg = format!(
                            "{what}: the gzip data stops after {} compressed bytes{of} ({e}); the digest covers the {} bytes of log before that point",
                            read.get(),
                            bytes + n as u64
                        );
                        crate::output::warn(&msg);
                        stopped = Some(msg);
                        eof = true;
                        break;
                    }
                    None => {
                        return Err(Fix::new(
                            format!("cannot read {what}: {e}"),
                            "check the file or pipe is readable",
                        )
                        .into())
                    }
                },
            }
        }
        buf.truncate(old + n);
        bytes += n as u64;
        if !gzip_checked && buf.len() >= 2 {
            gzip_checked = true;
            if buf.starts_with(&GZIP_MAGIC) {
                // stdin holding gzip: decode the rest of the stream too.
                let head = std::mem::take(&mut buf);
                let counted = Counted::new(std::io::Cursor::new(head).chain(r));
                let read = counted.read.clone();
                let mut gz = flate2::read::MultiGzDecoder::new(counted);
                let mut inner = stream(&mut gz, agg, limit, what, Some((read, None)))?;
                inner.gzip = true;
                return Ok(inner);
            }
        }
        if eof {
            agg.region(&buf, true);
            break;
        }
        // A boundary in what was just read (or straddling it: a separator
        // and the lookahead past it).
        let from = old.saturating_sub(parse::BOUNDARY_LOOKAHEAD);
        if let Some(cut) = parse::last_boundary(&buf[from..]).map(|c| from + c) {
            agg.region(&buf[..cut], false);
            buf.drain(..cut);
        } else {
            // Blank lines before any entry (only at the start, or after
            // other blank lines: a cut leaves `#` first) are no part of
            // one: whole lines of them are dropped, so a stream of
            // newlines costs no memory.
            let blank = buf
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(buf.len());
            if let Some(nl) = memchr::memrchr(b'\n', &buf[..blank]) {
                buf.drain(..=nl);
            }
        }
        if buf.len() > max_entry {
            let at = bytes - buf.len() as u64;
            let detail = format!(
                "the one starting at byte {at} is still unfinished {} bytes later",
                buf.len()
            );
            return Err(too_long(limit, detail, what));
        }
        if agg.oversized().is_some() {
            break;
        }
    }
    if let Some(n) = agg.oversized() {
        // A region cut at a boundary held a record past the limit (at most
        // the limit plus one block long).
        return Err(too_long(limit, format!("one of {n} bytes"), what));
    }
    Ok(Streamed {
        bytes,
        gzip: false,
        stopped,
    })
}
