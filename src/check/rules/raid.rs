//! md RAID geometry under the datadir: the chunk size against InnoDB's
//! 16 KiB pages, the filesystem's stripe alignment against the array, and
//! partitions that do not start on a 4 KiB boundary.
//!
//! None of these can be changed on a live filesystem, so the findings say
//! what to use at the next mkfs or partitioning, and carry no change.

use super::{finding, Advice, Rule, Scope};
use crate::check::facts::{human_bytes, DeviceFacts, Facts};
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "storage.raid",
    layer: Layer::Storage,
    scope: Scope::Host,
    about: "md chunk size, filesystem stripe alignment, partition alignment",
    run,
};

/// Disks that carry data in one stripe of an md array.
pub fn data_disks(level: &str, raid_disks: u64) -> Option<u64> {
    match level {
        "raid0" => Some(raid_disks),
        "raid10" => Some(raid_disks / 2),
        "raid4" | "raid5" => raid_disks.checked_sub(1),
        "raid6" => raid_disks.checked_sub(2),
        _ => None,
    }
}

/// A mount option's numeric value (`sunit=1024`).
fn opt(opts: &[String], key: &str) -> Option<u64> {
    opts.iter()
        .find_map(|o| o.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

fn run(f: &Facts) -> Vec<Advice> {
    let mut out = Vec::new();
    for d in &f.devices {
        if let (Some(level), Some(chunk), Some(n)) =
            (&d.md_level, d.md_chunk_bytes, d.md_raid_disks)
        {
            md(f, d, level, chunk, n, &mut out);
        }
        if let (true, Some(start)) = (d.partition, d.start_sector) {
            if (start * 512) % 4096 != 0 {
                out.push(Advice::new(
                    finding(
                        "storage.partition.alignment",
                        Severity::Warning,
                        Layer::Storage,
                        SubjectKind::Device,
                        &d.name,
                        format!("starts at sector {start}"),
                        format!(
                            "{} starts at byte {}, not on a 4 KiB boundary: every 16 KiB page write straddles physical sectors and costs a read-modify-write on 4K-sector disks. Repartition with the start on a 1 MiB boundary (sector 2048).",
                            d.name,
                            start * 512
                        ),
                    )
                    .recommend("start sector a multiple of 2048")
                    .evidence(Source::Observed, format!("{}/start = {start} (512-byte sectors)", d.name)),
                ));
            }
        }
    }
    out
}

fn md(f: &Facts, d: &DeviceFacts, level: &str, chunk: u64, n: u64, out: &mut Vec<Advice>) {
    let Some(data) = data_disks(level, n) else {
        return;
    };
    if chunk > 0 && chunk < 16 * 1024 {
        out.push(Advice::new(
            finding(
                "storage.raid.chunk",
                Severity::Notice,
                Layer::Storage,
                SubjectKind::Device,
                &d.name,
                human_bytes(chunk),
                format!(
                    "{} ({level}) has a {} chunk, smaller than InnoDB's 16 KiB page: each page read or write touches two disks. Use ≥ 64 KiB when the array is rebuilt.",
                    d.name,
                    human_bytes(chunk)
                ),
            )
            .recommend("64K or more (mdadm --chunk)")
            .evidence(Source::Observed, format!("md/chunk_size = {chunk}")),
        ));
    }
    // Only a filesystem made directly on the array knows its geometry.
    let Some(m) = f.mount.as_ref().filter(|_| d.depth == 0) else {
        return;
    };
    let stripe = chunk * data;
    let want_su = chunk / 512;
    let want_sw = stripe / 512;
    let (aligned, seen, fix) = match m.fs_type.as_str() {
        "xfs" => {
            let su = opt(&m.super_options, "sunit");
            let sw = opt(&m.super_options, "swidth");
            (
                su == Some(want_su) && sw == Some(want_sw),
                format!(
                    "sunit={} swidth={} (512-byte units)",
                    su.map_or("unset".into(), |v| v.to_string()),
                    sw.map_or("unset".into(), |v| v.to_string())
                ),
                format!(
                    "sunit={want_su},swidth={want_sw} (mkfs.xfs -d su={}k,sw={data})",
                    chunk / 1024
                ),
            )
        }
        "ext4" => {
            // ext4's stripe= mount option is the stripe width in fs blocks.
            let st = opt(&m.super_options, "stripe");
            let want = stripe / 4096;
            (
                st == Some(want),
                format!(
                    "stripe={} (4 KiB blocks)",
                    st.map_or("unset".into(), |v| v.to_string())
                ),
                format!(
                    "stripe={want} (mkfs.ext4 -E stride={},stripe-width={want})",
                    chunk / 4096
                ),
            )
        }
        _ => return,
    };
    if !aligned {
        out.push(Advice::new(
            finding(
                "storage.raid.alignment",
                Severity::Warning,
                Layer::Filesystem,
                SubjectKind::Mount,
                &m.mount_point,
                seen,
                format!(
                    "the {} filesystem on {} does not know the array's geometry ({level}, {} chunk × {data} data disks = {} stripe): allocations straddle chunks and writes split across disks. Set it at the next mkfs.",
                    m.fs_type,
                    d.name,
                    human_bytes(chunk),
                    human_bytes(stripe)
                ),
            )
            .recommend(fix)
            .evidence(
                Source::Observed,
                format!(
                    "md/chunk_size {chunk}, md/raid_disks {n}; mount options {}",
                    m.super_options.join(",")
                ),
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::MountFacts;

    fn md0(chunk: u64) -> DeviceFacts {
        DeviceFacts {
            name: "md0".into(),
            kind: "md".into(),
            md_level: Some("raid0".into()),
            md_chunk_bytes: Some(chunk),
            md_raid_disks: Some(4),
            ..Default::default()
        }
    }

    fn mount(opts: &str) -> Option<MountFacts> {
        Some(MountFacts {
            mount_point: "/var/lib/mysql".into(),
            fs_type: "xfs".into(),
            super_options: opts.split(',').map(str::to_string).collect(),
            ..Default::default()
        })
    }

    #[test]
    fn xfs_alignment() {
        let mut f = Facts {
            devices: vec![md0(524288)],
            mount: mount("rw,sunit=1024,swidth=4096"),
            ..Default::default()
        };
        assert!(run(&f).is_empty());
        f.mount = mount("rw,sunit=1024,swidth=2048");
        let a = run(&f);
        assert_eq!(a[0].finding.id, "storage.raid.alignment");
        assert_eq!(
            a[0].finding.recommended.as_deref(),
            Some("sunit=1024,swidth=4096 (mkfs.xfs -d su=512k,sw=4)")
        );
        f.devices = vec![md0(8192)];
        assert!(run(&f).iter().any(|a| a.finding.id == "storage.raid.chunk"));
    }

    #[test]
    fn misaligned_partition() {
        let f = Facts {
            devices: vec![DeviceFacts {
                name: "sda1".into(),
                partition: true,
                start_sector: Some(63),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(run(&f)[0].finding.id, "storage.partition.alignment");
        assert_eq!(data_disks("raid6", 6), Some(4));
    }
}
