//! Process and kernel limits the server runs into: open files (nofile) of
//! the mysqld process against what its settings need, processes (threads)
//! against max_connections, and fs.aio-max-nr for native AIO.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::{Facts, Limit};
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const NOFILE: Rule = Rule {
    id: "os.limits",
    layer: Layer::Os,
    scope: Scope::Host,
    about:
        "nofile/nproc of the mysqld process vs max_connections, table_open_cache, open_files_limit",
    run: nofile,
};

pub const AIO: Rule = Rule {
    id: "os.aio",
    layer: Layer::Os,
    scope: Scope::Host,
    about: "fs.aio-max-nr vs innodb_use_native_aio",
    run: aio,
};

/// Open files the server asks for at startup (mysqld.cc
/// `adjust_open_files_limit`): the largest of 10 + max_connections +
/// 2 × table_open_cache, 5 × max_connections, and open_files_limit as set.
pub fn files_needed(max_connections: u64, table_open_cache: u64, open_files_limit: u64) -> u64 {
    (10 + max_connections + 2 * table_open_cache)
        .max(5 * max_connections)
        .max(open_files_limit)
}

/// The systemd service a server of this flavour runs as, when its cgroup
/// does not say: Debian/Ubuntu/RHEL name MariaDB's `mariadb.service`,
/// MySQL's `mysql.service` (RHEL: `mysqld.service`).
pub fn service_name(f: &Facts) -> String {
    if let Some(s) = f.mysqld.as_ref().and_then(|m| m.service.clone()) {
        return s;
    }
    let maria = match (&f.server, &f.mysqld) {
        (Some(s), _) => s.is_mariadb(),
        (None, Some(m)) => m.comm == "mariadbd",
        _ => true,
    };
    if maria {
        "mariadb.service"
    } else {
        "mysql.service"
    }
    .to_string()
}

fn nofile(f: &Facts) -> Vec<Advice> {
    let Some(p) = &f.mysqld else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let s = f.server.as_ref();
    let mysql8 = s.is_some_and(|s| s.is_mysql() && s.major >= 8);
    let maxc = s.and_then(|s| s.var_u64("max_connections")).unwrap_or(151);
    let toc = s
        .and_then(|s| s.var_u64("table_open_cache"))
        .unwrap_or(if mysql8 { 4000 } else { 2000 });
    let ofl = s
        .and_then(|s| s.configured("open_files_limit"))
        .and_then(|(v, _)| v.parse().ok())
        .unwrap_or(0);
    let need = files_needed(maxc, toc, ofl);
    let src = if s.is_some() {
        "the server's variables"
    } else {
        "server defaults (no server reachable)"
    };
    if let Some(soft) = p.nofile_soft {
        if soft.below(need) {
            let rec = need.next_power_of_two().max(32768);
            let service = service_name(f);
            // A unit already asks for enough: the process predates it.
            if let Some((v, file)) = &p.unit_nofile {
                let set: Option<u64> = if v == "infinity" {
                    Some(u64::MAX)
                } else {
                    v.split(':').next_back().and_then(|x| x.parse().ok())
                };
                if set.is_some_and(|n| n >= need) {
                    let mut a = Advice::new(
                        finding(
                            "os.limits.nofile",
                            Severity::Notice,
                            Layer::Os,
                            SubjectKind::Process,
                            &format!("{} (pid {})", p.comm, p.pid),
                            soft.to_string(),
                            format!(
                                "{file} sets LimitNOFILE={v} for {service}, enough for the {need} files its settings need, but {} still runs with {soft}: it takes effect when the service restarts (systemctl daemon-reload; systemctl restart {service}).",
                                p.comm
                            ),
                        )
                        .recommend(v.clone())
                        .evidence(Source::Observed, format!("/proc/{}/limits: Max open files {soft}; {file}", p.pid)),
                    );
                    if file.contains("innotune") {
                        a = a.set(Setting::Nofile {
                            service: service.clone(),
                            value: set.unwrap_or(rec),
                        });
                    }
                    out.push(a);
                    return out;
                }
            }
            let running = s
                .and_then(|s| s.var_u64("open_files_limit"))
                .map(|v| format!("; the server settled for open_files_limit = {v}"))
                .unwrap_or_default();
            out.push(
                Advice::new(
                    finding(
                        "os.limits.nofile",
                        Severity::Warning,
                        Layer::Os,
                        SubjectKind::Process,
                        &format!("{} (pid {})", p.comm, p.pid),
                        soft.to_string(),
                        format!(
                            "{} may open {soft} files, fewer than the {need} its settings need (10 + max_connections {maxc} + 2 × table_open_cache {toc}, or 5 × max_connections){running}: it shrinks its table cache or fails with \"Too many open files\". LimitNOFILE={rec} in a drop-in for {service} raises it at the next restart.",
                            p.comm
                        ),
                    )
                    .recommend(rec.to_string())
                    .evidence(
                        Source::Observed,
                        format!("/proc/{}/limits: Max open files {soft} (hard {}); figures from {src}", p.pid, p.nofile_hard.map_or("?".into(), |h| h.to_string())),
                    ),
                )
                .set(Setting::Nofile { service, value: rec }),
            );
        }
    }
    if let Some(Limit::Value(n)) = p.nproc_soft {
        let need = maxc + 100;
        if n < need {
            out.push(Advice::new(
                finding(
                    "os.limits.nproc",
                    Severity::Warning,
                    Layer::Os,
                    SubjectKind::Process,
                    &format!("{} (pid {})", p.comm, p.pid),
                    n.to_string(),
                    format!(
                        "{} may run {n} processes (threads count), fewer than max_connections {maxc} plus ~100 background threads: connections beyond it fail with \"Can't create a new thread\". Set LimitNPROC=infinity for its service.",
                        p.comm
                    ),
                )
                .recommend("unlimited")
                .evidence(Source::Observed, format!("/proc/{}/limits: Max processes {n}", p.pid)),
            ));
        }
    }
    out
}

fn aio(f: &Facts) -> Vec<Advice> {
    let Some(cur) = f.host.aio_max_nr else {
        return Vec::new();
    };
    if f.server
        .as_ref()
        .and_then(|s| s.var_on("innodb_use_native_aio"))
        == Some(false)
    {
        return Vec::new();
    }
    const WANT: u64 = 1_048_576;
    let name = "fs.aio-max-nr";
    if cur < WANT {
        return vec![Advice::new(
            finding(
                "os.aio",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Sysctl,
                name,
                cur.to_string(),
                format!(
                    "fs.aio-max-nr caps native AIO events host-wide at {cur}; each InnoDB instance reserves hundreds per I/O thread at startup, so a second instance (or a backup tool) gets EAGAIN from io_setup and InnoDB falls back to slower simulated I/O or refuses to start."
                ),
            )
            .recommend(WANT.to_string())
            .evidence(Source::RuleOfThumb, "MySQLTuner and tuned's oracle profile: fs.aio-max-nr = 1048576")
            .reference("https://dev.mysql.com/doc/refman/8.0/en/innodb-linux-native-aio.html"),
        )
        .set(Setting::sysctl(name, WANT))];
    }
    let boot = f
        .sysctl_boot
        .get(name)
        .and_then(|(v, _)| v.trim().parse::<u64>().ok())
        .unwrap_or(65536);
    if boot < WANT {
        return vec![Advice::new(
            finding(
                "os.aio.persist",
                Severity::Notice,
                Layer::Os,
                SubjectKind::Sysctl,
                name,
                format!("{cur} (at boot: {boot})"),
                format!("fs.aio-max-nr is {cur} now, but {boot} after a reboot: nothing in sysctl.d sets it."),
            )
            .recommend(cur.to_string())
            .evidence(Source::Observed, "no sysctl.d or sysctl.conf line sets it"),
        )
        .set(Setting::sysctl(name, cur))];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::ProcessFacts;

    #[test]
    fn low_nofile() {
        let mut f = Facts {
            mysqld: Some(ProcessFacts {
                pid: 4242,
                comm: "mysqld".into(),
                nofile_soft: Some(Limit::Value(1024)),
                nproc_soft: Some(Limit::Unlimited),
                ..Default::default()
            }),
            ..Default::default()
        };
        let a = nofile(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.observed, "1024");
        // No server: MySQL's table_open_cache default of 2000 (mysqld comm
        // could be MariaDB < 10.5): 10 + 151 + 4000 = 4161 → 32768.
        assert_eq!(a[0].finding.recommended.as_deref(), Some("32768"));
        assert_eq!(
            a[0].settings,
            vec![Setting::Nofile {
                service: "mysql.service".into(),
                value: 32768
            }]
        );
        f.mysqld.as_mut().unwrap().nofile_soft = Some(Limit::Value(65536));
        assert!(nofile(&f).is_empty());
        assert_eq!(files_needed(151, 4000, 0), 8161);
        assert_eq!(files_needed(10000, 100, 0), 50000);
    }
}
