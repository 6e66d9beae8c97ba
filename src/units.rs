//! Parsing of the sizes and durations users type, and the size strings
//! innotune writes back in fio's `key=value` form.
//!
//! Sizes: `4k` is 4096 and `1m` 1 MiB, as in fio's default `kb_base=1024`;
//! a bare number is bytes. **Deviation from fio:** fio's default mode reads
//! the IEC spellings the other way round (`4KiB` = 4000 bytes, "power-of-10
//! values with IEC prefixes", see fio's HOWTO, `kb_base`); innotune reads
//! `KiB`, `KB` and `K` alike as 1024, because a DBA typing `16KiB` means an
//! InnoDB page. So that a string innotune prints means the same to fio,
//! fio-style option strings ([`fmt_fio_size`]) never use an IEC suffix:
//! they say `16k`, which both tools read as 16384.
//!
//! Durations take a unit suffix (`10s`, `5m`, `1h`, `500ms`, `1h30m`) or a
//! bare number of seconds, as fio's `--runtime` does, and are capped at
//! [`MAX_DURATION`] so no later arithmetic on a deadline can overflow.
//!
//! Hand-written because these are fio's rules, not a general size grammar
//! (crates such as `bytesize` use 1000 for `k`).

use anyhow::{bail, Result};
use std::time::Duration;

/// The longest duration accepted anywhere (a year): longer runs are typos,
/// and `Instant + d` must never overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

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
    // 2^64 itself is not representable: compare with the largest f64 below it.
    if !(0.0..18_446_744_073_709_551_615.0).contains(&bytes) {
        bail!("size {s:?} is out of range");
    }
    Ok(bytes.round() as u64)
}

/// Parse a duration: `10s`, `5m`, `1h`, `250ms`, `1h30m`, or bare seconds.
/// At most [`MAX_DURATION`]; never panics on any input.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    let too_long = || {
        anyhow::anyhow!(
            "duration {s:?} is out of range (at most {} days)",
            MAX_DURATION.as_secs() / 86400
        )
    };
    let d = if let Ok(secs) = t.parse::<f64>() {
        if secs.is_nan() {
            bail!("duration {s:?} is not a number (examples: 10s, 5m, 1h)");
        }
        if secs < 0.0 {
            bail!("duration {s:?} must be zero or more seconds");
        }
        Duration::try_from_secs_f64(secs).map_err(|_| too_long())?
    } else {
        humantime::parse_duration(t).map_err(|e| match e {
            humantime::DurationError::NumberOverflow => too_long(),
            e => anyhow::anyhow!("duration {s:?}: {e} (examples: 10s, 5m, 1h)"),
        })?
    };
    if d > MAX_DURATION {
        return Err(too_long());
    }
    Ok(d)
}

/// Seconds for people, as [`fmt_ns`]: `850 ms`, `2.64 s`, `0 ns` for
/// zero (a sub-second figure printed `{:.0}s` said "0s").
pub fn fmt_secs(s: f64) -> String {
    if !s.is_finite() || s <= 0.0 {
        return "0 s".to_string();
    }
    fmt_ns((s * 1e9).round() as u64)
}

/// A duration in ns for people, in the largest unit that keeps it at or
/// above 1 with three significant digits, trailing zeros dropped: `850 us`,
/// `21.7 ms`, `5 s`, `2.64 s`.
/// (Duration's Debug prints `2.642417s`, too precise for a report line.)
pub fn fmt_ns(ns: u64) -> String {
    let (v, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (ns as f64 / 1e3, "us"),
        1_000_000..=999_999_999 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let v = format!("{v:.digits$}");
    let v = if v.contains('.') {
        v.trim_end_matches('0').trim_end_matches('.')
    } else {
        &v
    };
    format!("{v} {unit}")
}

/// Format bytes for people, the way fio's reports print them: `16KiB`,
/// `1MiB`, `1.50GiB`. Not for option strings: see [`fmt_fio_size`].
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

/// A size as an option value both innotune and fio read the same: the
/// largest of `k`/`m`/`g`/`t` that divides it exactly (`16k`, `1m`), else
/// plain bytes (`1536k` rather than a rounded `1.5m`). See the module doc.
pub fn fmt_fio_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_at_three_digits() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(850_000), "850 us");
        assert_eq!(fmt_ns(21_000_000), "21 ms");
        assert_eq!(fmt_ns(21_690_000), "21.7 ms");
        assert_eq!(fmt_ns(5_000_000_000), "5 s");
        assert_eq!(fmt_ns(500_000_000), "500 ms");
        assert_eq!(fmt_ns(2_642_417_000), "2.64 s");
    }

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("16k").unwrap(), 16384);
        assert_eq!(parse_size("16KiB").unwrap(), 16384);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert!(parse_size("k").is_err());
        assert!(parse_size("12q").is_err());
        assert!(parse_size("99999999999999999999p").is_err());
        assert_eq!(fmt_size(16384), "16KiB");
        assert_eq!(fmt_size(3 << 29), "1.50GiB");
    }

    #[test]
    fn fio_strings_never_use_iec_suffixes() {
        assert_eq!(fmt_fio_size(16384), "16k");
        assert_eq!(fmt_fio_size(1 << 20), "1m");
        assert_eq!(fmt_fio_size(256 << 20), "256m");
        assert_eq!(fmt_fio_size(1 << 30), "1g");
        assert_eq!(fmt_fio_size(3 << 29), "1536m");
        assert_eq!(fmt_fio_size(512), "512");
        assert_eq!(fmt_fio_size(1536), "1536");
        assert_eq!(fmt_fio_size(0), "0");
        // What is printed parses back to the same bytes.
        for b in [512u64, 4096, 16384, 1 << 20, 3 << 29, 5 << 40, 1536] {
            assert_eq!(parse_size(&fmt_fio_size(b)).unwrap(), b);
        }
    }

    #[test]
    fn seconds_for_people() {
        assert_eq!(fmt_secs(0.0), "0 s");
        assert_eq!(fmt_secs(0.35), "350 ms");
        assert_eq!(fmt_secs(2.642417), "2.64 s");
        assert_eq!(fmt_secs(0.0005), "500 us");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
        // Issue 39: NaN said "must be zero or more seconds".
        for nan in ["nan", "NaN", "-nan", "+NaN"] {
            let e = parse_duration(nan).unwrap_err().to_string();
            assert!(
                e.contains("is not a number") && !e.contains("zero or more"),
                "{nan}: {e}"
            );
        }
        assert!(parse_duration("-1")
            .unwrap_err()
            .to_string()
            .contains("zero or more"));
    }

    /// These panicked (float-to-Duration overflow) before the range check.
    #[test]
    fn huge_durations_are_range_errors() {
        for s in [
            "1e300",
            "99999999999999999999",
            "inf",
            "99999999999999999999s",
            "400d",
            "100000000000000000000ms",
        ] {
            let e = parse_duration(s).unwrap_err().to_string();
            assert!(
                e.contains("out of range") || e.contains("must be"),
                "{s}: {e}"
            );
        }
        assert_eq!(parse_duration("365d").unwrap().as_secs(), 365 * 86400);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Any string through either parser: an answer or an error, never a panic.
        #[test]
        fn parsers_never_panic(s in "\\PC{0,24}") {
            let _ = parse_size(&s);
            let _ = parse_duration(&s);
        }

        /// Strings shaped like numbers with units, the likelier inputs.
        #[test]
        fn numberish_inputs_never_panic(
            n in "[-+]?[0-9]{0,30}(\\.[0-9]{0,10})?(e[-+]?[0-9]{1,4})?",
            u in "(|k|KiB|m|g|t|p|s|ms|us|ns|h|d|w|y|min|x)",
        ) {
            let s = format!("{n}{u}");
            let _ = parse_size(&s);
            if let Ok(d) = parse_duration(&s) {
                proptest::prop_assert!(d <= MAX_DURATION);
            }
        }
    }
}
