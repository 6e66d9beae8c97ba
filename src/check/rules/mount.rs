//! The datadir's filesystem: atime updates, write barriers, and
//! filesystems that cannot hold a database (tmpfs, overlay).

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "filesystem.mount",
    layer: Layer::Filesystem,
    scope: Scope::Host,
    about: "atime on the datadir mount, barriers, tmpfs/overlay datadirs",
    run,
};

/// The fstab line with its atime option replaced by `noatime`.
pub fn noatime_line(line: &str) -> Option<String> {
    let mut fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if fields.len() < 4 || fields[0].starts_with('#') {
        return None;
    }
    let mut opts: Vec<String> = fields[3]
        .split(',')
        .filter(|o| {
            !matches!(
                *o,
                "atime"
                    | "relatime"
                    | "strictatime"
                    | "norelatime"
                    | "nostrictatime"
                    | "noatime"
                    | "defaults"
            )
        })
        .map(str::to_string)
        .collect();
    let had_defaults = fields[3].split(',').any(|o| o == "defaults");
    if had_defaults || opts.is_empty() {
        opts.insert(0, "defaults".into());
    }
    opts.push("noatime".into());
    fields[3] = opts.join(",");
    Some(fields.join(" "))
}

fn run(f: &Facts) -> Vec<Advice> {
    let Some(m) = &f.mount else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match m.fs_type.as_str() {
        "tmpfs" | "ramfs" => out.push(Advice::new(
            finding(
                "filesystem.datadir.tmpfs",
                Severity::Critical,
                Layer::Filesystem,
                SubjectKind::Mount,
                &m.mount_point,
                m.fs_type.clone(),
                format!(
                    "{} is on {}: every table is lost at reboot, and O_DIRECT is refused there. Only a throwaway test server belongs on it.",
                    f.path, m.fs_type
                ),
            )
            .recommend("a disk-backed filesystem (xfs or ext4)")
            .evidence(Source::Observed, format!("mountinfo: {} on {} type {}", m.source, m.mount_point, m.fs_type)),
        )),
        "overlay" => out.push(Advice::new(
            finding(
                "filesystem.datadir.overlay",
                Severity::Warning,
                Layer::Filesystem,
                SubjectKind::Mount,
                &m.mount_point,
                "overlay",
                format!(
                    "{} is on an overlay filesystem (a container's writable layer): the first write to each file copies it up whole, and fsync semantics depend on the layers below. Put the datadir on a volume.",
                    f.path
                ),
            )
            .recommend("a bind-mounted volume (xfs or ext4)")
            .evidence(Source::Observed, format!("mountinfo: {} type overlay", m.mount_point)),
        )),
        _ => {}
    }
    if !matches!(m.fs_type.as_str(), "tmpfs" | "ramfs" | "proc" | "sysfs") && m.atime != "noatime" {
        let (sev, why) = if m.atime == "strictatime" {
            (
                Severity::Warning,
                "every read of a tablespace writes its inode (strictatime)",
            )
        } else {
            (Severity::Notice, "relatime still writes a tablespace's inode on the first read after each modification, and InnoDB files are modified all the time")
        };
        let line = f.fstab_line.as_deref().and_then(noatime_line);
        let mut a = Advice::new(
            finding(
                "filesystem.atime",
                sev,
                Layer::Filesystem,
                SubjectKind::Mount,
                &m.mount_point,
                m.atime.clone(),
                format!(
                    "{} is mounted with {}: {why}. noatime removes those writes; nothing in MySQL reads atime. Now: mount -o remount,noatime {}; at boot: {}.",
                    m.mount_point,
                    m.atime,
                    m.mount_point,
                    if line.is_some() { "the /etc/fstab line below" } else { "add noatime where this filesystem is mounted (no /etc/fstab line names it)" }
                ),
            )
            .recommend("noatime")
            .evidence(
                Source::Observed,
                format!("mount options {}", m.options.join(",")),
            ),
        );
        if let Some(line) = line {
            a = a.set(Setting::Fstab {
                mount_point: m.mount_point.clone(),
                line,
            });
        }
        out.push(a);
    }
    if m.barrier == "off" {
        out.push(Advice::new(
            finding(
                "filesystem.barrier",
                Severity::Warning,
                Layer::Filesystem,
                SubjectKind::Mount,
                &m.mount_point,
                "nobarrier",
                format!(
                    "{} is mounted without write barriers: after a power loss the disk's volatile cache can lose writes InnoDB was told are durable. Safe only with a battery- or capacitor-backed cache; innotune never recommends nobarrier (XFS no longer accepts it).",
                    m.mount_point
                ),
            )
            .recommend("barriers on (drop nobarrier / barrier=0)")
            .evidence(Source::Observed, format!("superblock options {}", m.super_options.join(","))),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::MountFacts;

    #[test]
    fn fstab_lines() {
        assert_eq!(
            noatime_line("UUID=abc /var/lib/mysql xfs defaults,relatime 0 2").as_deref(),
            Some("UUID=abc /var/lib/mysql xfs defaults,noatime 0 2")
        );
        assert_eq!(
            noatime_line("/dev/sdb1\t/data\text4\trw,nodev 0 0").as_deref(),
            Some("/dev/sdb1 /data ext4 rw,nodev,noatime 0 0")
        );
        assert_eq!(noatime_line("# comment"), None);
    }

    #[test]
    fn atime_and_barrier() {
        let mut f = Facts {
            path: "/var/lib/mysql".into(),
            mount: Some(MountFacts {
                mount_point: "/var/lib/mysql".into(),
                fs_type: "ext4".into(),
                atime: "strictatime".into(),
                barrier: "off".into(),
                ..Default::default()
            }),
            fstab_line: Some("/dev/sda3 /var/lib/mysql ext4 rw 0 2".into()),
            ..Default::default()
        };
        let a = run(&f);
        assert_eq!(a[0].finding.id, "filesystem.atime");
        assert_eq!(a[0].finding.severity, Severity::Warning);
        assert_eq!(
            a[0].settings,
            vec![Setting::Fstab {
                mount_point: "/var/lib/mysql".into(),
                line: "/dev/sda3 /var/lib/mysql ext4 rw,noatime 0 2".into()
            }]
        );
        assert_eq!(a[1].finding.id, "filesystem.barrier");
        f.mount.as_mut().unwrap().atime = "noatime".into();
        f.mount.as_mut().unwrap().barrier = "default".into();
        assert!(run(&f).is_empty());
    }
}
