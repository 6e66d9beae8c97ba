//! `--results FILE…`: sweep and bench results (JSON envelope v2)
//! turned into facts. Only what was measured on this host's stack counts:
//! a sweep must have switched a device under PATH, a bench must have run
//! on PATH's filesystem; anything else is set aside with a note.

use super::facts::{Facts, Measured, SweepFacts};
use crate::error::Fix;
use crate::host::Host;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

const PRODUCE: &str = "give the file written by innotune sweep/bench --format json";

/// A `--results` file: a regular file (a FIFO or device is refused, never
/// read), no larger than any result innotune writes.
const RESULTS: crate::input::Input = crate::input::Input {
    what: "--results",
    fix: PRODUCE,
    max: Some(crate::export::json::MAX_RESULT),
};

/// Read each file and add what applies to `facts`; returns notes.
pub fn load(host: &Host, files: &[std::path::PathBuf], facts: &mut Facts) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for f in files {
        let bytes = RESULTS.read(f)?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
            Fix::new(
                format!("--results {} is not JSON: {e}", f.display()),
                PRODUCE,
            )
        })?;
        // The envelope checked as `report` checks it: another schema
        // version is refused, never read as if it were this one.
        let cmd = crate::export::json::result_command(&v, f, PRODUCE)?;
        let name = f.display().to_string();
        match cmd {
            "sweep" => match sweep(&v["result"], &name) {
                Some(s) if s.devices.iter().any(|d| facts.devices.iter().any(|x| &x.name == d)) => {
                    facts.sweeps.push(s)
                }
                Some(s) => notes.push(format!(
                    "{name}: the sweep switched {} , none of them under {}; ignored",
                    s.devices.join(", "),
                    facts.path
                )),
                None => notes.push(format!("{name}: no recommendation in this sweep result; ignored")),
            },
            // A survey reads only; io_capacity is about page writes.
            "bench" if v["result"]["survey"].is_object() => notes.push(format!(
                "{name}: a survey measures reads only and innodb_io_capacity needs write IOPS; measure them with innotune bench --preset page-write in the datadir's filesystem; ignored"
            )),
            "bench" => match bench_write_iops(&v["result"]) {
                Some((iops, dir)) => {
                    if same_filesystem(host, &dir, facts) {
                        let better = facts.write_iops.as_ref().map_or(true, |m| iops > m.value);
                        if better {
                            facts.write_iops = Some(Measured {
                                value: iops,
                                source: format!("bench --results {name} ({dir})"),
                            });
                        }
                    } else {
                        notes.push(format!("{name}: measured in {dir}, not on {}'s filesystem; ignored", facts.path));
                    }
                }
                None => notes.push(format!(
                    "{name}: no 16 KiB random-write job (e.g. innotune bench --preset page-write); ignored"
                )),
            },
            other => {
                return Err(Fix::new(
                    format!("--results {name} is a {other:?} result"),
                    "give results of innotune sweep or innotune bench (--format json)",
                )
                .into())
            }
        }
    }
    Ok(notes)
}

fn sweep(r: &Value, file: &str) -> Option<SweepFacts> {
    let rec = &r["recommendation"];
    let scheduler = rec["scheduler"].as_str()?.to_string();
    let cand = rec["candidate"].as_str().unwrap_or(&scheduler).to_string();
    let significant = r["verdicts"].as_array().is_some_and(|vs| {
        vs.iter()
            .any(|v| v["candidate"] == cand.as_str() && v["verdict"] == "better")
    });
    Some(SweepFacts {
        file: file.into(),
        devices: r["devices"]
            .as_array()?
            .iter()
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect(),
        scheduler,
        nr_requests: rec["nr_requests"].as_u64(),
        read_ahead_kb: rec["read_ahead_kb"].as_u64(),
        significant,
        reason: rec["reason"].as_str().unwrap_or("").to_string(),
    })
}

/// Write IOPS of the 16 KiB random-write jobs of a bench result, and the
/// directory they ran in.
fn bench_write_iops(r: &Value) -> Option<(f64, String)> {
    let dir = r["directory"].as_str()?.to_string();
    let jobs = r["result"]["jobs"].as_array()?;
    let mut total = 0.0;
    let mut any = false;
    for j in jobs {
        let o = j["options"].as_str().unwrap_or("");
        let page_write = j["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("page-write"))
            || (o.contains("rw=randwrite") && (o.contains("bs=16k") || o.contains("bs=16KiB")));
        let w = &j["write"];
        let iops = w["iops"].as_f64().or_else(|| w["iops_per_s"].as_f64());
        if let (true, Some(i)) = (page_write, iops) {
            total += i;
            any = true;
        }
    }
    any.then_some((total, dir))
}

fn same_filesystem(host: &Host, dir: &str, facts: &Facts) -> bool {
    let Some(m) = &facts.mount else { return false };
    let Ok(mounts) = crate::model::mount::Mounts::read(host) else {
        return false;
    };
    mounts
        .for_path(Path::new(dir))
        .is_some_and(|x| x.mount_point == m.mount_point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_page_write_iops() {
        // `innotune bench --preset page-write --format json`'s result.
        let r = serde_json::json!({
            "directory": "/var/tmp/x",
            "result": {"name": "page-write", "jobs": [
                {"name": "page-write", "options": "rw=randwrite bs=16k numjobs=24", "write": {"iops": 3130.5}, "read": null}
            ]}
        });
        assert_eq!(
            bench_write_iops(&r),
            Some((3130.5, "/var/tmp/x".to_string()))
        );
        let reads = serde_json::json!({"directory": "/d", "result": {"jobs": [
            {"name": "page-read", "options": "rw=randread bs=16k", "read": {"iops": 9000.0}}]}});
        assert_eq!(bench_write_iops(&reads), None);
    }
}
