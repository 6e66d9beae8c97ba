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

/// `--set NAME=VALUE`: each replaces check's advice for that server
/// variable with advice of its own (the server must have been reached).
fn set_overrides(report: &mut crate::check::report::CheckReport, sets: &[String]) -> Result<()> {
    use crate::check::rules::{Advice, Setting, SERVER_VARIABLES};
    use crate::finding::{Finding, Layer, Severity, Source, Subject, SubjectKind};
    for s in sets {
        let Some((name, value)) = s.split_once('=').map(|(a, b)| (a.trim(), b.trim())) else {
            return Err(crate::error::Fix::new(
                format!("--set {s:?} is not NAME=VALUE"),
                "write it as --set innodb_io_capacity=2000",
            )
            .into());
        };
        if !SERVER_VARIABLES.contains(&name)
            || !crate::change::plain_value(value)
            || value.is_empty()
        {
            return Err(crate::error::Fix::new(
                format!("--set {name}={value}: not a server variable and value innotune sets"),
                format!("use one of {}", SERVER_VARIABLES.join(", ")),
            )
            .into());
        }
        let Some(server) = report.facts.server.as_ref() else {
            return Err(crate::error::Fix::new(
                format!("--set {name}: no server was reached to set it on"),
                "give the connection options (--socket or --host, --user)",
            )
            .into());
        };
        let observed = server.var(name).unwrap_or("(none)").to_string();
        let reason = "given with apply --set (tune --search proves such values against the current settings)";
        let setting = Setting::var(server, name, value, reason);
        for a in &mut report.findings {
            a.settings
                .retain(|x| !matches!(x, Setting::ServerVariable { name: n, .. } if n == name));
        }
        let mut a = Advice::new(
            Finding::new(
                "server.set",
                Severity::Notice,
                Layer::Server,
                Subject::new(SubjectKind::ServerVariable, name),
                observed,
                reason,
            )
            .recommend(value)
            .evidence(Source::Observed, "apply --set"),
        );
        a.settings.push(setting);
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
