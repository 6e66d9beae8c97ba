//! What the host sets at boot, from its configuration files: sysctls
//! (sysctl.d), transparent hugepages (kernel command line, tmpfiles.d,
//! systemd units that `echo` into sysfs), and whether udev is installed.
//!
//! Hand-written line parsers: these are configuration files, not /proc,
//! so procfs-core has nothing for them.

use super::systemd;
use crate::host::Host;
use std::collections::BTreeMap;

/// udev's rules directories, highest precedence first.
pub const UDEV_DIRS: [&str; 3] = [
    "/etc/udev/rules.d",
    "/lib/udev/rules.d",
    "/usr/lib/udev/rules.d",
];

/// udev is installed: one of its rules directories exists.
pub fn udev_installed(host: &Host) -> bool {
    UDEV_DIRS.iter().any(|d| host.exists(d))
}

/// The value a shell line `echo VALUE > …` writes (quotes removed).
pub fn echo_value(text: &str) -> Option<String> {
    let i = text.find("echo ")?;
    text[i + 5..]
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(['"', '\'']).to_string())
}

/// A tmpfiles.d `w` line (write to a file): its path and argument
/// (tmpfiles.d(5): type, path, mode, user, group, age, argument).
pub fn tmpfiles_write(line: &str) -> Option<(&str, &str)> {
    let w: Vec<&str> = line.split_whitespace().collect();
    (w.len() >= 7 && w[0].starts_with('w')).then(|| (w[1], w[6]))
}

/// Sysctls as systemd-sysctl sets them at boot: every *.conf of the
/// sysctl.d directories in name order (a name in /etc masks the same name
/// elsewhere), then /etc/sysctl.conf. Name → (value, file).
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
        for (key, v) in parse_sysctl_conf(&t) {
            out.insert(key, (v, f.clone()));
        }
    }
    out
}

/// `name = value` lines of a sysctl.d file (sysctl.d(5)): `#`/`;`
/// comments, a leading `-` (ignore failure) dropped, `/` in names read as `.`.
pub fn parse_sysctl_conf(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim().trim_start_matches('-');
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                return None;
            }
            let (key, v) = l.split_once('=')?;
            Some((key.trim().replace('/', "."), v.trim().to_string()))
        })
        .collect()
}

/// Transparent hugepages at boot, and what sets it: tmpfiles.d entries and
/// systemd units writing `enabled` (they run after the kernel command
/// line), else the command line's `transparent_hugepage=`.
pub fn thp_boot(host: &Host, kernel_cmdline: Option<&str>) -> Option<(String, String)> {
    const P: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    let mut found = kernel_cmdline.and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.strip_prefix("transparent_hugepage="))
            .map(|v| (v.to_string(), "kernel command line".to_string()))
    });
    for d in ["/usr/lib/tmpfiles.d", "/etc/tmpfiles.d"] {
        for n in host.list(d).unwrap_or_default() {
            let f = format!("{d}/{n}");
            let Ok(t) = host.read(&f) else { continue };
            for (path, arg) in t.lines().filter_map(tmpfiles_write) {
                if path == P {
                    found = Some((arg.to_string(), f.clone()));
                }
            }
        }
    }
    let dir = systemd::UNIT_DIRS[0];
    for n in host.list(dir).unwrap_or_default() {
        let f = format!("{dir}/{n}");
        let Ok(t) = host.read(&f) else { continue };
        for l in t.lines().filter(|l| l.contains(P)) {
            if let Some(v) = echo_value(l) {
                found = Some((v, f.clone()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_parsers() {
        assert_eq!(
            echo_value("ExecStart=/bin/sh -c 'echo \"never\" > /sys/x'").as_deref(),
            Some("never")
        );
        assert_eq!(echo_value("ExecStart=/bin/true"), None);
        assert_eq!(
            tmpfiles_write("w /sys/kernel/mm/transparent_hugepage/enabled - - - - never"),
            Some(("/sys/kernel/mm/transparent_hugepage/enabled", "never"))
        );
        assert_eq!(tmpfiles_write("d /run/x 0755 root root -"), None);
        assert_eq!(
            parse_sysctl_conf("# c\n; c\n-vm/swappiness = 1\nvm.dirty_ratio=5\nnonsense\n"),
            vec![
                ("vm.swappiness".to_string(), "1".to_string()),
                ("vm.dirty_ratio".to_string(), "5".to_string())
            ]
        );
    }
}
