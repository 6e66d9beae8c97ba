//! sysbench's latency histogram: 1024 log-spaced slots from 0.001 ms to
//! 100,000 ms; a percentile is the log-centre of the slot where the
//! cumulative count reaches `floor(N·p/100 + 0.5)`.
//!
//! Chosen over hdrhistogram on purpose: oltp reports sysbench's
//! figures, and sysbench quantises percentiles to these slot centres
//! (~1.8% apart). Using the same slots means innotune's "95th percentile"
//! is the number sysbench would print for the same events, so the two
//! tools can be compared value for value. Lock-free atomic slots let all
//! worker threads record without a mutex.

use std::sync::atomic::{AtomicU64, Ordering};

pub const SLOTS: usize = 1024;
pub const LO_MS: f64 = 0.001;
pub const HI_MS: f64 = 100_000.0;

fn mult() -> f64 {
    (SLOTS as f64 - 1.0) / (HI_MS.ln() - LO_MS.ln())
}

/// Slot index for a latency in ms.
pub fn slot(ms: f64) -> usize {
    if ms.is_nan() || ms <= 0.0 {
        return 0;
    }
    let i = ((ms.ln() - LO_MS.ln()) * mult() + 0.5).floor();
    i.clamp(0.0, SLOTS as f64 - 1.0) as usize
}

/// A slot's value: its log-centre.
pub fn slot_value(i: usize) -> f64 {
    (i as f64 / mult() + LO_MS.ln()).exp()
}

pub struct Histogram {
    slots: Vec<AtomicU64>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Histogram {
    pub fn record(&self, ms: f64) {
        self.slots[slot(ms)].fetch_add(1, Ordering::Relaxed);
    }

    /// Copy the counts (and zero them when `reset`, for interval reports).
    pub fn snapshot(&self, reset: bool) -> Vec<u64> {
        self.slots
            .iter()
            .map(|s| {
                if reset {
                    s.swap(0, Ordering::Relaxed)
                } else {
                    s.load(Ordering::Relaxed)
                }
            })
            .collect()
    }
}

/// Percentile `p` (0–100) of slot counts, in ms; 0 when empty (as sysbench).
pub fn percentile(counts: &[u64], p: f64) -> f64 {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let nmax = (n as f64 * p / 100.0 + 0.5).floor() as u64;
    let mut acc = 0;
    for (i, c) in counts.iter().enumerate() {
        acc += c;
        if acc >= nmax {
            return slot_value(i);
        }
    }
    slot_value(counts.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_log_centres() {
        assert_eq!(slot(0.001), 0);
        assert_eq!(slot(100_000.0), 1023);
        assert_eq!(slot(1e9), 1023);
        // A value maps to a slot whose centre is within half a step (~0.9%).
        for v in [0.05, 1.0, 3.82, 20.0, 750.0] {
            let c = slot_value(slot(v));
            assert!((c / v - 1.0).abs() < 0.01, "{v} -> {c}");
        }
    }

    #[test]
    fn percentile_walks_cumulative_counts() {
        let h = Histogram::default();
        for i in 1..=100 {
            h.record(i as f64);
        }
        let c = h.snapshot(true);
        let p95 = percentile(&c, 95.0);
        assert!((p95 / 95.0 - 1.0).abs() < 0.01, "{p95}");
        assert_eq!(h.snapshot(false).iter().sum::<u64>(), 0);
        assert_eq!(percentile(&h.snapshot(false), 95.0), 0.0);
    }
}
