//! `innotune check`: advice for the OS, the storage and InnoDB.
//!
//! measure ([`server`] samples the server, [`iobench`] measures write IOPS,
//! [`results`] reads sweep/bench results) → one [`adapter`] into [`facts`]
//! → [`rules`] (pure functions, one file per family, by layer) → a typed
//! [`report::CheckReport`] → exporters. `apply` reuses everything up to the
//! advice.

pub mod adapter;
pub mod cli;
pub mod dynamic;
pub mod emit;
pub mod facts;
pub mod iobench;
pub mod metrics;
pub mod report;
pub mod results;
pub mod rules;
pub mod server;
pub mod slowlog;
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
    if opts.no_server {
        summary.note = Some("server rules skipped: --no-server".into());
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
    let (path, source) = resolve_path(host, opts.path.as_deref(), sampled.as_ref().map(|s| &s.0))?;
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
    let mut facts = adapter::facts(host, &probe, pid);
    facts.server = sampled.map(|s| s.0);
    notes.extend(results::load(host, &opts.results, &mut facts)?);
    if let Some(file) = &opts.slowlog {
        facts.slowlog = Some(slowlog::load(file)?);
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
    let (mut advice, rules) = rules::run(&facts, &layers, summary.note.as_deref());
    // The fix each finding shows: its first runtime change.
    for a in &mut advice {
        a.finding.change = a
            .settings
            .iter()
            .find_map(|s| s.runtime_change(&facts, None));
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
            facts,
            state: Default::default(),
        },
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
            report.emitted = report::emit_to(&env.host, dir, &report)?;
        }
        report.state = metrics::State::read();
        Ok(report)
    }
}
