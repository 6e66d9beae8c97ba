//! A server replayed from a capture (`check --server-capture DIR`): what
//! `mysql -NBe 'SHOW GLOBAL VARIABLES'` and `SHOW GLOBAL STATUS` printed,
//! tab-separated, the way `--root` replays a host. A managed server (RDS,
//! Aurora, Azure, Cloud SQL) has no host tree to replay; its variables
//! are all a client ever sees, so a capture is the fixture for one.
//!
//! DIR holds `variables.tsv`, `status.tsv` (the end of the window), and
//! optionally `status-start.tsv` with `window-seconds` (the window's start
//! and its length): with both, the rate rules run as on a live sample.

use super::facts::{ServerEndpoint, ServerFacts, Window};
use crate::error::Fix;
use crate::input::Input;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

const INPUT: Input = Input {
    what: "server capture file",
    fix: "give a directory holding variables.tsv and status.tsv (mysql -NBe 'SHOW GLOBAL VARIABLES' > variables.tsv)",
    max: Some(16 << 20),
};

/// `name<TAB>value` lines (names lowercased; a value may be empty).
fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once('\t').unwrap_or((l, ""));
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_ascii_lowercase(), v.trim_end().to_string()))
        })
        .collect()
}

fn numeric(m: BTreeMap<String, String>) -> BTreeMap<String, u64> {
    m.into_iter()
        .filter_map(|(k, v)| Some((k, v.trim().parse::<u64>().ok()?)))
        .collect()
}

/// Load the server facts a capture directory describes.
pub fn load(dir: &Path) -> Result<ServerFacts> {
    if !dir.is_dir() {
        return Err(Fix::new(
            format!("--server-capture {} is not a directory", dir.display()),
            INPUT.fix,
        )
        .into());
    }
    let variables = parse(&INPUT.read_to_string(&dir.join("variables.tsv"))?);
    let Some(raw) = variables.get("version").cloned() else {
        return Err(Fix::new(
            format!(
                "{} has no `version` line",
                dir.join("variables.tsv").display()
            ),
            "capture all of SHOW GLOBAL VARIABLES, not a filtered part",
        )
        .into());
    };
    let status = numeric(parse(&INPUT.read_to_string(&dir.join("status.tsv"))?));
    let start = dir.join("status-start.tsv");
    let window = if start.exists() {
        let first = numeric(parse(&INPUT.read_to_string(&start)?));
        let secs = INPUT.read_to_string(&dir.join("window-seconds"))?;
        let seconds: f64 = secs
            .trim()
            .parse()
            .ok()
            .filter(|s: &f64| *s > 0.0)
            .ok_or_else(|| {
                Fix::new(
                    format!("{}/window-seconds is not a positive number", dir.display()),
                    "write the seconds between the two SHOW GLOBAL STATUS reads",
                )
            })?;
        let delta = status
            .iter()
            .filter_map(|(k, b)| Some((k.clone(), *b as i64 - *first.get(k)? as i64)))
            .collect();
        let dirty = |s: &BTreeMap<String, u64>| {
            let d = *s.get("innodb_buffer_pool_pages_dirty")?;
            let t = *s.get("innodb_buffer_pool_pages_total")?;
            (t > 0).then(|| d as f64 / t as f64 * 100.0)
        };
        Some(Window {
            seconds,
            delta,
            pending_reads_avg: status.get("innodb_data_pending_reads").map(|v| *v as f64),
            dirty_pct_max: match (dirty(&first), dirty(&status)) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        })
    } else {
        None
    };
    let v = crate::db::ServerVersion::parse(&raw);
    Ok(ServerFacts {
        flavor: v.flavor,
        version: v.raw,
        major: v.major,
        minor: v.minor,
        patch: v.patch,
        endpoint: ServerEndpoint {
            host: Some(format!("capture:{}", dir.display())),
            ..Default::default()
        },
        variables,
        status,
        window,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_lines_with_empty_values() {
        let m = parse("Version\t8.0.35\ninnodb_tmpdir\t\n# c\n\nx\n");
        assert_eq!(m["version"], "8.0.35");
        assert_eq!(m["innodb_tmpdir"], "");
        assert_eq!(m["x"], "");
        assert_eq!(m.len(), 3);
    }
}
