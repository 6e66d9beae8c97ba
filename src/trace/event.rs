//! One block-layer event, and the two text formats it is read from.
//!
//! - tracefs `trace` / `trace_pipe` lines (`trace_print_context` +
//!   the event's `TP_printk`), of any kernel: the pid column's width, the
//!   irq-info column, a `record-tgid` column and the ioprio fields that
//!   newer kernels add to `block_rq_*` vary, so a line is never parsed by
//!   column. The event is found by its `: block_<name>: ` marker (a comm
//!   may hold spaces or dashes, never that), the timestamp is the word
//!   before it, and the payload is read by its landmarks (`dev`, `rwbs`,
//!   then `SECTOR + NR` around the `+`).
//! - blkparse's default output (`%D %2c %8s %5T.%9t %5p %2a %3d …`).
//!
//! Why a hand-written scanner rather than a regex: the issue asks for at
//! least a million events per second from a saved trace, and the formats
//! are fixed enough that splitting on spaces is both faster and easier to
//! keep tolerant (unknown trailing fields are skipped, not rejected).

use serde::Serialize;

/// A device as the kernel numbers it (major, minor).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
pub struct Dev {
    pub major: u32,
    pub minor: u32,
}

impl Dev {
    /// `8,0` (blkparse and the tracepoints print it this way).
    pub fn parse(s: &str) -> Option<Dev> {
        let (a, b) = s.split_once(',')?;
        Some(Dev {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }

    /// The kernel-internal `dev_t` the tracepoints' `dev` field holds
    /// (`MKDEV`: major << 20 | minor), which an event filter compares.
    pub fn kernel_dev_t(&self) -> u64 {
        ((self.major as u64) << 20) | self.minor as u64
    }
}

impl std::fmt::Display for Dev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.major, self.minor)
    }
}

/// btt's action letters, as the tracepoints name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Q, `block_bio_queue`.
    Queue,
    /// G, `block_getrq`.
    GetRq,
    /// I, `block_rq_insert`.
    Insert,
    /// D, `block_rq_issue`.
    Issue,
    /// C, `block_rq_complete`.
    Complete,
    /// M / F, `block_bio_backmerge` / `block_bio_frontmerge` / `block_rq_merge`.
    Merge,
}

/// The operation in an RWBS string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
    /// Discard, secure erase, zone operations, `N`.
    Other,
}

/// A parsed RWBS string (`blk_fill_rwbs`): `[F]` preflush, the operation,
/// then `F` FUA, `A` readahead, `S` sync, `M` meta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rwbs {
    pub op: Op,
    pub preflush: bool,
    pub fua: bool,
    pub sync: bool,
}

impl Rwbs {
    pub fn parse(s: &str) -> Rwbs {
        let b = s.as_bytes();
        let is_op = |c: u8| matches!(c, b'R' | b'W' | b'D' | b'F' | b'N' | b'Z');
        // A leading F is the preflush flag when an operation follows it
        // (`FWS`, `FF`); alone (`F`) it is the flush operation.
        let (preflush, rest) = if b.len() >= 2 && b[0] == b'F' && is_op(b[1]) {
            (true, &b[1..])
        } else {
            (false, b)
        };
        let op = match rest.first() {
            Some(b'R') => Op::Read,
            Some(b'W') => Op::Write,
            Some(b'F') => Op::Flush,
            _ => Op::Other,
        };
        let (mut fua, mut sync) = (false, false);
        for &c in rest.iter().skip(1) {
            match c {
                b'F' => fua = true,
                b'S' => sync = true,
                _ => {}
            }
        }
        Rwbs {
            op,
            preflush,
            fua,
            sync,
        }
    }
}

/// One event, as btt uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds on the trace clock (tracefs prints microseconds).
    pub time_ns: u64,
    pub dev: Dev,
    pub action: Action,
    pub rwbs: Rwbs,
    pub sector: u64,
    /// Sectors (512 bytes) of this event: for a completion, of this part.
    pub nr_sectors: u32,
}

impl Event {
    /// One past the last sector (saturating: a decoded record may hold
    /// any sector; the text parsers refuse a range past 2⁶⁴).
    pub fn end(&self) -> u64 {
        self.sector.saturating_add(self.nr_sectors as u64)
    }

    /// Does `[sector, sector + nr)` fit below 2⁶⁴? A flush's completion
    /// prints sector 2⁶⁴−1 with no data, which does.
    pub fn range_fits(&self) -> bool {
        self.nr_sectors == 0 || self.sector.checked_add(self.nr_sectors as u64).is_some()
    }
}

/// What a line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    Event(Event),
    /// A block event btt does not use (plug, unplug, split, remap,
    /// requeue), a header or comment, or a blkparse summary line.
    Ignored,
    /// Not a line of either format.
    Unparsed,
}

/// Parse one line of either format.
pub fn parse_line(line: &str) -> Line {
    let line = line.trim_end_matches(['\n', '\r']);
    if let Some(pos) = line.find(": block_") {
        return parse_tracefs(line, pos);
    }
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return Line::Ignored;
    }
    parse_blkparse(t)
}

/// The CPU and time of a tracefs `block_*` line (`… [003] d.h1. 1.5: block_…`):
/// the time is the word before the event's name, the CPU the last
/// `[N]` word before it (a comm may hold brackets, never after the CPU).
pub fn tracefs_cpu_and_time(line: &str) -> Option<(u32, u64)> {
    let pos = line.find(": block_")?;
    let mut words = line[..pos].rsplit(' ').filter(|w| !w.is_empty());
    let time = parse_time(words.next()?.trim_end_matches(':'))?;
    let cpu = words.find_map(|w| w.strip_prefix('[')?.strip_suffix(']')?.parse::<u32>().ok())?;
    Some((cpu, time))
}

/// Seconds with 6 (tracefs) or 9 (blkparse) decimals → nanoseconds.
fn parse_time(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || secs.is_empty() {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    // A time past 2⁶⁴ ns (584 years) is not a trace clock's: unparsed.
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// The action a block tracepoint stands for (btt's letters): the text
/// parser and the raw decoder ([`super::raw`]) name events the same way.
pub fn action_of(event: &str) -> Option<Action> {
    Some(match event {
        "block_bio_queue" => Action::Queue,
        "block_getrq" => Action::GetRq,
        "block_rq_insert" => Action::Insert,
        "block_rq_issue" => Action::Issue,
        "block_rq_complete" => Action::Complete,
        "block_bio_backmerge" | "block_bio_frontmerge" | "block_rq_merge" => Action::Merge,
        _ => return None,
    })
}

fn parse_tracefs(line: &str, pos: usize) -> Line {
    let after = &line[pos + 2..];
    let Some((name, payload)) = after.split_once(": ") else {
        return Line::Unparsed;
    };
    let Some(action) = action_of(name) else {
        return Line::Ignored;
    };
    let Some(time_ns) = line[..pos]
        .rsplit(' ')
        .next()
        .and_then(|w| parse_time(w.trim_end_matches(':')))
    else {
        return Line::Unparsed;
    };
    match parse_payload(payload) {
        Some((dev, rwbs, sector, nr)) => Line::Event(Event {
            time_ns,
            dev,
            action,
            rwbs,
            sector,
            nr_sectors: nr,
        }),
        None => Line::Unparsed,
    }
}

/// `DEV RWBS [BYTES (CMD)] SECTOR + NR …` (every block_bio_* and
/// block_rq_* format): the sector and count are the words around the
/// first `+`. A flush without data prints no `+` in blkparse (`0 [0]`).
fn parse_payload(p: &str) -> Option<(Dev, Rwbs, u64, u32)> {
    let mut words = p.split(' ').filter(|w| !w.is_empty());
    let dev = Dev::parse(words.next()?)?;
    let rwbs = Rwbs::parse(words.next()?);
    let mut prev: Option<&str> = None;
    for w in words.by_ref() {
        if w == "+" {
            let sector = parse_sector(prev?)?;
            let nr: u32 = words.next()?.parse().ok()?;
            // A range past the last sector is no I/O: unparsed, counted.
            if nr > 0 && sector.checked_add(nr as u64).is_none() {
                return None;
            }
            return Some((dev, rwbs, sector, nr));
        }
        prev = Some(w);
    }
    None
}

/// A sector, where a completion of a flush prints `(sector_t)-1`
/// (18446744073709551615) and blkparse may print `-1`.
fn parse_sector(s: &str) -> Option<u64> {
    if s == "-1" {
        return Some(u64::MAX);
    }
    s.parse().ok()
}

/// blkparse: `8,0  3  1  0.000000000  697  G  W 223490 + 8 [kjournald]`.
fn parse_blkparse(t: &str) -> Line {
    let mut w = t.split(' ').filter(|w| !w.is_empty());
    let Some(dev) = w.next().and_then(Dev::parse) else {
        return Line::Unparsed;
    };
    // cpu, sequence, time, pid, action
    let (Some(_cpu), Some(_seq), Some(time), Some(_pid), Some(act)) =
        (w.next(), w.next(), w.next(), w.next(), w.next())
    else {
        return Line::Unparsed;
    };
    let Some(time_ns) = parse_time(time) else {
        return Line::Unparsed;
    };
    let action = match act {
        "Q" => Action::Queue,
        "G" => Action::GetRq,
        "I" => Action::Insert,
        "D" => Action::Issue,
        "C" => Action::Complete,
        "M" | "F" => Action::Merge,
        _ => return Line::Ignored,
    };
    let Some(rwbs) = w.next() else {
        return Line::Unparsed;
    };
    let rwbs = Rwbs::parse(rwbs);
    let rest: Vec<&str> = w.take(3).collect();
    let (sector, nr) = match rest.as_slice() {
        [s, "+", n, ..] => match (parse_sector(s), n.parse::<u32>()) {
            (Some(s), Ok(n)) if n == 0 || s.checked_add(n as u64).is_some() => (s, n),
            _ => return Line::Unparsed,
        },
        // A zero-length request (a flush): `C FWS 0 [0]`.
        [s, ..] => match parse_sector(s) {
            Some(s) => (s, 0),
            None => return Line::Ignored,
        },
        _ => return Line::Ignored,
    };
    Line::Event(Event {
        time_ns,
        dev,
        action,
        rwbs,
        sector,
        nr_sectors: nr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(l: &str) -> Event {
        match parse_line(l) {
            Line::Event(e) => e,
            other => panic!("{l:?} → {other:?}"),
        }
    }

    #[test]
    fn tracefs_lines_of_several_kernels() {
        // 6.11+ with ioprio, 5-column irq-info, 7-wide pid.
        let e = ev("             fio-4242    [003] ..... 1234.567890: block_rq_issue: 259,0 WS 4096 () 2048 + 8 none,0,0 [fio]");
        assert_eq!(e.action, Action::Issue);
        assert_eq!(
            e.dev,
            Dev {
                major: 259,
                minor: 0
            }
        );
        assert_eq!((e.sector, e.nr_sectors), (2048, 8));
        assert_eq!(e.time_ns, 1_234_567_890_000);
        assert!(e.rwbs.sync && e.rwbs.op == Op::Write);
        // Complete with ioprio and an errno.
        let e = ev("          <idle>-0       [003] d.h1. 1234.567990: block_rq_complete: 259,0 WS () 2048 + 8 none,0,0 [0]");
        assert_eq!((e.action, e.sector), (Action::Complete, 2048));
        // 4.x: 5-wide pid, 4-column irq-info, no ioprio, record-tgid column.
        let e = ev("  kworker/u16:2-123   (  123) [001] d..1  5.000001: block_rq_insert: 8,0 W 0 () 1000 + 16 [kworker/u16:2]");
        assert_eq!(
            (e.action, e.sector, e.nr_sectors),
            (Action::Insert, 1000, 16)
        );
        let e = ev(
            "   jbd2/sda1-8-201   [000] ....   17.5: block_bio_queue: 8,0 WS 88 + 8 [jbd2/sda1-8]",
        );
        assert_eq!(e.time_ns, 17_500_000_000);
        // A comm with spaces and a colon.
        let e = ev("  my prog: x-77      [000] .... 3.000002: block_bio_backmerge: 8,16 R 8 + 8 [my prog: x]");
        assert_eq!((e.action, e.dev.minor), (Action::Merge, 16));
        // A flush's completion prints sector (sector_t)-1.
        let e = ev("     ksoftirqd/1-22      [001] ..s..   284.441831: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]");
        assert_eq!((e.sector, e.rwbs.op), (u64::MAX, Op::Flush));
        assert_eq!(
            parse_line("   fio-1 [000] ..... 1.000000: block_plug: [fio]"),
            Line::Ignored
        );
        assert_eq!(parse_line("# tracer: nop"), Line::Ignored);
        assert_eq!(
            parse_line("   fio-1 [000] ..... x: block_rq_issue: 8,0 R 0 () 8 + 8 [fio]"),
            Line::Unparsed
        );
    }

    #[test]
    fn cpu_and_time_of_tracefs_lines() {
        assert_eq!(
            tracefs_cpu_and_time("  fio [1]-4242    [003] ..... 1234.567890: block_rq_issue: 259,0 WS 4096 () 2048 + 8 none,0,0 [fio]"),
            Some((3, 1_234_567_890_000))
        );
        assert_eq!(
            tracefs_cpu_and_time("  kworker/u16:2-123   (  123) [011] d..1  5.000001: block_rq_insert: 8,0 W 0 () 1000 + 16 [kworker/u16:2]"),
            Some((11, 5_000_001_000))
        );
        assert_eq!(tracefs_cpu_and_time("# tracer: nop"), None);
    }

    #[test]
    fn blkparse_default_lines() {
        let e = ev("  8,0    3        1     0.000000000   697  G   W 223490 + 8 [kjournald]");
        assert_eq!(e.action, Action::GetRq);
        assert_eq!((e.sector, e.nr_sectors, e.time_ns), (223490, 8, 0));
        let e = ev("  8,0    3        9     0.000123456     0  C  WS 223490 + 8 [0]");
        assert_eq!((e.action, e.time_ns), (Action::Complete, 123_456));
        let e = ev("  8,0    1       12     1.500000000   697  C FWS 0 [0]");
        assert_eq!((e.nr_sectors, e.rwbs.preflush), (0, true));
        assert_eq!(
            parse_line("  8,0    3        2     0.000001000   697  P   N [kjournald]"),
            Line::Ignored
        );
        assert_eq!(parse_line("CPU0 (8,0):"), Line::Unparsed);
        assert_eq!(
            parse_line(" Reads Queued:           0,        0KiB"),
            Line::Unparsed
        );
    }

    #[test]
    fn rwbs_flags() {
        let r = Rwbs::parse("FWS");
        assert!(r.preflush && r.sync && r.op == Op::Write && !r.fua);
        let r = Rwbs::parse("WFS");
        assert!(r.fua && !r.preflush);
        assert_eq!(Rwbs::parse("FF").op, Op::Flush);
        assert_eq!(Rwbs::parse("F").op, Op::Flush);
        assert_eq!(Rwbs::parse("RA").op, Op::Read);
        assert_eq!(Rwbs::parse("DE").op, Op::Other);
        assert_eq!(Rwbs::parse("N").op, Op::Other);
    }
}
