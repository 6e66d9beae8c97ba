//! `innotune apply`: check's advice made true on the host, through the
//! journal.
//!
//! [`plan`] turns advice into changes ([`changes`]) and files
//! ([`crate::check::emit`], checked by [`crate::check::validate`]); without `--yes` the plan is the report. With
//! `--yes`, each pending change is journaled and applied; when all are in,
//! they move to the applied journal ([`applied`]) so they outlive the run,
//! and `innotune restore` reverts them. A change whose target an earlier
//! apply already changed first has that earlier change undone, so the
//! original value is always the one captured.

pub mod applied;
pub mod cli;
pub mod plan;

use crate::change::{Hook, Outcome};
use crate::command::{Command, Env};
use crate::error::exit;
use crate::export::doc::{Cell, Column, Table, Tone};
use crate::export::Document;
use anyhow::Result;
use plan::Step;
use serde::Serialize;

/// `plan` (no --yes), `check` (--check) or `apply` (--yes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Plan,
    Check,
    Apply,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ApplyReport {
    pub path: String,
    pub mode: Mode,
    /// Findings of severity warning or worse before applying.
    pub findings: usize,
    pub steps: Vec<Step>,
    /// Steps not in effect (before applying).
    pub pending: usize,
    /// Targets changed by this run.
    pub applied: Vec<String>,
    /// Where the applied changes are journaled (`innotune restore` reverts them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// What innotune leaves to you: fstab lines, restarts, durability.
    pub notes: Vec<String>,
}

impl ApplyReport {
    fn blocked(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.pending && s.blocked.is_some())
            .count()
    }
}

impl crate::export::Report for ApplyReport {
    const COMMAND: &'static str = "apply";

    fn document(&self) -> Document {
        let mut d = Document::new(format!("innotune apply {}", self.path));
        let mut t = Table::new(vec![
            Column::text("status"),
            Column::text("kind"),
            Column::text("change"),
            Column::text("for"),
        ]);
        for s in &self.steps {
            let status = if self.applied.contains(&s.target) {
                Cell::text("applied").tone(Tone::Good)
            } else if let Some(b) = &s.blocked {
                Cell::text(format!("blocked: {b}")).tone(Tone::Bad)
            } else if s.pending {
                Cell::text("pending").tone(Tone::Warn)
            } else {
                Cell::text("in effect").tone(Tone::Dim)
            };
            t.row(vec![
                status,
                s.kind.as_ref().into(),
                s.describe.clone().into(),
                s.findings.join(", ").into(),
            ]);
        }
        if self.steps.is_empty() {
            d.paragraph("No change to make: check found nothing innotune can change here.");
        } else {
            d.table(t);
        }
        if self.mode != Mode::Check {
            for s in self
                .steps
                .iter()
                .filter(|s| s.pending && s.kind == "file" && !s.diff.is_empty())
            {
                d.preformatted(s.diff.clone());
            }
        }
        for n in &self.notes {
            d.note(Tone::Plain, n.clone());
        }
        let line = match self.mode {
            Mode::Apply if !self.applied.is_empty() => format!(
                "applied {} change(s), journaled in {}; `innotune restore` reverts them",
                self.applied.len(),
                self.journal.as_deref().unwrap_or("?")
            ),
            Mode::Apply => "nothing to apply: every change is in effect".into(),
            _ if self.pending == 0 => "nothing pending: every change is in effect".into(),
            Mode::Plan => format!(
                "{} change(s) pending: innotune apply --yes makes them",
                self.pending
            ),
            Mode::Check => format!("{} change(s) pending", self.pending),
        };
        d.note(
            if self.pending == 0 || !self.applied.is_empty() {
                Tone::Good
            } else {
                Tone::Warn
            },
            line,
        );
        d
    }

    fn exit_code(&self) -> i32 {
        let left = match self.mode {
            Mode::Apply => self.blocked(),
            _ => self.pending,
        };
        if left > 0 {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}

/// `innotune apply`: the plan, or (`--yes`) the plan made true through
/// the journal.
impl Command for cli::ApplyArgs {
    type Report = ApplyReport;

    fn execute(env: &Env, args: Self) -> Result<ApplyReport> {
        apply(env, &args)
    }
}

/// `--set NAME=VALUE`: each replaces check's advice for that setting with
/// advice of its own. NAME is a server variable (the server must have been
/// reached), `queue/ATTR` (a queue attribute of every disk under PATH that
/// has a scheduler: `queue/scheduler=none`), or a sysctl
/// (`vm.dirty_ratio=10`): what `tune --search` proved.
fn set_overrides(report: &mut crate::check::report::CheckReport, sets: &[String]) -> Result<()> {
    use crate::check::rules::{Advice, Setting, SERVER_VARIABLES, SYSCTLS};
    use crate::error::Fix;
    use crate::finding::{Finding, Layer, Severity, Source, Subject, SubjectKind};
    let reason =
        "given with apply --set (tune --search proves such values against the current settings)";
    for s in sets {
        let Some((name, value)) = s.split_once('=').map(|(a, b)| (a.trim(), b.trim())) else {
            return Err(Fix::new(
                format!("--set {s:?} is not NAME=VALUE"),
                "write it as --set innodb_io_capacity=2000",
            )
            .into());
        };
        if value.is_empty() || !crate::change::plain_value(value) {
            return Err(Fix::new(
                format!("--set {name}={value}: not a value innotune sets"),
                "give a plain value, e.g. --set innodb_io_capacity=2000",
            )
            .into());
        }
        let number = || -> Result<()> {
            if value.parse::<u64>().is_err() {
                return Err(Fix::new(
                    format!("--set {name}={value}: {name} takes a whole number"),
                    format!("e.g. --set {name}=64"),
                )
                .into());
            }
            Ok(())
        };
        // `queue/ATTR`: every disk under PATH; `DEV/queue/ATTR`: that
        // one (what tune --search switched, when it was given --device).
        let queue = name
            .strip_prefix("queue/")
            .map(|a| (None, a))
            .or_else(|| name.split_once("/queue/").map(|(dev, a)| (Some(dev), a)));
        // The settings this --set stands for, and the finding that carries them.
        let (settings, layer, kind, subject, observed): (Vec<Setting>, _, _, String, String) =
            if let Some((only, attr)) = queue {
                if !["scheduler", "nr_requests", "read_ahead_kb"].contains(&attr) {
                    return Err(Fix::new(
                        format!("--set {name}: not a queue attribute tune --search sets"),
                        "use queue/scheduler, queue/nr_requests or queue/read_ahead_kb",
                    )
                    .into());
                }
                let disks: Vec<_> = report
                    .facts
                    .devices
                    .iter()
                    .filter(|d| d.is_scheduled_disk() && only.map_or(true, |o| o == d.name))
                    .collect();
                if let (Some(dev), true) = (only, disks.is_empty()) {
                    return Err(Fix::new(
                        format!(
                            "--set {name}: {dev} is not a disk with a scheduler under {}",
                            report.path
                        ),
                        "name a disk under PATH (or write queue/ATTR for all of them)",
                    )
                    .into());
                }
                if disks.is_empty() {
                    return Err(Fix::new(
                        format!(
                            "--set {name}: no disk under {} has a scheduler",
                            report.path
                        ),
                        "give the PATH tune --search measured",
                    )
                    .into());
                }
                if attr == "scheduler" {
                    if let Some(d) = disks
                        .iter()
                        .find(|d| !d.schedulers_available.iter().any(|a| a == value))
                    {
                        return Err(Fix::new(
                            format!(
                                "--set {name}={value}: {} offers {}",
                                d.name,
                                d.schedulers_available.join(", ")
                            ),
                            "give one it offers",
                        )
                        .into());
                    }
                } else {
                    number()?;
                }
                let observed = disks
                    .iter()
                    .map(|d| {
                        let v = match attr {
                            "scheduler" => d.scheduler.clone(),
                            "nr_requests" => d.nr_requests.map(|v| v.to_string()),
                            _ => d.read_ahead_kb.map(|v| v.to_string()),
                        };
                        format!("{} {}", d.name, v.unwrap_or_else(|| "?".into()))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let names = disks.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
                (
                    disks
                        .iter()
                        .map(|d| Setting::queue(&d.name, attr, value))
                        .collect(),
                    Layer::Storage,
                    SubjectKind::Device,
                    names.join(","),
                    observed,
                )
            } else if SYSCTLS.contains(&name) {
                number()?;
                let h = &report.facts.host;
                let observed = match name {
                    "vm.swappiness" => h.swappiness,
                    "vm.dirty_ratio" => h.dirty_ratio,
                    "vm.dirty_background_ratio" => h.dirty_background_ratio,
                    "fs.aio-max-nr" => h.aio_max_nr,
                    _ => None,
                }
                .map_or_else(|| "(not read by check)".into(), |v| v.to_string());
                (
                    vec![Setting::sysctl(name, value)],
                    Layer::Os,
                    SubjectKind::Sysctl,
                    name.to_string(),
                    observed,
                )
            } else if SERVER_VARIABLES.contains(&name) {
                let Some(server) = report.facts.server.as_ref() else {
                    return Err(Fix::new(
                        format!("--set {name}: no server was reached to set it on"),
                        "give the connection options (--socket or --host, --user)",
                    )
                    .into());
                };
                (
                    vec![Setting::var(server, name, value, reason)],
                    Layer::Server,
                    SubjectKind::ServerVariable,
                    name.to_string(),
                    server.var(name).unwrap_or("(none)").to_string(),
                )
            } else {
                return Err(Fix::new(
                    format!("--set {name}={value}: not a setting innotune sets"),
                    format!(
                        "use queue/scheduler, queue/nr_requests, queue/read_ahead_kb, one of {}, or one of {}",
                        SYSCTLS.join(", "),
                        SERVER_VARIABLES.join(", ")
                    ),
                )
                .into());
            };
        // Check's own advice for the same setting gives way.
        let same = |x: &Setting| {
            settings.iter().any(|s| match (s, x) {
                (
                    Setting::ServerVariable { name: a, .. },
                    Setting::ServerVariable { name: b, .. },
                )
                | (Setting::Sysctl { name: a, .. }, Setting::Sysctl { name: b, .. }) => a == b,
                (
                    Setting::Queue {
                        device: d1,
                        attr: a1,
                        ..
                    },
                    Setting::Queue {
                        device: d2,
                        attr: a2,
                        ..
                    },
                ) => d1 == d2 && a1 == a2,
                _ => false,
            })
        };
        for a in &mut report.findings {
            a.settings.retain(|x| !same(x));
        }
        let id = match layer {
            Layer::Storage => "storage.set",
            Layer::Os => "os.set",
            _ => "server.set",
        };
        let mut a = Advice::new(
            Finding::new(
                id,
                Severity::Notice,
                layer,
                Subject::new(kind, &subject),
                observed,
                reason,
            )
            .recommend(value)
            .evidence(Source::Observed, "apply --set"),
        );
        a.settings = settings;
        report.findings.push(a);
    }
    Ok(())
}

fn apply(env: &Env, args: &cli::ApplyArgs) -> Result<ApplyReport> {
    let host = &env.host;
    let mode = if args.check {
        Mode::Check
    } else if args.yes {
        Mode::Apply
    } else {
        Mode::Plan
    };
    let mut checked = crate::check::execute(host, &args.opts)?;
    set_overrides(&mut checked.report, &args.set)?;
    // A managed server, or one whose host is not read, is changed through
    // its provider (check --emit), never by apply on this host.
    if let Some(p) = &checked.report.provider {
        if let Some(why) = &p.host_not_visible {
            return Err(crate::error::Fix::new(
                format!("apply changes this host, and the server's host is not visible here ({why})"),
                "write the provider's parameter files with innotune check --provider NAME --emit DIR, and apply them with the provider's tool",
            )
            .into());
        }
    }
    let facts = checked.facts();
    let advice = checked.advice();
    let files = crate::check::emit::files(host, facts, advice);
    let mut steps = plan::build(host, facts, advice, &files);
    let mut notes = Vec::new();
    for f in &files {
        match (&f.note, f.install) {
            (Some(n), false) if f.kind == "fstab" => notes.push(format!(
                "/etc/fstab is yours to edit ({n}): {}",
                f.content
                    .lines()
                    .filter(|l| !l.starts_with('#'))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            (Some(n), false) if f.kind != "systemd_unit" && f.kind != "udev" => {
                notes.push(format!("{} not installed: {n}", f.path))
            }
            (Some(n), true) => notes.push(format!("{}: {n}", f.path)),
            _ => {}
        }
    }
    for a in advice {
        for s in &a.settings {
            if let crate::check::rules::Setting::ServerVariable {
                name,
                value,
                dynamic: false,
                ..
            } = s
            {
                notes.push(format!(
                    "{name} = {value} is not dynamic on this server: it takes effect at the next restart (from the drop-in)"
                ));
            }
        }
        if a.finding.id.starts_with("server.durability.") {
            notes.push(format!(
                "{} = {} is a durability decision innotune leaves to you ({})",
                a.finding.subject.name, a.finding.observed, a.finding.id
            ));
        }
    }
    let pending = steps.iter().filter(|s| s.pending).count();
    let mut report = ApplyReport {
        path: checked.report.path.clone(),
        mode,
        findings: advice
            .iter()
            .filter(|a| a.finding.severity >= crate::finding::Severity::Warning)
            .count(),
        steps: Vec::new(),
        pending,
        applied: Vec::new(),
        journal: None,
        notes,
    };
    if mode != Mode::Apply || pending == 0 {
        report.steps = steps;
        return Ok(report);
    }
    let command = crate::journal::command_line();
    let guard = env.guard()?;
    let ap = applied::path();
    let mut old = applied::load(&ap)?;
    // A test hook: stop (until killed) after N changes, to prove a crash
    // mid-apply is undone by `innotune restore`.
    let pause_after: Option<usize> = std::env::var("INNOTUNE_APPLY_PAUSE_AFTER")
        .ok()
        .and_then(|v| v.parse().ok());
    let mut hooks: Vec<Hook> = Vec::new();
    for s in steps
        .iter_mut()
        .filter(|s| s.pending && s.blocked.is_none())
    {
        let Some(c) = s.change.take() else { continue };
        let t = c.target();
        if let Some(k) = old.iter().position(|e| e.change().target() == t) {
            let u = old[k].change().undo(false);
            if matches!(u.outcome, Outcome::Conflict { .. } | Outcome::Failed { .. }) {
                s.blocked = Some(format!(
                    "the earlier apply's change could not be undone first: {}",
                    u.outcome
                ));
                continue;
            }
            old.remove(k);
        }
        for h in c.after_apply() {
            if !hooks.contains(&h) {
                hooks.push(h);
            }
        }
        guard.apply(host, c)?;
        report.applied.push(t);
        if pause_after == Some(report.applied.len()) {
            eprintln!(
                "innotune: paused after {} change(s) (INNOTUNE_APPLY_PAUSE_AFTER)",
                report.applied.len()
            );
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }
    let mut all = old;
    all.extend(guard.entries());
    applied::save(&ap, all, &command)?;
    crate::journal::fault::step("applied journal written");
    guard.release()?;
    drop(guard);
    env.end_journal();
    if host.is_live() {
        for h in crate::change::run_hooks(&hooks) {
            if let Some(n) = h.note {
                report.notes.push(format!("{:?} {}: {n}", h.hook, h.status));
            }
        }
    }
    report.journal = Some(ap.display().to_string());
    report.steps = steps;
    Ok(report)
}
