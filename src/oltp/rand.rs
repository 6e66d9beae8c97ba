//! sysbench 1.0.20's random numbers: the `special`, `uniform`, `gaussian`
//! and `pareto` distributions over `[a, b]`, template strings, and the
//! unique-id sequence of `oltp_insert --auto-inc=off`.
//!
//! Hand-written: these are sysbench's formulas (its `src/sb_rand.c` and
//! `src/lua/oltp_common.lua` at tag 1.0.20), which no crate provides; the underlying generator is `rand`'s SmallRng, so sequences
//! differ from sysbench's while distributions match.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Special,
    Uniform,
    Gaussian,
    Pareto,
}

/// Distribution parameters (sysbench's `--rand-spec-*`, `--rand-pareto-h`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RandSpec {
    pub kind: RandType,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
}

impl Default for RandSpec {
    fn default() -> Self {
        RandSpec {
            kind: RandType::Special,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
        }
    }
}

/// One worker's generator.
pub struct Rand {
    rng: SmallRng,
    spec: RandSpec,
    res_mult: f64,
    pct_mult: f64,
    pct2_mult: f64,
    pareto_power: f64,
}

impl Rand {
    pub fn new(spec: &RandSpec, seed: u64) -> Rand {
        Rand {
            rng: SmallRng::seed_from_u64(seed),
            spec: spec.clone(),
            res_mult: 100.0 / (100.0 - spec.spec_res as f64),
            pct_mult: spec.spec_pct as f64 / 100.0,
            pct2_mult: spec.spec_pct as f64 / 200.0,
            pareto_power: spec.pareto_h.ln() / (1.0 - spec.pareto_h).ln(),
        }
    }

    fn unit(&mut self) -> f64 {
        self.rng.gen::<f64>()
    }

    /// `sysbench.rand.uniform(a, b)`.
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        a + (self.unit() * (b as f64 - a as f64 + 1.0)) as u32
    }

    /// `sysbench.rand.default(a, b)`: the `--rand-type` distribution.
    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.spec.kind {
            RandType::Uniform => self.uniform(a, b),
            RandType::Gaussian => {
                let t = b as f64 - a as f64 + 1.0;
                let n = self.spec.spec_iter.max(1);
                let sum: f64 = (0..n).map(|_| self.unit() * t).sum();
                a + (sum / n as f64) as u32
            }
            RandType::Pareto => {
                a + ((b as f64 - a as f64 + 1.0) * self.unit().powf(self.pareto_power)) as u32
            }
            RandType::Special => {
                let t = b as f64 - a as f64;
                let rnd = self.unit();
                if rnd * t * self.res_mult < t {
                    let n = self.spec.spec_iter.max(1);
                    let sum: f64 = (0..n).map(|_| self.unit()).sum();
                    return a + (sum * t / n as f64) as u32;
                }
                let d = t * self.pct_mult;
                let res = rnd * (d + 1.0) + t / 2.0 - t * self.pct2_mult;
                a + res as u32
            }
        }
    }

    /// `sysbench.rand.string(tmpl)`: `#` → digit, `@` → letter, rest kept.
    pub fn fill_template(&mut self, tmpl: &str, out: &mut String) {
        for ch in tmpl.bytes() {
            out.push(match ch {
                b'#' => (b'0' + self.rng.gen_range(0..10u8)) as char,
                b'@' => (b'a' + self.rng.gen_range(0..26u8)) as char,
                c => c as char,
            });
        }
    }

    pub fn string(&mut self, tmpl: &str) -> String {
        let mut s = String::with_capacity(tmpl.len());
        self.fill_template(tmpl, &mut s);
        s
    }
}

/// `c`: 10 groups of 11 digits joined by `-` (119 chars).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// `pad`: 5 groups of 11 digits (59 chars).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// A sequence of distinct u32 values in pseudo-random order (a quadratic
/// residue permutation over the largest 32-bit prime, as sysbench's
/// `rand.unique()` uses), shared by all threads.
pub struct Unique {
    index: AtomicU32,
    offset: u32,
}

fn permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let r = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        r
    } else {
        PRIME - r
    }
}

impl Unique {
    pub fn new(seed: u64) -> Unique {
        let (i, o) = (seed as u32, (seed >> 32) as u32 ^ 0x9e37_79b9);
        Unique {
            index: AtomicU32::new(permute(permute(i).wrapping_add(0x682f_0161))),
            offset: permute(permute(o).wrapping_add(0x4679_0905)),
        }
    }
    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(i).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_hot_set_matches_sysbench() {
        // sysbench's special distribution (1% hot, 75% of draws) puts
        // ~75.8% of draws on ids 4976..=5051 of 10,000.
        let mut r = Rand::new(&RandSpec::default(), 42);
        let n = 200_000;
        let hot = (0..n)
            .map(|_| r.default(1, 10_000))
            .filter(|v| (4976..=5051).contains(v))
            .count();
        let share = hot as f64 / n as f64;
        assert!((0.74..0.78).contains(&share), "hot share {share}");
    }

    #[test]
    fn ranges_hold() {
        for kind in [
            RandType::Special,
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Pareto,
        ] {
            let spec = RandSpec {
                kind,
                ..Default::default()
            };
            let mut r = Rand::new(&spec, 7);
            let (mut lo, mut hi) = (u32::MAX, 0);
            for _ in 0..50_000 {
                let v = r.default(1, 100);
                lo = lo.min(v);
                hi = hi.max(v);
            }
            assert!(lo >= 1 && hi <= 100, "{kind:?} {lo}..{hi}");
        }
        let mut r = Rand::new(&RandSpec::default(), 1);
        let c = r.string(C_TEMPLATE);
        assert_eq!(c.len(), 119);
        assert!(c
            .split('-')
            .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
    }

    #[test]
    fn unique_is_distinct() {
        let u = Unique::new(12345);
        let mut v: Vec<u32> = (0..10_000).map(|_| u.next()).collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 10_000);
    }
}
