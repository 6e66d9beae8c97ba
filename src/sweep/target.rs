//! The devices a sweep switches: every device in the stack under the path
//! that has a scheduler, with what it offers and holds now.

use crate::error::Fix;
use crate::host::Host;
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
}

pub fn attr(name: &str, a: &str) -> String {
    format!("/sys/block/{name}/queue/{a}")
}

/// Parse `none [mq-deadline] kyber` → (offered, active).
pub fn parse_scheduler(raw: &str) -> (Vec<String>, Option<String>) {
    let mut active = None;
    let offered = raw
        .split_whitespace()
        .map(|w| {
            if let Some(n) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                active = Some(n.to_string());
                n.to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    (offered, active)
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

/// Read one device; `None` when it has no scheduler (dm, md, partitions).
pub fn read_device(host: &Host, name: &str) -> Option<Device> {
    let raw = host.read(attr(name, "scheduler")).ok()?;
    let (offered, active) = parse_scheduler(&raw);
    let scheduler = active?;
    let rotational = host.read_u64(attr(name, "rotational")).ok().map(|v| v == 1);
    let hw_queues = host
        .list(format!("/sys/block/{name}/mq"))
        .ok()
        .map(|v| v.len());
    Some(Device {
        kernel_default: kernel_default(name, rotational, hw_queues),
        name: name.to_string(),
        offered,
        scheduler,
        nr_requests: host
            .read_u64(attr(name, "nr_requests"))
            .ok()
            .map(|v| v as u32),
        read_ahead_kb: host
            .read_u64(attr(name, "read_ahead_kb"))
            .ok()
            .map(|v| v as u32),
        rotational,
        hw_queues,
    })
}

/// Devices under `path` with a scheduler, top of the stack first.
pub fn devices_under(host: &Host, path: &Path) -> Result<(Vec<String>, Vec<Device>)> {
    let stack = crate::probe::stack_device_names(host, path)?;
    let devices: Vec<Device> = stack.iter().filter_map(|n| read_device(host, n)).collect();
    if devices.is_empty() {
        return Err(Fix::new(
            format!(
                "no device under {} has an I/O scheduler (stack: {})",
                path.display(),
                if stack.is_empty() {
                    "none found".into()
                } else {
                    stack.join(", ")
                }
            ),
            "give a path on a block-device filesystem (not tmpfs/overlay/network)",
        )
        .into());
    }
    Ok((stack, devices))
}

/// Keep the devices named by `--device` (stack order); every name must be
/// a device under `path` that has a scheduler.
pub fn only(devices: Vec<Device>, names: &[String], path: &Path) -> Result<Vec<Device>> {
    if names.is_empty() {
        return Ok(devices);
    }
    if let Some(bad) = names
        .iter()
        .find(|n| !devices.iter().any(|d| &d.name == *n))
    {
        let have: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        return Err(Fix::new(
            format!(
                "{bad} is not a device with a scheduler under {}",
                path.display()
            ),
            format!("--device takes one or more of: {}", have.join(", ")),
        )
        .into());
    }
    Ok(devices
        .into_iter()
        .filter(|d| names.contains(&d.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_list_and_defaults() {
        let (o, a) = parse_scheduler("none [mq-deadline] kyber bfq \n");
        assert_eq!(o, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(a.as_deref(), Some("mq-deadline"));
        assert_eq!(parse_scheduler("none").1, None);
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
