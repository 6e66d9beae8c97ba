//! The persistent form of every recommended setting, as files: a udev rule
//! for block-queue and NIC attributes (whole disks matched by model or
//! serial and rotational, never dm or zoned devices), a systemd oneshot
//! unit doing the same on hosts without udev, a sysctl.d file, a
//! tmpfiles.d entry for transparent hugepages and one for the CPU
//! frequency governor (IRQ affinity has none: it is runtime only), a systemd drop-in with
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
use std::borrow::Cow;
use std::collections::BTreeMap;

pub use crate::change::allowed::{
    FSTAB, LIMITS_NAME, MARKER, MYCNF_NAME, SYSCTL, TMPFILES, TMPFILES_CPUFREQ, UDEV_RULES, UNIT,
    UNIT_WANTS_DIR,
};

/// One emitted file.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Emitted {
    /// `udev`, `systemd_unit`, `systemd_unit_link`, `sysctl`, `tmpfiles`,
    /// `mysqld_dropin`, `systemd_dropin`, `fstab`.
    pub kind: Cow<'static, str>,
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

/// `s` as a udev match value that matches exactly `s`, and whether it does.
///
/// udev splits every match value at `|` (alternatives, with no escape) and
/// matches one with `*`, `?` or `[` as an fnmatch(3) glob, where a
/// backslash makes the next character literal (inside "…" udev keeps the
/// backslash: only `\"` is unescaped). So `*?[` are escaped; a `|` cannot
/// be written at all, and becomes `?` (any one character): the value is
/// then not exact (false), and the caller adds the device's kernel name.
/// Hand-written: no crate writes udev rules.
fn udev_value(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut exact = true;
    for c in s.chars() {
        match c {
            '*' | '?' | '[' => {
                out.push('\\');
                out.push(c);
            }
            '|' => {
                out.push('?');
                exact = false;
            }
            _ => out.push(c),
        }
    }
    (out, exact)
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
    // A value udev cannot match exactly (a `|` in it) is matched together
    // with the kernel name, so the rule never reaches another device.
    let kernel = |exact: bool| {
        if exact {
            String::new()
        } else {
            format!("KERNEL==\"{}\", ", d.name)
        }
    };
    if let Some(b) = d.loop_backing.as_deref().filter(|b| plain(b)) {
        let (v, exact) = udev_value(b);
        let kernel = if exact {
            "KERNEL==\"loop*\", ".to_string()
        } else {
            kernel(false)
        };
        return Identity {
            key: format!("loop={b}"),
            udev: format!("{kernel}ATTR{{loop/backing_file}}==\"{v}\""),
            shell: Some(format!(
                "[ \"$(cat $d/loop/backing_file 2>/dev/null)\" = \"{b}\" ]"
            )),
        };
    }
    if let Some(m) = d.model_attr.as_deref().filter(|m| plain(m)) {
        let (v, exact) = udev_value(m);
        return Identity {
            key: format!(
                "model={m}{}",
                d.rotational
                    .map(|r| format!(",rotational={}", r as u8))
                    .unwrap_or_default()
            ),
            udev: format!(
                "{}KERNEL!=\"dm-*\", ATTRS{{model}}==\"{v}\"{rot}",
                kernel(exact)
            ),
            shell: Some(format!(
                "[ \"$(sed 's/ *$//' $d/device/model 2>/dev/null)\" = \"{m}\" ]{}",
                d.rotational
                    .map(|r| format!(" && [ \"$(cat $d/queue/rotational)\" = {} ]", r as u8))
                    .unwrap_or_default()
            )),
        };
    }
    if let Some(s) = d.serial.as_deref().filter(|s| plain(s)) {
        let (v, exact) = udev_value(s);
        return Identity {
            key: format!("serial={s}"),
            udev: format!(
                "{}KERNEL!=\"dm-*\", ATTRS{{serial}}==\"{v}\"",
                kernel(exact)
            ),
            shell: Some(format!(
                "[ \"$(cat $d/serial $d/device/serial 2>/dev/null)\" = \"{s}\" ]"
            )),
        };
    }
    if let Some(n) = d.dm_name.as_deref().filter(|n| plain(n)) {
        let (v, exact) = udev_value(n);
        return Identity {
            key: format!("dm={n}"),
            udev: format!("{}ENV{{DM_NAME}}==\"{v}\"", kernel(exact)),
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
    let mut cpufreq = Vec::new();
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
                Setting::CpuGovernor { value, .. } => cpufreq.push(Entry {
                    // One glob line for every CPU (a CPU brought online later too).
                    key: "cpufreq:scaling_governor".into(),
                    comment: why.clone(),
                    line: format!("w /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor - - - - {value}"),
                }),
                // Runtime only: irq numbers are handed out at boot.
                Setting::IrqAffinity { .. } => {}
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
            kind: "udev".into(),
            path: UDEV_RULES.into(),
            content: render("# Block-queue and NIC settings, applied when a device appears (boot, hotplug).\n# Whole disks only; never device-mapper or zoned devices.\n", &udev_entries, ""),
            symlink: None,
            install: f.udev,
            note: (!f.udev).then(|| "udev is not installed here: the systemd unit does the same".to_string()),
        });
        let service = super::rules::limits::service_name(f);
        out.push(Emitted {
            kind: "systemd_unit".into(),
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
                kind: "systemd_unit_link".into(),
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
            kind: "sysctl".into(),
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
            kind: "tmpfiles".into(),
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
    let old_cpufreq = old(TMPFILES_CPUFREQ);
    if !cpufreq.is_empty() || !old_cpufreq.is_empty() {
        out.push(Emitted {
            kind: "tmpfiles".into(),
            path: TMPFILES_CPUFREQ.into(),
            content: render(
                "# The CPU frequency governor, written at boot by systemd-tmpfiles (a power daemon such as tuned may set another later).\n",
                &merge(old_cpufreq, cpufreq),
                "",
            ),
            symlink: None,
            install: etc_dir(TMPFILES_CPUFREQ),
            note: (!etc_dir(TMPFILES_CPUFREQ)).then(|| "/etc/tmpfiles.d does not exist here".to_string()),
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
            kind: "systemd_dropin".into(),
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
            kind: "mysqld_dropin".into(),
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
            kind: "fstab".into(),
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

    fn loop_dev(name: &str, backing: &str) -> DeviceFacts {
        DeviceFacts {
            name: name.into(),
            loop_backing: Some(backing.into()),
            ..DeviceFacts::default()
        }
    }

    /// udev reads `*?[` in a match as a glob and `|` as alternatives: a
    /// backing file named with them must match only itself (the live
    /// proof with `udevadm test` is apply_live's
    /// `a_udev_rule_for_a_backing_file_named_with_glob_characters_matches_only_it`).
    #[test]
    fn udev_match_values_are_escaped() {
        let id = identity(&loop_dev("loop3", "/srv/d*b?[1].img"));
        assert_eq!(
            id.udev,
            r#"KERNEL=="loop*", ATTR{loop/backing_file}=="/srv/d\*b\?\[1].img""#
        );
        assert_eq!(id.key, "loop=/srv/d*b?[1].img");
        // `|` cannot be escaped: the kernel name narrows the match.
        let id = identity(&loop_dev("loop7", "/srv/a|/srv/b*"));
        assert_eq!(
            id.udev,
            r#"KERNEL=="loop7", ATTR{loop/backing_file}=="/srv/a?/srv/b\*""#
        );
        assert!(!id.udev.contains('|'));
        let id = identity(&DeviceFacts {
            name: "sdb".into(),
            model_attr: Some("QEMU*|HARDDISK".into()),
            ..DeviceFacts::default()
        });
        assert_eq!(
            id.udev,
            r#"KERNEL=="sdb", KERNEL!="dm-*", ATTRS{model}=="QEMU\*?HARDDISK""#
        );
    }
}
