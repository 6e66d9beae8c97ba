//! Bytes of trace text in (a file, or trace_pipe as it is read), events
//! out to the [`Analyzer`], with a count of what each line was.

use super::analysis::Analyzer;
use super::event::{parse_line, Line};
use serde::Serialize;
use std::io::Read;

/// What the lines of the input were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Lines {
    pub total: u64,
    /// Block events btt uses (Q, G, I, M, D, C).
    pub events: u64,
    /// Headers, other block events (plug, unplug, split, …), summaries.
    pub ignored: u64,
    /// Lines of neither format.
    pub unparsed: u64,
    /// Events the kernel lost because the buffer was full
    /// (trace_pipe's `CPU:N [LOST M EVENTS]` lines; in a live capture the
    /// larger of what the pages' headers say and `overrun + dropped`).
    pub lost_events: u64,
    /// Live capture: events the kernel overwrote before they were read
    /// (`per_cpu/cpuN/stats` `overrun`, summed over the CPUs); 0 for a file.
    /// Absent in results written before it was counted: read as 0.
    #[serde(default)]
    pub overrun: u64,
    /// Live capture: events the kernel refused because the buffer was
    /// full (`dropped events`, summed); 0 for a file. Absent before: 0.
    #[serde(default)]
    pub dropped: u64,
    /// Lines in blkparse's format (the rest are tracefs's).
    pub blkparse: u64,
}

/// Splits bytes into lines, keeping a partial last line for the next call.
#[derive(Debug, Default)]
pub struct Feeder {
    pub analyzer: Analyzer,
    pub lines: Lines,
    partial: Vec<u8>,
}

impl Feeder {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if !self.partial.is_empty() {
            match bytes.iter().position(|&b| b == b'\n') {
                None => {
                    self.partial.extend_from_slice(bytes);
                    return;
                }
                Some(nl) => {
                    let mut line = std::mem::take(&mut self.partial);
                    line.extend_from_slice(&bytes[..nl]);
                    self.line(&line);
                    bytes = &bytes[nl + 1..];
                }
            }
        }
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                self.line(&bytes[start..i]);
                start = i + 1;
            }
        }
        self.partial.extend_from_slice(&bytes[start..]);
    }

    /// The last line, if it had no newline.
    pub fn flush(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
    }

    fn line(&mut self, bytes: &[u8]) {
        self.lines.total += 1;
        let Ok(s) = std::str::from_utf8(bytes) else {
            self.lines.unparsed += 1;
            return;
        };
        match parse_line(s) {
            Line::Event(e) => {
                self.lines.events += 1;
                if !s.contains(": block_") {
                    self.lines.blkparse += 1;
                }
                self.analyzer.push(e);
            }
            Line::Ignored => self.lines.ignored += 1,
            Line::Unparsed => match lost(s) {
                Some(n) => {
                    self.lines.lost_events += n;
                    self.lines.ignored += 1;
                }
                None => self.lines.unparsed += 1,
            },
        }
    }

    /// Read everything from `r`.
    pub fn read_all(&mut self, r: &mut dyn Read) -> std::io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.feed(&buf[..n]);
        }
        self.flush();
        Ok(())
    }
}

/// What a saved tracefs `trace` file says about the time every CPU's
/// buffer covers.
///
/// The `trace` file is a snapshot of per-CPU ring buffers. Once a buffer
/// is full the kernel overwrites its oldest events, one CPU at a time and
/// with no `LOST` marker, so each CPU's surviving events begin at a
/// different time: a bio queued on one CPU before another CPU's first
/// surviving event may have had its completion there, overwritten. The
/// header's `entries-in-buffer/entries-written: A/B` says whether that
/// happened (A < B); then only the window every CPU covers, from the
/// latest of the CPUs' first events, can be analysed. Without the header
/// (trace_pipe, blkparse: read as they were written) nothing is cut.
#[derive(Debug, Default)]
pub struct Coverage {
    /// `entries-in-buffer/entries-written` of the header.
    pub entries: Option<(u64, u64)>,
    /// The earliest block event of each CPU.
    pub first_by_cpu: std::collections::BTreeMap<u32, u64>,
    events_seen: bool,
}

impl Coverage {
    /// Look at one line; `false` once the rest cannot matter (the first
    /// event came with no overwritten buffer before it).
    pub fn line(&mut self, s: &str) -> bool {
        if let Some(rest) = s.strip_prefix("# entries-in-buffer/entries-written:") {
            let pair = rest.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = pair.split_once('/') {
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    self.entries = Some((a, b));
                }
            }
            return true;
        }
        if let Some((cpu, t)) = super::event::tracefs_cpu_and_time(s) {
            self.events_seen = true;
            let first = self.first_by_cpu.entry(cpu).or_insert(t);
            *first = (*first).min(t);
        }
        !self.events_seen || self.overwritten() > 0
    }

    /// Events the buffers overwrote (written − still in the buffer).
    pub fn overwritten(&self) -> u64 {
        self.entries.map_or(0, |(a, b)| b.saturating_sub(a))
    }

    /// When events were overwritten and the CPUs' first events differ:
    /// the start of the window every CPU covers (the latest first event)
    /// and that CPU.
    pub fn window_start(&self) -> Option<(u64, u32)> {
        if self.overwritten() == 0 {
            return None;
        }
        let earliest = *self.first_by_cpu.values().min()?;
        let (cpu, start) = self.first_by_cpu.iter().max_by_key(|(_, t)| **t)?;
        (*start > earliest).then_some((*start, *cpu))
    }

    /// The earliest event of any CPU.
    pub fn earliest(&self) -> Option<u64> {
        self.first_by_cpu.values().min().copied()
    }

    /// Scan `r` to its end (or until the answer is known).
    pub fn scan(r: &mut dyn std::io::BufRead) -> std::io::Result<Coverage> {
        let mut c = Coverage::default();
        let mut line = Vec::new();
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let Ok(s) = std::str::from_utf8(&line) else {
                continue;
            };
            if !c.line(s.trim_end_matches(['\n', '\r'])) {
                break;
            }
        }
        Ok(c)
    }
}

/// `CPU:1 [LOST 123 EVENTS]` → 123.
fn lost(s: &str) -> Option<u64> {
    let rest = &s[s.find("[LOST ")? + 6..];
    rest.split(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_cuts_only_where_buffers_were_overwritten() {
        let body = "\
 a-1 [000] ..... 10.000000: block_bio_queue: 7,0 R 8 + 8 [a]
 a-1 [000] ..... 10.500000: block_bio_queue: 7,0 R 16 + 8 [a]
 b-2 [001] ..... 11.040000: block_rq_complete: 7,0 R () 16 + 8 none,0,0 [0]
";
        let scan = |text: &str| Coverage::scan(&mut text.as_bytes()).unwrap();
        let full = scan(&format!(
            "# entries-in-buffer/entries-written: 3/3   #P:2\n{body}"
        ));
        assert_eq!((full.overwritten(), full.window_start()), (0, None));
        let over = scan(&format!(
            "# entries-in-buffer/entries-written: 3/9000   #P:2\n{body}"
        ));
        assert_eq!(over.overwritten(), 8997);
        assert_eq!(over.window_start(), Some((11_040_000_000, 1)));
        assert_eq!(over.earliest(), Some(10_000_000_000));
        // No header (trace_pipe): nothing is known to be missing.
        assert_eq!(scan(body).window_start(), None);
    }

    #[test]
    fn lines_split_across_reads_are_joined() {
        let text = "# tracer: nop\n\
             fio-1 [000] ..... 1.000000: block_bio_queue: 7,0 R 8 + 8 [fio]\n\
             fio-1 [000] ..... 1.000010: block_rq_issue: 7,0 R 4096 () 8 + 8 be,0,4 [fio]\n\
             CPU:1 [LOST 42 EVENTS]\n\
             garbage\n\
             <idle>-0 [000] d.h1. 1.000110: block_rq_complete: 7,0 R () 8 + 8 be,0,4 [0]";
        let mut f = Feeder::default();
        for chunk in text.as_bytes().chunks(7) {
            f.feed(chunk);
        }
        f.flush();
        assert_eq!(f.lines.total, 6);
        assert_eq!(f.lines.events, 3);
        assert_eq!(f.lines.lost_events, 42);
        assert_eq!(f.lines.unparsed, 1);
        let a = f.analyzer.finish();
        let d = &a.devices[0].all();
        let q2c = d.t.q2c.summary().unwrap();
        assert_eq!((q2c.count, q2c.min_ns), (1, 110_000));
        assert_eq!(d.t.d2c.summary().unwrap().max_ns, 100_000);
    }
}
