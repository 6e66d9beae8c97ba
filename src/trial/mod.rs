//! The one trial engine: randomised, interleaved rounds of *arms* (each a
//! set of host settings) against *workloads*, every switch through the
//! journal. `sweep` (arms: schedulers × queue settings) and `prove` (arms:
//! the current state, each change alone, all together) are its clients.
//!
//! One round puts each arm in place once, in a fresh random order
//! ([`apply_arm`], writing only what differs), and runs every workload
//! under it, also in a fresh random order: a warm-up that is discarded,
//! then a measured window, with /proc/diskstats snapshots around it (and
//! optionally `innotune trace`'s capture), giving one [`trials::Trial`].
//! After each round the caller may look at the trials so far (a
//! group-sequential design) and stop.
//!
//! - [`workload`]: the [`workload::TrialWorkload`] trait, bench and OLTP
//!   workloads, loaded and checked before anything changes.
//! - [`server`]: the OLTP sandbox server the OLTP workloads share.
//! - [`space`]: will the work files fit?
//! - [`trials`]: what one window yields, in JSON units.
//! - [`diskstats`]: iostat -x figures of the switched devices per window.
//! - [`progress`]: what the loop is doing, for a status line.

pub mod diskstats;
pub mod progress;
pub mod server;
pub mod space;
pub mod trials;
pub mod workload;

use crate::change::{ServerVariable, Sysctl, SysfsAttr};
use crate::db::ServerEndpoint;
use crate::host::Host;
use crate::journal::Guard;
use anyhow::{Context, Result};
use progress::{Event, Reporter};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use trials::Trial;
use workload::TrialWorkload;

/// One host setting an arm holds. Each kind is written through its
/// `Change` (journaled before it is applied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Setting {
    /// A sysfs attribute: host-absolute path
    /// (`/sys/block/loop0/queue/read_ahead_kb`) and the value to write.
    Sysfs { path: PathBuf, value: String },
    /// A sysctl by its dotted name (`vm.swappiness`).
    Sysctl { key: String, value: String },
    /// A dynamic server variable, `SET GLOBAL` on the server at `endpoint`
    /// (`prove`'s throwaway sandbox, or the server `--live-server` names).
    ServerVariable {
        endpoint: ServerEndpoint,
        name: String,
        value: String,
    },
    /// A mount option of the filesystem mounted at `mount_point`
    /// (`noatime`, …: `change::remount::OPTIONS`), switched with a remount.
    Mount { mount_point: PathBuf, value: String },
}

impl Setting {
    /// The sysctl's path under /proc/sys.
    fn sysctl_path(key: &str) -> PathBuf {
        PathBuf::from("/proc/sys").join(key.replace('.', "/"))
    }

    /// What the host holds for this setting now, normalised as the change
    /// kinds compare it (a scheduler's bracketed choice, whitespace runs).
    /// A server variable is read from its server (`SHOW GLOBAL
    /// VARIABLES`), as the server shows it.
    pub fn current(&self, host: &Host) -> std::io::Result<String> {
        match self {
            Setting::Sysfs { path, .. } => crate::change::sysfs::read_value(host, path),
            Setting::Sysctl { key, .. } => {
                let p = Self::sysctl_path(key);
                crate::change::sysfs::read_value(host, &p)
            }
            Setting::ServerVariable { endpoint, name, .. } => {
                ServerVariable::new(endpoint, name, "", false)
                    .current()
                    .map_err(|e| std::io::Error::other(crate::error::one_line(&e)))?
                    .ok_or_else(|| {
                        std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            format!("the server has no variable {name}"),
                        )
                    })
            }
            Setting::Mount { mount_point, value } => {
                let family = crate::change::remount::family(value).unwrap_or("atime");
                crate::change::remount::mounted_at(host, mount_point)
                    .map_err(|e| std::io::Error::other(crate::error::one_line(&e)))?
                    .map(|m| crate::change::remount::state(&m, family))
                    .ok_or_else(|| {
                        std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            format!("{} is not a mount point", mount_point.display()),
                        )
                    })
            }
        }
    }

    /// Whether `now` (what [`Setting::current`] read) is this setting's
    /// value: server variables compare as the server shows them (ON/1,
    /// sizes in bytes), the rest as normalised text.
    pub fn holds(&self, now: &str) -> bool {
        match self {
            Setting::ServerVariable { value, .. } => ServerVariable::same(now, value),
            _ => now == self.wanted(),
        }
    }

    /// The value this setting writes, normalised the same way.
    pub fn wanted(&self) -> String {
        match self {
            Setting::Sysfs { path, value } => crate::change::sysfs::norm(path, value),
            Setting::Sysctl { value, .. }
            | Setting::ServerVariable { value, .. }
            | Setting::Mount { value, .. } => {
                value.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        }
    }
}

/// One arm of an experiment: a label (unique in the run; trials are keyed
/// by it) and the settings it puts in place, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    pub label: String,
    pub settings: Vec<Setting>,
}

/// PATH, resolved, and the work directory for `command` under it
/// (`PATH/.innotune-<command>.PID`): PATH must be a directory, and the
/// work directory (created later by the caller, and journaled, so even a
/// crash leaves nothing behind after `restore`) never in or around a live
/// server's datadir.
pub fn work_path(host: &Host, path: &Path, command: &str) -> Result<(PathBuf, PathBuf)> {
    if !path.is_dir() {
        return Err(crate::error::Fix::new(
            format!("{} is not a directory", path.display()),
            "give a directory on the filesystem to test; work files go in a temporary subdirectory",
        )
        .into());
    }
    let path = path
        .canonicalize()
        .with_context(|| format!("resolving {}", path.display()))?;
    let workdir = path.join(format!(".innotune-{command}.{}", std::process::id()));
    crate::safety::refuse_near_datadir(host, &workdir, &format!("{command}'s work directory"))?;
    Ok((path, workdir))
}

/// Put `arm` in place: each setting in order, writing only the values that
/// differ from what the host holds (a rewrite of a scheduler resets
/// nr_requests for nothing), each write journaled through `guard` first.
pub fn apply_arm(guard: &Guard, host: &Host, arm: &Arm) -> Result<()> {
    for s in &arm.settings {
        let now = s.current(host).unwrap_or_default();
        if s.holds(&now) {
            continue;
        }
        match s {
            Setting::Sysfs { path, value } => {
                guard.apply(host, Box::new(SysfsAttr::set(path.clone(), value)))?
            }
            Setting::Sysctl { key, value } => {
                guard.apply(host, Box::new(Sysctl::new(key, value)))?
            }
            Setting::ServerVariable {
                endpoint,
                name,
                value,
            } => guard.apply(
                host,
                Box::new(ServerVariable::new(endpoint, name, value, false)),
            )?,
            Setting::Mount { mount_point, value } => guard.apply(
                host,
                Box::new(crate::change::Remount::set(mount_point.clone(), value)),
            )?,
        };
    }
    Ok(())
}

/// How many rounds to run and how each trial is timed.
#[derive(Debug, Clone)]
pub struct Design {
    /// Rounds at most (a look may stop earlier).
    pub rounds: u32,
    /// Measured window of each trial.
    pub trial: Duration,
    /// Warm-up before each window, discarded.
    pub warmup: Duration,
    /// Trials the whole run plans (for the progress display).
    pub total: usize,
    /// Seed of the arm and workload orders.
    pub seed: u64,
    /// Capture `innotune trace`'s split over each window.
    pub trace: bool,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub trials: Vec<Trial>,
    /// The round (1-based) after which a look stopped the run; None when
    /// every planned round ran.
    pub stopped_after: Option<u32>,
    /// Seconds spent in the rounds.
    pub rounds_s: f64,
}

/// Run `design.rounds` rounds of `arms` × `workloads`: arms in a fresh
/// random order each round (each put in place by [`apply_arm`]), under
/// each arm the workloads in a fresh random order, each a warm-up and a
/// measured window with diskstats of `devices` around it. After each
/// round `look(trials so far, rounds done)` may return true to stop.
///
/// Nothing is put back here: the caller's guard holds every switch, and
/// the caller restores it on every exit path.
#[allow(clippy::too_many_arguments)]
pub fn run(
    host: &Host,
    guard: &Guard,
    arms: &[Arm],
    workloads: &[Box<dyn TrialWorkload + '_>],
    devices: &[String],
    design: &Design,
    progress: &Reporter,
    look: &mut dyn FnMut(&[Trial], u32) -> bool,
) -> Result<Outcome> {
    let trace_targets = if design.trace {
        devices
            .iter()
            .map(|n| crate::trace::capture::target(host, n))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let mut rng = rand::rngs::SmallRng::seed_from_u64(design.seed);
    let mut trials = Vec::with_capacity(design.total);
    let started = Instant::now();
    let mut stopped_after = None;
    for round in 0..design.rounds {
        let mut order: Vec<usize> = (0..arms.len()).collect();
        order.shuffle(&mut rng);
        for &ai in &order {
            let arm = &arms[ai];
            apply_arm(guard, host, arm)?;
            let mut worder: Vec<usize> = (0..workloads.len()).collect();
            worder.shuffle(&mut rng);
            for &wi in &worder {
                let w = &*workloads[wi];
                progress.event(Event::Trial {
                    round,
                    rounds: design.rounds,
                    candidate: arm.label.clone(),
                    workload: w.name().to_string(),
                    index: trials.len() + 1,
                    total: design.total,
                });
                let trial = one_trial(
                    host,
                    guard,
                    w,
                    &arm.label,
                    devices,
                    &trace_targets,
                    design,
                    round,
                    trials.len(),
                )?;
                trials.push(trial);
            }
        }
        if look(&trials, round + 1) {
            stopped_after = Some(round + 1);
            break;
        }
    }
    Ok(Outcome {
        trials,
        stopped_after,
        rounds_s: started.elapsed().as_secs_f64(),
    })
}

/// One warm-up and window of `w` under the arm labelled `label`.
#[allow(clippy::too_many_arguments)]
fn one_trial(
    host: &Host,
    guard: &Guard,
    w: &dyn TrialWorkload,
    label: &str,
    devices: &[String],
    trace_targets: &[crate::trace::capture::Target],
    design: &Design,
    round: u32,
    seq: usize,
) -> Result<Trial> {
    let under = || format!("{} under {label}", w.name());
    let (m, split, before) = if design.trace {
        // The capture covers the window only, so the warm-up is a run of
        // its own here.
        if !design.warmup.is_zero() {
            w.warm_up(design.warmup)
                .with_context(|| format!("warm-up of {}", under()))?;
        }
        let before = diskstats::snapshot(host)?;
        let (m, t) = crate::trace::split::while_running(host, guard, trace_targets, || {
            w.measure(design.trial)
        })?;
        (m, crate::trace::split::splits(&t), before)
    } else {
        let mut before = None;
        let m = w.warm_and_measure(design.warmup, design.trial, &mut || {
            before = Some(diskstats::snapshot(host));
        });
        let before = match before {
            Some(b) => b?,
            // The run ended before its window opened: its error says why.
            None => diskstats::snapshot(host)?,
        };
        (m, Vec::new(), before)
    };
    let m = m.with_context(under)?;
    let after = diskstats::snapshot(host)?;
    let mut trial = Trial::new(
        round,
        seq,
        label,
        w.name(),
        w.unit(),
        m,
        &diskstats::delta(&before, &after, devices),
    );
    trial.trace = split;
    trial.host_cpu = diskstats::host_cpu(&before, &after);
    Ok(trial)
}

/// Why a run's I/O did not (all) reach a device: loop devices under
/// `path` that go through the page cache (`loop/dio` 0, read through
/// `host`), and workloads whose device counted under a tenth of the bytes
/// their jobs moved ([`trials::few_device_bytes`]). sweep and prove report
/// it next to their verdicts: a verdict on RAM is not a disk's.
pub fn not_on_device(
    host: &Host,
    path: &Path,
    trials: &[Trial],
    workloads: &[String],
) -> Vec<crate::bench::reach::NotOnDevice> {
    let mut out = crate::bench::reach::buffered_loops_under(host, path);
    out.extend(trials::few_device_bytes(trials, workloads));
    out
}

/// `/sys/block/NAME/queue/ATTR`: a block queue attribute's host-absolute
/// path.
pub fn queue_attr(device: &str, attr: &str) -> PathBuf {
    Path::new("/sys/block")
        .join(device)
        .join("queue")
        .join(attr)
}
