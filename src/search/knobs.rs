//! The search space: the storage-path server variables `tune --search`
//! tries, each with a few levels (the current value first), in the live
//! server's terms (what a drop-in would say) and in the sandbox's (sizes
//! scaled by sandbox data / live data, as tune's "before" is built). Only
//! variables the server can switch with `SET GLOBAL` are searched; the
//! ones that need a restart and the ones the version lacks are listed as
//! skipped, with the reason.

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One value of a knob: as the live server would be set, and as the
/// sandbox is (equal but for sizes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    pub live: String,
    pub sandbox: String,
}

/// A searched variable and its levels; `levels[0]` is the current value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    pub name: String,
    pub levels: Vec<Level>,
    /// A durability trade-off (only with `--allow-durability-tradeoffs`):
    /// what a crash loses at a level other than the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
}

/// A variable the search leaves alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// Variables that need a server restart on every MariaDB and MySQL: a
/// search that switches settings between rounds with `SET GLOBAL` leaves
/// them out (docs/json-tune.md, "tune --search"). The ones whose answer
/// depends on the version (innodb_log_buffer_size, the I/O thread counts)
/// are tried, and skipped where the server refuses the SET.
pub const RESTART_ONLY: &[&str] = &["innodb_flush_method"];

/// What [`space`] needs to know.
pub struct Inputs<'a> {
    /// The sandbox's global variables (name → value as SHOW shows it).
    pub sandbox: &'a BTreeMap<String, String>,
    /// The live server's values of the searched variables, when one was
    /// reached (else the sandbox's are "current").
    pub live: Option<&'a BTreeMap<String, String>>,
    /// Sandbox data / live data (tune's scale); None when unknown.
    pub scale: Option<f64>,
    /// Bytes of the live server's InnoDB data, when known.
    pub live_data: Option<u64>,
    /// Bytes of the sandbox's tables.
    pub sandbox_data: u64,
    /// MemTotal of this host, for the buffer pool's bound.
    pub mem_total: Option<u64>,
    pub allow_durability_tradeoffs: bool,
}

/// The buffer pool's bound for the live server: this share of RAM (the
/// practice's 70–75 %).
pub const RAM_SHARE: f64 = 0.75;
/// Smallest size a searched size is given on the sandbox.
const SIZE_FLOOR: u64 = 16 << 20;

/// `n` bytes as whole MiB (`58M`), rounded up.
pub fn mib(n: u64) -> String {
    format!("{}M", n.div_ceil(1 << 20))
}

fn bytes(v: &str) -> Option<u64> {
    crate::db::parse_size(v)
}

/// The knobs to search and the ones left out, from what the sandbox has.
pub fn space(i: &Inputs<'_>) -> (Vec<Knob>, Vec<Skipped>) {
    let mut knobs = Vec::new();
    let mut skipped = Vec::new();
    let has = |n: &str| i.sandbox.contains_key(n);
    let sb = |n: &str| i.sandbox.get(n).cloned().unwrap_or_default();
    let live_now = |n: &str| {
        i.live
            .and_then(|l| l.get(n).cloned())
            .unwrap_or_else(|| sb(n))
    };
    let lacks = |n: &str| Skipped {
        name: n.into(),
        reason: "this server version has no such variable".into(),
    };
    // A knob whose levels are the same in both terms.
    let plain = |n: &str, others: &[&str]| -> Knob {
        let cur = sb(n);
        let mut levels = vec![Level {
            live: live_now(n),
            sandbox: cur.clone(),
        }];
        for o in others {
            if !levels
                .iter()
                .any(|l| crate::change::ServerVariable::same(&l.sandbox, o))
            {
                levels.push(Level {
                    live: o.to_string(),
                    sandbox: o.to_string(),
                });
            }
        }
        Knob {
            name: n.into(),
            levels,
            durability: None,
        }
    };
    // Sizes: levels given in sandbox bytes, live = sandbox / scale.
    let sized = |n: &str, sandbox_levels: &[u64], live_cap: Option<u64>| -> Option<Knob> {
        let scale = i.scale?;
        let cur = sb(n);
        let mut levels = vec![Level {
            live: live_now(n),
            sandbox: cur.clone(),
        }];
        for &s in sandbox_levels {
            let mut live = (s as f64 / scale) as u64;
            let mut s = s.max(SIZE_FLOOR);
            if let Some(cap) = live_cap.filter(|&c| live > c) {
                live = cap;
                s = ((cap as f64 * scale) as u64).max(SIZE_FLOOR);
            }
            let (s, live) = (mib(s), mib(live));
            if !levels
                .iter()
                .any(|l| bytes(&l.sandbox) == bytes(&s) || bytes(&l.live) == bytes(&live))
            {
                levels.push(Level { live, sandbox: s });
            }
        }
        Some(Knob {
            name: n.into(),
            levels,
            durability: None,
        })
    };
    let d = i.sandbox_data.max(1);
    // Buffer pool: half the data, and all of it with room to spare,
    // bounded by the RAM share of the live server's host.
    let cap = i.mem_total.map(|m| (m as f64 * RAM_SHARE) as u64);
    match sized("innodb_buffer_pool_size", &[d / 2, d * 5 / 4, d * 5 / 2], cap) {
        Some(k) => knobs.push(k),
        None => skipped.push(Skipped {
            name: "innodb_buffer_pool_size".into(),
            reason: "the live server's data size is unknown, so a sandbox size cannot be scaled back to it".into(),
        }),
    }
    // Redo: MySQL 8.0.30+'s capacity, else the log file size.
    let redo = if has("innodb_redo_log_capacity") {
        "innodb_redo_log_capacity"
    } else {
        "innodb_log_file_size"
    };
    match sized(redo, &[d, d * 4, d * 8], None) {
        Some(k) => knobs.push(k),
        None => skipped.push(Skipped {
            name: redo.into(),
            reason: "the live server's data size is unknown, so a sandbox size cannot be scaled back to it".into(),
        }),
    }
    if has("innodb_io_capacity") {
        knobs.push(plain("innodb_io_capacity", &["200", "1000", "4000"]));
    } else {
        skipped.push(lacks("innodb_io_capacity"));
    }
    for (n, others) in [
        ("innodb_flush_neighbors", &["0", "1"][..]),
        ("innodb_lru_scan_depth", &["256", "2048"][..]),
        ("innodb_adaptive_hash_index", &["OFF", "ON"][..]),
        ("innodb_change_buffering", &["none", "all"][..]),
        ("innodb_log_buffer_size", &["16M", "64M"][..]),
        ("innodb_read_io_threads", &["4", "8"][..]),
        ("innodb_write_io_threads", &["4", "8"][..]),
    ] {
        if has(n) {
            knobs.push(plain(n, others));
        } else {
            skipped.push(lacks(n));
        }
    }
    if i.allow_durability_tradeoffs {
        let n = "innodb_flush_log_at_trx_commit";
        let mut k = plain(n, &["1", "2"]);
        k.durability = crate::tune::oltp::durability_loss(n, "2");
        knobs.push(k);
        if i.sandbox.get("log_bin").is_some_and(|v| v == "ON") {
            let mut k = plain("sync_binlog", &["1", "0"]);
            k.durability = crate::tune::oltp::durability_loss("sync_binlog", "0");
            knobs.push(k);
        } else {
            skipped.push(Skipped {
                name: "sync_binlog".into(),
                reason: "the sandbox writes no binary log".into(),
            });
        }
    } else {
        skipped.push(Skipped {
            name: "innodb_flush_log_at_trx_commit".into(),
            reason: "a durability trade-off: searched only with --allow-durability-tradeoffs"
                .into(),
        });
    }
    for n in RESTART_ONLY {
        skipped.push(Skipped {
            name: n.to_string(),
            reason: if has(n) {
                "needs a server restart; the search switches settings with SET GLOBAL between rounds"
                    .into()
            } else {
                "this server version has no such variable".into()
            },
        });
    }
    skipped.push(Skipped {
        name: "scheduler, read_ahead_kb, nr_requests, vm.dirty_*".into(),
        reason: "OS settings: tune's sweep phase and `innotune sweep`/`prove` measure them".into(),
    });
    (knobs, skipped)
}

/// One configuration: a level index per knob (0 = current).
pub type Config = Vec<usize>;

/// The manuals' starting point, as a configuration of `knobs`: the
/// largest buffer pool and redo log tried (the pool within the RAM
/// bound), innodb_io_capacity 1000 (an SSD's order of magnitude; the
/// search tries the others), flush_neighbors 0 (no seek time to save);
/// every other knob as it is. None when that is the current
/// configuration.
pub fn manuals(knobs: &[Knob]) -> Option<Config> {
    let c: Config = knobs
        .iter()
        .map(|k| {
            let find = |v: &str| {
                k.levels
                    .iter()
                    .position(|l| crate::change::ServerVariable::same(&l.sandbox, v))
                    .unwrap_or(0)
            };
            match k.name.as_str() {
                "innodb_buffer_pool_size" | "innodb_log_file_size" | "innodb_redo_log_capacity" => {
                    k.levels
                        .iter()
                        .enumerate()
                        .max_by_key(|(_, l)| bytes(&l.sandbox).unwrap_or(0))
                        .map_or(0, |(i, _)| i)
                }
                "innodb_io_capacity" => find("1000"),
                "innodb_flush_neighbors" => find("0"),
                _ => 0,
            }
        })
        .collect();
    c.iter().any(|&x| x != 0).then_some(c)
}

/// Up to `n` distinct configurations other than the current one: the
/// manuals' starting point ([`manuals`]) first, then draws at random from
/// the grid of `knobs`' levels (all of it when the grid is that small).
pub fn sample(knobs: &[Knob], n: usize, rng: &mut impl Rng) -> Vec<Config> {
    let sizes: Vec<usize> = knobs.iter().map(|k| k.levels.len()).collect();
    let grid: usize = sizes.iter().product::<usize>().max(1);
    let mut out: Vec<Config> = manuals(knobs).into_iter().take(n).collect();
    if grid <= n + 1 {
        let mut rest = Vec::new();
        for idx in 1..grid {
            let mut c = Vec::with_capacity(sizes.len());
            let mut r = idx;
            for &s in &sizes {
                c.push(r % s);
                r /= s;
            }
            if !out.contains(&c) {
                rest.push(c);
            }
        }
        rest.shuffle(rng);
        out.extend(rest);
        return out;
    }
    let mut tries = 0;
    while out.len() < n && tries < n * 100 {
        tries += 1;
        let c: Config = sizes.iter().map(|&s| rng.gen_range(0..s)).collect();
        if c.iter().all(|&x| x == 0) || out.contains(&c) {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn sizes_scale_back_to_the_live_server_and_the_pool_is_bounded_by_ram() {
        let sb = vars(&[
            ("innodb_buffer_pool_size", "16777216"),
            ("innodb_log_file_size", "16777216"),
            ("innodb_io_capacity", "100"),
            ("innodb_flush_neighbors", "1"),
        ]);
        let live = vars(&[
            ("innodb_buffer_pool_size", "8388608"),
            ("innodb_log_file_size", "4194304"),
            ("innodb_io_capacity", "100"),
        ]);
        let (knobs, skipped) = space(&Inputs {
            sandbox: &sb,
            live: Some(&live),
            scale: Some(2.0),
            live_data: Some(40 << 20),
            sandbox_data: 80 << 20,
            mem_total: Some(1 << 30),
            allow_durability_tradeoffs: false,
        });
        let pool = &knobs[0];
        assert_eq!(pool.name, "innodb_buffer_pool_size");
        assert_eq!(pool.levels[0].live, "8388608");
        assert_eq!(pool.levels[2].sandbox, "100M");
        assert_eq!(pool.levels[2].live, "50M");
        assert_eq!(pool.levels[3].live, "100M");
        let redo = &knobs[1];
        assert_eq!(redo.name, "innodb_log_file_size");
        assert_eq!(redo.levels[2].sandbox, "320M");
        assert_eq!(redo.levels[2].live, "160M");
        // The manuals' start: the largest pool and redo, io_capacity
        // 1000, flush_neighbors 0.
        let m = manuals(&knobs).unwrap();
        let at = |n: &str| {
            let i = knobs.iter().position(|k| k.name == n).unwrap();
            knobs[i].levels[m[i]].live.clone()
        };
        assert_eq!(at("innodb_buffer_pool_size"), "100M");
        assert_eq!(at("innodb_log_file_size"), "320M");
        assert_eq!(at("innodb_io_capacity"), "1000");
        assert_eq!(at("innodb_flush_neighbors"), "0");
        let io = knobs
            .iter()
            .find(|k| k.name == "innodb_io_capacity")
            .unwrap();
        assert_eq!(io.levels.len(), 4);
        assert!(skipped.iter().any(|s| s.name == "innodb_lru_scan_depth"));
        assert!(skipped
            .iter()
            .any(|s| s.name == "innodb_flush_log_at_trx_commit"));
        // A small host: the pool's big level is cut at 75 % of RAM.
        let (knobs, _) = space(&Inputs {
            sandbox: &sb,
            live: Some(&live),
            scale: Some(2.0),
            live_data: Some(40 << 20),
            sandbox_data: 80 << 20,
            mem_total: Some(40 << 20),
            allow_durability_tradeoffs: false,
        });
        assert_eq!(knobs[0].levels[2].live, "30M");
        assert_eq!(knobs[0].levels.len(), 3, "{:?}", knobs[0].levels);
    }

    #[test]
    fn unknown_data_size_skips_the_sized_knobs_and_durability_is_labelled() {
        let sb = vars(&[
            ("innodb_buffer_pool_size", "16777216"),
            ("innodb_redo_log_capacity", "104857600"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_flush_method", "O_DIRECT"),
        ]);
        let (knobs, skipped) = space(&Inputs {
            sandbox: &sb,
            live: None,
            scale: None,
            live_data: None,
            sandbox_data: 80 << 20,
            mem_total: None,
            allow_durability_tradeoffs: true,
        });
        assert!(skipped
            .iter()
            .any(|s| s.name == "innodb_redo_log_capacity" && s.reason.contains("unknown")));
        let f = knobs
            .iter()
            .find(|k| k.name == "innodb_flush_log_at_trx_commit")
            .unwrap();
        assert!(f.durability.as_deref().unwrap().contains("crash"));
        assert!(skipped
            .iter()
            .any(|s| s.name == "innodb_flush_method" && s.reason.contains("restart")));
    }

    #[test]
    fn samples_are_distinct_and_never_the_current_config() {
        let k = |n: usize| Knob {
            name: "x".into(),
            levels: (0..n)
                .map(|i| Level {
                    live: i.to_string(),
                    sandbox: i.to_string(),
                })
                .collect(),
            durability: None,
        };
        let knobs = vec![k(3), k(2), k(4)];
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let s = sample(&knobs, 10, &mut rng);
        assert_eq!(s.len(), 10);
        for (i, c) in s.iter().enumerate() {
            assert!(c.iter().any(|&x| x != 0));
            assert!(!s[i + 1..].contains(c));
        }
        // A grid smaller than asked: all of it but current.
        let all = sample(&[k(2), k(2)], 10, &mut rng);
        assert_eq!(all.len(), 3);
        // The manuals' start comes first when the knobs are the ones it
        // knows.
        let mut f = k(2);
        f.name = "innodb_flush_neighbors".into();
        f.levels.reverse(); // current 1, then 0
        let s = sample(&[f, k(3)], 2, &mut rng);
        assert_eq!(s[0], vec![1, 0]);
    }
}
