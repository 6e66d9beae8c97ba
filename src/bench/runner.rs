//! A run: one thread plan per job thread (files opened, engines built,
//! before anything starts), the threads started together behind a barrier,
//! and each job's threads merged (fio's group_reporting). The per-thread
//! loop is [`super::worker`]; the live line is [`super::progress`].

use super::engine::{sync::SyncEngine, uring::UringEngine, Buffers, Engine, Fds};
use super::files::JobFiles;
use super::job::{EngineKind, JobSpec};
use super::result::*;
use super::worker::{new_hist, worker, OffsetGen, Shared, ThreadOut, ThreadPlan};
use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

pub use super::worker::Window;

fn open_fds(job: &JobSpec, files: &JobFiles) -> Result<Fds> {
    let writes = job.rw.writes(job.rwmixread);
    let mut flags = 0;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    if job.sync {
        flags |= libc::O_DSYNC;
    }
    let fds = (0..files.paths.len())
        .map(|i| files.open(i, writes, flags))
        .collect::<Result<Vec<_>>>()?;
    Ok(Fds(fds))
}

/// Run all jobs together and merge each job's threads.
pub fn run(jobs: &[JobSpec], files: &[JobFiles], win: &Window) -> Result<WorkloadResult> {
    run_hooked(jobs, files, win, None)
}

/// [`run`], calling `at_window` on this thread as the measured window
/// opens (the end of the ramp), while the I/O keeps running. A sweep takes
/// its device-counter snapshot there, so one run covers warm-up and window
/// with no drain and restart between them (fio's `ramp_time`).
pub fn run_hooked(
    jobs: &[JobSpec],
    files: &[JobFiles],
    win: &Window,
    at_window: Option<&mut dyn FnMut()>,
) -> Result<WorkloadResult> {
    let mut plans = Vec::new();
    let mut engines_used = Vec::new();
    for (ji, (job, jf)) in jobs.iter().zip(files).enumerate() {
        let kind = job.engine();
        engines_used.push(kind);
        if !jf.raw && !job.direct {
            // fio's invalidate=1: start buffered jobs with a cold page cache.
            for i in 0..jf.paths.len() {
                if let Ok(fd) = jf.open(i, false, 0) {
                    use std::os::fd::AsRawFd;
                    // SAFETY: plain advice on an fd we own.
                    unsafe { libc::posix_fadvise(fd.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                }
            }
        }
        let blocks_per_file = jf.file_size / job.bs;
        let total_blocks = blocks_per_file * jf.paths.len() as u64;
        for t in 0..job.numjobs as usize {
            let fds = open_fds(job, jf)?;
            let depth = match kind {
                EngineKind::IoUring => job.iodepth as usize,
                _ => 1,
            };
            let bufs = Buffers::new(job.bs as usize, depth, job.huge_buffers(depth));
            let engine: Box<dyn Engine + Send> = match kind {
                EngineKind::IoUring => {
                    Box::new(UringEngine::new(fds.raw(), bufs, job.submit_batch())?)
                }
                _ => Box::new(SyncEngine::new(fds.raw(), bufs)),
            };
            plans.push(ThreadPlan {
                job: ji,
                thread: t,
                fds,
                engine,
                gen: OffsetGen {
                    // Same sequence on every run (fio's randrepeat=1), distinct per thread.
                    rng: SmallRng::seed_from_u64(seed(ji, t)),
                    random: job.rw.is_random(),
                    read_pct: job.rw.read_pct(job.rwmixread),
                    nfiles: jf.paths.len(),
                    blocks_per_file,
                    bs: job.bs,
                    pos: total_blocks * t as u64 / job.numjobs as u64,
                },
                bs: job.bs,
                depth,
                sync_every: job.fsync.max(job.fdatasync),
                fdatasync: job.fdatasync > 0,
                io_size: if win.runtime.is_some() {
                    None
                } else {
                    Some(
                        job.io_size
                            .unwrap_or(jf.file_size * jf.paths.len() as u64 / job.numjobs as u64)
                            .max(job.bs),
                    )
                },
                direct: job.direct,
            });
        }
    }

    let shared = Shared {
        stop: AtomicBool::new(false),
        interrupt: win.interrupt.clone(),
        barrier: Barrier::new(plans.len() + 1),
        live: (0..plans.len()).map(|_| Default::default()).collect(),
        live_hist: jobs.iter().map(|_| Mutex::new(new_hist())).collect(),
    };
    let thread_jobs: Vec<usize> = plans.iter().map(|p| p.job).collect();

    let outs: Vec<Result<ThreadOut>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .into_iter()
            .enumerate()
            .map(|(i, plan)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("bench-{}-{}", plan.job, plan.thread))
                    .spawn_scoped(s, move || {
                        let r = worker(i, plan, shared, win);
                        if r.is_err() {
                            shared.stop.store(true, Ordering::Relaxed);
                        }
                        r
                    })
                    .expect("spawn bench thread")
            })
            .collect();
        shared.barrier.wait();
        let t0 = Instant::now();
        if let Some(hook) = at_window {
            if wait_until(&handles, &shared, t0 + win.ramp) {
                hook();
            }
        }
        if win.progress {
            super::progress::progress_loop(&handles, &shared, jobs, &thread_jobs, win, t0);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a bench thread panicked")))
            })
            .collect()
    });

    let mut per_job: Vec<Vec<ThreadOut>> = jobs.iter().map(|_| Vec::new()).collect();
    for (o, &j) in outs.into_iter().zip(&thread_jobs) {
        per_job[j].push(o?);
    }
    let interrupted = win
        .interrupt
        .as_ref()
        .is_some_and(|f| f.load(Ordering::Relaxed));
    let jobs_out = jobs
        .iter()
        .zip(files)
        .zip(per_job)
        .zip(engines_used)
        .map(|(((job, jf), outs), kind)| merge(job, jf, kind, outs))
        .collect();
    Ok(WorkloadResult {
        name: String::new(),
        jobs: jobs_out,
        ramp_s: win.ramp.as_secs_f64(),
        time_based: win.runtime.is_some(),
        interrupted,
        host_cpu: None,
        depth: jobs
            .iter()
            .map(|j| match j.engine() {
                super::job::EngineKind::Sync => u64::from(j.numjobs),
                _ => u64::from(j.numjobs) * u64::from(j.iodepth),
            })
            .sum(),
        devices: Vec::new(),
    })
}

/// Wait for `at` while the threads run; false if they all ended (or one
/// failed) first. Polls at 10 ms: the threads own the clock that matters
/// (each starts its window at the same `t0 + ramp`), this only has to
/// notice the moment within a few ms of what the device counters cover.
fn wait_until<T>(
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    shared: &Shared,
    at: Instant,
) -> bool {
    loop {
        if shared.stop.load(Ordering::Relaxed) || handles.iter().all(|h| h.is_finished()) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(10)));
    }
}

fn seed(job: usize, thread: usize) -> u64 {
    0x1a2b_3c4d_5e6f_7081 ^ ((job as u64) << 32) ^ thread as u64
}

fn latency(h: &Histogram<u64>) -> LatencyNs {
    if h.is_empty() {
        return LatencyNs::default();
    }
    const FIO_PCTS: [f64; 17] = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ];
    LatencyNs {
        min: h.min(),
        mean: h.mean(),
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p95: h.value_at_quantile(0.95),
        p99: h.value_at_quantile(0.99),
        p99_9: h.value_at_quantile(0.999),
        max: h.max(),
        n: h.len(),
        stddev: h.stdev(),
        percentile: FIO_PCTS
            .iter()
            .map(|p| (format!("{p:.6}"), h.value_at_quantile(p / 100.0)))
            .collect(),
    }
}

fn merge(job: &JobSpec, jf: &JobFiles, kind: EngineKind, outs: Vec<ThreadOut>) -> JobResult {
    let mut hist = [new_hist(), new_hist()];
    let mut sync = new_hist();
    let mut runtime = Duration::ZERO;
    let (mut user, mut sys) = (0u64, 0u64);
    let mut series: Vec<[u64; 4]> = Vec::new();
    for o in &outs {
        for (h, oh) in hist.iter_mut().zip(&o.hist) {
            let _ = h.add(oh);
        }
        let _ = sync.add(&o.sync);
        runtime = runtime.max(o.runtime);
        user += o.user_ns;
        sys += o.sys_ns;
        if o.series.len() > series.len() {
            series.resize(o.series.len(), [0; 4]);
        }
        for (i, s) in o.series.iter().enumerate() {
            for k in 0..4 {
                series[i][k] += s[k];
            }
        }
    }
    let secs = runtime.as_secs_f64().max(1e-9);
    let dir = |h: &Histogram<u64>| {
        let ios = h.len();
        let bytes = ios * job.bs;
        DirStats {
            total_ios: ios,
            io_bytes: bytes,
            iops: ios as f64 / secs,
            bw_bytes: bytes as f64 / secs,
            clat_ns: latency(h),
            runtime_s: runtime.as_secs_f64(),
        }
    };
    let read_pct = job.rw.read_pct(job.rwmixread);
    let total_ios = hist[0].len() + hist[1].len();
    // Only whole seconds are a rate; a partial last second would read low.
    let whole = (runtime.as_secs() as usize).min(series.len());
    JobResult {
        name: job.name.clone(),
        read: (read_pct > 0).then(|| dir(&hist[0])),
        write: (read_pct < 100).then(|| dir(&hist[1])),
        options: job.describe(),
        ioengine: kind.as_str().to_string(),
        runtime_s: runtime.as_secs_f64(),
        sync: (job.fsync > 0 || job.fdatasync > 0).then(|| SyncStats {
            kind: if job.fdatasync > 0 {
                "fdatasync"
            } else {
                "fsync"
            }
            .into(),
            total_ios: sync.len(),
            lat_ns: latency(&sync),
        }),
        cpu: CpuUsage {
            user_s: user as f64 / 1e9,
            sys_s: sys as f64 / 1e9,
            usr_cpu: user as f64 / 1e9 / secs * 100.0,
            sys_cpu: sys as f64 / 1e9 / secs * 100.0,
            ns_per_io: if total_ios > 0 {
                (user + sys) as f64 / total_ios as f64
            } else {
                0.0
            },
        },
        series: series[..whole]
            .iter()
            .enumerate()
            .map(|(t, s)| SecondSample {
                t_s: t as u64,
                read_iops_per_s: s[0],
                read_bytes_per_s: s[1],
                write_iops_per_s: s[2],
                write_bytes_per_s: s[3],
            })
            .collect(),
        files: jf.paths.iter().map(|p| p.display().to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_percentile_keys() {
        let mut h = new_hist();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = latency(&h);
        assert!(l.percentile.contains_key("99.900000"));
        assert!(l.percentile.contains_key("50.000000"));
        assert!((l.p50 as f64 - 500_000.0).abs() < 1000.0);
        assert_eq!(l.n, 1000);
    }
}
