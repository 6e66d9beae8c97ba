//! The one adapter from probe's report (the host model's view of the
//! stack under a path, plus a few configuration files probe does not read)
//! to [`Facts`]: when the model changes, only this file changes.

use super::facts::*;
use crate::host::{Host, Known};
use crate::model::stack::Relation;
use crate::probe::ProbeReport;
use std::collections::BTreeMap;
use std::path::Path;

fn k<T: Clone>(x: &Known<T>) -> Option<T> {
    x.value().cloned()
}

/// Facts about the host under `probe.path`; `server_pid` picks the
/// mysqld process when a server was reached.
pub fn facts(host: &Host, probe: &ProbeReport, server_pid: Option<u32>) -> Facts {
    let mount = probe.mount.value().map(|m| MountFacts {
        mount_point: m.mount_point.clone(),
        fs_type: m.fs_type.clone(),
        source: m.source.clone(),
        options: m.mount_options.clone(),
        super_options: m.super_options.clone(),
        atime: m.decoded.atime.clone(),
        barrier: m.decoded.barrier.clone(),
        free_bytes: if host.is_live() {
            rustix::fs::statvfs(Path::new(&probe.path))
                .ok()
                .map(|s| s.f_bavail * s.f_frsize)
        } else {
            None
        },
    });
    let devices = probe
        .stack
        .iter()
        .map(|d| {
            let q = d.queue.as_ref();
            let sys = Path::new(&d.sysfs_path);
            let serial = if d.partition.is_none() {
                ["device/serial", "serial"]
                    .iter()
                    .find_map(|a| host.read_trim(sys.join(a)).ok())
                    .filter(|s| !s.is_empty())
            } else {
                None
            };
            DeviceFacts {
                name: d.name.clone(),
                depth: d.depth,
                parent: d.parent.clone(),
                relation: match d.relation {
                    Relation::Mounted => "mounted",
                    Relation::WholeDisk => "whole_disk",
                    Relation::Member => "member",
                    Relation::Backing => "backing",
                    Relation::Upperdir => "upperdir",
                }
                .into(),
                kind: d.kind.as_str().into(),
                model: k(&d.model),
                model_attr: if d.partition.is_none() && !d.kind.is_virtual() {
                    host.read_trim(sys.join("device/model"))
                        .ok()
                        .filter(|m| !m.is_empty())
                } else {
                    None
                },
                serial,
                partition: d.partition.is_some(),
                start_sector: d
                    .partition
                    .as_ref()
                    .and_then(|p| k(&p.start_bytes))
                    .map(|b| b / 512),
                disk: d.partition.as_ref().map(|p| p.disk.clone()),
                scheduler: q.and_then(|q| k(&q.scheduler)),
                schedulers_available: q
                    .and_then(|q| k(&q.schedulers_available))
                    .unwrap_or_default(),
                rotational: q.and_then(|q| k(&q.rotational)),
                nr_requests: q.and_then(|q| k(&q.nr_requests)),
                read_ahead_kb: q.and_then(|q| k(&q.read_ahead_bytes)).map(|b| b / 1024),
                hw_queues: q.and_then(|q| k(&q.hw_queues)),
                zoned: q.and_then(|_| host.read_trim(sys.join("queue/zoned")).ok()),
                md_level: d.md.as_ref().and_then(|m| k(&m.level)),
                md_chunk_bytes: d.md.as_ref().and_then(|m| k(&m.chunk_bytes)),
                md_raid_disks: d.md.as_ref().and_then(|m| k(&m.raid_disks)),
                dm_target: d.dm.as_ref().map(|x| x.target.clone()),
                dm_name: d.dm.as_ref().and_then(|x| k(&x.name)),
                loop_backing: d.loop_dev.as_ref().and_then(|l| k(&l.backing_file)),
                members: d.members.clone(),
            }
        })
        .collect();
    let h = &probe.host;
    let host_facts = HostFacts {
        kernel_release: k(&h.kernel_release),
        cpus: k(&h.cpus),
        memory_bytes: k(&h.memory_bytes),
        numa_nodes: k(&h.numa_nodes),
        swappiness: k(&h.vm_swappiness),
        dirty_ratio: k(&h.vm_dirty_ratio_pct),
        dirty_background_ratio: k(&h.vm_dirty_background_ratio_pct),
        dirty_bytes: k(&h.vm_dirty_bytes),
        dirty_background_bytes: k(&h.vm_dirty_background_bytes),
        thp_enabled: k(&h.thp_enabled),
        aio_max_nr: k(&h.fs_aio_max_nr),
        nr_open: k(&h.fs_nr_open),
        cmdline: k(&h.kernel_cmdline),
    };
    let norm = |p: &str| p.trim_end_matches('/').to_string();
    let chosen = server_pid
        .and_then(|pid| probe.mysqld.iter().find(|m| m.pid == pid))
        .or_else(|| {
            probe
                .mysqld
                .iter()
                .find(|m| norm(&m.datadir) == norm(&probe.path))
        });
    let mysqld = chosen.map(|m| {
        let lim = |l: &Known<crate::probe::mysqld::Limit>, soft: bool| {
            l.value().map(|l| match if soft { l.soft } else { l.hard } {
                crate::probe::mysqld::LimitValue::Value(v) => Limit::Value(v),
                crate::probe::mysqld::LimitValue::Unlimited => Limit::Unlimited,
            })
        };
        let service = service_of(host, m.pid);
        ProcessFacts {
            pid: m.pid,
            comm: m.comm.clone(),
            nofile_soft: lim(&m.open_files_limit, true),
            nofile_hard: lim(&m.open_files_limit, false),
            nproc_soft: lim(&m.processes_limit, true),
            unit_nofile: service.as_deref().and_then(|s| unit_nofile(host, s)),
            service,
        }
    });
    let scheduler_rules = probe
        .persistence
        .iter()
        .map(|r| SchedulerRule {
            mechanism: r.mechanism.clone(),
            file: r.file.clone(),
            line: r.line,
            scheduler: r.scheduler.clone(),
            devices: r.devices.clone(),
        })
        .collect();
    let (nics, rps) = nics(host);
    Facts {
        path: probe.path.clone(),
        fstab_line: mount
            .as_ref()
            .and_then(|m| fstab_line(host, &m.mount_point)),
        mount,
        devices,
        host: host_facts,
        mysqld,
        scheduler_rules,
        sysctl_boot: sysctl_boot(host),
        thp_boot: thp_boot(host, &probe.host),
        udev: [
            "/etc/udev/rules.d",
            "/lib/udev/rules.d",
            "/usr/lib/udev/rules.d",
        ]
        .iter()
        .any(|d| host.exists(d)),
        nics,
        rps_sock_flow_entries: rps,
        server: None,
        sweeps: Vec::new(),
        write_iops: None,
        slowlog: None,
    }
}

/// The systemd service a process runs in, from its cgroup path.
fn service_of(host: &Host, pid: u32) -> Option<String> {
    let t = host.read(format!("/proc/{pid}/cgroup")).ok()?;
    t.lines()
        .filter_map(|l| l.rsplit(':').next())
        .flat_map(|p| p.split('/'))
        .rfind(|c| c.ends_with(".service"))
        .map(str::to_string)
}

/// Unit directories, highest precedence first (systemd.unit(5)).
pub const UNIT_DIRS: [&str; 4] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];

/// LimitNOFILE= for a service: the unit file, then its drop-ins in name
/// order (a later one wins).
fn unit_nofile(host: &Host, service: &str) -> Option<(String, String)> {
    let mut found = None;
    let grab = |file: &str, found: &mut Option<(String, String)>| {
        if let Ok(t) = host.read(file) {
            for l in t.lines() {
                if let Some(v) = l.trim().strip_prefix("LimitNOFILE=") {
                    *found = Some((v.trim().to_string(), file.to_string()));
                }
            }
        }
    };
    if let Some(d) = UNIT_DIRS
        .iter()
        .find(|d| host.exists(format!("{d}/{service}")))
    {
        grab(&format!("{d}/{service}"), &mut found);
    }
    let mut dropins: BTreeMap<String, String> = BTreeMap::new();
    for d in UNIT_DIRS.iter().rev() {
        let dir = format!("{d}/{service}.d");
        for n in host.list(&dir).unwrap_or_default() {
            if n.ends_with(".conf") {
                dropins.insert(n.clone(), format!("{dir}/{n}"));
            }
        }
    }
    for f in dropins.values() {
        grab(f, &mut found);
    }
    found
}

/// Sysctls as systemd-sysctl sets them at boot: every *.conf of the
/// sysctl.d directories in name order (a name in /etc masks the same name
/// elsewhere), then /etc/sysctl.conf.
pub fn sysctl_boot(host: &Host) -> BTreeMap<String, (String, String)> {
    const DIRS: [&str; 5] = [
        "/etc/sysctl.d",
        "/run/sysctl.d",
        "/usr/local/lib/sysctl.d",
        "/usr/lib/sysctl.d",
        "/lib/sysctl.d",
    ];
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for d in DIRS {
        for n in host.list(d).unwrap_or_default() {
            if n.ends_with(".conf") {
                by_name.entry(n.clone()).or_insert(format!("{d}/{n}"));
            }
        }
    }
    let mut files: Vec<String> = by_name.into_values().collect();
    files.push("/etc/sysctl.conf".into());
    let mut out = BTreeMap::new();
    for f in files {
        let Ok(t) = host.read(&f) else { continue };
        for l in t.lines() {
            let l = l.trim().trim_start_matches('-');
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                continue;
            }
            if let Some((key, v)) = l.split_once('=') {
                let key = key.trim().replace('/', ".");
                out.insert(key, (v.trim().to_string(), f.clone()));
            }
        }
    }
    out
}

/// Transparent hugepages at boot: tmpfiles.d entries and systemd units
/// writing `enabled` (they run after the kernel command line), else the
/// command line's transparent_hugepage=.
fn thp_boot(host: &Host, h: &crate::model::system::System) -> Option<(String, String)> {
    const P: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    let mut found = h.kernel_cmdline.value().and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.strip_prefix("transparent_hugepage="))
            .map(|v| (v.to_string(), "kernel command line".to_string()))
    });
    for d in ["/usr/lib/tmpfiles.d", "/etc/tmpfiles.d"] {
        for n in host.list(d).unwrap_or_default() {
            let f = format!("{d}/{n}");
            let Ok(t) = host.read(&f) else { continue };
            for l in t.lines() {
                let w: Vec<&str> = l.split_whitespace().collect();
                if w.len() >= 7 && w[0].starts_with('w') && w[1] == P {
                    found = Some((w[6].to_string(), f.clone()));
                }
            }
        }
    }
    for n in host.list("/etc/systemd/system").unwrap_or_default() {
        let f = format!("/etc/systemd/system/{n}");
        let Ok(t) = host.read(&f) else { continue };
        for l in t.lines().filter(|l| l.contains(P) && l.contains("echo ")) {
            if let Some(v) = l
                .split("echo ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
            {
                found = Some((v.trim_matches(['"', '\'']).to_string(), f.clone()));
            }
        }
    }
    found
}

/// The /etc/fstab line mounting `mount_point` (`\040` decoded).
fn fstab_line(host: &Host, mount_point: &str) -> Option<String> {
    let t = host.read("/etc/fstab").ok()?;
    t.lines()
        .find(|l| {
            let l = l.trim();
            !l.starts_with('#')
                && l.split_whitespace()
                    .nth(1)
                    .is_some_and(|m| crate::model::mount::unescape(m) == mount_point)
        })
        .map(|l| l.trim().to_string())
}

/// NICs of the default route, their receive queues and interrupt counts.
fn nics(host: &Host) -> (Vec<NicFacts>, Option<u64>) {
    let rps = host
        .read_u64("/proc/sys/net/core/rps_sock_flow_entries")
        .ok();
    let Ok(route) = host.read("/proc/net/route") else {
        return (Vec::new(), rps);
    };
    let mut names: Vec<String> = Vec::new();
    for l in route.lines().skip(1) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() > 2 && w[1] == "00000000" && !names.contains(&w[0].to_string()) {
            names.push(w[0].to_string());
        }
    }
    let interrupts = host.read("/proc/interrupts").unwrap_or_default();
    let irq_total = |irq: &str| -> Option<(u64, bool)> {
        let line = interrupts
            .lines()
            .find(|l| l.trim_start().split(':').next() == Some(irq))?;
        let rest = line.split_once(':')?.1;
        let mut sum = 0;
        let mut words = Vec::new();
        for w in rest.split_whitespace() {
            match w.parse::<u64>() {
                Ok(n) if words.is_empty() => sum += n,
                _ => words.push(w.to_ascii_lowercase()),
            }
        }
        let name = words.join(" ");
        let rx = name.contains("input") || name.contains("rx");
        Some((sum, rx))
    };
    let out = names
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
            let irq_counts = host
                .list(format!("{base}/device/msi_irqs"))
                .unwrap_or_default()
                .iter()
                .filter_map(|i| irq_total(i))
                .filter(|(_, rx)| *rx)
                .map(|(c, _)| c)
                .collect();
            NicFacts {
                name: n,
                rx_queues,
                irq_counts,
            }
        })
        .collect();
    (out, rps)
}
