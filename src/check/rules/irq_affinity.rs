//! Interrupt affinity of the client-facing NIC: a NIC with several receive
//! queues gives each its own interrupt so that several CPUs share the
//! receive work, but when every one of those interrupts lands on the same
//! CPU (a mask someone pinned, an `irqbalance --oneshot` long ago, a
//! driver default) that CPU does the work for every connection while the
//! others take none. One vector per CPU spreads it.
//!
//! Where an interrupt lands now: its `smp_affinity` when that names one
//! CPU; else where the kernel delivers it (`effective_affinity_list`);
//! else the CPU that took ≥ 90% of its interrupts since boot. The change is
//! runtime only (irq numbers are handed out at boot); when irqbalance runs
//! it would move them again, so the finding then carries no change.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::{Facts, IrqFacts};
use crate::finding::{Layer, Severity, Source, SubjectKind};
use crate::model::net::{mask_cpus, one_cpu_mask};

pub const RULE: Rule = Rule {
    id: "os.irq_affinity",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "NIC receive interrupts all landing on one CPU while the others take none",
    run,
};

/// How [`lands_on`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    Mask,
    Effective,
    Counts,
}

/// The one CPU an interrupt lands on now, and how that is known.
fn lands_on(i: &IrqFacts) -> Option<(u32, Why)> {
    if let Some(m) = i.smp_affinity.as_deref().and_then(mask_cpus) {
        if let [one] = m.as_slice() {
            return Some((*one, Why::Mask));
        }
    }
    if let Some([one]) = i.effective.as_deref() {
        return Some((*one, Why::Effective));
    }
    let total: u64 = i.per_cpu.iter().map(|(_, n)| n).sum();
    let (cpu, top) = i.per_cpu.iter().max_by_key(|(_, n)| *n)?;
    (total > 0 && top * 10 >= total * 9).then_some((*cpu, Why::Counts))
}

fn run(f: &Facts) -> Vec<Advice> {
    let online = &f.cpus_online;
    if online.len() < 2 || super::network::loopback_only(f) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for nic in &f.nics {
        let mut rx: Vec<&IrqFacts> = nic.rx_irqs.iter().collect();
        if rx.len() < 2 {
            continue; // one vector lands on one CPU whatever: RPS (os.rps) spreads that
        }
        rx.sort_by_key(|i| i.irq);
        let lands: Vec<Option<(u32, Why)>> = rx.iter().map(|i| lands_on(i)).collect();
        let Some(Some((cpu, _))) = lands.first().copied() else {
            continue;
        };
        if !lands.iter().all(|l| l.is_some_and(|(c, _)| c == cpu)) {
            continue;
        }
        let how = if lands.iter().all(|l| l.is_some_and(|(_, w)| w == Why::Mask)) {
            "smp_affinity pins each to it"
        } else if lands
            .iter()
            .all(|l| l.is_some_and(|(_, w)| w != Why::Counts))
        {
            "the kernel delivers each there (effective_affinity_list)"
        } else {
            "each took ≥ 90% of its interrupts there since boot"
        };
        let start = online.iter().position(|c| *c == cpu).unwrap_or(0);
        let plan: Vec<(u32, u32)> = rx
            .iter()
            .enumerate()
            .map(|(k, i)| (i.irq, online[(start + k) % online.len()]))
            .collect();
        let irqs: Vec<String> = rx.iter().map(|i| i.irq.to_string()).collect();
        let others: Vec<u32> = online.iter().copied().filter(|c| *c != cpu).collect();
        let spread: Vec<String> = plan
            .iter()
            .map(|(irq, c)| format!("irq {irq} → CPU {c}"))
            .collect();
        let mut reason = format!(
            "{} spreads receive work over {} queues, each with its own interrupt, but all of them land on CPU {cpu} ({how}): that CPU does the receive work for every connection while CPU {} take none of it. One interrupt per CPU ({}) spreads it.",
            nic.name,
            rx.len(),
            super::governor::ranges(&others),
            spread.join(", ")
        );
        if f.irqbalance {
            reason.push_str(" irqbalance runs here and moves these interrupts every 10 s, so a manual mask would not last: look at its configuration instead (IRQBALANCE_BANNED_CPULIST, a policy script, its power-save hint).");
        } else {
            reason.push_str(" apply writes /proc/irq/N/smp_affinity now only: irq numbers are handed out at boot, so keep it with irqbalance or a unit of your own.");
        }
        let mut a = Advice::new(
            finding(
                "os.irq_affinity",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Device,
                &nic.name,
                format!("{} receive interrupts ({}) all on CPU {cpu}", rx.len(), irqs.join(",")),
                reason,
            )
            .recommend(spread.join(", "))
            .evidence(
                Source::RuleOfThumb,
                "Documentation/networking/scaling.rst (RSS: one queue's interrupt per CPU); Documentation/core-api/irq/irq-affinity.rst",
            )
            .reference("https://docs.kernel.org/networking/scaling.html"),
        );
        if !f.irqbalance {
            for (irq, c) in plan {
                a = a.set(Setting::IrqAffinity {
                    irq,
                    nic: nic.name.clone(),
                    value: one_cpu_mask(c),
                });
            }
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::NicFacts;

    fn irq(n: u32, mask: &str, per_cpu: &[(u32, u64)]) -> IrqFacts {
        IrqFacts {
            irq: n,
            name: format!("eth0-rx-{n}"),
            per_cpu: per_cpu.to_vec(),
            smp_affinity: Some(mask.into()),
            effective: None,
        }
    }

    fn facts(rx: Vec<IrqFacts>) -> Facts {
        Facts {
            cpus_online: vec![0, 1, 2, 3],
            nics: vec![NicFacts {
                name: "eth0".into(),
                rx_irqs: rx,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn pinned_to_one_cpu_is_spread_from_it() {
        let f = facts(vec![
            irq(41, "00000002", &[(0, 0), (1, 900)]),
            irq(40, "2", &[(0, 0), (1, 800)]),
            irq(42, "00000002", &[]),
        ]);
        let a = run(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].finding.observed,
            "3 receive interrupts (40,41,42) all on CPU 1"
        );
        let plan: Vec<(u32, String)> = a[0]
            .settings
            .iter()
            .map(|s| match s {
                Setting::IrqAffinity { irq, value, .. } => (*irq, value.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(plan, [(40, "2".into()), (41, "4".into()), (42, "8".into())]);
        assert!(
            a[0].finding.reason.contains("CPU 0,2-3 take none"),
            "{}",
            a[0].finding.reason
        );
        // irqbalance would move them again: no change then.
        let mut g = f.clone();
        g.irqbalance = true;
        let a = run(&g);
        assert!(a[0].settings.is_empty() && a[0].finding.reason.contains("irqbalance runs"));
    }

    #[test]
    fn spread_or_single_or_unknown_is_no_finding() {
        // Spread masks.
        assert!(run(&facts(vec![irq(40, "1", &[]), irq(41, "2", &[])])).is_empty());
        // One vector: os.rps's case.
        assert!(run(&facts(vec![irq(40, "1", &[])])).is_empty());
        // Every CPU allowed, the kernel delivers to different ones.
        let mut a = irq(40, "f", &[(0, 10), (1, 10)]);
        let mut b = irq(41, "f", &[(0, 10), (1, 10)]);
        a.effective = Some(vec![0]);
        b.effective = Some(vec![2]);
        assert!(run(&facts(vec![a.clone(), b.clone()])).is_empty());
        // … or to the same one.
        b.effective = Some(vec![0]);
        let r = run(&facts(vec![a.clone(), b.clone()]));
        assert!(r[0].finding.reason.contains("effective_affinity_list"));
        // No effective list: the counts since boot decide, ≥ 90% only.
        let c = irq(40, "f", &[(0, 95), (1, 5)]);
        let d = irq(41, "f", &[(0, 99), (1, 1)]);
        assert!(run(&facts(vec![c.clone(), d])).len() == 1);
        let e = irq(41, "f", &[(0, 60), (1, 40)]);
        assert!(run(&facts(vec![c, e])).is_empty());
        // One CPU online: nothing to spread to.
        let mut f = facts(vec![irq(40, "1", &[]), irq(41, "1", &[])]);
        f.cpus_online = vec![0];
        assert!(run(&f).is_empty());
    }
}
