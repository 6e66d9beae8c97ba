//! What a tune run is asked to do, and how its time budget is spent.
//!
//! One deadline for the whole run; each phase takes a share of what is
//! left when it starts (so a phase that finishes early gives its time to
//! the next), and the OLTP phase stops between runs when the deadline
//! passes.

use crate::db::ConnArgs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The default budget (`innotune tune`).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(140);
/// `--quick`.
pub const QUICK_BUDGET: Duration = Duration::from_secs(60);

/// Everything [`super::execute`] needs.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// None: the running server's datadir, else the current directory.
    pub path: Option<PathBuf>,
    pub quick: bool,
    pub budget: Duration,
    /// None: `./innotune-<host>-<YYYYmmdd-HHMMSS>/`.
    pub out: Option<PathBuf>,
    /// OLTP thread ladder.
    pub threads: Vec<u32>,
    /// Run the OLTP before/after phase when a server binary is installed.
    pub oltp: bool,
    /// How the live server is reached (its settings are the "before").
    pub conn: ConnArgs,
    /// A slow query log for the check phase (`--slowlog`).
    pub slowlog: Option<PathBuf>,
    /// Switch only these devices in the sweep (`--device`); empty: every
    /// device under the path that has a scheduler.
    pub devices: Vec<String>,
    /// Seed of the OLTP round order (`--seed`; default random, reported).
    pub seed: Option<u64>,
    /// Let durability trade-offs (innodb_flush_log_at_trx_commit ≠ 1,
    /// sync_binlog ≠ 1, innodb_doublewrite off) into "after".
    pub allow_durability_tradeoffs: bool,
}

impl TuneOptions {
    pub fn new(path: Option<PathBuf>, quick: bool) -> TuneOptions {
        TuneOptions {
            path,
            quick,
            budget: if quick { QUICK_BUDGET } else { DEFAULT_BUDGET },
            out: None,
            threads: if quick {
                vec![1, 4, 8]
            } else {
                vec![1, 4, 8, 16, 32]
            },
            oltp: true,
            conn: ConnArgs::default(),
            slowlog: None,
            devices: Vec::new(),
            seed: None,
            allow_durability_tradeoffs: false,
        }
    }

    /// The sandbox dataset: small enough to load in seconds, large enough
    /// that a buffer pool sized like the live server's (relative to its
    /// data) leaves reads to the device. Quick: 2 × 20,000 rows (about
    /// 9 MiB); default: 4 × 50,000 rows (about 46 MiB).
    pub fn oltp_tables(&self) -> (u32, u32) {
        if self.quick {
            (2, 20_000)
        } else {
            (4, 50_000)
        }
    }

    /// Status window of check's server sample: rates need a window, but
    /// every second of it is a second the sweep does not get.
    pub fn check_sample(&self) -> Duration {
        if self.quick {
            Duration::from_secs(2)
        } else {
            (self.budget / 20).min(Duration::from_secs(15))
        }
    }

    /// Each sweep workload's file set: small, so laying it out is quick.
    pub fn sweep_file_size(&self) -> u64 {
        if self.quick {
            64 << 20
        } else {
            256 << 20
        }
    }
}

/// The run's clock: when it must be done.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub started: Instant,
    pub deadline: Instant,
}

/// Kept back at the end for restoring and writing the report.
pub const RESERVE: Duration = Duration::from_secs(3);

impl Clock {
    pub fn new(budget: Duration) -> Clock {
        let started = Instant::now();
        Clock {
            started,
            deadline: started + budget,
        }
    }

    /// Time left before the deadline, less the reserve.
    pub fn left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(RESERVE)
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// The sweep's share of what is left when it starts: most of it when no
/// OLTP phase follows, a little under half when one does (the OLTP phase
/// pays for initialising and loading two servers).
pub fn sweep_share(left: Duration, oltp_follows: bool) -> Duration {
    if oltp_follows {
        left.mul_f64(0.45)
    } else {
        left.mul_f64(0.9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_is_a_minute_and_short_ladder() {
        let o = TuneOptions::new(None, true);
        assert_eq!(o.budget, QUICK_BUDGET);
        assert_eq!(o.threads, vec![1, 4, 8]);
        assert!(o.check_sample() <= Duration::from_secs(2));
        let d = TuneOptions::new(None, false);
        assert_eq!(d.budget, DEFAULT_BUDGET);
        // A twentieth of the 140 s default: 7 s.
        assert_eq!(d.check_sample(), Duration::from_secs(7));
    }

    #[test]
    fn sweep_leaves_room_for_oltp() {
        let s = sweep_share(Duration::from_secs(100), true);
        assert_eq!(s, Duration::from_secs(45));
        assert_eq!(
            sweep_share(Duration::from_secs(100), false),
            Duration::from_secs(90)
        );
    }
}
