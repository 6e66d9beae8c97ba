//! Parsing of the sizes and durations users type, with fio's conventions.
//!
//! fio treats `4k` as 4096 and `1m` as 1 MiB (its default `kb_base=1024`),
//! accepts `KiB`/`KB`/`K` alike, and a bare number as bytes. Durations take a
//! unit suffix (`10s`, `5m`, `1h`, `500ms`) or a bare number of seconds, as
//! fio's `--runtime` does. Hand-written because these are fio's rules, not a
//! general size grammar (crates such as `bytesize` use 1000 for `k`).

use anyhow::{bail, Result};
use std::time::Duration;

/// Parse a size such as `16k`, `1MiB`, `2g`, `512`. Power-of-two units.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        bail!("size {s:?} has no number (examples: 16k, 1m, 4g)");
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        other => bail!("size {s:?} has unknown unit {other:?} (use k, m, g or t)"),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| anyhow::anyhow!("size {s:?} is not a number"))?;
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        bail!("size {s:?} is out of range");
    }
    Ok(bytes.round() as u64)
}

/// Parse a duration: `10s`, `5m`, `1h`, `250ms`, `1h30m`, or bare seconds.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(Duration::from_secs_f64(secs));
        }
        bail!("duration {s:?} must be zero or more seconds");
    }
    humantime::parse_duration(t)
        .map_err(|e| anyhow::anyhow!("duration {s:?}: {e} (examples: 10s, 5m, 1h)"))
}

/// Format bytes the way fio prints them: `16KiB`, `1MiB`, `1.50GiB`.
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{}{}", v.round() as u64, UNITS[i])
    } else {
        format!("{v:.2}{}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("16k").unwrap(), 16384);
        assert_eq!(parse_size("16KiB").unwrap(), 16384);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert!(parse_size("k").is_err());
        assert!(parse_size("12q").is_err());
        assert_eq!(fmt_size(16384), "16KiB");
        assert_eq!(fmt_size(3 << 29), "1.50GiB");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
