//! The search space: the storage-path server variables `tune --search`
//! tries, each with a few levels (the current value first), in the live
//! server's terms (what a drop-in would say) and in the sandbox's (sizes
//! scaled by sandbox data / live data, as tune's "before" is built).
//! Variables the server switches with `SET GLOBAL` are set between
//! trials; the ones it reads only at start (`innodb_flush_method`, and any
//! the version refuses to SET) are restart knobs: the sandbox restarts
//! with them, batched so that trials sharing their levels run together.
//! The ones the version lacks are listed as skipped, with the reason. The OS settings of the storage path (the
//! queue attributes of the disks under PATH, the dirty ratios) are knobs
//! too ([`os_space`]): switched through sysfs and /proc/sys between
//! rounds, journaled, as sweep switches schedulers.

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

/// Where a knob is set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A server variable, `SET GLOBAL` on the sandbox.
    #[default]
    Server,
    /// A queue attribute of every disk under PATH (named `queue/ATTR`),
    /// through sysfs.
    Queue,
    /// A sysctl (named as sysctl names it, `vm.dirty_ratio`): host-wide.
    Sysctl,
    /// A server variable read only at start: the sandbox restarts with it
    /// in its my.cnf.
    Restart,
}

impl Kind {
    pub fn is_server(&self) -> bool {
        *self == Kind::Server
    }
}

/// A searched variable and its levels; `levels[0]` is the current value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    pub name: String,
    /// Where it is set (JSON: absent for a server variable).
    #[serde(default, skip_serializing_if = "Kind::is_server")]
    pub kind: Kind,
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

/// Variables that need a server restart on every MariaDB and MySQL, with
/// the levels the search tries besides the current one: searched by
/// restarting the sandbox (docs/json-tune.md, "tune --search"). The ones
/// whose answer depends on the version (innodb_log_buffer_size, the I/O
/// thread counts) are tried with `SET GLOBAL` first and become restart
/// knobs where the server refuses it as read-only. `O_DIRECT_NO_FSYNC`,
/// `nosync` and `littlesync` are left out: the first skips the fsync some
/// filesystems need after O_DIRECT writes, the others are for testing.
pub const RESTART_LEVELS: &[(&str, &[&str])] = &[("innodb_flush_method", &["O_DIRECT", "fsync"])];

/// Variables tried with `SET GLOBAL` that become restart knobs where the
/// version refuses it as read-only (MySQL's I/O thread counts): their
/// levels are valid with any other knob's. `innodb_log_buffer_size`
/// (read-only on MariaDB) is not among them: the server refuses a log
/// buffer larger than the redo log, and the search varies the redo log,
/// so some candidates would not start.
pub const RESTART_IF_READ_ONLY: &[&str] = &["innodb_read_io_threads", "innodb_write_io_threads"];

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
            kind: Kind::Server,
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
            kind: Kind::Server,
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
    for (n, others) in RESTART_LEVELS {
        if has(n) {
            knobs.push(Knob {
                kind: Kind::Restart,
                ..plain(n, others)
            });
        } else {
            skipped.push(lacks(n));
        }
    }
    (knobs, skipped)
}

/// The sysctls the search tries, with their levels other than the
/// current one (the kernel's defaults are 20 and 10).
pub const SYSCTL_LEVELS: &[(&str, &[&str])] = &[
    ("vm.dirty_ratio", &["10", "40"]),
    ("vm.dirty_background_ratio", &["5", "20"]),
];

/// A disk's value of one queue attribute, as sweep read it.
type QueueValue = fn(&crate::sweep::target::Device) -> Option<u32>;

/// What the OS knobs start from.
pub struct OsNow<'a> {
    /// The disks under PATH with a scheduler (as sweep sees them).
    pub devices: &'a [crate::sweep::target::Device],
    /// The host's values of [`SYSCTL_LEVELS`] and of `vm.dirty_bytes`,
    /// `vm.dirty_background_bytes` (None where unreadable).
    pub sysctls: &'a BTreeMap<String, Option<String>>,
}

/// The OS knobs: the scheduler (every one the disks offer), read_ahead_kb
/// and nr_requests of the disks under PATH, and the dirty ratios. A queue
/// attribute the disks hold different values of is skipped (its
/// "current" would not be one value), as is a ratio whose `_bytes` twin
/// is set (writing the ratio would zero the bytes).
pub fn os_space(o: &OsNow<'_>) -> (Vec<Knob>, Vec<Skipped>) {
    let mut knobs = Vec::new();
    let mut skipped = Vec::new();
    let knob = |name: &str, kind: Kind, cur: String, others: &[String]| {
        let mut levels = vec![Level {
            live: cur.clone(),
            sandbox: cur,
        }];
        for v in others {
            if !levels.iter().any(|l| &l.sandbox == v) {
                levels.push(Level {
                    live: v.clone(),
                    sandbox: v.clone(),
                });
            }
        }
        Knob {
            name: name.into(),
            kind,
            levels,
            durability: None,
        }
    };
    if o.devices.is_empty() {
        skipped.push(Skipped {
            name: "queue/scheduler, queue/read_ahead_kb, queue/nr_requests".into(),
            reason: "no disk under PATH has a scheduler to switch".into(),
        });
    } else {
        let names = o
            .devices
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let one = |vals: Vec<Option<String>>| -> Option<String> {
            let first = vals.first().cloned().flatten()?;
            vals.iter()
                .all(|v| v.as_deref() == Some(first.as_str()))
                .then_some(first)
        };
        let differ = |attr: &str| Skipped {
            name: format!("queue/{attr}"),
            reason: format!("the disks under PATH ({names}) hold different values of it"),
        };
        // The scheduler first: switching it resets nr_requests.
        match one(o
            .devices
            .iter()
            .map(|d| Some(d.scheduler.clone()))
            .collect())
        {
            Some(cur) => {
                let offered: Vec<String> = ["none", "mq-deadline", "kyber", "bfq"]
                    .iter()
                    .filter(|s| o.devices.iter().all(|d| d.offered.iter().any(|x| x == *s)))
                    .map(|s| s.to_string())
                    .collect();
                knobs.push(knob("queue/scheduler", Kind::Queue, cur, &offered));
            }
            None => skipped.push(differ("scheduler")),
        }
        // Then nr_requests (after the scheduler) and read_ahead_kb.
        let numbers: [(&str, QueueValue, &[&str]); 2] = [
            ("nr_requests", |d| d.nr_requests, &["32", "64"]),
            ("read_ahead_kb", |d| d.read_ahead_kb, &["16", "128", "1024"]),
        ];
        for (attr, of, others) in numbers {
            match one(o
                .devices
                .iter()
                .map(|d| of(d).map(|v| v.to_string()))
                .collect())
            {
                Some(cur) => knobs.push(knob(
                    &format!("queue/{attr}"),
                    Kind::Queue,
                    cur,
                    &others.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                )),
                None => skipped.push(differ(attr)),
            }
        }
    }
    for (name, others) in SYSCTL_LEVELS {
        let twin = name.replace("_ratio", "_bytes");
        let get = |n: &str| o.sysctls.get(n).cloned().flatten();
        match (get(name), get(&twin)) {
            (Some(_), Some(b)) if b != "0" => skipped.push(Skipped {
                name: name.to_string(),
                reason: format!("{twin} is set ({b}); writing the ratio would zero it"),
            }),
            (Some(cur), _) => knobs.push(knob(
                name,
                Kind::Sysctl,
                cur,
                &others.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )),
            (None, _) => skipped.push(Skipped {
                name: name.to_string(),
                reason: "not readable on this host".into(),
            }),
        }
    }
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
        // Read only at start: a restart knob, current first, never
        // O_DIRECT_NO_FSYNC.
        let m = knobs
            .iter()
            .find(|k| k.name == "innodb_flush_method")
            .unwrap();
        assert_eq!(m.kind, Kind::Restart);
        let lv: Vec<&str> = m.levels.iter().map(|l| l.sandbox.as_str()).collect();
        assert_eq!(lv, ["O_DIRECT", "fsync"]);
        assert!(!skipped.iter().any(|s| s.name == "innodb_flush_method"));
    }

    #[test]
    fn samples_are_distinct_and_never_the_current_config() {
        let k = |n: usize| Knob {
            name: "x".into(),
            kind: Kind::Server,
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

    fn disk(
        name: &str,
        sched: &str,
        offered: &[&str],
        nr: u32,
        ra: u32,
    ) -> crate::sweep::target::Device {
        crate::sweep::target::Device {
            name: name.into(),
            offered: offered.iter().map(|s| s.to_string()).collect(),
            scheduler: sched.into(),
            nr_requests: Some(nr),
            read_ahead_kb: Some(ra),
            rotational: Some(false),
            hw_queues: Some(1),
            kernel_default: "mq-deadline".into(),
            class_schedulers: vec!["none".into()],
        }
    }

    #[test]
    fn os_knobs_start_from_what_the_disks_and_the_kernel_hold() {
        let sysctls: BTreeMap<String, Option<String>> = [
            ("vm.dirty_ratio", Some("20")),
            ("vm.dirty_bytes", Some("0")),
            ("vm.dirty_background_ratio", Some("0")),
            ("vm.dirty_background_bytes", Some("67108864")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.map(String::from)))
        .collect();
        let all = ["none", "mq-deadline", "kyber", "bfq"];
        let devices = [
            disk("sda", "mq-deadline", &all, 256, 128),
            disk(
                "sdb",
                "mq-deadline",
                &["none", "mq-deadline", "kyber"],
                64,
                128,
            ),
        ];
        let (knobs, skipped) = os_space(&OsNow {
            devices: &devices,
            sysctls: &sysctls,
        });
        let names: Vec<&str> = knobs.iter().map(|k| k.name.as_str()).collect();
        // The scheduler before nr_requests (a switch resets it); the disks
        // disagree on nr_requests, so it is not searched.
        assert_eq!(
            names,
            ["queue/scheduler", "queue/read_ahead_kb", "vm.dirty_ratio"]
        );
        let sched: Vec<&str> = knobs[0].levels.iter().map(|l| l.sandbox.as_str()).collect();
        // Current first, then what both offer (bfq is sda's only).
        assert_eq!(sched, ["mq-deadline", "none", "kyber"]);
        assert_eq!(knobs[0].kind, Kind::Queue);
        let ra: Vec<&str> = knobs[1].levels.iter().map(|l| l.sandbox.as_str()).collect();
        assert_eq!(ra, ["128", "16", "1024"]);
        assert_eq!(knobs[2].kind, Kind::Sysctl);
        assert!(skipped
            .iter()
            .any(|s| s.name == "queue/nr_requests" && s.reason.contains("sda, sdb")));
        // dirty_background_bytes is set: its ratio is left alone.
        assert!(skipped
            .iter()
            .any(|s| s.name == "vm.dirty_background_ratio" && s.reason.contains("67108864")));
        // No disk: the queue knobs are skipped with the reason.
        let (knobs, skipped) = os_space(&OsNow {
            devices: &[],
            sysctls: &sysctls,
        });
        assert_eq!(knobs.len(), 1);
        assert!(skipped[0].reason.contains("no disk"));
    }
}
