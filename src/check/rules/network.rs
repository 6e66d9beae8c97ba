//! Receive packet steering on the client-facing NIC: when one receive
//! queue takes every interrupt, one CPU does all the network stack work
//! for every connection. RPS (rps_cpus per queue) spreads it, RFS
//! (rps_sock_flow_entries, rps_flow_cnt) keeps each flow on the CPU of
//! the thread reading it.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "os.rps",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "RPS/RFS on the client-facing NIC when one queue takes all interrupts",
    run,
};

const FLOW_ENTRIES: u64 = 32768;

/// A CPU mask covering `n` CPUs, as sysfs writes it (32-bit groups,
/// comma-separated, most significant first).
pub fn cpu_mask(n: u64) -> String {
    let mut groups = Vec::new();
    let mut left = n;
    while left > 0 || groups.is_empty() {
        let bits = left.min(32);
        let g: u64 = if bits == 32 {
            0xffff_ffff
        } else {
            (1u64 << bits) - 1
        };
        groups.push(format!("{g:x}"));
        left -= bits;
    }
    groups.reverse();
    let mut out = groups[0].clone();
    for g in &groups[1..] {
        out.push_str(&format!(",{g:0>8}"));
    }
    out
}

/// Is a hex CPU mask all zeros?
pub fn mask_is_zero(m: &str) -> bool {
    m.chars().all(|c| c == '0' || c == ',')
}

/// A server that only listens on loopback gets no client traffic here.
pub fn loopback_only(f: &Facts) -> bool {
    f.server.as_ref().is_some_and(|s| {
        matches!(
            s.var("bind_address").unwrap_or(""),
            "127.0.0.1" | "::1" | "localhost"
        ) || s.var_on("skip_networking") == Some(true)
    })
}

fn run(f: &Facts) -> Vec<Advice> {
    let Some(cpus) = f.host.cpus.filter(|&c| c > 1) else {
        return Vec::new();
    };
    if loopback_only(f) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for nic in &f.nics {
        let q = nic.rx_queues.len() as u64;
        if q == 0 {
            continue;
        }
        let total: u64 = nic.irq_counts.iter().sum();
        let top = nic.irq_counts.iter().max().copied().unwrap_or(0);
        let one_queue = q == 1 || (total > 0 && top * 10 >= total * 9);
        let off = nic
            .rx_queues
            .iter()
            .all(|r| r.rps_cpus.as_deref().is_some_and(mask_is_zero));
        if !one_queue || !off {
            continue;
        }
        let mask = cpu_mask(cpus);
        let per_queue = FLOW_ENTRIES / q;
        let mut a = Advice::new(
            finding(
                "os.rps",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Device,
                &nic.name,
                format!("{q} receive queue(s), RPS off"),
                format!(
                    "{} carries client traffic through {}: one CPU handles every incoming packet for all connections. RPS on each receive queue (rps_cpus = {mask}, all {cpus} CPUs) spreads that work; RFS (rps_sock_flow_entries {FLOW_ENTRIES}, rps_flow_cnt {per_queue} per queue) steers each connection to the CPU of the thread reading it.",
                    nic.name,
                    if q == 1 { "a single receive queue".to_string() } else { format!("{q} queues, but one takes ≥ 90% of the interrupts ({top} of {total})") }
                ),
            )
            .recommend(format!("rps_cpus {mask}, rps_flow_cnt {per_queue}"))
            .evidence(Source::RuleOfThumb, "Documentation/networking/scaling.rst: RPS for single-queue NICs, rps_sock_flow_entries 32768")
            .reference("https://docs.kernel.org/networking/scaling.html"),
        );
        for r in &nic.rx_queues {
            a = a
                .set(Setting::NetQueue {
                    nic: nic.name.clone(),
                    queue: r.name.clone(),
                    attr: "rps_cpus".into(),
                    value: mask.clone(),
                })
                .set(Setting::NetQueue {
                    nic: nic.name.clone(),
                    queue: r.name.clone(),
                    attr: "rps_flow_cnt".into(),
                    value: per_queue.to_string(),
                });
        }
        if f.rps_sock_flow_entries.unwrap_or(0) < FLOW_ENTRIES {
            a = a.set(Setting::sysctl(
                "net.core.rps_sock_flow_entries",
                FLOW_ENTRIES,
            ));
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(cpu_mask(2), "3");
        assert_eq!(cpu_mask(16), "ffff");
        assert_eq!(cpu_mask(32), "ffffffff");
        assert_eq!(cpu_mask(40), "ff,ffffffff");
        assert!(mask_is_zero("00000000,00000000"));
        assert!(!mask_is_zero("3"));
    }
}
