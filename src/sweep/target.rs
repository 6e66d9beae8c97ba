//! The devices a sweep switches: every device in the stack under the path
//! that has a scheduler, with what it offers and holds now.

use crate::host::Host;
use crate::model::block::Queue;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Kernel name, e.g. `loop0`, `vda`.
    pub name: String,
    /// Schedulers the kernel offers for it, in sysfs order.
    pub offered: Vec<String>,
    /// The scheduler active when the sweep started.
    pub scheduler: String,
    pub nr_requests: Option<u32>,
    pub read_ahead_kb: Option<u32>,
    pub rotational: Option<bool>,
    /// Hardware queues (entries of /sys/block/NAME/mq).
    pub hw_queues: Option<usize>,
    /// The scheduler the kernel picks for this device class, used to break ties.
    pub kernel_default: String,
    /// Schedulers check's class rule accepts for this device, preferred
    /// first (what a too-small budget tests first, with the kernel default).
    pub class_schedulers: Vec<String>,
}

pub fn attr(name: &str, a: &str) -> String {
    format!("/sys/block/{name}/queue/{a}")
}

/// The kernel's default for a device class. The kernel (block/elevator.c)
/// gives mq-deadline to single-hardware-queue devices and none to multi-queue
/// ones; drivers that opt out (loop sets BLK_MQ_F_NO_SCHED_BY_DEFAULT) get
/// none. Rotational disks get mq-deadline whatever their queue count, which
/// is what the storage practice (and the kernel docs' advice for HDDs) says.
pub fn kernel_default(name: &str, rotational: Option<bool>, hw_queues: Option<usize>) -> String {
    if name.starts_with("loop") {
        return "none".into();
    }
    if rotational == Some(true) || matches!(hw_queues, None | Some(0..=1)) {
        "mq-deadline".into()
    } else {
        "none".into()
    }
}

/// A device as sweep sees it, from the host model's queue; `None` when it
/// has no scheduler to switch (bio-based dm and md print a bare `none`).
fn from_queue(d: &crate::model::stack::StackDevice, q: &Queue) -> Option<Device> {
    let name = d.name.as_str();
    if !q.switchable() {
        return None;
    }
    let rotational = q.rotational.value().copied();
    let hw_queues = q.hw_queues.value().map(|v| *v as usize);
    let default = kernel_default(name, rotational, hw_queues);
    let class =
        crate::model::block::classify(d.kind, rotational, d.model.value().map(|m| m.as_str()));
    Some(Device {
        class_schedulers: crate::check::rules::scheduler::accepted_for(class, &default)
            .into_iter()
            .map(String::from)
            .collect(),
        kernel_default: default,
        name: name.to_string(),
        offered: q.schedulers_available.value()?.clone(),
        scheduler: q.scheduler.value()?.clone(),
        nr_requests: q.nr_requests.value().map(|v| *v as u32),
        read_ahead_kb: q.read_ahead_bytes.value().map(|v| (*v / 1024) as u32),
        rotational,
        hw_queues,
    })
}

/// Devices under `path` with a scheduler, top of the stack first, and
/// the names of the whole stack.
pub fn devices_under(host: &Host, path: &Path) -> Result<(Vec<String>, Vec<Device>)> {
    // One walk: the stack's queues are the ones sweep decides on.
    let walked = crate::model::HostModel::read(host).scheduled_under(path)?;
    let devices = walked
        .scheduled()
        .into_iter()
        .filter_map(|d| d.queue.as_ref().and_then(|q| from_queue(d, q)))
        .collect();
    Ok((walked.names(), devices))
}

/// Keep the devices named by `--device` (stack order); every name must be
/// a device under `path` that has a scheduler.
pub fn only(devices: Vec<Device>, names: &[String], path: &Path) -> Result<Vec<Device>> {
    crate::model::stack::only(devices, |d| d.name.as_str(), names, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_defaults() {
        assert_eq!(kernel_default("nvme0n1", Some(false), Some(16)), "none");
        assert_eq!(kernel_default("sda", Some(false), Some(1)), "mq-deadline");
        assert_eq!(kernel_default("sdb", Some(true), Some(4)), "mq-deadline");
        assert_eq!(kernel_default("loop3", Some(true), Some(1)), "none");
    }

    #[test]
    fn device_filter_keeps_stack_order_and_names_the_choices() {
        let dev = |n: &str| Device {
            name: n.into(),
            offered: vec!["none".into()],
            scheduler: "none".into(),
            nr_requests: None,
            read_ahead_kb: None,
            rotational: None,
            hw_queues: None,
            kernel_default: "none".into(),
            class_schedulers: vec!["none".into()],
        };
        let all = || vec![dev("loop0"), dev("vda")];
        let p = Path::new("/data");
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let kept = only(all(), &names(&["vda"]), p).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name, "vda");
        assert_eq!(only(all(), &[], p).unwrap().len(), 2);
        let e = only(all(), &names(&["vda", "sdz"]), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sdz is not a device"), "{e}");
        assert!(e.contains("loop0, vda"), "{e}");
    }
}
