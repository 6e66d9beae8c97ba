//! `innotune check`: advice for the OS, the storage and InnoDB.
//!
//! measure ([`server`] samples the server, [`iobench`] measures write IOPS,
//! [`results`] reads sweep/bench results) → one [`adapter`] into [`facts`]
//! → [`rules`] (pure functions, one file per family, by layer) → a typed
//! [`report::CheckReport`] → exporters. `apply` reuses everything up to the
//! advice.

pub mod adapter;
pub mod capture;
pub mod cli;
pub mod dynamic;
pub mod emit;
pub mod facts;
pub mod iobench;
pub mod managed;
pub mod managed_emit;
pub mod metrics;
pub mod provider;
pub mod report;
pub mod results;
pub mod rules;
pub mod sandbox;
pub mod server;
pub mod slowlog;
pub mod tune_record;
pub mod validate;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::host::{normalize, Host};
use anyhow::Result;
use cli::CheckOpts;
use facts::Facts;
use report::{CheckReport, ServerSummary};
use rules::Advice;
use std::path::{Path, PathBuf};

/// What `check` computed: the report, and the facts and advice `apply`
/// builds its plan from.
pub struct Checked {
    pub report: CheckReport,
}

impl Checked {
    pub fn facts(&self) -> &Facts {
        &self.report.facts
    }
    pub fn advice(&self) -> &[Advice] {
        &self.report.findings
    }
}

/// Run every rule on the host under `opts.path`.
pub fn execute(host: &Host, opts: &CheckOpts) -> Result<Checked> {
    if !host.root().is_dir() {
        return Err(Fix::new(
            format!("--root {} is not a directory", host.root().display()),
            "give a host tree laid out like / (with sys/, proc/, etc/), or drop --root",
        )
        .into());
    }
    let mut notes = Vec::new();
    // The server first: its datadir may be the path to check.
    let named = server::names_a_server(&opts.conn);
    let mut summary = ServerSummary::default();
    let mut sampled = None;
    // A server reached over TCP on another machine: its host is not this one.
    let mut remote: Option<String> = None;
    if opts.client {
        summary.note =
            Some("server rules skipped: --client checks the machine that runs the load".into());
    } else if opts.no_server {
        summary.note = Some("server rules skipped: --no-server".into());
    } else if let Some(dir) = &opts.server_capture {
        let s = capture::load(dir)?;
        summary.reached = true;
        summary.endpoint = Some(format!("capture {}", dir.display()));
        summary.version = Some(s.label());
        summary.sample_s = s.window.as_ref().map(|w| w.seconds);
        if s.window.is_none() {
            notes.push("the capture has no status window (status-start.tsv and window-seconds): rules that need rates said nothing".into());
        }
        sampled = Some((s, None));
    } else if !host.is_live() && !named {
        summary.note = Some(
            "server rules skipped: a replayed host (--root) has no server to ask; give connection flags (--socket …) to check one".into(),
        );
    } else {
        let spec = opts.conn.resolve(host)?;
        let ep = server::endpoint(&spec, &opts.conn);
        summary.endpoint = Some(ep.describe());
        let bar = crate::output::progress::status_line();
        let r = server::sample(host, &spec, ep, opts.sample, &mut |left| {
            bar.set_message(format!(
                "sampling server status over {} s: {left} s left (--sample 0 skips rate rules)",
                opts.sample.as_secs()
            ));
            bar.tick();
        });
        bar.finish_and_clear();
        match r {
            Ok((s, pid)) => {
                if spec.socket.is_none() && !is_loopback(&spec.host) {
                    remote = Some(format!("the server at {} is not on this host", spec.host));
                }
                summary.reached = true;
                summary.version = Some(s.label());
                summary.sample_s = s.window.as_ref().map(|w| w.seconds);
                if s.window.is_none() {
                    notes.push(
                        "no sample window (--sample 0): rules that need rates (redo, log waits, temporary tables, pending reads) said nothing"
                            .into(),
                    );
                }
                sampled = Some((s, pid));
            }
            Err(e) => {
                let line = format!("server rules skipped: {}", crate::error::one_line(&e));
                if named {
                    crate::output::warn(&line);
                }
                summary.note = Some(line);
            }
        }
    }
    // Who runs the server, and whether its host can be read at all.
    let mut provider = choose_provider(opts.provider, sampled.as_ref().map(|s| &s.0), &mut notes);
    let no_host: Option<String> = if opts.no_host_facts {
        Some("--no-host-facts".into())
    } else if opts.server_capture.is_some() {
        Some("a replayed server capture (--server-capture) comes with no host".into())
    } else if remote.is_some() && opts.path.is_none() {
        remote
    } else {
        provider
            .as_ref()
            .filter(|p| p.name.is_managed())
            .map(|p| format!("{} runs the server's host", p.name.label()))
    };
    if let Some(p) = provider.as_mut() {
        p.host_not_visible = no_host.clone();
    }
    let (path, source, mut facts) = if no_host.is_some() {
        if opts.measure {
            return Err(Fix::new(
                "--measure writes on the server's host, which is not visible here",
                "drop --measure (or --no-host-facts / --provider)",
            )
            .into());
        }
        let datadir = sampled
            .as_ref()
            .and_then(|s| s.0.var("datadir"))
            .map(str::to_string);
        let (path, source) = match (&opts.path, datadir) {
            (Some(p), _) => (p.display().to_string(), "argument"),
            (None, Some(d)) => (d, "server_datadir"),
            (None, None) => (String::new(), "not_visible"),
        };
        let facts = Facts {
            path: path.clone(),
            ..Default::default()
        };
        (PathBuf::from(path), source, facts)
    } else {
        let root = Path::new("/");
        let arg = match (opts.client, opts.path.as_deref()) {
            (true, None) => Some(root),
            (_, p) => p,
        };
        let (path, mut source) = resolve_path(host, arg, sampled.as_ref().map(|s| &s.0))?;
        if opts.client && opts.path.is_none() {
            source = "client_root";
        }
        let probe = crate::probe::probe_path(host, &path)?;
        // probe's own findings (walk problems, several servers, an overlay)
        // become notes; its elevator= finding is one of check's rules here.
        notes.extend(
            probe
                .findings
                .iter()
                .filter(|f| f.id != "os.elevator_ignored")
                .map(|f| format!("{}: {} ({})", f.subject.name, f.observed, f.reason)),
        );
        let pid = sampled.as_ref().and_then(|s| s.1);
        let facts = adapter::facts(host, &probe, pid);
        (path, source, facts)
    };
    facts.server = sampled.map(|s| s.0);
    notes.extend(results::load(host, &opts.results, &mut facts)?);
    if let Some(file) = &opts.slowlog {
        facts.slowlog = Some(slowlog::load(
            file,
            opts.slowlog_max_entry_size,
            &mut notes,
        )?);
    } else if let Some(s) = &facts.server {
        if s.var_on("slow_query_log") == Some(true) {
            if let Some(f) = s.var("slow_query_log_file") {
                notes.push(format!(
                    "the server's slow query log is {f} (relative names are in the datadir): check --slowlog FILE reads it for statements that need an index"
                ));
            }
        }
    }
    if opts.measure {
        if !host.is_live() {
            return Err(Fix::new(
                "--measure needs the live host, not a replayed --root tree",
                "drop --root, or give --results bench.json",
            )
            .into());
        }
        let m = iobench::page_write_iops(host, &path, opts.scratch.as_deref())?;
        if facts
            .write_iops
            .as_ref()
            .map_or(true, |w| m.value > w.value)
        {
            facts.write_iops = Some(m);
        }
    }
    let layers: Vec<_> = opts.only.iter().map(|l| l.layer()).collect();
    let (mut advice, mut rules) =
        rules::run(&facts, &layers, summary.note.as_deref(), no_host.as_deref());
    if opts.client {
        // The machine that runs the load: its network rules only.
        for r in &mut rules {
            if !rules::CLIENT.contains(&r.id.as_ref()) && r.status == "ran" {
                r.status = "skipped".into();
                r.reason =
                    Some("--client: only the rules about the machine that runs the load".into());
                r.findings = 0;
            }
        }
        advice.retain(|a| rules::CLIENT.iter().any(|id| a.finding.id.starts_with(id)));
    }
    if no_host.is_some() && facts.server.is_some() {
        notes.push("server.buffer_pool: its size against RAM needs the server's memory, not visible from a client; the miss-rate and chunk checks ran".into());
    }
    let managed = provider.as_ref().map(|p| p.name).filter(|p| p.is_managed());
    if let Some(p) = managed {
        managed::adjust(p, &facts, &mut advice);
    }
    // The fix each finding shows: its first runtime change (none on a
    // managed server: its parameters change through the provider).
    for a in &mut advice {
        a.finding.change = match managed {
            Some(_) => None,
            None => a
                .settings
                .iter()
                .find_map(|s| s.runtime_change(&facts, None)),
        };
    }
    Ok(Checked {
        report: CheckReport {
            path: path.display().to_string(),
            path_source: source.into(),
            server: summary,
            findings: advice,
            rules,
            notes,
            emitted: Vec::new(),
            provider,
            facts,
            state: Default::default(),
        },
    })
}

/// `localhost`, or an address of this machine's loopback.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

/// The provider: given (`--provider`, warned about when the server's
/// variables say otherwise), else recognised from them; none without a
/// server and no `--provider`.
fn choose_provider(
    given: Option<provider::Provider>,
    server: Option<&facts::ServerFacts>,
    notes: &mut Vec<String>,
) -> Option<report::ProviderSummary> {
    let detected = server.map(provider::detect);
    let (name, forced) = match (given, &detected) {
        (Some(p), Some((d, ev))) if p != *d => {
            let line = format!(
                "--provider {} contradicts the server's variables ({ev}: {}); using {}",
                p.name(),
                d.name(),
                p.name()
            );
            crate::output::warn(&line);
            notes.push(line);
            (p, true)
        }
        (Some(p), _) => (p, true),
        (None, Some((d, _))) => (*d, false),
        (None, None) => return None,
    };
    Some(report::ProviderSummary {
        name,
        label: name.label().into(),
        detected: detected.as_ref().map(|d| d.0),
        evidence: detected.map(|d| d.1),
        forced,
        host_not_visible: None,
    })
}

/// PATH as given; else the connected server's datadir; else probe's
/// default (a running server's datadir, else the current directory).
fn resolve_path(
    host: &Host,
    arg: Option<&Path>,
    server: Option<&facts::ServerFacts>,
) -> Result<(PathBuf, &'static str)> {
    let (p, source) = match (arg, server.and_then(|s| s.var("datadir"))) {
        (Some(p), _) => (p.to_path_buf(), "argument"),
        (None, Some(d)) => (PathBuf::from(d), "server_datadir"),
        (None, None) => match crate::probe::mysqld::find(host).first() {
            Some(m) => (PathBuf::from(&m.datadir), "mysqld_datadir"),
            None if host.is_live() => (std::env::current_dir()?, "current_directory"),
            None => {
                return Err(Fix::new(
                    "no PATH given and no mysqld/mariadbd in the replayed host",
                    "give a PATH (a host path inside the --root tree's mountinfo)",
                )
                .into())
            }
        },
    };
    if host.is_live() {
        let c = std::fs::canonicalize(&p).map_err(|e| {
            Fix::new(
                format!("PATH {} cannot be checked: {e}", p.display()),
                "give an existing directory, e.g. the MySQL datadir",
            )
        })?;
        Ok((c, source))
    } else if p.is_absolute() {
        Ok((normalize(&p), source))
    } else {
        Err(Fix::new(
            format!(
                "PATH {} is relative but --root replays another host",
                p.display()
            ),
            "give an absolute host path such as /var/lib/mysql",
        )
        .into())
    }
}

/// `innotune check`: [`execute`], the `--emit` files, and innotune's own
/// state for the metrics ([`metrics::State`]).
impl Command for cli::CheckArgs {
    type Report = CheckReport;

    fn execute(env: &Env, args: Self) -> Result<CheckReport> {
        let mut report = execute(&env.host, &args.opts)?.report;
        if let Some(dir) = &args.emit {
            match report
                .provider
                .as_ref()
                .map(|p| p.name)
                .filter(|p| p.is_managed())
            {
                Some(p) => report.emitted = managed_emit::emit_to(dir, p, &report)?,
                None => report.emitted = report::emit_to(&env.host, dir, &report)?,
            }
        }
        report.state = metrics::State::read();
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"] {
            assert!(super::is_loopback(h), "{h}");
        }
        for h in [
            "10.0.0.5",
            "db.example",
            "mydb.abc123.eu-west-1.rds.amazonaws.com",
            "::2",
        ] {
            assert!(!super::is_loopback(h), "{h}");
        }
    }
}
