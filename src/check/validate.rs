//! Emitted files checked by the real tools, offline, before `apply`
//! installs them (and in `check --emit`'s report): the server binary reads
//! the [mysqld] drop-in (`--defaults-file=F --help --verbose` refuses an
//! unknown variable or value), `systemd-analyze verify` loads the units
//! and drop-ins from a scratch unit path, `systemd-tmpfiles --root`
//! applies the tmpfiles entry to a scratch tree, and every sysctl name
//! must exist under /proc/sys. None of these touches the host's settings.
//! (udev rules need a device to run against; the tests run them with
//! `udevadm test` on a loop device.)

use super::emit::Emitted;
use crate::host::Host;
use serde::Serialize;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Validation {
    /// The command that checked it.
    pub tool: String,
    pub ok: bool,
    /// Its complaint, one line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

fn lines_about(out: &[u8], needle: &str) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.contains(needle))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The server binary to check a drop-in with.
pub fn server_binary() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut p = path.clone();
    p.push(":/usr/sbin:/usr/local/sbin:/usr/local/mysql/bin");
    ["mariadbd", "mysqld"]
        .iter()
        .find_map(|n| which::which_in(n, Some(&p), "/").ok())
}

/// Check one emitted file; `None` when no tool applies or none is installed.
pub fn check(host: &Host, e: &Emitted) -> Option<Validation> {
    let dir = tempfile::tempdir().ok()?;
    match e.kind.as_ref() {
        "mysqld_dropin" => {
            let bin = server_binary()?;
            let f = dir.path().join("my.cnf");
            std::fs::write(&f, &e.content).ok()?;
            let out = Command::new(&bin)
                .arg(format!("--defaults-file={}", f.display()))
                .args(["--help", "--verbose"])
                .output()
                .ok()?;
            let err = lines_about(&out.stderr, "[ERROR]");
            Some(Validation {
                tool: format!("{} --defaults-file=FILE --help --verbose", bin.display()),
                ok: out.status.success() && err.is_empty(),
                detail: err,
            })
        }
        "systemd_unit" | "systemd_dropin" => {
            which::which("systemd-analyze").ok()?;
            let (unit, file) = if e.kind == "systemd_unit" {
                let name = Path::new(&e.path)
                    .file_name()?
                    .to_string_lossy()
                    .into_owned();
                let f = dir.path().join(&name);
                std::fs::write(&f, &e.content).ok()?;
                (f, name)
            } else {
                // A drop-in needs its unit: a stub one.
                let p = Path::new(&e.path);
                let d = p.parent()?.file_name()?.to_string_lossy().into_owned();
                let svc = d.strip_suffix(".d")?.to_string();
                std::fs::create_dir(dir.path().join(&d)).ok()?;
                std::fs::write(dir.path().join(&svc), "[Service]\nExecStart=/bin/true\n").ok()?;
                let name = p.file_name()?.to_string_lossy().into_owned();
                std::fs::write(dir.path().join(&d).join(&name), &e.content).ok()?;
                (dir.path().join(&svc), name)
            };
            let out = Command::new("systemd-analyze")
                .args(["verify", "--man=no"])
                .arg(&unit)
                .env("SYSTEMD_UNIT_PATH", format!("{}:", dir.path().display()))
                .output()
                .ok()?;
            let err = lines_about(&out.stderr, &file);
            Some(Validation {
                tool: "systemd-analyze verify".into(),
                ok: out.status.success() && err.is_empty(),
                detail: err,
            })
        }
        "tmpfiles" => {
            which::which("systemd-tmpfiles").ok()?;
            // Every `w PATH - - - - VALUE` line: its file (a glob's `*` as
            // `0`) made empty in a scratch root, then written by the tool.
            let root = dir.path().join("root");
            let wanted: Vec<(std::path::PathBuf, String)> = e
                .content
                .lines()
                .filter(|l| l.starts_with("w "))
                .filter_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    let p = w.get(1)?.trim_start_matches('/').replace('*', "0");
                    Some((root.join(p), w.get(6)?.to_string()))
                })
                .collect();
            for (p, _) in &wanted {
                std::fs::create_dir_all(p.parent()?).ok()?;
                std::fs::write(p, "").ok()?;
            }
            let f = dir.path().join("innotune.conf");
            std::fs::write(&f, &e.content).ok()?;
            let out = Command::new("systemd-tmpfiles")
                .arg(format!("--root={}", root.display()))
                .arg("--create")
                .arg(&f)
                .output()
                .ok()?;
            let all_written = wanted
                .iter()
                .all(|(p, want)| std::fs::read_to_string(p).unwrap_or_default().trim() == want);
            Some(Validation {
                tool: "systemd-tmpfiles --root=SCRATCH --create".into(),
                ok: out.status.success() && !wanted.is_empty() && all_written,
                detail: String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', " | "),
            })
        }
        "sysctl" => {
            let missing: Vec<String> = e
                .content
                .lines()
                .filter(|l| !l.starts_with('#') && l.contains('='))
                .filter_map(|l| l.split('=').next())
                .map(|k| k.trim().to_string())
                .filter(|k| !host.exists(format!("/proc/sys/{}", k.replace('.', "/"))))
                .collect();
            Some(Validation {
                tool: "every name exists under /proc/sys".into(),
                ok: missing.is_empty(),
                detail: if missing.is_empty() {
                    String::new()
                } else {
                    format!("unknown: {}", missing.join(", "))
                },
            })
        }
        "udev" => {
            // `udevadm verify` (systemd 254+) parses rules files offline;
            // older udevadm can only run rules against a device.
            let ok = Command::new("udevadm")
                .args(["verify", "--help"])
                .output()
                .ok()?
                .status
                .success();
            if !ok {
                return None;
            }
            let f = dir.path().join("60-innotune.rules");
            std::fs::write(&f, &e.content).ok()?;
            let out = Command::new("udevadm")
                .args(["verify", "--resolve-names=never"])
                .arg(&f)
                .output()
                .ok()?;
            Some(Validation {
                tool: "udevadm verify".into(),
                ok: out.status.success(),
                detail: String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', " | "),
            })
        }
        _ => None,
    }
}

/// Why a file of `kind` carries no [`Validation`] (what `check`'s
/// "checked by" column says instead of a blank).
pub fn not_checked(kind: &str) -> &'static str {
    match kind {
        "udev" => "not checked: only udevadm 254+ checks rules offline (udevadm verify)",
        "fstab" => "not checked: a line to add by hand, innotune never edits /etc/fstab",
        "systemd_unit_link" => "not checked: a symlink enabling the unit",
        "mysqld_dropin" => "not checked: no mariadbd or mysqld installed",
        _ => "not checked: the tool is not installed",
    }
}
