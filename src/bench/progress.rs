//! The live status line of a bench run (stderr, terminals only): what the
//! job threads publish, and the text made of it. Presentation only; the
//! measured figures come from the threads' own histograms.

use super::job::JobSpec;
use super::worker::{Shared, ThreadOut, Window};
use anyhow::Result;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One job's figures for the line.
pub struct JobNow<'a> {
    pub name: &'a str,
    pub p99_ns: u64,
}

/// `ramp 1234 IOPS, 19.3 MiB/s, page-read p99 250µs, 12s left`.
pub fn status_text(
    iops: f64,
    mib_s: f64,
    jobs: &[JobNow],
    in_ramp: bool,
    left: Option<Duration>,
) -> String {
    let p99s: Vec<String> = jobs
        .iter()
        .map(|j| format!("{} p99 {:.0}µs", j.name, j.p99_ns as f64 / 1000.0))
        .collect();
    let phase = if in_ramp { "ramp " } else { "" };
    let left = match left {
        Some(l) => format!(", {}s left", l.as_secs_f64().ceil() as u64),
        None => String::new(),
    };
    format!(
        "{phase}{iops:.0} IOPS, {mib_s:.1} MiB/s, {}{left}",
        p99s.join(", ")
    )
}

/// Redraw the line about once a second until every thread has finished.
pub(super) fn progress_loop(
    handles: &[std::thread::ScopedJoinHandle<'_, Result<ThreadOut>>],
    shared: &Shared,
    jobs: &[JobSpec],
    thread_jobs: &[usize],
    win: &Window,
    t0: Instant,
) {
    let pb = crate::output::progress::status_line();
    let total = win.ramp + win.runtime.unwrap_or_default();
    let (mut last_ios, mut last_bytes, mut last_t) = (0u64, 0u64, Instant::now());
    while !handles.iter().all(|h| h.is_finished()) {
        // A display refresh, not synchronisation: the threads never wait on it.
        std::thread::sleep(Duration::from_millis(250));
        let now = Instant::now();
        if now.duration_since(last_t) < Duration::from_millis(900) {
            continue;
        }
        let (mut ios, mut bytes) = (0u64, 0u64);
        for (i, _) in thread_jobs.iter().enumerate() {
            ios += shared.live[i].ios.load(Ordering::Relaxed);
            bytes += shared.live[i].bytes.load(Ordering::Relaxed);
        }
        let per_job: Vec<JobNow> = jobs
            .iter()
            .enumerate()
            .map(|(j, job)| JobNow {
                name: &job.name,
                p99_ns: shared.live_hist[j]
                    .lock()
                    .map(|h| h.value_at_quantile(0.99))
                    .unwrap_or(0),
            })
            .collect();
        let dt = now.duration_since(last_t).as_secs_f64();
        let iops = ios.saturating_sub(last_ios) as f64 / dt;
        let mib_s = bytes.saturating_sub(last_bytes) as f64 / dt / 1048576.0;
        (last_ios, last_bytes, last_t) = (ios, bytes, now);
        let elapsed = now.duration_since(t0);
        let left = win.runtime.map(|_| total.saturating_sub(elapsed));
        pb.set_message(status_text(iops, mib_s, &per_job, elapsed < win.ramp, left));
        pb.tick();
    }
    pb.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_text() {
        let j = [JobNow {
            name: "page-read",
            p99_ns: 250_400,
        }];
        assert_eq!(
            status_text(1234.4, 19.26, &j, true, Some(Duration::from_millis(11_200))),
            "ramp 1234 IOPS, 19.3 MiB/s, page-read p99 250µs, 12s left"
        );
        assert_eq!(
            status_text(10.0, 0.0, &j, false, None),
            "10 IOPS, 0.0 MiB/s, page-read p99 250µs"
        );
    }
}
