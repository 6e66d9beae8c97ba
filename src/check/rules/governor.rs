//! The CPU frequency governor of the machine that runs the load (`check
//! --client`; on a server's host it runs as well, for the same reason): a
//! machine whose CPUs idle between requests lets an on-demand governor
//! clock them down, and every request then waits for the clock to come
//! back. That adds to each round trip and makes the measured difference
//! between two server settings noisier. `performance` keeps the CPUs at
//! full clock.
//!
//! Where there is no cpufreq directory at all (a VM: the hypervisor keeps
//! the frequency to itself; or no driver) the governor is not visible and
//! the rule is skipped with that reason ([`unseen`]), never guessed.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "os.governor",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "CPU frequency governor other than performance (the load client, or the server's host)",
    run,
};

const WANT: &str = "performance";

/// Why the governor cannot be seen here, when it cannot.
pub fn unseen(f: &Facts) -> Option<String> {
    f.cpufreq.is_empty().then(|| {
        "no cpufreq here (/sys/devices/system/cpu/cpuN/cpufreq is absent: a VM whose hypervisor keeps the CPU frequency to itself, or no cpufreq driver loaded): the governor is not visible".to_string()
    })
}

/// `0-3,6` for 0, 1, 2, 3, 6.
pub fn ranges(ids: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    out.join(",")
}

fn run(f: &Facts) -> Vec<Advice> {
    let slow: Vec<_> = f
        .cpufreq
        .iter()
        .filter(|c| c.governor.as_deref().is_some_and(|g| g != WANT))
        .collect();
    if slow.is_empty() {
        return Vec::new();
    }
    let ids: Vec<u32> = slow.iter().map(|c| c.cpu).collect();
    let mut governors: Vec<&str> = slow.iter().filter_map(|c| c.governor.as_deref()).collect();
    governors.sort_unstable();
    governors.dedup();
    let mut drivers: Vec<&str> = slow.iter().filter_map(|c| c.driver.as_deref()).collect();
    drivers.sort_unstable();
    drivers.dedup();
    let offered = slow.iter().all(|c| c.available.iter().any(|g| g == WANT));
    let observed = format!(
        "{} on CPU {}{}",
        governors.join("/"),
        ranges(&ids),
        if drivers.is_empty() {
            String::new()
        } else {
            format!(" ({})", drivers.join(", "))
        }
    );
    let mut reason = format!(
        "The governor of CPU {} is {}: between requests the CPUs idle and are clocked down, and each request then waits for the clock to come back. That adds to every round trip and makes the difference between two server settings noisier, whether this machine runs the load (check --client) or the server; {WANT} keeps them at full clock.",
        ranges(&ids),
        governors.join("/"),
    );
    if !offered {
        reason.push_str(&format!(
            " The cpufreq driver does not offer {WANT} on every one of them (scaling_available_governors): set it where it is offered, or in the firmware's power profile."
        ));
    } else {
        reason.push_str(" A power daemon (tuned, power-profiles-daemon, cpupower.service) may set another at boot: apply installs a tmpfiles.d line, which such a daemon can override.");
    }
    let mut a = Advice::new(
        finding(
            "os.governor",
            Severity::Notice,
            Layer::Os,
            SubjectKind::Host,
            "cpufreq",
            observed,
            reason,
        )
        .recommend(WANT)
        .evidence(
            Source::RuleOfThumb,
            "Documentation/admin-guide/pm/cpufreq.rst: performance sets the highest frequency; powersave/ondemand/schedutil scale down on idle",
        )
        .reference("https://docs.kernel.org/admin-guide/pm/cpufreq.html"),
    );
    if offered {
        // One write per policy: it sets every CPU of the policy.
        let mut seen: Vec<&str> = Vec::new();
        for c in &slow {
            if let Some(p) = c.policy.as_deref() {
                if seen.contains(&p) {
                    continue;
                }
                seen.push(p);
            }
            a = a.set(Setting::CpuGovernor {
                cpu: c.cpu,
                value: WANT.into(),
            });
        }
    }
    vec![a]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::CpuFreqFacts;

    fn cpu(cpu: u32, gov: &str, policy: &str, avail: &[&str]) -> CpuFreqFacts {
        CpuFreqFacts {
            cpu,
            governor: Some(gov.into()),
            available: avail.iter().map(|s| s.to_string()).collect(),
            driver: Some("acpi-cpufreq".into()),
            policy: Some(policy.into()),
        }
    }

    #[test]
    fn one_setting_per_policy_and_none_when_not_offered() {
        let both = ["performance", "powersave"];
        let mut f = Facts {
            cpufreq: vec![
                cpu(0, "powersave", "policy0", &both),
                cpu(1, "powersave", "policy0", &both),
                cpu(2, "schedutil", "policy2", &both),
                cpu(3, "performance", "policy3", &both),
            ],
            ..Default::default()
        };
        let a = run(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].finding.observed,
            "powersave/schedutil on CPU 0-2 (acpi-cpufreq)"
        );
        let cpus: Vec<u32> = a[0]
            .settings
            .iter()
            .map(|s| match s {
                Setting::CpuGovernor { cpu, value } if value == "performance" => *cpu,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(cpus, [0, 2], "cpu1 shares policy0 with cpu0");
        f.cpufreq[2].available = vec!["schedutil".into()];
        let a = run(&f);
        assert!(a[0].settings.is_empty());
        assert!(a[0].finding.reason.contains("does not offer performance"));
        f.cpufreq
            .iter_mut()
            .for_each(|c| c.governor = Some("performance".into()));
        assert!(run(&f).is_empty());
        assert!(unseen(&f).is_none());
        assert!(unseen(&Facts::default())
            .unwrap()
            .starts_with("no cpufreq here"));
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
