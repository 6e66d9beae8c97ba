//! Reading a slow log: a plain file is mapped and cut into one byte range
//! per thread; gzip (detected by its magic bytes, whatever the name) and
//! stdin are streamed through one thread with a constant-size buffer.

use super::aggregate::{Aggregator, Filter};
use super::parse;
use crate::error::Fix;
use anyhow::Result;
use memchr::memmem;
use std::io::Read;
use std::path::Path;

/// What was read, and how.
pub struct Digested {
    pub agg: Aggregator,
    pub bytes: u64,
    pub threads: usize,
    pub gzip: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Streaming buffer: bytes read per step (a statement longer than this
/// grows the buffer; memory stays proportional to the longest entry).
const BLOCK: usize = 8 << 20;
/// How far back a thread starting mid-file looks for the `use db;` and
/// `SET timestamp` its first entries inherit.
const INHERIT_WINDOW: usize = 4 << 20;

/// Read `path` (`-` = stdin) with up to `threads` threads.
pub fn read(path: &Path, threads: usize, filter: &Filter) -> Result<Digested> {
    if path.as_os_str() == "-" {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        return stream(&mut lock, filter);
    }
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| {
        Fix::new(
            format!("cannot open slow log {shown}: {e}"),
            "give the path of a slow query log (SELECT @@slow_query_log_file), or - for stdin",
        )
    })?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(Fix::new(
            format!("{shown} is a directory, not a slow log"),
            "give the log file itself (SELECT @@slow_query_log_file), or - for stdin",
        )
        .into());
    }
    if !meta.is_file() {
        // A FIFO or a device: read it as a stream.
        let mut f = file;
        return stream(&mut f, filter);
    }
    if meta.len() == 0 {
        return Ok(Digested {
            agg: Aggregator::new(filter.clone()),
            bytes: 0,
            threads: 1,
            gzip: false,
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
        let f = std::fs::File::open(path)?;
        let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f));
        let mut r = stream(&mut gz, filter)?;
        r.gzip = true;
        return Ok(r);
    }
    let _ = map.advise(memmap2::Advice::Sequential);
    let (agg, used) = parallel(&map, threads, filter);
    Ok(Digested {
        agg,
        bytes: map.len() as u64,
        threads: used,
        gzip: false,
    })
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
fn parallel(buf: &[u8], threads: usize, filter: &Filter) -> (Aggregator, usize) {
    let cuts = ranges(buf, threads);
    let used = cuts.len() - 1;
    let parts: Vec<Aggregator> = std::thread::scope(|s| {
        let handles: Vec<_> = cuts
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0], w[1]);
                let filter = filter.clone();
                s.spawn(move || {
                    let mut agg = Aggregator::new(filter);
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

/// Single-threaded streaming: read blocks, parse every complete entry,
/// carry the unfinished tail into the next block.
fn stream(r: &mut dyn Read, filter: &Filter) -> Result<Digested> {
    let mut agg = Aggregator::new(filter.clone());
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK * 2);
    let mut bytes = 0u64;
    let mut gzip_checked = false;
    loop {
        let old = buf.len();
        buf.resize(old + BLOCK, 0);
        let n = loop {
            match r.read(&mut buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Fix::new(
                    format!("cannot read the slow log: {e}"),
                    "check the file is complete (a gzip file cut short cannot be read to its end)",
                )
                .into()),
            }
        };
        buf.truncate(old + n);
        bytes += n as u64;
        if !gzip_checked && buf.len() >= 2 {
            gzip_checked = true;
            if buf.starts_with(&GZIP_MAGIC) {
                // stdin holding gzip: decode the rest of the stream too.
                let head = std::mem::take(&mut buf);
                let chained = std::io::Cursor::new(head).chain(r);
                let mut gz = flate2::read::MultiGzDecoder::new(chained);
                let mut inner = stream(&mut gz, filter)?;
                inner.gzip = true;
                return Ok(inner);
            }
        }
        if n == 0 {
            agg.region(&buf, true);
            break;
        }
        if let Some(cut) = parse::last_boundary(&buf) {
            agg.region(&buf[..cut], false);
            buf.drain(..cut);
        }
    }
    Ok(Digested {
        agg,
        bytes,
        threads: 1,
        gzip: false,
    })
}
