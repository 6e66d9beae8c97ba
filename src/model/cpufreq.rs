//! CPU frequency scaling (`/sys/devices/system/cpu/cpuN/cpufreq/`): each
//! online CPU's governor, the governors its driver offers and the policy
//! it belongs to (CPUs of one policy share one governor: writing one
//! CPU's sets them all). A VM usually has no cpufreq at all: the
//! hypervisor keeps the frequency to itself, and the directory is absent.

use crate::host::Host;

/// One online CPU's frequency scaling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuFreq {
    pub cpu: u32,
    /// `scaling_governor` (`powersave`, `schedutil`, `performance`).
    pub governor: Option<String>,
    /// `scaling_available_governors`.
    pub available: Vec<String>,
    /// `scaling_driver` (`intel_pstate`, `acpi-cpufreq`).
    pub driver: Option<String>,
    /// The policy directory it shares (`policy0`), when `cpufreq` is the
    /// usual link to `../cpufreq/policyN`.
    pub policy: Option<String>,
}

/// The online CPUs (`/sys/devices/system/cpu/online`), ascending; empty
/// when unreadable.
pub fn online(host: &Host) -> Vec<u32> {
    host.read_trim("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| super::system::parse_ranges(&s))
        .unwrap_or_default()
}

/// The online CPUs that have a `cpufreq` directory; empty when none has
/// (no cpufreq driver, or a VM).
pub fn read(host: &Host) -> Vec<CpuFreq> {
    online(host)
        .into_iter()
        .filter_map(|cpu| {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
            if !host.exists(&dir) {
                return None;
            }
            let policy = host
                .resolve(&dir)
                .ok()
                .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()));
            Some(CpuFreq {
                cpu,
                governor: host.read_trim(format!("{dir}/scaling_governor")).ok(),
                available: host
                    .read(format!("{dir}/scaling_available_governors"))
                    .map(|s| s.split_whitespace().map(str::to_string).collect())
                    .unwrap_or_default(),
                driver: host.read_trim(format!("{dir}/scaling_driver")).ok(),
                policy,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governors_of_a_tree_and_of_one_without_cpufreq() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let cpu = r.join("sys/devices/system/cpu");
        std::fs::create_dir_all(cpu.join("cpufreq/policy0")).unwrap();
        std::fs::create_dir_all(cpu.join("cpu0")).unwrap();
        std::fs::create_dir_all(cpu.join("cpu1")).unwrap();
        std::fs::write(cpu.join("online"), "0-1\n").unwrap();
        let p = cpu.join("cpufreq/policy0");
        std::fs::write(p.join("scaling_governor"), "powersave\n").unwrap();
        std::fs::write(
            p.join("scaling_available_governors"),
            "performance powersave \n",
        )
        .unwrap();
        std::fs::write(p.join("scaling_driver"), "intel_pstate\n").unwrap();
        std::os::unix::fs::symlink("../cpufreq/policy0", cpu.join("cpu0/cpufreq")).unwrap();
        let host = Host::with_root(r);
        assert_eq!(online(&host), [0, 1]);
        assert_eq!(
            read(&host),
            [CpuFreq {
                cpu: 0,
                governor: Some("powersave".into()),
                available: vec!["performance".into(), "powersave".into()],
                driver: Some("intel_pstate".into()),
                policy: Some("policy0".into()),
            }],
            "cpu1 has no cpufreq directory"
        );
        assert!(read(&Host::with_root("/nonexistent-root")).is_empty());
    }
}
