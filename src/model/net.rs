//! Network interfaces that carry client traffic: the default route's NICs
//! (`/proc/net/route`, parsed by procfs-core `RouteEntries`), their receive
//! queues and RPS settings (sysfs), the interrupt counts of their MSI
//! vectors per CPU (`/proc/interrupts`) and where each vector may and does
//! land (`/proc/irq/N/smp_affinity`, `effective_affinity_list`).

use crate::host::Host;
use procfs_core::FromBufRead;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Interfaces of the IPv4 default route (destination 0.0.0.0), in table
/// order, each once. Blank lines are dropped before procfs-core parses
/// (it takes every line after the header for a route).
pub fn parse_default_route(text: &str) -> Result<Vec<String>, String> {
    let lines: String = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let routes = procfs_core::net::RouteEntries::from_buf_read(lines.as_bytes())
        .map_err(super::proc_error)?;
    let mut names: Vec<String> = Vec::new();
    for r in routes.0 {
        if r.destination == Ipv4Addr::UNSPECIFIED && !names.contains(&r.iface) {
            names.push(r.iface);
        }
    }
    Ok(names)
}

/// One line of `/proc/interrupts`: the total over every CPU, the count
/// of each CPU (by the CPU ids of the header line: an offline CPU has no
/// column) and the words after the counts (chip, hardware irq, trigger,
/// device name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    /// The irq's name (`24`, `NMI`).
    pub name: String,
    pub total: u64,
    /// (CPU id, count), in column order.
    pub per_cpu: Vec<(u32, u64)>,
    pub description: String,
}

impl Irq {
    /// A receive vector, by the names drivers give them (`eth0-rx-0`,
    /// `virtio0-input.0`, `mlx5_comp0` does not say and is not one).
    pub fn is_rx(&self) -> bool {
        let d = self.description.to_ascii_lowercase();
        d.contains("input") || d.contains("rx")
    }
}

/// `/proc/interrupts` by irq name (`24`, `NMI`, …). Hand-written:
/// procfs-core (0.18) has no parser for this file. A count is a number
/// before the first word; the rest of the line is the description.
pub fn parse_interrupts(text: &str) -> BTreeMap<String, Irq> {
    let mut out = BTreeMap::new();
    // The header names the CPU of each column (`CPU0 CPU2` with CPU1 offline).
    let mut columns: Vec<u32> = Vec::new();
    for line in text.lines() {
        let Some((irq, rest)) = line.split_once(':') else {
            if columns.is_empty() {
                columns = line
                    .split_whitespace()
                    .filter_map(|w| w.strip_prefix("CPU")?.parse().ok())
                    .collect();
            }
            continue;
        };
        let irq = irq.trim();
        if irq.is_empty() || irq.contains(char::is_whitespace) {
            continue; // the CPU header line has no colon; be safe anyway
        }
        let mut total: u64 = 0;
        let mut per_cpu = Vec::new();
        let mut words = Vec::new();
        for w in rest.split_whitespace() {
            match w.parse::<u64>() {
                Ok(n) if words.is_empty() => {
                    total = total.saturating_add(n);
                    let cpu = columns
                        .get(per_cpu.len())
                        .copied()
                        .unwrap_or(per_cpu.len() as u32);
                    per_cpu.push((cpu, n));
                }
                _ => words.push(w),
            }
        }
        out.insert(
            irq.to_string(),
            Irq {
                name: irq.to_string(),
                total,
                per_cpu,
                description: words.join(" "),
            },
        );
    }
    out
}

/// A receive queue of a NIC (`/sys/class/net/NIC/queues/rx-N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxQueue {
    pub name: String,
    /// `rps_cpus`, the CPU mask as the kernel prints it.
    pub rps_cpus: Option<String>,
    pub rps_flow_cnt: Option<u64>,
}

/// Where an interrupt may and does land (`/proc/irq/N/`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Affinity {
    /// `smp_affinity`: the hex CPU mask it may land on (what is written).
    pub mask: Option<String>,
    /// `effective_affinity_list`: the CPUs the kernel actually delivers it
    /// to (x86 delivers to one), when the kernel shows it.
    pub effective: Option<Vec<u32>>,
}

/// `/proc/irq/N/smp_affinity` and `effective_affinity_list`.
pub fn affinity(host: &Host, irq: &str) -> Affinity {
    let base = format!("/proc/irq/{irq}");
    Affinity {
        mask: host.read_trim(format!("{base}/smp_affinity")).ok(),
        effective: host
            .read_trim(format!("{base}/effective_affinity_list"))
            .ok()
            .and_then(|l| super::system::parse_ranges(&l)),
    }
}

/// The CPUs of a hex CPU mask as the kernel prints it (`00000000,00000005`
/// = CPUs 0 and 2); `None` when it is not one.
pub fn mask_cpus(mask: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for (i, group) in mask.trim().rsplit(',').enumerate() {
        if group.is_empty() || group.len() > 8 {
            return None;
        }
        let g = u32::from_str_radix(group, 16).ok()?;
        for bit in 0..32 {
            if g & (1 << bit) != 0 {
                cpus.push(i as u32 * 32 + bit);
            }
        }
    }
    cpus.sort_unstable();
    Some(cpus)
}

/// The hex CPU mask of one CPU, as sysfs and procfs print masks (32-bit
/// groups, comma-separated, most significant first).
pub fn one_cpu_mask(cpu: u32) -> String {
    let top = cpu / 32;
    let mut out = format!("{:x}", 1u32 << (cpu % 32));
    for _ in 0..top {
        out.push_str(",00000000");
    }
    out
}

/// A NIC of the default route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    pub name: String,
    pub rx_queues: Vec<RxQueue>,
    /// Its MSI vectors (`device/msi_irqs`, or the PCI function's above a
    /// virtio device) with their `/proc/interrupts` line and affinity.
    pub irqs: Vec<(Irq, Affinity)>,
}

/// The MSI vectors of a NIC: `device/msi_irqs`, or for a virtio NIC
/// (whose `device` is the virtio device) the PCI function's above it.
fn msi_irqs(host: &Host, nic: &str) -> Vec<String> {
    let base = format!("/sys/class/net/{nic}");
    if let Ok(v) = host.list(format!("{base}/device/msi_irqs")) {
        return v;
    }
    // /sys/class/net/NIC is itself a link into /sys/devices on a real host.
    let dir = host
        .resolve(&base)
        .unwrap_or_else(|_| std::path::PathBuf::from(&base));
    let Ok(dev) = host.resolve(dir.join("device")) else {
        return Vec::new();
    };
    // Only above a virtio device: above a PCI NIC is a bridge's vectors.
    if !dev
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("virtio"))
    {
        return Vec::new();
    }
    dev.parent()
        .and_then(|p| host.list(p.join("msi_irqs")).ok())
        .unwrap_or_default()
}

/// The NICs of the default route; empty when `/proc/net/route` cannot be
/// read or parsed (a container without a network namespace of its own, a
/// fixture without one).
pub fn default_route_nics(host: &Host) -> Vec<Nic> {
    let Some(names) = host
        .read("/proc/net/route")
        .ok()
        .and_then(|t| parse_default_route(&t).ok())
    else {
        return Vec::new();
    };
    let interrupts = parse_interrupts(&host.read("/proc/interrupts").unwrap_or_default());
    names
        .into_iter()
        .map(|n| {
            let base = format!("/sys/class/net/{n}");
            let rx_queues = host
                .list(format!("{base}/queues"))
                .unwrap_or_default()
                .into_iter()
                .filter(|q| q.starts_with("rx-"))
                .map(|q| RxQueue {
                    rps_cpus: host.read_trim(format!("{base}/queues/{q}/rps_cpus")).ok(),
                    rps_flow_cnt: host
                        .read_u64(format!("{base}/queues/{q}/rps_flow_cnt"))
                        .ok(),
                    name: q,
                })
                .collect();
            let irqs = msi_irqs(host, &n)
                .iter()
                .filter_map(|i| Some((interrupts.get(i)?.clone(), affinity(host, i))))
                .collect();
            Nic {
                name: n,
                rx_queues,
                irqs,
            }
        })
        .collect()
}

/// `net.core.rps_sock_flow_entries`.
pub fn rps_sock_flow_entries(host: &Host) -> Option<u64> {
    host.read_u64("/proc/sys/net/core/rps_sock_flow_entries")
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTE: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
eth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n\
bond1\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0\n\
eth0\t00000000\t0100A8C0\t0003\t0\t0\t300\t00000000\t0\t0\t0\n\n";

    #[test]
    fn default_route_interfaces_once_in_table_order() {
        assert_eq!(parse_default_route(ROUTE).unwrap(), ["eth0", "bond1"]);
        assert_eq!(
            parse_default_route(ROUTE.lines().next().unwrap()).unwrap(),
            Vec::<String>::new()
        );
        let e = parse_default_route(&ROUTE.replace("0000A8C0", "zz")).unwrap_err();
        assert!(e.starts_with("not in the kernel's format"), "{e}");
    }

    #[test]
    fn interrupts_sum_the_cpus_and_keep_the_name() {
        let t = "           CPU0       CPU1       \n\
  24:       1200         34   PCI-MSIX-0000:00:03.0   1-edge      virtio0-input.0\n\
  25:          5          6   PCI-MSIX-0000:00:03.0   2-edge      virtio0-output.0\n\
 NMI:          0          0   Non-maskable interrupts\n\
 ERR:          0\n";
        let m = parse_interrupts(t);
        assert_eq!(m["24"].total, 1234);
        assert_eq!(m["24"].per_cpu, [(0, 1200), (1, 34)]);
        assert_eq!(m["24"].name, "24");
        assert!(m["24"].is_rx());
        assert_eq!(m["25"].total, 11);
        assert!(!m["25"].is_rx());
        assert_eq!(m["NMI"].description, "Non-maskable interrupts");
        assert_eq!(m["ERR"].total, 0);
        assert!(!m.contains_key("CPU0"));
    }

    #[test]
    fn offline_cpus_have_no_column_and_masks_name_cpus() {
        let m = parse_interrupts("   CPU0   CPU2\n 30:  5  7  PCI-MSI eth0-rx-0\n");
        assert_eq!(m["30"].per_cpu, [(0, 5), (2, 7)]);
        assert_eq!(mask_cpus("00000000,00000005"), Some(vec![0, 2]));
        assert_eq!(mask_cpus("1,00000000"), Some(vec![32]));
        assert_eq!(mask_cpus("ff"), Some((0..8).collect()));
        assert_eq!(mask_cpus("zz"), None);
        assert_eq!(one_cpu_mask(0), "1");
        assert_eq!(one_cpu_mask(5), "20");
        assert_eq!(one_cpu_mask(33), "2,00000000");
        assert_eq!(mask_cpus(&one_cpu_mask(33)), Some(vec![33]));
    }

    /// A virtio NIC's vectors belong to the PCI function above its
    /// virtio device (`/sys/class/net/eth0 -> …/0000:00:03.0/virtio2/net/eth0`).
    #[test]
    fn virtio_vectors_are_the_pci_functions() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let pci = r.join("sys/devices/pci0000:00/0000:00:03.0");
        std::fs::create_dir_all(pci.join("virtio2/net/eth0/queues/rx-0")).unwrap();
        std::fs::create_dir_all(pci.join("msi_irqs")).unwrap();
        std::fs::write(pci.join("msi_irqs/38"), "msix\n").unwrap();
        std::os::unix::fs::symlink("../../../virtio2", pci.join("virtio2/net/eth0/device"))
            .unwrap();
        std::fs::create_dir_all(r.join("sys/class/net")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0",
            r.join("sys/class/net/eth0"),
        )
        .unwrap();
        let host = Host::with_root(r);
        assert_eq!(msi_irqs(&host, "eth0"), ["38"]);
        assert!(msi_irqs(&host, "eth9").is_empty());
    }

    #[test]
    fn nics_of_a_tree() {
        let root = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let p = root.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w("/proc/net/route", ROUTE);
        w(
            "/proc/interrupts",
            "      CPU0 CPU1\n 40: 7 8 PCI-MSI 1-edge eth0-rx-0\n 41: 1 1 PCI-MSI 2-edge eth0-tx-0\n",
        );
        w("/sys/class/net/eth0/queues/rx-0/rps_cpus", "00000000\n");
        w("/sys/class/net/eth0/queues/rx-0/rps_flow_cnt", "0\n");
        w("/sys/class/net/eth0/queues/tx-0/xps_cpus", "1\n");
        w("/sys/class/net/eth0/device/msi_irqs/40", "msix\n");
        w("/sys/class/net/eth0/device/msi_irqs/41", "msix\n");
        w("/proc/irq/40/smp_affinity", "00000002\n");
        w("/proc/irq/40/effective_affinity_list", "1\n");
        w("/proc/sys/net/core/rps_sock_flow_entries", "32768\n");
        let host = Host::with_root(root.path());
        let nics = default_route_nics(&host);
        assert_eq!(nics.len(), 2, "eth0 and bond1 carry the default route");
        let eth0 = &nics[0];
        assert_eq!(eth0.name, "eth0");
        assert_eq!(
            eth0.rx_queues,
            [RxQueue {
                name: "rx-0".into(),
                rps_cpus: Some("00000000".into()),
                rps_flow_cnt: Some(0)
            }]
        );
        let totals: Vec<(u64, bool)> = eth0
            .irqs
            .iter()
            .map(|(i, _)| (i.total, i.is_rx()))
            .collect();
        assert_eq!(
            eth0.irqs[0].1,
            Affinity {
                mask: Some("00000002".into()),
                effective: Some(vec![1])
            }
        );
        assert_eq!(eth0.irqs[1].1, Affinity::default());
        assert_eq!(totals, [(15, true), (2, false)]);
        assert!(nics[1].rx_queues.is_empty() && nics[1].irqs.is_empty());
        assert_eq!(rps_sock_flow_entries(&host), Some(32768));
        assert!(default_route_nics(&Host::with_root("/nonexistent-root")).is_empty());
    }
}
