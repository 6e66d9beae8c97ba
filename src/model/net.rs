//! Network interfaces that carry client traffic: the default route's NICs
//! (`/proc/net/route`, parsed by procfs-core `RouteEntries`), their receive
//! queues and RPS settings (sysfs), and the interrupt counts of their MSI
//! vectors (`/proc/interrupts`).

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

/// One line of `/proc/interrupts`: the total over every CPU and the
/// words after the counts (chip, hardware irq, trigger, device name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    pub total: u64,
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
    for line in text.lines() {
        let Some((irq, rest)) = line.split_once(':') else {
            continue;
        };
        let irq = irq.trim();
        if irq.is_empty() || irq.contains(char::is_whitespace) {
            continue; // the CPU header line has no colon; be safe anyway
        }
        let mut total: u64 = 0;
        let mut words = Vec::new();
        for w in rest.split_whitespace() {
            match w.parse::<u64>() {
                Ok(n) if words.is_empty() => total = total.saturating_add(n),
                _ => words.push(w),
            }
        }
        out.insert(
            irq.to_string(),
            Irq {
                total,
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

/// A NIC of the default route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    pub name: String,
    pub rx_queues: Vec<RxQueue>,
    /// Its MSI vectors (`device/msi_irqs`) with their `/proc/interrupts` line.
    pub irqs: Vec<Irq>,
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
            let irqs = host
                .list(format!("{base}/device/msi_irqs"))
                .unwrap_or_default()
                .iter()
                .filter_map(|i| interrupts.get(i).cloned())
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
        assert!(m["24"].is_rx());
        assert_eq!(m["25"].total, 11);
        assert!(!m["25"].is_rx());
        assert_eq!(m["NMI"].description, "Non-maskable interrupts");
        assert_eq!(m["ERR"].total, 0);
        assert!(!m.contains_key("CPU0"));
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
        let totals: Vec<(u64, bool)> = eth0.irqs.iter().map(|i| (i.total, i.is_rx())).collect();
        assert_eq!(totals, [(15, true), (2, false)]);
        assert!(nics[1].rx_queues.is_empty() && nics[1].irqs.is_empty());
        assert_eq!(rps_sock_flow_entries(&host), Some(32768));
        assert!(default_route_nics(&Host::with_root("/nonexistent-root")).is_empty());
    }
}
