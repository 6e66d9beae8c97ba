//! What makes a scheduler choice survive a reboot: udev rules, systemd units
//! and tmpfiles.d entries that write `queue/scheduler`, matched to the
//! devices of the stack. A scheduler set by hand in sysfs is lost at reboot;
//! one set by a rule here silently wins over it at the next boot or hotplug.

use crate::host::Host;
use crate::model::stack::StackDevice;
use serde::Serialize;
use std::path::Path;

use crate::model::boot::{echo_value, tmpfiles_write, UDEV_DIRS};

const UNIT_DIRS: [&str; 1] = [crate::model::systemd::UNIT_DIRS[0]];
const TMPFILES_DIRS: [&str; 1] = ["/etc/tmpfiles.d"];

/// One rule that sets a scheduler for at least one device of the stack.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SchedulerRule {
    /// `udev`, `systemd` or `tmpfiles`.
    pub mechanism: String,
    /// Host path of the file.
    pub file: String,
    /// 1-based line (the first line of a continued udev rule).
    pub line: usize,
    /// The rule as written (continuations joined).
    pub text: String,
    /// The scheduler it sets, when it can be read from the rule.
    pub scheduler: Option<String>,
    /// Stack devices it applies to.
    pub devices: Vec<String>,
    /// Conditions innotune cannot evaluate offline (assumed true).
    pub unevaluated: Vec<String>,
}

/// shell-style glob as udev matches it: `*`, `?`, `[a-z]`, `[!0-9]`, and
/// `|` between alternatives. Hand-written (some 30 lines) because the glob
/// crates match paths, not udev's alternation syntax.
pub fn glob_match(pattern: &str, s: &str) -> bool {
    pattern
        .split('|')
        .any(|p| glob1(p.as_bytes(), s.as_bytes()))
}

fn glob1(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| glob1(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && glob1(&p[1..], &s[1..]),
        Some(b'[') => {
            let Some(end) = p.iter().skip(2).position(|&c| c == b']').map(|i| i + 2) else {
                return !s.is_empty() && s[0] == b'[' && glob1(&p[1..], &s[1..]);
            };
            let Some(&c) = s.first() else { return false };
            let mut set = &p[1..end];
            let neg = matches!(set.first(), Some(b'!') | Some(b'^'));
            if neg {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != neg && glob1(&p[end + 1..], &s[1..])
        }
        Some(&c) => s.first() == Some(&c) && glob1(&p[1..], &s[1..]),
    }
}

/// `KEY{attr}OP"value"` tokens of a udev rule line.
fn udev_tokens(line: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let Some(op_at) = rest.find(['=', '!', '+', '-', ':']) else {
            break;
        };
        // Skip operator-like characters inside `{…}` (e.g. ATTR{queue/x-y}).
        let key_end = match rest.find('{') {
            Some(b) if b < op_at => rest[b..].find('}').map(|e| b + e + 1).unwrap_or(op_at),
            _ => op_at,
        };
        let key = rest[..key_end].trim().to_string();
        let after = &rest[key_end..];
        let op_len = ["==", "!=", "+=", "-=", ":=", "="]
            .iter()
            .find(|o| after.starts_with(**o))
            .map(|o| o.len());
        let Some(op_len) = op_len else { break };
        let op = after[..op_len].to_string();
        let after = after[op_len..].trim_start();
        let Some(body) = after.strip_prefix('"') else {
            break;
        };
        let Some(close) = body.find('"') else { break };
        out.push((key, op, body[..close].to_string()));
        rest = &body[close + 1..];
    }
    out
}

/// Device names (globs) in `/sys/block/NAME/queue/scheduler` or `/sys/class/block/NAME/…`.
fn sysfs_names(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for pre in ["/sys/block/", "/sys/class/block/"] {
        let mut rest = text;
        while let Some(i) = rest.find(pre) {
            let tail = &rest[i + pre.len()..];
            if let Some(j) = tail.find("/queue/scheduler") {
                let name = &tail[..j];
                if !name.contains(char::is_whitespace) {
                    v.push(name.to_string());
                }
            }
            rest = &rest[i + pre.len()..];
        }
    }
    v
}

fn udev_rule_applies(
    host: &Host,
    tokens: &[(String, String, String)],
    d: &StackDevice,
    unevaluated: &mut Vec<String>,
) -> bool {
    for (k, op, v) in tokens {
        let eq = match op.as_str() {
            "==" => true,
            "!=" => false,
            _ => continue, // assignments
        };
        let actual: Option<String> = if k == "KERNEL" {
            Some(d.name.clone())
        } else if k == "SUBSYSTEM" {
            Some("block".into())
        } else if k == "ENV{DEVTYPE}" {
            Some(
                if d.partition.is_some() {
                    "partition"
                } else {
                    "disk"
                }
                .into(),
            )
        } else if k == "ACTION" {
            continue;
        } else if let Some(attr) = k.strip_prefix("ATTR{").and_then(|a| a.strip_suffix('}')) {
            // As in udev, a missing attribute matches nothing (a partition
            // has no queue/rotational).
            match host.read_trim(Path::new(&d.sysfs_path).join(attr)) {
                Ok(v) => Some(v),
                Err(_) => return false,
            }
        } else {
            None
        };
        match actual {
            Some(a) => {
                if glob_match(v, &a) != eq {
                    return false;
                }
            }
            None => {
                let c = format!("{k}{op}\"{v}\"");
                if !unevaluated.contains(&c) {
                    unevaluated.push(c);
                }
            }
        }
    }
    true
}

fn files_in(host: &Host, dir: &str, suffix: &str) -> Vec<String> {
    host.list(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .map(|n| format!("{dir}/{n}"))
        .collect()
}

/// Join udev's backslash continuations; yields (first line number, text).
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, l) in text.lines().enumerate() {
        if cur.is_empty() {
            start = i + 1;
        }
        match l.strip_suffix('\\') {
            Some(p) => cur.push_str(p),
            None => {
                cur.push_str(l);
                out.push((start, std::mem::take(&mut cur)));
            }
        }
    }
    if !cur.is_empty() {
        out.push((start, cur));
    }
    out
}

/// Every rule under the standard directories that sets a scheduler for a device of `stack`.
pub fn find(host: &Host, stack: &[StackDevice]) -> Vec<SchedulerRule> {
    let mut out = Vec::new();
    // udev reads each file name once: /etc masks /lib and /usr/lib (and on
    // merged-/usr systems /lib *is* /usr/lib, so the same directory is not
    // read twice either).
    let mut seen_dirs = Vec::new();
    let mut seen_names = std::collections::HashSet::new();
    let mut udev_files: Vec<String> = Vec::new();
    for dir in UDEV_DIRS {
        let canon = std::fs::canonicalize(host.path(dir)).unwrap_or_else(|_| host.path(dir));
        if seen_dirs.contains(&canon) {
            continue;
        }
        seen_dirs.push(canon);
        for f in files_in(host, dir, ".rules") {
            let name = f.rsplit('/').next().unwrap_or(&f).to_string();
            if seen_names.insert(name) {
                udev_files.push(f);
            }
        }
    }
    // udev applies all files in name order whatever their directory; the
    // last rule to write the attribute wins, so report them in that order.
    udev_files.sort_by(|a, b| a.rsplit('/').next().cmp(&b.rsplit('/').next()));
    for f in udev_files {
        let Ok(text) = host.read(&f) else { continue };
        for (line, l) in logical_lines(&text) {
            let t = l.trim();
            if t.starts_with('#') || !t.contains("queue/scheduler") {
                continue;
            }
            let toks = udev_tokens(t);
            let scheduler = toks
                .iter()
                .find(|(k, op, _)| k == "ATTR{queue/scheduler}" && op == "=")
                .map(|(_, _, v)| v.clone())
                .or_else(|| echo_value(t));
            let mut unevaluated = Vec::new();
            let devices: Vec<String> = stack
                .iter()
                .filter(|d| udev_rule_applies(host, &toks, d, &mut unevaluated))
                .map(|d| d.name.clone())
                .collect();
            if !devices.is_empty() {
                out.push(SchedulerRule {
                    mechanism: "udev".into(),
                    file: f.clone(),
                    line,
                    text: t.to_string(),
                    scheduler,
                    devices,
                    unevaluated,
                });
            }
        }
    }
    let by_path = |mechanism: &str, files: Vec<String>, out: &mut Vec<SchedulerRule>| {
        for f in files {
            let Ok(text) = host.read(&f) else { continue };
            for (i, l) in text.lines().enumerate() {
                let t = l.trim();
                if t.starts_with('#') || !t.contains("queue/scheduler") {
                    continue;
                }
                let names = sysfs_names(t);
                let devices: Vec<String> = stack
                    .iter()
                    .filter(|d| names.iter().any(|n| glob_match(n, &d.name)))
                    .map(|d| d.name.clone())
                    .collect();
                let scheduler = if mechanism == "tmpfiles" {
                    tmpfiles_write(t).map(|(_, arg)| arg.to_string())
                } else {
                    echo_value(t)
                };
                if !devices.is_empty() {
                    out.push(SchedulerRule {
                        mechanism: mechanism.into(),
                        file: f.clone(),
                        line: i + 1,
                        text: t.to_string(),
                        scheduler,
                        devices,
                        unevaluated: Vec::new(),
                    });
                }
            }
        }
    };
    for dir in UNIT_DIRS {
        by_path("systemd", files_in(host, dir, ".service"), &mut out);
    }
    for dir in TMPFILES_DIRS {
        by_path("tmpfiles", files_in(host, dir, ".conf"), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_like_udev() {
        assert!(glob_match("sd[a-z]", "sda"));
        assert!(!glob_match("sd[a-z]", "sda1"));
        assert!(glob_match("sd*", "sda1"));
        assert!(glob_match("nvme[0-9]*n[0-9]*|sd[!0-9]", "nvme0n1"));
        assert!(glob_match("vd?", "vda"));
        assert!(!glob_match("sd[!a]", "sda"));
    }

    #[test]
    fn udev_line_tokens() {
        let t = udev_tokens(
            r#"ACTION=="add|change", KERNEL=="sd[a-z]", ATTR{queue/rotational}=="0", ATTR{queue/scheduler}="none""#,
        );
        assert_eq!(t.len(), 4);
        assert_eq!(t[1], ("KERNEL".into(), "==".into(), "sd[a-z]".into()));
        assert_eq!(
            t[3],
            ("ATTR{queue/scheduler}".into(), "=".into(), "none".into())
        );
        assert_eq!(
            sysfs_names("ExecStart=/bin/sh -c 'echo bfq > /sys/block/sda/queue/scheduler'"),
            vec!["sda".to_string()]
        );
        assert_eq!(echo_value("sh -c 'echo bfq > x'").as_deref(), Some("bfq"));
    }
}
