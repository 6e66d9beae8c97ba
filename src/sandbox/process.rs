//! The operating-system side of a sandbox: finding the server binary and
//! its version, a free port, and telling whether a pid is (still) the
//! server of a given sandbox.

use crate::db::ServerVersion;
use crate::error::Fix;
use anyhow::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    let extra = "/usr/sbin:/usr/local/sbin:/usr/local/mysql/bin:/usr/bin";
    path.push(":");
    path.push(extra);
    names
        .iter()
        .find_map(|n| which::which_in(n, Some(&path), "/").ok())
}

/// `mariadbd --version` → "… Ver 10.11.19-MariaDB-0+deb12u1 for …".
pub(super) fn binary_version(bin: &Path) -> Result<ServerVersion> {
    let out = Command::new(bin)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", bin.display()))?;
    let s = String::from_utf8_lossy(&out.stdout);
    let v = s
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .unwrap_or("");
    Ok(ServerVersion::parse(v))
}

pub(super) fn free_port(wanted: Option<u16>) -> Result<u16> {
    let l = std::net::TcpListener::bind(("127.0.0.1", wanted.unwrap_or(0))).map_err(|e| {
        Fix::new(
            format!("port {} on 127.0.0.1 is not free: {e}", wanted.unwrap_or(0)),
            "pick another --port or leave it out to get a free one",
        )
    })?;
    Ok(l.local_addr()?.port())
}

pub(super) fn pid_alive(pid: u32) -> bool {
    // A zombie has exited; /proc/PID/stat state 'Z' counts as gone.
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

pub(super) fn tail(path: &Path, n: usize) -> String {
    let t = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}
