//! The one adapter from probe's report (the host model's view of the
//! stack under a path) and the host model's other readers (boot settings,
//! systemd units, NICs) to [`Facts`]: when the model changes, only this
//! file changes. It reads and parses nothing itself.

use super::facts::*;
use crate::host::{Host, Known};
use crate::model::stack::Relation;
use crate::model::{block, boot, mount, net, process, systemd};
use crate::probe::ProbeReport;
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
        free_bytes: mount::free_bytes(host, Path::new(&probe.path)),
    });
    let devices = probe
        .stack
        .iter()
        .map(|d| {
            let q = d.queue.as_ref();
            let sys = Path::new(&d.sysfs_path);
            let serial = if d.partition.is_none() {
                block::read_serial(host, sys)
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
                    block::read_model_attr(host, sys)
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
                zoned: q.and_then(|_| block::read_zoned(host, sys)),
                tag_flags: q.and_then(|q| q.tag_flags),
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
        let service = process::systemd_service(host, m.pid);
        ProcessFacts {
            pid: m.pid,
            comm: m.comm.clone(),
            nofile_soft: lim(&m.open_files_limit, true),
            nofile_hard: lim(&m.open_files_limit, false),
            nproc_soft: lim(&m.processes_limit, true),
            unit_nofile: service
                .as_deref()
                .and_then(|s| systemd::setting(host, s, "Service", "LimitNOFILE")),
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
    let nics = net::default_route_nics(host)
        .into_iter()
        .map(|n| NicFacts {
            name: n.name,
            rx_queues: n
                .rx_queues
                .into_iter()
                .map(|q| RxQueue {
                    name: q.name,
                    rps_cpus: q.rps_cpus,
                    rps_flow_cnt: q.rps_flow_cnt,
                })
                .collect(),
            irq_counts: n
                .irqs
                .iter()
                .filter(|(i, _)| i.is_rx())
                .map(|(i, _)| i.total)
                .collect(),
            rx_irqs: n
                .irqs
                .iter()
                .filter(|(i, _)| i.is_rx())
                .filter_map(|(i, a)| {
                    Some(IrqFacts {
                        irq: i.name.parse().ok()?,
                        name: i.description.rsplit(' ').next().unwrap_or("").to_string(),
                        per_cpu: i.per_cpu.clone(),
                        smp_affinity: a.mask.clone(),
                        effective: a.effective.clone(),
                    })
                })
                .collect(),
        })
        .collect();
    let cpufreq = crate::model::cpufreq::read(host)
        .into_iter()
        .map(|c| CpuFreqFacts {
            cpu: c.cpu,
            governor: c.governor,
            available: c.available,
            driver: c.driver,
            policy: c.policy,
        })
        .collect();
    Facts {
        path: probe.path.clone(),
        fstab_line: mount
            .as_ref()
            .and_then(|m| mount::fstab_line(host, &m.mount_point)),
        mount,
        devices,
        host: host_facts,
        mysqld,
        scheduler_rules,
        sysctl_boot: boot::sysctl_boot(host),
        thp_boot: boot::thp_boot(host, probe.host.kernel_cmdline.value().map(String::as_str)),
        udev: boot::udev_installed(host),
        nics,
        rps_sock_flow_entries: net::rps_sock_flow_entries(host),
        cpus_online: crate::model::cpufreq::online(host),
        cpufreq,
        irqbalance: crate::model::process::running_comm(host, "irqbalance"),
        server: None,
        sweeps: Vec::new(),
        write_iops: None,
        slowlog: None,
    }
}
