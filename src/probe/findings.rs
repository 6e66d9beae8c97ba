//! What probe noticed that is not a value, as [`Finding`]s with stable ids.
//!
//! probe is measurement-first: these inform (severity info or notice), never
//! change the exit code, and carry no change. Ids:
//! - `os.elevator_ignored`: `elevator=` on the kernel command line;
//! - `server.several_running`: PATH defaulted to one of several servers;
//! - `filesystem.no_block_device`: the mount has no block device under it;
//! - `filesystem.overlay.upperdir_not_visible`: an overlay's upperdir is in
//!   no mount probe can see;
//! - `innotune.unreadable`: a host file or link could not be read;
//! - `innotune.walk.revisited`, `innotune.walk.too_deep`: the stack walk
//!   met a device twice, or went deeper than it follows.

use crate::finding::{Finding, Layer, Severity, Source, Subject, SubjectKind};
use crate::model::stack::{Problem, MAX_DEPTH};
use crate::model::system::System;

/// One finding per problem of the stack walk.
pub fn from_problem(p: &Problem) -> Finding {
    match p {
        Problem::Unreadable { path, error } => Finding::new(
            "innotune.unreadable",
            Severity::Notice,
            Layer::Innotune,
            Subject::new(SubjectKind::File, path.clone()),
            error.clone(),
            "innotune could not read this host file or link, so what lies behind it is missing from the report.",
        )
        .evidence(Source::Observed, format!("reading {path}: {error}")),
        Problem::Revisited { device, from } => Finding::new(
            "innotune.walk.revisited",
            Severity::Info,
            Layer::Innotune,
            Subject::new(SubjectKind::Device, device.clone()),
            format!("reached again from {from}"),
            "The device was already in the stack (a cycle in slaves/, or a member shared by two devices); it is listed once.",
        )
        .evidence(Source::Observed, format!("{device} appears twice on the way down from the mount")),
        Problem::TooDeep { device } => Finding::new(
            "innotune.walk.too_deep",
            Severity::Notice,
            Layer::Innotune,
            Subject::new(SubjectKind::Device, device.clone()),
            format!("more than {MAX_DEPTH} levels"),
            "The device stack is deeper than probe follows; devices below this one are not in the report.",
        )
        .evidence(Source::Observed, format!("stopped at {device}")),
        Problem::NoBlockDevice { mount } => Finding::new(
            "filesystem.no_block_device",
            Severity::Info,
            Layer::Filesystem,
            Subject::new(SubjectKind::Mount, mount.mount_point.clone()),
            format!("{} from {} (device {})", mount.fs_type, mount.source, mount.maj_min),
            "This filesystem has no block device under it (memory, network or pseudo filesystem): there is no scheduler or queue to tune, and its I/O costs are not a disk's.",
        )
        .evidence(
            Source::Observed,
            format!("device number {} has no entry in /sys/dev/block and the source names no block device", mount.maj_min),
        ),
        Problem::UpperdirNotVisible {
            mount_point,
            upperdir,
        } => Finding::new(
            "filesystem.overlay.upperdir_not_visible",
            Severity::Notice,
            Layer::Filesystem,
            Subject::new(SubjectKind::Mount, mount_point.clone()),
            format!("overlay, upperdir {upperdir}"),
            "An overlay's writes land in its upperdir, but no mount visible here contains it (probe runs in another mount namespace than the container runtime), so the disk under it is unknown.",
        )
        .recommend("run probe on the host, on the upperdir or on the datadir's bind mount")
        .evidence(Source::Observed, format!("no line of /proc/self/mountinfo holds {upperdir}")),
    }
}

/// `elevator=` on the kernel command line.
pub fn elevator_ignored(system: &System) -> Option<Finding> {
    let e = system.cmdline_elevator.as_ref()?;
    let kernel = system
        .kernel_release
        .value()
        .map(|k| format!(" on kernel {k}"))
        .unwrap_or_default();
    Some(
        Finding::new(
            "os.elevator_ignored",
            Severity::Notice,
            Layer::Os,
            Subject::new(SubjectKind::KernelParameter, "elevator"),
            format!("elevator={e}"),
            "blk-mq kernels (every kernel since 5.0) ignore elevator= and only log a warning; the scheduler it names is not in effect unless a udev rule or unit sets it per device.",
        )
        .recommend("drop elevator=; set the scheduler per device in queue/scheduler, made persistent with a udev rule")
        .evidence(Source::Observed, format!("/proc/cmdline has elevator={e}{kernel}"))
        .reference("https://docs.kernel.org/block/switching-sched.html"),
    )
}

/// PATH was not given and several servers run: probe took the lowest pid's datadir.
pub fn several_servers(n: usize, pid: u32, datadir: &str) -> Finding {
    Finding::new(
        "server.several_running",
        Severity::Info,
        Layer::Server,
        Subject::new(SubjectKind::Process, format!("pid {pid}")),
        format!("{n} mysqld/mariadbd processes run"),
        format!("PATH defaulted to the datadir of the lowest pid, {pid} ({datadir}); the others may sit on other devices."),
    )
    .recommend("give PATH to probe another server's datadir")
    .evidence(Source::Observed, format!("{n} processes named mysqld or mariadbd in /proc"))
}
