//! The I/O scheduler of every data disk: the class rule (NVMe → none, SATA
//! SSD → none or mq-deadline, HDD → mq-deadline, bfq/cfq flagged), a
//! sweep's significant winner overriding it, whether the choice survives a
//! reboot, `elevator=` on the kernel command line, and rotational=1 on
//! devices that cannot know.
//!
//! "Every data disk" is every whole disk under the datadir: the disk under
//! a partition, each member of an md RAID, the disks under LVM, and for a
//! loop device both the loop device and the disk holding its backing file.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::{DeviceFacts, Facts};
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "storage.scheduler",
    layer: Layer::Storage,
    scope: Scope::Host,
    about: "scheduler per device class or sweep result on every data disk; persistence; elevator=; unreliable rotational",
    run,
};

const DOC: &str = "https://docs.kernel.org/block/switching-sched.html";

/// The disk classes of the host model (one classifier for check and
/// bench --survey).
pub use crate::model::block::DiskClass as Class;

impl Class {
    fn describe(self) -> &'static str {
        match self {
            Class::Nvme => "an NVMe SSD",
            Class::SataSsd => "a SATA/SAS SSD (rotational=0)",
            Class::Hdd => "a rotating disk (rotational=1)",
            Class::Virtual => "a virtual or RAID-controller disk",
            Class::Loop => "a loop device",
            Class::Other => "a disk of unknown class",
        }
    }

    /// Schedulers the class rule accepts, preferred first.
    fn accepted(self, d: &DeviceFacts) -> Vec<&'static str> {
        accepted_for(self, kernel_choice(d))
    }
}

/// Schedulers the class rule accepts for a disk of `class` whose queue the
/// kernel gives `kernel_default`, preferred first (also what a sweep with
/// too small a budget tests first).
pub fn accepted_for(class: Class, kernel_default: &str) -> Vec<&'static str> {
    match class {
        Class::Nvme => vec!["none"],
        Class::SataSsd => vec!["mq-deadline", "none"],
        Class::Hdd => vec!["mq-deadline"],
        Class::Loop => vec!["none", "mq-deadline"],
        // Whatever the kernel gives this queue by default first.
        Class::Virtual | Class::Other => {
            if kernel_default == "none" {
                vec!["none", "mq-deadline"]
            } else {
                vec!["mq-deadline", "none"]
            }
        }
    }
}

pub fn class_of(d: &DeviceFacts) -> Class {
    crate::model::block::classify(
        crate::model::block::Kind::from_name(&d.kind),
        d.rotational,
        d.model.as_deref(),
    )
}

/// The scheduler the kernel gives `d`'s queue when nothing sets one: the
/// host model's rule (`model::block::kernel_default`, block/elevator.c's),
/// the same one sweep breaks ties with.
fn kernel_choice(d: &DeviceFacts) -> &'static str {
    crate::model::block::kernel_default(
        crate::model::block::Kind::from_name(&d.kind),
        d.hw_queues,
        d.tag_flags,
        &d.schedulers_available,
    )
}

/// The scheduler `d` gets at boot, and what sets it: the last matching
/// udev rule (udev reads rules in file-name order), overridden by systemd
/// units and tmpfiles.d entries (they run after udev's coldplug), else the
/// kernel's default.
pub fn boot_value(f: &Facts, d: &DeviceFacts) -> (Option<String>, String) {
    let applies = |r: &&crate::check::facts::SchedulerRule| {
        r.devices.contains(&d.name) && r.scheduler.is_some()
    };
    let udev_rule = |r: &&crate::check::facts::SchedulerRule| r.mechanism == "udev";
    let late = f
        .scheduler_rules
        .iter()
        .rfind(|r| !udev_rule(r) && applies(r));
    let udev = f
        .scheduler_rules
        .iter()
        .rfind(|r| udev_rule(r) && applies(r));
    match late.or(udev) {
        Some(r) => (
            r.scheduler.clone(),
            format!("{} {}:{}", r.mechanism, r.file, r.line),
        ),
        None => (
            Some(kernel_choice(d).to_string()),
            "the kernel's default".into(),
        ),
    }
}

fn where_(d: &DeviceFacts) -> String {
    match (d.relation.as_str(), &d.parent) {
        ("member", Some(p)) => format!("{} (member of {p})", d.name),
        ("whole_disk", Some(p)) => format!("{} (disk of {p})", d.name),
        ("backing", Some(p)) => format!("{} (holds {p}'s backing file)", d.name),
        _ => d.name.clone(),
    }
}

fn run(f: &Facts) -> Vec<Advice> {
    let mut out = Vec::new();
    if let Some(e) = f.host.cmdline_param("elevator") {
        // elevator= only ever chose the legacy (single-queue) scheduler;
        // blk-mq queues ignore it, and since Linux 5.4 block/elevator.c only
        // warns that it "does not have any effect anymore". A queue offering
        // mq-deadline/none is blk-mq; Linux ≥ 5.0 has nothing else.
        let blk_mq_only = f.host.kernel().map_or(true, |k| k >= (5, 0))
            || f.devices.iter().any(|d| {
                d.schedulers_available
                    .iter()
                    .any(|s| s == "mq-deadline" || s == "none")
            });
        if blk_mq_only {
            out.push(Advice::new(
                finding(
                    "storage.scheduler.cmdline",
                    Severity::Notice,
                    Layer::Storage,
                    SubjectKind::KernelParameter,
                    "elevator",
                    format!("elevator={e}"),
                    "blk-mq kernels ignore elevator= on the command line (the kernel only logs a warning): no disk gets this scheduler from it. Remove it and set schedulers per device (innotune apply installs a udev rule).",
                )
                .recommend("(remove elevator=)")
                .evidence(
                    Source::Observed,
                    format!(
                        "kernel {}: the disks' queues are blk-mq (they offer mq-deadline/none), which elevator= never applied to; since Linux 5.4 block/elevator.c only warns \"Kernel parameter elevator= does not have any effect anymore\"",
                        f.host.kernel_release.as_deref().unwrap_or("?")
                    ),
                )
                .reference(DOC),
            ));
        }
    }
    for d in f.devices.iter().filter(|d| d.is_scheduled_disk()) {
        let cur = d.scheduler.clone().unwrap_or_default();
        let class = class_of(d);
        let offered = |s: &str| d.schedulers_available.iter().any(|a| a == s);
        let sweep = f
            .sweeps
            .iter()
            .find(|s| s.devices.contains(&d.name) && s.significant && offered(&s.scheduler));
        let (desired, measured) = match sweep {
            Some(s) => (s.scheduler.clone(), true),
            None => {
                let acc = class.accepted(d);
                if acc.contains(&cur.as_str()) {
                    (cur.clone(), false)
                } else {
                    match acc.iter().find(|s| offered(s)) {
                        Some(s) => (s.to_string(), false),
                        None => continue,
                    }
                }
            }
        };
        let (boot, boot_src) = boot_value(f, d);
        let mut settings = vec![Setting::queue(&d.name, "scheduler", &desired)];
        if let Some(s) = sweep {
            if let (Some(n), Some(now)) = (s.nr_requests, d.nr_requests) {
                if n != now || cur != desired {
                    settings.push(Setting::queue(&d.name, "nr_requests", &n.to_string()));
                }
            }
        }
        if cur != desired {
            let legacy = cur == "bfq" || cur == "cfq";
            let (id, sev, reason, ev, src) = if let Some(s) = sweep {
                (
                    "storage.scheduler.measured",
                    Severity::Warning,
                    format!(
                        "a sweep on this host measured {desired} significantly better than {cur}; its result overrides the class rule ({}).",
                        class.describe()
                    ),
                    format!("{}: {}", s.file, s.reason),
                    Source::Measured,
                )
            } else {
                let why = match class {
                    Class::Nvme => "NVMe queues are deep and parallel; any scheduler only adds CPU per I/O and caps IOPS (bfq at ~1.9 µs per request, mq-deadline ~0.7 µs)",
                    Class::Hdd => "a rotating disk gains from mq-deadline's sorting and read deadlines",
                    Class::SataSsd => "a SATA SSD needs no reordering; mq-deadline keeps reads from starving behind writes in its 32-deep queue",
                    Class::Loop => "a loop device passes I/O to its backing file; the disk under it schedules",
                    Class::Virtual | Class::Other => "the class cannot be read from this device; the kernel's own default for its queue is the safe choice (run innotune sweep to measure)",
                };
                let note = if legacy {
                    format!(" {cur} trades throughput for desktop interactivity and costs CPU per request on a database disk.")
                } else {
                    String::new()
                };
                (
                    "storage.scheduler",
                    if legacy {
                        Severity::Warning
                    } else {
                        Severity::Notice
                    },
                    format!("{} is {}: {why}.{note}", where_(d), class.describe()),
                    format!(
                        "queue/scheduler offers {}; kind {}, rotational {}, {} hardware queue(s)",
                        d.schedulers_available.join(" "),
                        d.kind,
                        d.rotational
                            .map_or("unknown".to_string(), |r| (r as u8).to_string()),
                        d.hw_queues.map_or("?".to_string(), |n| n.to_string())
                    ),
                    Source::RuleOfThumb,
                )
            };
            let mut reason = reason;
            if boot.as_deref() != Some(desired.as_str()) && !boot_src.starts_with("the kernel") {
                reason.push_str(&format!(
                    " At boot {boot_src} sets {}.",
                    boot.as_deref().unwrap_or("?")
                ));
            }
            let mut fnd = finding(
                id,
                sev,
                Layer::Storage,
                SubjectKind::Device,
                &d.name,
                &cur,
                reason,
            )
            .recommend(&desired)
            .evidence(src, ev)
            .reference(DOC);
            if measured {
                fnd.evidence.source = Source::Measured;
            }
            let mut a = Advice::new(fnd);
            a.settings = settings;
            out.push(a);
        } else if boot.as_deref() != Some(desired.as_str()) {
            let sev = if matches!(boot.as_deref(), Some("bfq") | Some("cfq")) {
                Severity::Warning
            } else {
                Severity::Notice
            };
            let mut a = Advice::new(
                finding(
                    "storage.scheduler.persist",
                    sev,
                    Layer::Storage,
                    SubjectKind::Device,
                    &d.name,
                    format!("{cur} (at boot: {})", boot.as_deref().unwrap_or("?")),
                    format!(
                        "{} runs {cur} now, but nothing makes it survive a reboot: {boot_src} gives {} at boot. A udev rule keeps it.",
                        where_(d),
                        boot.as_deref().unwrap_or("?")
                    ),
                )
                .recommend(&cur)
                .evidence(
                    Source::Observed,
                    format!(
                        "no udev rule, systemd unit or tmpfiles.d entry sets {cur} on {}",
                        d.name
                    ),
                )
                .reference(DOC),
            );
            a.settings = settings;
            out.push(a);
        }
        // Rules that run after udev (systemd units, tmpfiles.d) would
        // override innotune's udev rule at every boot.
        for r in f.scheduler_rules.iter().filter(|r| {
            r.mechanism != "udev"
                && r.devices.contains(&d.name)
                && r.scheduler.as_deref().is_some_and(|s| s != desired)
        }) {
            out.push(Advice::new(
                finding(
                    "storage.scheduler.boot_override",
                    Severity::Warning,
                    Layer::Storage,
                    SubjectKind::File,
                    &format!("{}:{}", r.file, r.line),
                    format!("sets {} on {}", r.scheduler.as_deref().unwrap_or("?"), d.name),
                    format!(
                        "this {} runs after udev at boot and sets {} on {}, undoing {desired}; disable or edit it (innotune never edits files it did not write).",
                        if r.mechanism == "systemd" { "systemd unit" } else { "tmpfiles.d entry" },
                        r.scheduler.as_deref().unwrap_or("?"),
                        d.name
                    ),
                )
                .evidence(Source::Observed, format!("{}:{}", r.file, r.line)),
            ));
        }
        if d.rotational == Some(true)
            && class == Class::Virtual
            && !f.sweeps.iter().any(|s| s.devices.contains(&d.name))
        {
            out.push(Advice::new(
                finding(
                    "storage.rotational.unreliable",
                    Severity::Notice,
                    Layer::Storage,
                    SubjectKind::Device,
                    &d.name,
                    "rotational=1",
                    format!(
                        "{} is {}: it reports rotational=1 whatever media is behind it, so the class rule cannot tell an SSD from a disk here. Measure instead: innotune sweep DIR --format json > sweep.json, with DIR on {}'s filesystem outside the datadir, then innotune check --results sweep.json.",
                        where_(d),
                        class.describe(),
                        f.path
                    ),
                )
                .evidence(
                    Source::Observed,
                    format!(
                        "kind {}, model {}",
                        d.kind,
                        d.model.as_deref().unwrap_or("none")
                    ),
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::{SchedulerRule, SweepFacts};

    fn disk(name: &str, kind: &str, sched: &str, rot: bool, hwq: u64) -> DeviceFacts {
        DeviceFacts {
            name: name.into(),
            kind: kind.into(),
            relation: "member".into(),
            parent: Some("md0".into()),
            scheduler: Some(sched.into()),
            schedulers_available: vec![
                "none".into(),
                "mq-deadline".into(),
                "kyber".into(),
                "bfq".into(),
            ],
            rotational: Some(rot),
            hw_queues: Some(hwq),
            nr_requests: Some(64),
            ..Default::default()
        }
    }

    fn facts(devs: Vec<DeviceFacts>) -> Facts {
        Facts {
            path: "/var/lib/mysql".into(),
            devices: devs,
            ..Default::default()
        }
    }

    #[test]
    fn bfq_on_an_nvme_member_is_a_warning_with_none() {
        let f = facts(vec![
            disk("nvme0n1", "nvme", "none", false, 8),
            disk("nvme1n1", "nvme", "bfq", false, 8),
        ]);
        let a = run(&f);
        assert_eq!(a.len(), 1, "{a:#?}");
        let x = &a[0].finding;
        assert_eq!(
            (x.id.as_str(), x.subject.name.as_str(), x.observed.as_str()),
            ("storage.scheduler", "nvme1n1", "bfq")
        );
        assert_eq!(x.recommended.as_deref(), Some("none"));
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.reason.contains("member of md0"), "{}", x.reason);
        assert_eq!(
            a[0].settings,
            vec![Setting::queue("nvme1n1", "scheduler", "none")]
        );
    }

    #[test]
    fn ssd_accepts_none_but_not_persisted_is_flagged() {
        let f = facts(vec![disk("sda", "sata-scsi", "none", false, 1)]);
        let a = run(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.id, "storage.scheduler.persist");
        assert_eq!(a[0].finding.recommended.as_deref(), Some("none"));
        assert!(a[0].finding.observed.contains("at boot: mq-deadline"));
        // Persisted by a udev rule: nothing to say.
        let mut f = f;
        f.scheduler_rules.push(SchedulerRule {
            mechanism: "udev".into(),
            file: "/etc/udev/rules.d/60-x.rules".into(),
            line: 1,
            scheduler: Some("none".into()),
            devices: vec!["sda".into()],
        });
        assert!(run(&f).is_empty());
    }

    /// The boot value is the kernel's default, by block/elevator.c's rule:
    /// a multi-queue disk boots with none even when it spins, unless its
    /// tags are shared across the queues (a SAS HBA with host_tagset).
    #[test]
    fn the_kernel_default_is_elevator_c_s_whatever_the_disk() {
        let f = facts(vec![disk("sda", "sata-scsi", "mq-deadline", true, 8)]);
        let a = run(&f);
        assert_eq!(a.len(), 1, "{a:#?}");
        assert_eq!(a[0].finding.id, "storage.scheduler.persist");
        assert_eq!(a[0].finding.observed, "mq-deadline (at boot: none)");
        let mut shared = disk("sda", "sata-scsi", "mq-deadline", true, 8);
        shared.tag_flags = Some(crate::model::block::TagFlags {
            shared_tags: true,
            no_sched_by_default: false,
        });
        assert!(run(&facts(vec![shared])).is_empty());
        // A loop device boots with none even on one queue.
        let mut lo = disk("loop0", "loop", "mq-deadline", false, 1);
        lo.relation = "backing".into();
        let a = run(&facts(vec![lo]));
        assert_eq!(a[0].finding.observed, "mq-deadline (at boot: none)");
    }

    #[test]
    fn hdd_wants_mq_deadline_and_a_later_unit_is_flagged() {
        let mut f = facts(vec![disk("sda", "sata-scsi", "bfq", true, 1)]);
        f.scheduler_rules.push(SchedulerRule {
            mechanism: "systemd".into(),
            file: "/etc/systemd/system/disk-scheduler.service".into(),
            line: 6,
            scheduler: Some("bfq".into()),
            devices: vec!["sda".into()],
        });
        let a = run(&f);
        let ids: Vec<&str> = a.iter().map(|a| a.finding.id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["storage.scheduler", "storage.scheduler.boot_override"]
        );
        assert_eq!(a[0].finding.recommended.as_deref(), Some("mq-deadline"));
    }

    #[test]
    fn a_significant_sweep_overrides_the_class() {
        let mut f = facts(vec![disk("vda", "virtio", "mq-deadline", true, 1)]);
        assert!(run(&f)
            .iter()
            .any(|a| a.finding.id == "storage.rotational.unreliable"));
        f.sweeps.push(SweepFacts {
            file: "sweep.json".into(),
            devices: vec!["vda".into()],
            scheduler: "none".into(),
            significant: true,
            reason: "none better on mixed".into(),
            ..Default::default()
        });
        let a = run(&f);
        assert_eq!(a.len(), 1, "{a:#?}");
        assert_eq!(a[0].finding.id, "storage.scheduler.measured");
        assert_eq!(a[0].finding.evidence.source, Source::Measured);
        assert_eq!(a[0].finding.recommended.as_deref(), Some("none"));
    }

    #[test]
    fn elevator_on_the_cmdline() {
        let mut f = facts(vec![]);
        f.host.cmdline = Some("ro elevator=deadline".into());
        f.host.kernel_release = Some("4.18.0-513.el8".into());
        let mut legacy = disk("sda", "sata-scsi", "cfq", true, 1);
        legacy.schedulers_available = vec!["noop".into(), "deadline".into(), "cfq".into()];
        f.devices = vec![legacy];
        assert!(
            run(&f)
                .iter()
                .all(|a| a.finding.id != "storage.scheduler.cmdline"),
            "a legacy queue still obeys elevator="
        );
        f.devices = vec![disk("sda", "sata-scsi", "mq-deadline", true, 1)];
        let a = run(&f);
        assert_eq!(a[0].finding.id, "storage.scheduler.cmdline");
        assert_eq!(a[0].finding.observed, "elevator=deadline");
    }
}
