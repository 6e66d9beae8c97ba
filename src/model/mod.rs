//! The host model: what this machine (or a replayed `--root` tree) is,
//! read through [`Host`] once per command and shared by every part of it.
//!
//! Measurement only: the model reads and parses; it neither judges (that is
//! probe's findings, and later `check`'s rules) nor prints. One reader per
//! kind of host state, so a fix lands once:
//!
//! | state | reader | parser |
//! |---|---|---|
//! | sysfs choice files (`none [mq-deadline] kyber`, THP) | — | [`choice::parse`] |
//! | a block device's request queue | [`block::read_queue`] | |
//! | the kernel's default scheduler for a queue | — | [`block::kernel_default`] (block/elevator.c's rule; tag-set flags from debugfs) |
//! | block device identity, kind, size, partitions | [`block`] | |
//! | mounts | [`mount::Mounts::read`] (`/proc/self/mountinfo` only) | [`mount::parse_line`] (hand-written, see there) |
//! | the device stack under a mount | [`stack::walk`] | |
//! | memory | [`meminfo::read`] | procfs-core `Meminfo` |
//! | host-wide knobs (CPUs, NUMA, vm.*, THP, cmdline) | [`system::read`] | |
//! | processes: server pids, argv, limits, stat (start time, state, argv span), exe, systemd service, own smaps | [`process`] | procfs-core `Limits`, `Stat`, `ProcessCGroups`, `MemoryMaps` |
//! | systemd unit files and drop-ins | [`systemd::setting`] | [`systemd::parse_unit`] |
//! | boot-time settings: sysctl.d, THP (cmdline, tmpfiles.d, units), udev | [`boot`] | line parsers there |
//! | the default route's NICs, RPS, MSI interrupt counts per CPU, IRQ affinity | [`net::default_route_nics`] | procfs-core `RouteEntries`; [`net::parse_interrupts`] |
//! | MySQL option files (`my.cnf`, `!include`) | [`optfile::Options`] | [`optfile`] (hand-written, see there) |
//! | running MySQL/MariaDB servers and their datadirs | [`server::find`] | [`optfile`] |
//! | I/O counters | [`diskstats::read`] | procfs-core `DiskStat` |
//! | CPU frequency governors (per online CPU, its policy) | [`cpufreq::read`] | |
//! | host CPU time (busy, iowait, steal) | [`cpustat::read`] | procfs-core `KernelStats` |
//!
//! Library entry points (what sweep, bench, checksum and the coming
//! `check`/`tune` call):
//! - [`HostModel::read`] once per command, then [`HostModel::mounts`],
//!   [`HostModel::system`], [`HostModel::memory`], [`HostModel::servers`]:
//!   each part is read on first use and kept, so asking twice costs nothing
//!   and two parts of one command never see two different hosts.
//! - [`HostModel::mount_for`]: the mount holding a path (longest mount-point
//!   prefix, the last mounted on top).
//! - [`HostModel::stack_under`]: the device stack under a path (partitions,
//!   md/dm members, loop backing files, overlay upperdirs), each device with
//!   its queue; [`HostModel::stack_of`] when no mount is an error;
//!   [`HostModel::device_names_under`] for just the names.
//! - [`HostModel::mounts_of_device`]: where a block device or one of its
//!   partitions is mounted (bench refuses those), matched exactly.
//! - [`process::server_pids`], [`process::stat`], [`process::live_start_ticks`]
//!   and [`process::argv`] for code that needs one process fact without
//!   the rest of the model (the journal, sandboxes and `db::argv` pass
//!   `Host::live()`: their processes are on this machine whatever `--root`).
//! - [`diskstats::read`] and [`diskstats::Counters::delta`] for before/after
//!   I/O counters around a measured window (sweep).
//! - [`cpustat::read`] and [`cpustat::CpuTicks::delta`] for the host's CPU
//!   shares (steal above all) over a measured window (bench, sweep).

pub mod block;
pub mod boot;
pub mod choice;
pub mod cpufreq;
pub mod cpustat;
pub mod diskstats;
pub mod meminfo;
pub mod mount;
pub mod net;
pub mod optfile;
pub mod process;
pub mod server;
pub mod stack;
pub mod system;
pub mod systemd;

use crate::error::Fix;
use crate::host::{Host, Known};
use anyhow::Result;
use std::cell::OnceCell;
use std::path::Path;

/// procfs-core's error as a reason a user can read: its internal errors
/// print the crate's source path and "please report this procfs bug", which
/// a malformed file on the host (or in a fixture) is not.
pub(crate) fn proc_error(e: procfs_core::ProcError) -> String {
    match e {
        procfs_core::ProcError::InternalError(i) => format!(
            "not in the kernel's format ({})",
            i.msg.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        other => other.to_string(),
    }
}

/// The first of `keys` that starts no line of `text` (after leading blanks).
pub(crate) fn first_missing<'a>(text: &str, keys: &[&'a str]) -> Option<&'a str> {
    keys.iter()
        .find(|k| !text.lines().any(|l| l.trim_start().starts_with(**k)))
        .copied()
}

/// The host, read lazily and at most once per part. Not `Sync` (the parts
/// are `OnceCell`s): one command builds one and passes it by reference.
#[derive(Debug)]
pub struct HostModel {
    host: Host,
    mounts: OnceCell<Result<mount::Mounts, String>>,
    system: OnceCell<system::System>,
    memory: OnceCell<Known<meminfo::Memory>>,
    servers: OnceCell<Vec<server::Mysqld>>,
}

impl HostModel {
    /// A model of `host`; nothing is read until a part is asked for.
    pub fn read(host: &Host) -> HostModel {
        HostModel {
            host: host.clone(),
            mounts: OnceCell::new(),
            system: OnceCell::new(),
            memory: OnceCell::new(),
            servers: OnceCell::new(),
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Every mount, or why mountinfo could not be read.
    pub fn mounts(&self) -> Result<&mount::Mounts, &str> {
        self.mounts
            .get_or_init(|| mount::Mounts::read(&self.host).map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(String::as_str)
    }

    pub fn system(&self) -> &system::System {
        self.system.get_or_init(|| system::read(&self.host))
    }

    pub fn memory(&self) -> &Known<meminfo::Memory> {
        self.memory.get_or_init(|| meminfo::read(&self.host))
    }

    /// Running mysqld/mariadbd, lowest pid first.
    pub fn servers(&self) -> &[server::Mysqld] {
        self.servers.get_or_init(|| server::find(&self.host))
    }

    /// The mount holding `path` (absolute, normalised host path).
    pub fn mount_for(&self, path: &Path) -> Known<&mount::Mount> {
        match self.mounts() {
            Err(e) => Known::unknown(e),
            Ok(ms) => match ms.for_path(path) {
                Some(m) => Known::Value(m),
                None => Known::unknown(format!(
                    "no mount in {} contains {}",
                    self.host.path("/proc/self/mountinfo").display(),
                    path.display()
                )),
            },
        }
    }

    /// The device stack under `path`; empty (with the reason in
    /// `problems`) when no mount holds it.
    pub fn stack_under(&self, path: &Path) -> stack::Stack {
        match (self.mounts(), self.mount_for(path)) {
            (Ok(ms), Known::Value(m)) => stack::walk(&self.host, ms, m),
            (Err(e), _) => stack::Stack {
                problems: vec![stack::Problem::Unreadable {
                    path: "/proc/self/mountinfo".into(),
                    error: e.to_string(),
                }],
                ..Default::default()
            },
            (Ok(_), _) => stack::Stack::default(),
        }
    }

    /// The stack under `path`, or an error (one line with a fix) when no
    /// mount holds it: for callers that cannot go on without devices (sweep).
    pub fn stack_of(&self, path: &Path) -> Result<stack::Stack> {
        if let Known::Unknown { unknown } = self.mount_for(path) {
            return Err(Fix::new(
                format!("no mount contains {}: {unknown}", path.display()),
                "give a path on a mounted filesystem",
            )
            .into());
        }
        Ok(self.stack_under(path))
    }

    /// The stack under `path` and its devices with a switchable scheduler
    /// ([`stack::Stack::scheduled`]), or an error naming the stack when
    /// none has one (tmpfs, overlay, a network filesystem).
    pub fn scheduled_under(&self, path: &Path) -> Result<stack::Stack> {
        let stack = self.stack_of(path)?;
        if stack.scheduled().is_empty() {
            let names = stack.names();
            return Err(Fix::new(
                format!(
                    "no device under {} has an I/O scheduler (stack: {})",
                    path.display(),
                    if names.is_empty() {
                        "none found".into()
                    } else {
                        names.join(", ")
                    }
                ),
                "give a path on a block-device filesystem (not tmpfs/overlay/network)",
            )
            .into());
        }
        Ok(stack)
    }

    /// Kernel names ("loop0", "vda", "sda1", "md0", "dm-0", …) of every
    /// block device in the stack under `path`, top first, each once.
    pub fn device_names_under(&self, path: &Path) -> Result<Vec<String>> {
        Ok(self.stack_of(path)?.names())
    }

    /// Mounts of the block device `name` (kernel name, e.g. `loop1`, `sda`)
    /// or of one of its partitions; exact, so `loop1` never matches `loop10`.
    pub fn mounts_of_device(&self, name: &str) -> Result<Vec<&mount::Mount>> {
        let ids = block::DeviceIds::of(&self.host, name).map_err(|e| {
            Fix::new(
                format!("{name} is not a block device this host knows: {e}"),
                "give a device such as /dev/sdb or /dev/loop0",
            )
        })?;
        match self.mounts() {
            Ok(ms) => Ok(ms.of_device(&ids)),
            Err(e) => Err(anyhow::anyhow!("{e}")),
        }
    }
}
