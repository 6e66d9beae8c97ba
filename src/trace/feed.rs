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

/// `CPU:1 [LOST 123 EVENTS]` → 123.
fn lost(s: &str) -> Option<u64> {
    let rest = &s[s.find("[LOST ")? + 6..];
    rest.split(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
