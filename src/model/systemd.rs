//! systemd unit files: where a unit and its drop-ins live, and what they
//! assign (systemd.unit(5), systemd.syntax(7)).
//!
//! Hand-written: the format is a few lines of rules (sections, `Key=Value`,
//! `#`/`;` comments, backslash continuations), and the crates that parse
//! unit files are small and unmaintained; procfs-core covers /proc only.

use crate::host::Host;
use std::collections::BTreeMap;

/// Unit directories, highest precedence first (systemd.unit(5)).
pub const UNIT_DIRS: [&str; 4] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];

/// One `Key=Value` line of a unit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The section it is in (`Service`), empty before the first one.
    pub section: String,
    pub key: String,
    /// The value, blanks around it removed (continuations joined with a space).
    pub value: String,
    /// 1-based line where the assignment starts.
    pub line: usize,
}

/// Every assignment of a unit file, in order.
pub fn parse_unit(text: &str) -> Vec<Assignment> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        let (start, joined) = match pending.take() {
            // A comment inside a continued line is skipped, as systemd does.
            Some(p) if l.starts_with('#') || l.starts_with(';') => {
                pending = Some(p);
                continue;
            }
            Some((start, mut acc)) => {
                acc.push(' ');
                acc.push_str(l);
                (start, acc)
            }
            None => {
                if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                    continue;
                }
                if let Some(s) = l.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                    section = s.trim().to_string();
                    continue;
                }
                (i + 1, l.to_string())
            }
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, head.trim_end().to_string()));
            continue;
        }
        if let Some((k, v)) = joined.split_once('=') {
            out.push(Assignment {
                section: section.clone(),
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                line: start,
            });
        }
    }
    if let Some((start, acc)) = pending {
        if let Some((k, v)) = acc.split_once('=') {
            out.push(Assignment {
                section,
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                line: start,
            });
        }
    }
    out
}

/// The files that define `unit` (`mariadb.service`), in the order systemd
/// applies them: the unit file from the first directory that has it, then
/// its drop-ins (`UNIT.d/*.conf`) in file-name order, a name in a
/// higher-precedence directory masking the same name below it.
pub fn unit_files(host: &Host, unit: &str) -> Vec<String> {
    let mut files: Vec<String> = UNIT_DIRS
        .iter()
        .map(|d| format!("{d}/{unit}"))
        .find(|f| host.exists(f))
        .into_iter()
        .collect();
    let mut dropins: BTreeMap<String, String> = BTreeMap::new();
    for d in UNIT_DIRS.iter().rev() {
        let dir = format!("{d}/{unit}.d");
        for n in host.list(&dir).unwrap_or_default() {
            if n.ends_with(".conf") {
                dropins.insert(n.clone(), format!("{dir}/{n}"));
            }
        }
    }
    files.extend(dropins.into_values());
    files
}

/// The value `unit` ends up with for `[section] key`, and the file that
/// sets it: the last assignment in [`unit_files`] order.
pub fn setting(host: &Host, unit: &str, section: &str, key: &str) -> Option<(String, String)> {
    let mut found = None;
    for f in unit_files(host, unit) {
        let Ok(t) = host.read(&f) else { continue };
        for a in parse_unit(&t) {
            if a.section == section && a.key == key {
                found = Some((a.value, f.clone()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_comments_and_continuations() {
        let t = "# a comment\n[Unit]\nDescription = MariaDB\n\n[Service]\n; off\nLimitNOFILE=1024\nExecStart=/bin/sh -c \\\n  'echo x'\nLimitNOFILE = 65535 \n";
        let a = parse_unit(t);
        let keys: Vec<(&str, &str, &str, usize)> = a
            .iter()
            .map(|a| (a.section.as_str(), a.key.as_str(), a.value.as_str(), a.line))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("Unit", "Description", "MariaDB", 3),
                ("Service", "LimitNOFILE", "1024", 7),
                ("Service", "ExecStart", "/bin/sh -c 'echo x'", 8),
                ("Service", "LimitNOFILE", "65535", 10),
            ]
        );
    }

    #[test]
    fn the_last_dropin_wins_and_etc_masks_lib() {
        let root = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let p = root.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w(
            "/lib/systemd/system/m.service",
            "[Service]\nLimitNOFILE=100\n",
        );
        w(
            "/lib/systemd/system/m.service.d/20-x.conf",
            "[Service]\nLimitNOFILE=200\n",
        );
        w(
            "/etc/systemd/system/m.service.d/10-y.conf",
            "[Service]\nLimitNOFILE=300\n",
        );
        w(
            "/etc/systemd/system/m.service.d/20-x.conf",
            "[Unit]\nLimitNOFILE=999\n",
        );
        let host = Host::with_root(root.path());
        assert_eq!(
            unit_files(&host, "m.service"),
            [
                "/lib/systemd/system/m.service",
                "/etc/systemd/system/m.service.d/10-y.conf",
                "/etc/systemd/system/m.service.d/20-x.conf",
            ]
        );
        // /etc's 20-x.conf masks /lib's, and it sets nothing in [Service].
        assert_eq!(
            setting(&host, "m.service", "Service", "LimitNOFILE"),
            Some((
                "300".to_string(),
                "/etc/systemd/system/m.service.d/10-y.conf".to_string()
            ))
        );
        assert_eq!(setting(&host, "n.service", "Service", "LimitNOFILE"), None);
    }
}
