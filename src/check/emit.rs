//! The persistent form of every recommended setting, as files: a udev rule
//! for block-queue and NIC attributes (whole disks matched by model or
//! serial and rotational, never dm or zoned devices), a systemd oneshot
//! unit doing the same on hosts without udev, a sysctl.d file, a
//! tmpfiles.d entry for transparent hugepages, a systemd drop-in with
//! LimitNOFILE for the server's service, a [mysqld] drop-in with only the
//! changed variables (each reason as a comment), and the /etc/fstab line
//! for noatime (printed, never installed).
//!
//! Files are lists of entries, each `# [key] comment` followed by one
//! line. A new run merges its entries into the file innotune installed
//! before (same key: the new line wins), so settings an earlier `apply`
//! made — and that no longer show up as findings because they now hold —
//! stay in the file: a second apply writes the same bytes and changes
//! nothing.

use super::facts::{cnf_bytes, parse_size, DeviceFacts, Facts};
use super::rules::{Advice, Setting};
use crate::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;

pub const UDEV_RULES: &str = "/etc/udev/rules.d/99-innotune.rules";
pub const UNIT: &str = "/etc/systemd/system/innotune-queues.service";
pub const UNIT_WANTS_DIR: &str = "/etc/systemd/system/multi-user.target.wants";
pub const SYSCTL: &str = "/etc/sysctl.d/99-innotune.conf";
pub const TMPFILES: &str = "/etc/tmpfiles.d/innotune-thp.conf";
/// Marker every file innotune installs starts with; innotune overwrites
/// only files that carry it (an existing file without it is never taken
/// over: `EditedFile::require_prefix`).
pub const MARKER: &str = "# Managed by innotune";

pub const MYCNF_NAME: &str = "99-innotune.cnf";
pub const LIMITS_NAME: &str = "innotune-limits.conf";
pub const FSTAB: &str = "fstab.innotune";

/// One emitted file.
#[derive(Debug, Clone, Serialize)]
pub struct Emitted {
    /// `udev`, `systemd_unit`, `systemd_unit_link`, `sysctl`, `tmpfiles`,
    /// `mysqld_dropin`, `systemd_dropin`, `fstab`.
    pub kind: &'static str,
    /// Where it goes on the host (a host path).
    pub path: String,
    /// The file's text (for a link: empty).
    pub content: String,
    /// For `systemd_unit_link`: the link's target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink: Option<String>,
    /// `apply` installs it (otherwise it is only written by `--emit`).
    pub install: bool,
    /// Why it is not installed, or what to do with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One `# [key] comment` + line entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub comment: String,
    pub line: String,
}

/// Entries of a file innotune wrote (others have no `# [key]` lines).
pub fn parse_entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        let Some(rest) = l.strip_prefix("# [") else {
            continue;
        };
        let Some((key, comment)) = rest.split_once(']') else {
            continue;
        };
        if let Some(line) = lines.next() {
            out.push(Entry {
                key: key.to_string(),
                comment: comment.trim().to_string(),
                line: line.to_string(),
            });
        }
    }
    out
}

/// Old entries updated and extended by new ones, sorted by key. An entry
/// whose line is unchanged keeps its old comment: the file changes only
/// when a value does (a finding's wording differs once its fix is in).
pub fn merge(old: Vec<Entry>, new: Vec<Entry>) -> Vec<Entry> {
    let mut m: BTreeMap<String, Entry> = BTreeMap::new();
    for e in old {
        m.insert(e.key.clone(), e);
    }
    for e in new {
        match m.get(&e.key) {
            Some(o) if o.line == e.line => {}
            _ => {
                m.insert(e.key.clone(), e);
            }
        }
    }
    m.into_values().collect()
}

fn render(header: &str, entries: &[Entry], footer: &str) -> String {
    let mut s = String::new();
    s.push_str(MARKER);
    s.push_str(
        " (innotune apply / check --emit); `innotune restore` removes what apply installed.\n",
    );
    s.push_str(header);
    for e in entries {
        s.push_str(&format!(
            "# [{}] {}\n{}\n",
            e.key,
            one_line(&e.comment),
            e.line
        ));
    }
    s.push_str(footer);
    s
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters that would break the quoting of a udev value or a unit's
/// shell line.
fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s
            .chars()
            .any(|c| matches!(c, '"' | '\'' | '\\' | '$' | '%' | '`' | '\n'))
}

/// How a udev rule and a shell loop recognise a device across reboots.
struct Identity {
    key: String,
    udev: String,
    /// A shell test on `$d` (a /sys/block/NAME directory), or None to
    /// address the device by its kernel name.
    shell: Option<String>,
}

fn identity(d: &DeviceFacts) -> Identity {
    let rot = d
        .rotational
        .map(|r| format!(", ATTR{{queue/rotational}}==\"{}\"", r as u8))
        .unwrap_or_default();
    if let Some(b) = d.loop_backing.as_deref().filter(|b| plain(b)) {
        return Identity {
            key: format!("loop={b}"),
            udev: format!("KERNEL==\"loop*\", ATTR{{loop/backing_file}}==\"{b}\""),
            shell: Some(format!(
                "[ \"$(cat $d/loop/backing_file 2>/dev/null)\" = \"{b}\" ]"
            )),
        };
    }
    if let Some(m) = d.model_attr.as_deref().filter(|m| plain(m)) {
        return Identity {
            key: format!(
                "model={m}{}",
                d.rotational
                    .map(|r| format!(",rotational={}", r as u8))
                    .unwrap_or_default()
            ),
            udev: format!("KERNEL!=\"dm-*\", ATTRS{{model}}==\"{m}\"{rot}"),
            shell: Some(format!(
                "[ \"$(sed 's/ *$//' $d/device/model 2>/dev/null)\" = \"{m}\" ]{}",
                d.rotational
                    .map(|r| format!(" && [ \"$(cat $d/queue/rotational)\" = {} ]", r as u8))
                    .unwrap_or_default()
            )),
        };
    }
    if let Some(s) = d.serial.as_deref().filter(|s| plain(s)) {
        return Identity {
            key: format!("serial={s}"),
            udev: format!("KERNEL!=\"dm-*\", ATTRS{{serial}}==\"{s}\""),
            shell: Some(format!(
                "[ \"$(cat $d/serial $d/device/serial 2>/dev/null)\" = \"{s}\" ]"
            )),
        };
    }
    if let Some(n) = d.dm_name.as_deref().filter(|n| plain(n)) {
        return Identity {
            key: format!("dm={n}"),
            udev: format!("ENV{{DM_NAME}}==\"{n}\""),
            shell: Some(format!("[ \"$(cat $d/dm/name 2>/dev/null)\" = \"{n}\" ]")),
        };
    }
    Identity {
        key: format!("kernel={}", d.name),
        udev: format!("KERNEL==\"{}\"", d.name),
        shell: None,
    }
}

/// Where the [mysqld] drop-in goes: the last `!includedir` of the server's
/// option files (it is read after the others; `99-` sorts last in it).
pub fn mycnf_dir(f: &Facts) -> Option<String> {
    f.server.as_ref()?.includedirs.last().cloned()
}

/// A server variable's value as my.cnf writes it.
fn cnf_value(name: &str, v: &str) -> String {
    let sized = name.ends_with("_size") || name == "innodb_redo_log_capacity";
    match (sized, v.parse::<u64>()) {
        (true, Ok(n)) => cnf_bytes(n),
        _ => v.to_string(),
    }
}

/// Every file for `advice`, merged with what innotune installed before.
pub fn files(host: &Host, f: &Facts, advice: &[Advice]) -> Vec<Emitted> {
    let mut udev = Vec::new();
    let mut unit = Vec::new();
    let mut sysctl = Vec::new();
    let mut tmpfiles = Vec::new();
    let mut mycnf = Vec::new();
    let mut nofile: Option<(String, u64, String)> = None;
    let mut fstab = Vec::new();
    for a in advice {
        let why = format!("{}: {}", a.finding.id, a.finding.reason);
        if a.finding.id.starts_with("server.durability.") {
            if let Some(v) = &a.finding.recommended {
                let name = &a.finding.subject.name;
                mycnf.push(Entry {
                    key: format!("durability:{name}"),
                    comment: format!(
                        "a durability trade-off, left to you (now {}): {}",
                        a.finding.observed, a.finding.reason
                    ),
                    line: format!("# {name} = {v}"),
                });
            }
        }
        for s in &a.settings {
            match s {
                Setting::Queue { device, attr, value } => {
                    let Some(d) = f.devices.iter().find(|d| &d.name == device) else { continue };
                    let id = identity(d);
                    let guard = if d.kind == "md" || d.kind == "dm" {
                        "SUBSYSTEM==\"block\"".to_string()
                    } else {
                        "SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", ATTR{queue/zoned}==\"none\"".to_string()
                    };
                    let key = format!("queue:{}/{attr}", id.key);
                    let comment = format!("{device} queue/{attr} = {value} ({})", a.finding.id);
                    udev.push(Entry {
                        key: key.clone(),
                        comment: comment.clone(),
                        line: format!("ACTION==\"add|change\", {guard}, {}, ATTR{{queue/{attr}}}=\"{value}\"", id.udev),
                    });
                    let sh = match id.shell {
                        Some(test) => format!("for d in /sys/block/*; do {test} && echo {value} > $d/queue/{attr}; done; true"),
                        None => format!("echo {value} > /sys/block/{device}/queue/{attr} || true"),
                    };
                    unit.push(Entry {
                        key,
                        comment,
                        line: format!("ExecStart=/bin/sh -c '{}'", sh.replace('$', "$$").replace('%', "%%")),
                    });
                }
                Setting::NetQueue { nic, queue, attr, value } => {
                    let key = format!("net:{nic}/{queue}/{attr}");
                    let comment = format!("{nic} {queue} {attr} = {value} ({})", a.finding.id);
                    udev.push(Entry {
                        key: key.clone(),
                        comment: comment.clone(),
                        line: format!("ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"{nic}\", ATTR{{queues/{queue}/{attr}}}=\"{value}\""),
                    });
                    unit.push(Entry {
                        key,
                        comment,
                        line: format!("ExecStart=/bin/sh -c 'echo {value} > /sys/class/net/{nic}/queues/{queue}/{attr} || true'"),
                    });
                }
                Setting::Sysctl { name, value } => sysctl.push(Entry {
                    key: format!("sysctl:{name}"),
                    comment: why.clone(),
                    line: format!("{name} = {value}"),
                }),
                Setting::Thp { value } => tmpfiles.push(Entry {
                    key: "thp:enabled".into(),
                    comment: why.clone(),
                    line: format!("w /sys/kernel/mm/transparent_hugepage/enabled - - - - {value}"),
                }),
                Setting::ServerVariable { name, value, reason, .. } => mycnf.push(Entry {
                    key: format!("var:{name}"),
                    comment: reason.clone(),
                    line: format!("{name} = {}", cnf_value(name, value)),
                }),
                Setting::Nofile { service, value } => nofile = Some((service.clone(), *value, why.clone())),
                Setting::Fstab { mount_point, line } => fstab.push(Entry {
                    key: format!("fstab:{mount_point}"),
                    comment: "replace the line mounting it in /etc/fstab with this one, then: mount -o remount,noatime ".to_string() + mount_point,
                    line: line.clone(),
                }),
            }
        }
    }
    let old = |path: &str| parse_entries(&host.read(path).unwrap_or_default());
    let mut out = Vec::new();
    let etc_dir = |p: &str| {
        host.exists(
            std::path::Path::new(p)
                .parent()
                .unwrap_or(std::path::Path::new("/")),
        )
    };
    let old_udev = old(UDEV_RULES);
    let old_unit = old(UNIT);
    if !udev.is_empty() || !old_udev.is_empty() || !old_unit.is_empty() {
        let udev_entries = merge(old_udev, udev);
        let unit_entries = merge(old_unit, unit);
        out.push(Emitted {
            kind: "udev",
            path: UDEV_RULES.into(),
            content: render("# Block-queue and NIC settings, applied when a device appears (boot, hotplug).\n# Whole disks only; never device-mapper or zoned devices.\n", &udev_entries, ""),
            symlink: None,
            install: f.udev,
            note: (!f.udev).then(|| "udev is not installed here: the systemd unit does the same".to_string()),
        });
        let service = super::rules::limits::service_name(f);
        out.push(Emitted {
            kind: "systemd_unit",
            path: UNIT.into(),
            content: render(
                &format!("# The udev rule's settings for hosts without udev, once at boot.\n[Unit]\nDescription=innotune: block queue and NIC settings for the database\nDefaultDependencies=no\nAfter=local-fs.target\nBefore={service}\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n"),
                &unit_entries,
                "\n[Install]\nWantedBy=multi-user.target\n",
            ),
            symlink: None,
            install: !f.udev,
            note: f.udev.then(|| "an alternative to the udev rule, for hosts without udev (enable with systemctl enable)".to_string()),
        });
        if !f.udev {
            out.push(Emitted {
                kind: "systemd_unit_link",
                path: format!("{UNIT_WANTS_DIR}/innotune-queues.service"),
                content: String::new(),
                symlink: Some(UNIT.into()),
                install: true,
                note: Some("enables the unit (as systemctl enable does)".into()),
            });
        }
    }
    let old_sysctl = old(SYSCTL);
    if !sysctl.is_empty() || !old_sysctl.is_empty() {
        out.push(Emitted {
            kind: "sysctl",
            path: SYSCTL.into(),
            content: render(
                "# Kernel settings, applied at boot by systemd-sysctl (or: sysctl -p FILE).\n",
                &merge(old_sysctl, sysctl),
                "",
            ),
            symlink: None,
            install: etc_dir(SYSCTL),
            note: (!etc_dir(SYSCTL)).then(|| "/etc/sysctl.d does not exist here".to_string()),
        });
    }
    let old_tmp = old(TMPFILES);
    if !tmpfiles.is_empty() || !old_tmp.is_empty() {
        out.push(Emitted {
            kind: "tmpfiles",
            path: TMPFILES.into(),
            content: render(
                "# Transparent hugepages, written at boot by systemd-tmpfiles.\n",
                &merge(old_tmp, tmpfiles),
                "",
            ),
            symlink: None,
            install: etc_dir(TMPFILES),
            note: (!etc_dir(TMPFILES)).then(|| "/etc/tmpfiles.d does not exist here".to_string()),
        });
    }
    if let Some((service, value, why)) = nofile.or_else(|| {
        // Keep an installed drop-in as it is.
        let svc = super::rules::limits::service_name(f);
        let p = format!("/etc/systemd/system/{svc}.d/{LIMITS_NAME}");
        old(&p).into_iter().next().and_then(|e| {
            let v = e.line.strip_prefix("LimitNOFILE=")?.parse().ok()?;
            Some((svc, v, e.comment))
        })
    }) {
        let path = format!("/etc/systemd/system/{service}.d/{LIMITS_NAME}");
        let entries = merge(
            old(&path),
            vec![Entry {
                key: "limit:nofile".into(),
                comment: why,
                line: format!("LimitNOFILE={value}"),
            }],
        );
        out.push(Emitted {
            kind: "systemd_dropin",
            path,
            content: render(&format!("# Limits of {service}; takes effect when the service restarts (systemctl daemon-reload; systemctl restart {service}).\n[Service]\n"), &entries, ""),
            symlink: None,
            install: host.exists("/etc/systemd/system"),
            note: Some(format!("takes effect at the next restart of {service}")),
        });
    }
    let dir = mycnf_dir(f);
    let cnf_path = format!(
        "{}/{MYCNF_NAME}",
        dir.as_deref().unwrap_or("/etc/mysql/conf.d")
    );
    let old_cnf = old(&cnf_path);
    if !mycnf.is_empty() || !old_cnf.is_empty() {
        out.push(Emitted {
            kind: "mysqld_dropin",
            path: cnf_path,
            content: render("# Only the variables innotune changes; static ones take effect at the next restart.\n[mysqld]\n", &merge(old_cnf, mycnf), ""),
            symlink: None,
            install: dir.is_some(),
            note: match &dir {
                Some(_) => None,
                None => Some("the server's option files include no directory (!includedir): copy these lines into its [mysqld] group, or add !includedir /etc/mysql/conf.d".into()),
            },
        });
    }
    if !fstab.is_empty() {
        out.push(Emitted {
            kind: "fstab",
            path: FSTAB.into(),
            content: render("# NOT installed: innotune never edits /etc/fstab. Replace the matching line there.\n", &fstab, ""),
            symlink: None,
            install: false,
            note: Some("printed only: edit /etc/fstab yourself".into()),
        });
    }
    out
}

/// Values in a file's entries that parse as a size (for tests and docs).
pub fn entry_value(e: &Entry) -> Option<u64> {
    parse_size(e.line.split('=').nth(1)?.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_merge() {
        let a = vec![Entry {
            key: "sysctl:vm.swappiness".into(),
            comment: "c1".into(),
            line: "vm.swappiness = 1".into(),
        }];
        let text = render("# h\n", &a, "");
        assert!(text.starts_with(MARKER));
        assert_eq!(parse_entries(&text), a);
        let b = vec![Entry {
            key: "sysctl:fs.aio-max-nr".into(),
            comment: "c2".into(),
            line: "fs.aio-max-nr = 1048576".into(),
        }];
        let m = merge(parse_entries(&text), b);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].key, "sysctl:fs.aio-max-nr");
        assert_eq!(cnf_value("innodb_buffer_pool_size", "201326592"), "192M");
        assert_eq!(cnf_value("innodb_io_capacity", "4096"), "4096");
    }
}
