//! Memory management knobs that hurt a database host: swappiness,
//! transparent hugepages, and the dirty page-cache thresholds when InnoDB
//! writes through the page cache. Each also checked for surviving a reboot
//! (sysctl.d, the kernel command line, tmpfiles.d).

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const SWAPPINESS: Rule = Rule {
    id: "os.swappiness",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "vm.swappiness 1–10 on a database host, persisted",
    run: swappiness,
};

pub const THP: Rule = Rule {
    id: "os.thp",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "transparent hugepages not always, persisted",
    run: thp,
};

pub const DIRTY: Rule = Rule {
    id: "os.dirty",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "dirty page-cache thresholds when InnoDB writes buffered",
    run: dirty,
};

const SYSCTL_DOC: &str = "https://docs.kernel.org/admin-guide/sysctl/vm.html";

/// The value a sysctl gets at boot and from where.
fn boot(f: &Facts, name: &str, kernel_default: u64) -> (u64, String) {
    match f.sysctl_boot.get(name) {
        Some((v, file)) => (v.trim().parse().unwrap_or(kernel_default), file.clone()),
        None => (kernel_default, "the kernel's default".into()),
    }
}

fn swappiness(f: &Facts) -> Vec<Advice> {
    let Some(cur) = f.host.swappiness else {
        return Vec::new();
    };
    let ok = |v: u64| (1..=10).contains(&v);
    let name = "vm.swappiness";
    if !ok(cur) {
        let why = if cur == 0 {
            "0 tells the kernel never to swap anonymous memory until it is out of it, so a memory spike ends in the OOM killer choosing mysqld instead of swapping out something idle"
        } else {
            "the kernel swaps out parts of the buffer pool to keep page cache, and every swapped-out page InnoDB touches later is a disk read on the critical path"
        };
        return vec![Advice::new(
            finding(
                "os.swappiness",
                if cur > 10 { Severity::Warning } else { Severity::Notice },
                Layer::Os,
                SubjectKind::Sysctl,
                name,
                cur.to_string(),
                format!("vm.swappiness is {cur}: {why}. 1 keeps the buffer pool in memory and still lets the kernel swap in an emergency."),
            )
            .recommend("1")
            .evidence(Source::RuleOfThumb, "1 on dedicated database hosts; MySQLTuner flags > 10; tuned's throughput profiles use 10")
            .reference(SYSCTL_DOC),
        )
        .set(Setting::sysctl(name, 1))];
    }
    let (b, src) = boot(f, name, 60);
    if !ok(b) {
        return vec![Advice::new(
            finding(
                "os.swappiness.persist",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Sysctl,
                name,
                format!("{cur} (at boot: {b})"),
                format!("vm.swappiness is {cur} now but {src} gives {b} at boot; a sysctl.d file keeps {cur}."),
            )
            .recommend(cur.to_string())
            .evidence(Source::Observed, "no sysctl.d or sysctl.conf line sets it"),
        )
        .set(Setting::sysctl(name, cur))];
    }
    Vec::new()
}

fn thp(f: &Facts) -> Vec<Advice> {
    let Some(cur) = f.host.thp_enabled.as_deref() else {
        return Vec::new();
    };
    let subject = "/sys/kernel/mm/transparent_hugepage/enabled";
    if cur == "always" {
        return vec![Advice::new(
            finding(
                "os.thp",
                Severity::Warning,
                Layer::Os,
                SubjectKind::Path,
                subject,
                "always",
                "transparent hugepages are always on: khugepaged compacts memory behind mysqld's back (latency spikes), and the buffer pool's 16 KiB page accesses bloat into 2 MiB pages. MySQL, MariaDB and Percona recommend never; tuned's database profiles set never.",
            )
            .recommend("never")
            .evidence(Source::RuleOfThumb, "tuned profiles postgresql and oracle: transparent_hugepages=never")
            .reference("https://docs.kernel.org/admin-guide/mm/transhuge.html"),
        )
        .set(Setting::Thp { value: "never".into() })];
    }
    // `never` set by hand is lost at reboot unless something sets it.
    if cur == "never" && f.thp_boot.as_ref().map(|(v, _)| v.as_str()) != Some("never") {
        return vec![Advice::new(
            finding(
                "os.thp.persist",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Path,
                subject,
                "never (at boot: the kernel's build default)",
                "transparent hugepages are off now, but neither the kernel command line (transparent_hugepage=never) nor a tmpfiles.d entry keeps them off after a reboot.",
            )
            .recommend("never")
            .evidence(Source::Observed, "no transparent_hugepage= on the command line, no tmpfiles.d entry"),
        )
        .set(Setting::Thp { value: "never".into() })];
    }
    Vec::new()
}

fn dirty(f: &Facts) -> Vec<Advice> {
    // Only matters when InnoDB's data writes go through the page cache.
    if super::read_ahead::innodb_buffered(f) != Some(true) {
        return Vec::new();
    }
    let h = &f.host;
    if h.dirty_bytes.unwrap_or(0) > 0 || h.dirty_background_bytes.unwrap_or(0) > 0 {
        return Vec::new(); // byte limits chosen deliberately
    }
    let (Some(r), Some(b)) = (h.dirty_ratio, h.dirty_background_ratio) else {
        return Vec::new();
    };
    // tuned's latency-performance profile: 10 / 3.
    if r <= 10 && b <= 3 {
        return Vec::new();
    }
    let mem = h
        .memory_bytes
        .map(|m| {
            format!(
                " ({} and {} of this host's memory)",
                crate::check::facts::human_bytes(m * r / 100),
                crate::check::facts::human_bytes(m * b / 100)
            )
        })
        .unwrap_or_default();
    let mut a = Advice::new(
        finding(
            "os.dirty",
            Severity::Notice,
            Layer::Os,
            SubjectKind::Sysctl,
            "vm.dirty_ratio",
            format!("dirty_ratio {r}, dirty_background_ratio {b}"),
            format!(
                "InnoDB writes its data files through the page cache (innodb_flush_method is not O_DIRECT), and up to {r}% of memory may be dirty before writers block, {b}% before writeback starts{mem}: checkpoints then fsync gigabytes at once and stall commits."
            ),
        )
        .recommend("dirty_ratio 10, dirty_background_ratio 3")
        .evidence(Source::RuleOfThumb, "tuned's latency-performance profile: vm.dirty_ratio=10, vm.dirty_background_ratio=3")
        .reference(SYSCTL_DOC),
    );
    if r > 10 {
        a = a.set(Setting::sysctl("vm.dirty_ratio", 10));
    }
    if b > 3 {
        a = a.set(Setting::sysctl("vm.dirty_background_ratio", 3));
    }
    vec![a]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swappiness_values_and_persistence() {
        let mut f = Facts::default();
        f.host.swappiness = Some(60);
        let a = swappiness(&f);
        assert_eq!(a[0].finding.recommended.as_deref(), Some("1"));
        assert_eq!(a[0].settings, vec![Setting::sysctl("vm.swappiness", 1)]);
        f.host.swappiness = Some(1);
        let a = swappiness(&f);
        assert_eq!(a[0].finding.id, "os.swappiness.persist");
        f.sysctl_boot.insert(
            "vm.swappiness".into(),
            ("1".into(), "/etc/sysctl.d/99-db.conf".into()),
        );
        assert!(swappiness(&f).is_empty());
    }

    #[test]
    fn thp() {
        let mut f = Facts::default();
        f.host.thp_enabled = Some("always".into());
        assert_eq!(
            super::thp(&f)[0].finding.recommended.as_deref(),
            Some("never")
        );
        f.host.thp_enabled = Some("madvise".into());
        assert!(super::thp(&f).is_empty());
        f.host.thp_enabled = Some("never".into());
        assert_eq!(super::thp(&f)[0].finding.id, "os.thp.persist");
        f.thp_boot = Some(("never".into(), "kernel command line".into()));
        assert!(super::thp(&f).is_empty());
    }
}
