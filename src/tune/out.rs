//! The report directory: every result as JSON v2, summary.md, report.html,
//! and the emitted files under files/.

use super::report::OltpSide;
use super::Shared;
use crate::error::Fix;
use crate::export::json::HostStamp;
use crate::export::{Format, Report, Sink};
use crate::host::Host;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The directory to write into: `--out` (created if missing, refused when
/// it holds anything), else `./innotune-<host>-<YYYYmmdd-HHMMSS>/`.
pub fn prepare(host: &Host, out: Option<&Path>) -> Result<PathBuf> {
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => {
            let hostname = host
                .read_trim("/proc/sys/kernel/hostname")
                .unwrap_or_else(|_| "host".into());
            let hostname: String = hostname
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            std::env::current_dir()?.join(format!("innotune-{hostname}-{}", stamp()))
        }
    };
    if dir.exists() {
        let empty = std::fs::read_dir(&dir)
            .map(|mut r| r.next().is_none())
            .unwrap_or(false);
        if !dir.is_dir() || !empty {
            return Err(Fix::new(
                format!(
                    "--out {} exists and is not an empty directory",
                    dir.display()
                ),
                "give a new or empty directory (a report never overwrites another)",
            )
            .into());
        }
    } else {
        std::fs::create_dir_all(&dir).map_err(|e| {
            Fix::new(
                format!("cannot create --out {}: {e}", dir.display()),
                "give a directory you can write to",
            )
        })?;
    }
    Ok(dir.canonicalize()?)
}

/// `YYYYmmdd-HHMMSS`, UTC, from the RFC 3339 form.
fn stamp() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // 2026-11-23T21:18:11Z → 20261123-211811
    let digits: String = t.chars().filter(|c| c.is_ascii_digit()).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

/// One report as a JSON v2 document at `path`; `stamp`: the host it
/// describes.
pub fn write_one<R: Report>(stamp: &HostStamp, path: &Path, r: &R) -> Result<()> {
    let mut buf = Vec::new();
    Sink::stdout(Format::Json).render(stamp, r, &mut buf)?;
    crate::export::write_atomic(path, &buf)
}

/// Write everything measured so far (the final report, or a partial one
/// from a signal's hook).
pub fn write_all(s: &mut Shared) -> Result<()> {
    let dir = s.report.out_dir.clone();
    let host = s.stamp.clone();
    let mut written = Vec::new();
    if let Some(p) = &s.probe {
        write_one(&host, &dir.join("probe.json"), p)?;
        written.push("probe.json".to_string());
    }
    if let Some(c) = &s.check {
        write_one(&host, &dir.join("check.json"), c)?;
        written.push("check.json".to_string());
    }
    if let Some(r) = &s.report.sweep_report {
        write_one(&host, &dir.join("sweep.json"), r)?;
        written.push("sweep.json".to_string());
    }
    if let Some(c) = &s.report.oltp {
        for (name, side, runs) in [
            ("oltp-before.json", &c.profiles.before, &c.runs_before),
            ("oltp-after.json", &c.profiles.after, &c.runs_after),
        ] {
            let r = OltpSide {
                side: side.side.clone(),
                variables: side.variables.clone(),
                runs: runs.clone(),
            };
            write_one(&host, &dir.join(name), &r)?;
            written.push(name.to_string());
        }
        for f in ["sandbox-before.cnf", "sandbox-after.cnf"] {
            if dir.join(f).exists() {
                written.push(f.to_string());
            }
        }
    }
    for e in &s.report.emitted {
        if let Ok(rel) = Path::new(&e.written).strip_prefix(&dir) {
            written.push(rel.display().to_string());
        }
    }
    written.extend(["tune.json", "summary.md", "report.html"].map(String::from));
    s.report.written = written;
    write_one(&host, &dir.join("tune.json"), &s.report)?;
    let doc = s.report.document();
    let mut md = Vec::new();
    Sink::stdout(Format::Markdown).render(&host, &s.report, &mut md)?;
    crate::export::write_atomic(&dir.join("summary.md"), &md)?;
    let html = crate::export::html::render_page(&doc.title, std::slice::from_ref(&doc));
    crate::export::write_atomic(&dir.join("report.html"), html.as_bytes())?;
    Ok(())
}
