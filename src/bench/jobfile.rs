//! TOML job files: `[global]` (workload options, and job options as
//! defaults for every job) and one `[[job]]` table per job, with fio's
//! names. Every value goes through the one options table of [`super::job`]
//! ([`JobSpec::set`]), so a job file, a preset and the command line cannot
//! disagree about a name or its units.

use super::job::{self, JobSpec, Scope};
use super::{check_unique_names, duration_opt, runtime_opt, Workload};
use crate::error::Fix;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn toml_value_text(key: &str, v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => (*b as u8).to_string(),
        toml::Value::Float(f) => f.to_string(),
        _ => bail!(Fix::new(
            format!("job file: {key} must be a string, number or boolean"),
            format!("write it like {key} = \"16k\" or {key} = 1")
        )),
    })
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Parse a TOML job file: `[global]` (workload options, and job options as
/// defaults for every job) and one `[[job]]` table per job, fio's names.
/// Only a regular file of at most [`MAX_JOB_FILE`] is read: a FIFO or a
/// device is refused without blocking on it.
pub fn load_job_file(path: &Path) -> Result<Workload> {
    let text = JOB_FILE.read_to_string(path)?;
    parse_job_file(&text, path)
}

/// The largest job file read (one with a thousand jobs is under 100 KiB).
pub const MAX_JOB_FILE: u64 = 1 << 20;

const JOB_FILE: crate::input::Input = crate::input::Input {
    what: "job file",
    fix: "give the path of a TOML job file ([global] and [[job]] tables, fio's option names)",
    max: Some(MAX_JOB_FILE),
};

/// [`load_job_file`] on text already read (`path` names it in errors).
pub fn parse_job_file(text: &str, path: &Path) -> Result<Workload> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = match e.span() {
            Some(sp) => {
                let (l, c) = line_col(text, sp.start);
                format!(" line {l}, column {c}")
            }
            None => String::new(),
        };
        Fix::new(
            format!(
                "job file {}{at}: {}",
                path.display(),
                e.message().replace('\n', " ")
            ),
            "fix the TOML syntax ([global] and [[job]] tables of key = value)",
        )
    })?;
    let mut base = JobSpec::default();
    let mut w = Workload {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "jobs".into()),
        jobs: Vec::new(),
        directory: PathBuf::from("."),
        default_runtime: None,
        default_ramp: Duration::ZERO,
        allow_datadir: false,
        allow_raw_device: false,
    };
    let mut dir_set = false;
    for k in doc.keys() {
        if k != "global" && k != "job" {
            bail!(Fix::new(
                format!("job file: unknown table {k:?}"),
                "use [global] and [[job]] tables"
            ));
        }
    }
    if let Some(g) = doc.get("global") {
        let g = g
            .as_table()
            .ok_or_else(|| Fix::new("job file: global must be a table", "write it as [global]"))?;
        for (k, v) in g {
            let val = toml_value_text(k, v)?;
            match job::canonical(k).map(|d| (d.name, d.scope)) {
                Some(("runtime", _)) => {
                    w.default_runtime = Some(runtime_opt("job file runtime", &val)?)
                }
                Some(("ramp_time", _)) => {
                    w.default_ramp = duration_opt("job file ramp_time", &val)?
                }
                Some(("directory", _)) => {
                    w.directory = PathBuf::from(val);
                    dir_set = true;
                }
                Some((_, Scope::Job)) => base.set(k, &val)?,
                _ => base.set(k, &val)?, // unknown: set() names the fix
            }
        }
    }
    let jobs = match doc.get("job") {
        Some(toml::Value::Array(a)) => a.clone(),
        _ => bail!(Fix::new(
            format!("job file {} has no jobs", path.display()),
            "add at least one [[job]] table with rw = \"…\""
        )),
    };
    for (i, j) in jobs.iter().enumerate() {
        let t = j
            .as_table()
            .ok_or_else(|| Fix::new("job file: job must be a table", "write [[job]]"))?;
        let mut spec = base.clone();
        spec.name = format!("job{i}");
        for (k, v) in t {
            spec.set(k, &toml_value_text(k, v)?)?;
        }
        w.jobs.push(spec);
    }
    check_unique_names(&w.jobs)?;
    if !dir_set {
        // No directory in the file: the CLI asks for --directory.
        w.directory = PathBuf::new();
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::super::load_workload;
    use super::*;

    #[test]
    fn job_file_global_defaults_and_jobs() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("w.toml");
        std::fs::write(
            &f,
            "[global]\nruntime = \"2s\"\nramp_time = 1\nbs = \"16k\"\ndirect = true\n\
             [[job]]\nname = \"r\"\nrw = \"randread\"\niodepth = 8\n\
             [[job]]\nname = \"w\"\nrw = \"write\"\nbs = \"1m\"\n",
        )
        .unwrap();
        let w = load_workload(f.to_str().unwrap(), d.path()).unwrap();
        assert_eq!(w.jobs.len(), 2);
        assert_eq!(w.default_runtime, Some(Duration::from_secs(2)));
        assert_eq!(w.default_ramp, Duration::from_secs(1));
        assert_eq!(
            (w.jobs[0].bs, w.jobs[0].iodepth, w.jobs[0].direct),
            (16384, 8, true)
        );
        assert_eq!(w.jobs[1].bs, 1 << 20);
        std::fs::write(&f, "[[job]]\nrw = \"randread\"\nruntime = 3\n").unwrap();
        assert!(load_job_file(&f).is_err());
        std::fs::write(&f, "[[job]]\nrw = \"sideways\"\n").unwrap();
        assert!(load_job_file(&f)
            .unwrap_err()
            .to_string()
            .contains("unknown rw"));
    }

    #[test]
    fn job_file_errors_name_line_column_and_option() {
        let p = Path::new("w.toml");
        let e = parse_job_file("[global]\nruntime = \"2s\"\n[[job]]\nrw = \"read\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.toml line 4, column"), "{e}");
        for bad in ["1e300", "99999999999999999999"] {
            let e = parse_job_file(
                &format!("[global]\nruntime = \"{bad}\"\n[[job]]\nrw = \"read\"\n"),
                p,
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("runtime") && e.contains("out of range") && e.contains("fix:"),
                "{e}"
            );
        }
        let e = parse_job_file("[global]\nruntime = 0\n[[job]]\nrw = \"read\"\n", p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("measures nothing"), "{e}");
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
