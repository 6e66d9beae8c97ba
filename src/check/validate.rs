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

#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// The command that checked it.
    pub tool: String,
    pub ok: bool,
    /// Its complaint, one line.
    #[serde(skip_serializing_if = "String::is_empty")]
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
    match e.kind {
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
            let thp = dir.path().join("root/sys/kernel/mm/transparent_hugepage");
            std::fs::create_dir_all(&thp).ok()?;
            std::fs::write(thp.join("enabled"), "").ok()?;
            let f = dir.path().join("innotune.conf");
            std::fs::write(&f, &e.content).ok()?;
            let out = Command::new("systemd-tmpfiles")
                .arg(format!("--root={}", dir.path().join("root").display()))
                .arg("--create")
                .arg(&f)
                .output()
                .ok()?;
            let written = std::fs::read_to_string(thp.join("enabled")).unwrap_or_default();
            let want = e
                .content
                .lines()
                .filter(|l| l.starts_with("w "))
                .filter_map(|l| l.split_whitespace().nth(6))
                .next_back()
                .unwrap_or("");
            Some(Validation {
                tool: "systemd-tmpfiles --root=SCRATCH --create".into(),
                ok: out.status.success() && written.trim() == want,
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
        _ => None,
    }
}
