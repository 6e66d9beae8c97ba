//! The buffer pool: its size against RAM and the data it caches (with the
//! miss rate sampled over the window), rounded to a multiple of
//! innodb_buffer_pool_chunk_size × innodb_buffer_pool_instances (MySQL bug
//! 79379: any other value is silently rounded up at startup), and
//! read-ahead that evicts pages before anyone reads them.
//!
//! One finding per variable: the size rule and the chunk rule agree on one
//! value, so the report never carries two sizes.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::{cnf_bytes, human_bytes, Facts, ServerFacts};
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.buffer_pool",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "buffer pool vs RAM, data size and miss rate; multiple of chunk × instances; read-ahead evictions",
    run,
};

const DOC: &str = "https://dev.mysql.com/doc/refman/8.0/en/innodb-buffer-pool-resize.html";

/// innodb_dedicated_server's rule: 128 MiB below 1 GiB of RAM, half of it
/// up to 4 GiB, three quarters above.
pub fn dedicated_share(ram: u64) -> u64 {
    const G: u64 = 1 << 30;
    if ram < G {
        128 << 20
    } else if ram <= 4 * G {
        ram / 2
    } else {
        ram / 4 * 3
    }
}

/// The unit the buffer pool must be a multiple of, if the server has one
/// (MariaDB ≥ 10.8 sizes chunks itself when the chunk size is 0).
pub fn unit(s: &ServerFacts) -> Option<u64> {
    let chunk = s
        .var_u64("innodb_buffer_pool_chunk_size")
        .filter(|&c| c > 0)?;
    // MariaDB 10.6 removed innodb_buffer_pool_instances (one pool).
    let inst = s
        .var_u64("innodb_buffer_pool_instances")
        .unwrap_or(1)
        .max(1);
    Some(chunk * inst)
}

/// The multiple of `unit` nearest to `x` (at least one unit), not above
/// `cap` when a lower multiple exists.
pub fn round_to(x: u64, unit: u64, cap: Option<u64>) -> u64 {
    let down = (x / unit) * unit;
    let up = down + unit;
    let mut r = if down == 0 || x - down >= up - x {
        up
    } else {
        down
    };
    if let Some(c) = cap {
        if r > c && r > unit {
            r -= unit;
        }
    }
    r.max(unit)
}

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let Some(bp) = s.var_u64("innodb_buffer_pool_size") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let unit = unit(s);
    let ram = f.host.memory_bytes;
    let share = ram.map(dedicated_share);
    let w = s.window.as_ref();
    let misses = w.and_then(|w| {
        let req = w.delta("innodb_buffer_pool_read_requests")?;
        let rd = w.delta("innodb_buffer_pool_reads")?;
        (req > 1000).then(|| rd as f64 / req as f64 * 100.0)
    });
    let free = s.status("innodb_buffer_pool_pages_free");
    let total = s.status("innodb_buffer_pool_pages_total");
    let mut ev = vec![format!("innodb_buffer_pool_size {}", human_bytes(bp))];
    if let Some(r) = ram {
        ev.push(format!(
            "RAM {} ({:.0}%)",
            human_bytes(r),
            bp as f64 / r as f64 * 100.0
        ));
    }
    if let Some(d) = s.innodb_data_bytes {
        ev.push(format!("InnoDB tablespaces {}", human_bytes(d)));
    }
    if let Some(m) = misses {
        ev.push(format!(
            "{m:.2}% of page requests missed the pool during the sample"
        ));
    }
    if let (Some(fr), Some(t)) = (free, total) {
        ev.push(format!("{fr} of {t} pages free"));
    }
    if let Some(u) = unit {
        ev.push(format!("chunk × instances {}", human_bytes(u)));
    }
    let evidence = ev.join("; ");

    // Size: too big for RAM, or too small for the data it caches.
    let mut target: Option<(u64, Severity, String, Source)> = None;
    if let (Some(r), Some(sh)) = (ram, share) {
        if bp > r / 10 * 9 {
            target = Some((
                sh,
                Severity::Warning,
                format!("the buffer pool ({}) takes more than 90% of RAM ({}): with per-connection buffers and the OS on top, the host swaps or the OOM killer stops mysqld. innodb_dedicated_server's rule for this RAM gives {}.", human_bytes(bp), human_bytes(r), human_bytes(sh)),
                Source::RuleOfThumb,
            ));
        } else {
            let pressure = misses.is_some_and(|m| m > 1.0) && free.is_some_and(|fr| fr < 100);
            let data_big = s.innodb_data_bytes.is_some_and(|d| d > bp);
            if (data_big || pressure) && bp < sh {
                let want = match s.innodb_data_bytes {
                    Some(d) if d > bp => (d / 4 * 5).min(sh),
                    _ => (bp * 2).min(sh),
                };
                let sev = if pressure {
                    Severity::Warning
                } else {
                    Severity::Notice
                };
                target = Some((
                    want,
                    sev,
                    format!(
                        "the buffer pool ({}) is smaller than the data it caches{}: reads that miss it go to disk. On a host dedicated to the server it can grow to {} (innodb_dedicated_server's share of {} RAM); {} holds the data with a quarter to spare.",
                        human_bytes(bp),
                        if pressure { " and missed during the sample with no free pages left" } else { "" },
                        human_bytes(sh),
                        human_bytes(r),
                        human_bytes(want)
                    ),
                    if pressure { Source::Measured } else { Source::Observed },
                ));
            }
        }
    }
    match target {
        Some((want, sev, reason, src)) => {
            let v = match unit {
                Some(u) => round_to(want, u, share),
                None => want,
            };
            if v != bp {
                let reason = match unit {
                    Some(u) => format!(
                        "{reason} Rounded to a multiple of chunk × instances ({}).",
                        human_bytes(u)
                    ),
                    None => reason,
                };
                out.push(server_advice(
                    s,
                    "server.buffer_pool.size",
                    sev,
                    "innodb_buffer_pool_size",
                    v,
                    reason,
                    src,
                    evidence.clone(),
                ));
            }
        }
        None => {
            if let Some(u) = unit {
                let configured = s
                    .configured("innodb_buffer_pool_size")
                    .and_then(|(v, o)| Some((crate::check::facts::parse_size(v)?, o.clone())));
                let off = bp % u != 0;
                let rounded = configured
                    .as_ref()
                    .is_some_and(|(c, _)| *c != bp && c % u != 0);
                if off || rounded {
                    let intended = configured.as_ref().map(|c| c.0).unwrap_or(bp);
                    let v = round_to(intended, u, share);
                    let what = match &configured {
                        Some((c, o)) if *c != bp => format!(
                            "{o} sets {}, and the server runs {}",
                            cnf_bytes(*c),
                            human_bytes(bp)
                        ),
                        _ => format!("the server runs {}", human_bytes(bp)),
                    };
                    out.push(server_advice(
                        s,
                        "server.buffer_pool.chunk",
                        Severity::Notice,
                        "innodb_buffer_pool_size",
                        v,
                        format!(
                            "{what}, not a multiple of innodb_buffer_pool_chunk_size × instances ({}): MySQL rounds the pool up to the next multiple at startup (bug 79379), so it is not the size anyone chose, and online resizing works in whole chunks. {} is the nearest multiple.",
                            human_bytes(u),
                            human_bytes(v)
                        ),
                        Source::Observed,
                        evidence.clone(),
                    ));
                }
            }
        }
    }
    for a in &mut out {
        a.finding.evidence.reference = Some(DOC.into());
    }
    // Linear read-ahead that brings in pages nobody reads.
    if let Some(w) = w {
        let ra = w.delta("innodb_buffer_pool_read_ahead").unwrap_or(0);
        let ev_ra = w
            .delta("innodb_buffer_pool_read_ahead_evicted")
            .unwrap_or(0);
        let thr = s.var_u64("innodb_read_ahead_threshold").unwrap_or(56);
        if ra >= 1000 && ev_ra * 2 > ra && thr < 64 {
            out.push(server_advice(
                s,
                "server.buffer_pool.read_ahead",
                Severity::Notice,
                "innodb_read_ahead_threshold",
                64,
                format!("during the sample, {ev_ra} of {ra} pages InnoDB read ahead were evicted before anyone read them: read-ahead costs I/O and pushes useful pages out. 64 (the maximum) triggers linear read-ahead only on fully sequential extents."),
                Source::Measured,
                format!("Innodb_buffer_pool_read_ahead +{ra}, Innodb_buffer_pool_read_ahead_evicted +{ev_ra} over {:.0} s", w.seconds),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::*;

    #[test]
    fn rounding() {
        assert_eq!(round_to(200 << 20, 64 << 20, None), 192 << 20);
        assert_eq!(round_to(230 << 20, 64 << 20, None), 256 << 20);
        assert_eq!(round_to(10 << 20, 128 << 20, None), 128 << 20);
        assert_eq!(round_to(1536 << 20, 1 << 30, Some(1600 << 20)), 1 << 30);
        assert_eq!(dedicated_share(24 << 30), 18 << 30);
        assert_eq!(dedicated_share(2 << 30), 1 << 30);
    }

    #[test]
    fn chunk_multiple_mariadb() {
        let s = with_vars(
            server("mariadb", 10, 11, 19),
            &[
                ("innodb_buffer_pool_size", "209715200"),
                ("innodb_buffer_pool_chunk_size", "67108864"),
            ],
        );
        let mut f = Facts {
            server: Some(s),
            ..Default::default()
        };
        f.host.memory_bytes = Some(24 << 30);
        let a = run(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.id, "server.buffer_pool.chunk");
        assert_eq!(a[0].finding.observed, "209715200");
        assert_eq!(a[0].finding.recommended.as_deref(), Some("201326592"));
        // Chunk 0 (MariaDB ≥ 10.8 autosize): no unit, no finding.
        f.server
            .as_mut()
            .unwrap()
            .variables
            .insert("innodb_buffer_pool_chunk_size".into(), "0".into());
        assert!(run(&f).is_empty());
    }

    #[test]
    fn grows_to_hold_data_in_whole_units() {
        let mut s = with_vars(
            server("mysql", 8, 0, 36),
            &[
                ("innodb_buffer_pool_size", "134217728"),
                ("innodb_buffer_pool_chunk_size", "134217728"),
                ("innodb_buffer_pool_instances", "1"),
            ],
        );
        s.innodb_data_bytes = Some(10 << 30);
        let mut f = Facts {
            server: Some(s),
            ..Default::default()
        };
        f.host.memory_bytes = Some(64 << 30);
        let a = run(&f);
        assert_eq!(a[0].finding.id, "server.buffer_pool.size");
        // 10 GiB × 1.25 = 12.5 GiB, a multiple of 128 MiB.
        assert_eq!(
            a[0].finding.recommended.as_deref(),
            Some(&*((25u64 << 29).to_string()))
        );
    }
}
