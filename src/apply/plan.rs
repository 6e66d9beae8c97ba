//! From advice to an ordered list of changes: each setting's runtime change
//! (sysfs, /proc/sys, SET GLOBAL/PERSIST) and the installation of every
//! emitted file, each marked pending or already in effect.

use crate::change::{Change, CreatedDir, CreatedFile, EditedFile};
use crate::check::emit::{self, Emitted};
use crate::check::facts::Facts;
use crate::check::rules::{Advice, Setting};
use crate::host::Host;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One change of the plan.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Step {
    /// `runtime` or `file`.
    pub kind: Cow<'static, str>,
    /// What it touches (a host path, `name@socket`).
    pub target: String,
    /// One line for people.
    pub describe: String,
    /// The finding ids it fixes (empty for a file carrying earlier settings).
    pub findings: Vec<String>,
    /// False when the host already holds it.
    pub pending: bool,
    /// For files: a unified diff of what would change; for values: `old → new`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// It cannot be applied (its file failed validation, its state is unreadable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    #[serde(skip)]
    pub change: Option<Box<dyn Change>>,
}

/// The change that installs an emitted file: a [`CreatedFile`] where
/// nothing is, else an [`EditedFile`] of a file an earlier innotune wrote
/// (one that does not start with [`emit::MARKER`] is refused when
/// applied, never taken over).
fn file_change(host: &Host, path: &str, symlink: Option<&str>, content: &str) -> Box<dyn Change> {
    let exists = std::fs::symlink_metadata(host.path(path)).is_ok();
    match (exists, symlink) {
        (false, Some(t)) => Box::new(CreatedFile::symlink(path, t)),
        (false, None) => Box::new(CreatedFile::new(path, content.to_string())),
        (true, Some(t)) => {
            let mut e = EditedFile::new(path, format!("symlink:{t}"));
            e.require_prefix = Some(emit::MARKER.into());
            Box::new(e)
        }
        (true, None) => {
            let mut e = EditedFile::new(path, content.to_string());
            e.require_prefix = Some(emit::MARKER.into());
            Box::new(e)
        }
    }
}

/// The plan: runtime changes first (schedulers before other attributes,
/// server variables in an order the server accepts), then files.
pub fn build(host: &Host, f: &Facts, advice: &[Advice], files: &[Emitted]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    // nr_requests of a device whose scheduler changes goes with the switch.
    let mut nr_with_sched: BTreeMap<String, String> = BTreeMap::new();
    for a in advice {
        let scheds: Vec<&String> = a
            .settings
            .iter()
            .filter_map(|s| match s {
                Setting::Queue { device, attr, .. } if attr == "scheduler" => Some(device),
                _ => None,
            })
            .collect();
        for s in &a.settings {
            if let Setting::Queue {
                device,
                attr,
                value,
            } = s
            {
                if attr == "nr_requests" && scheds.contains(&device) {
                    nr_with_sched.insert(device.clone(), value.clone());
                }
            }
        }
    }
    let mut by_target: BTreeMap<String, usize> = BTreeMap::new();
    for a in advice {
        for s in &a.settings {
            if matches!(s, Setting::Queue { device, attr, .. } if attr == "nr_requests" && nr_with_sched.contains_key(device))
            {
                continue;
            }
            let nr = match s {
                Setting::Queue { device, .. } => nr_with_sched.get(device).map(String::as_str),
                _ => None,
            };
            let Some(c) = s.runtime_change(f, nr) else {
                continue;
            };
            let t = c.target();
            if let Some(&i) = by_target.get(&t) {
                if !steps[i].findings.contains(&a.finding.id) {
                    steps[i].findings.push(a.finding.id.clone());
                }
                continue;
            }
            by_target.insert(t.clone(), steps.len());
            steps.push(Step {
                kind: "runtime".into(),
                target: t,
                describe: c.describe(),
                findings: vec![a.finding.id.clone()],
                pending: true,
                diff: String::new(),
                blocked: None,
                change: Some(c),
            });
        }
    }
    order_runtime(f, &mut steps);
    for e in files.iter().filter(|e| e.install) {
        let parent = std::path::Path::new(&e.path)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let creatable = parent.ends_with(".d") || parent.ends_with(".wants");
        if creatable && !host.exists(&parent) && host.exists("/etc/systemd/system") {
            let c: Box<dyn Change> = Box::new(CreatedDir::new(&parent));
            steps.push(Step {
                kind: "file".into(),
                target: parent.clone(),
                describe: c.describe(),
                findings: Vec::new(),
                pending: true,
                diff: String::new(),
                blocked: None,
                change: Some(c),
            });
        } else if !host.exists(&parent) {
            continue;
        }
        let c = file_change(host, &e.path, e.symlink.as_deref(), &e.content);
        let old = host.read(&e.path).unwrap_or_default();
        let diff = if e.symlink.is_some() {
            String::new()
        } else {
            similar::TextDiff::from_lines(&old, &e.content)
                .unified_diff()
                .header(&format!("a{}", e.path), &format!("b{}", e.path))
                .to_string()
        };
        let blocked = crate::check::validate::check(host, e)
            .filter(|v| !v.ok)
            .map(|v| format!("{} rejects it: {}", v.tool, v.detail));
        steps.push(Step {
            kind: "file".into(),
            target: e.path.clone(),
            describe: c.describe(),
            findings: advice
                .iter()
                .filter(|a| file_carries(e, a))
                .map(|a| a.finding.id.clone())
                .collect(),
            pending: true,
            diff,
            blocked,
            change: Some(c),
        });
    }
    for s in &mut steps {
        if let Some(c) = &s.change {
            match c.is_applied(host) {
                Ok(applied) => s.pending = !applied,
                Err(e) if s.blocked.is_none() => s.blocked = Some(crate::error::one_line(&e)),
                Err(_) => {}
            }
        }
        if s.kind == "runtime" {
            s.diff = s.describe.clone();
        }
    }
    steps
}

/// Does emitted file `e` carry a setting of `a`?
fn file_carries(e: &Emitted, a: &Advice) -> bool {
    let cpufreq = e.path == emit::TMPFILES_CPUFREQ;
    a.settings.iter().any(|s| {
        if matches!(s, Setting::CpuGovernor { .. }) != cpufreq {
            return false;
        }
        matches!(
            (e.kind.as_ref(), s),
            (
                "udev" | "systemd_unit",
                Setting::Queue { .. } | Setting::NetQueue { .. }
            ) | ("sysctl", Setting::Sysctl { .. })
                | (
                    "tmpfiles",
                    Setting::Thp { .. } | Setting::CpuGovernor { .. }
                )
                | ("mysqld_dropin", Setting::ServerVariable { .. })
                | ("systemd_dropin", Setting::Nofile { .. })
        )
    })
}

/// Server variables in an order the server accepts: a `_max` variable
/// that goes up is set before its base, one that goes down after it (the
/// server keeps max ≥ base and would adjust the other).
fn order_runtime(f: &Facts, steps: &mut [Step]) {
    let rank = |s: &Step| -> (u8, i8) {
        let t = &s.target;
        if t.ends_with("/queue/scheduler") {
            return (0, 0);
        }
        if !t.contains('@') {
            return (1, 0);
        }
        let name = t.split('@').next().unwrap_or("");
        let going_up = f.server.as_ref().and_then(|srv| {
            let now = srv.var_u64(name)? as f64;
            let new: f64 = s.describe.rsplit(' ').next()?.parse().ok()?;
            Some(new > now)
        });
        match (name.ends_with("_max"), going_up) {
            (true, Some(true)) => (2, -1),
            (true, Some(false)) => (2, 1),
            _ => (2, 0),
        }
    };
    steps.sort_by_key(|s| rank(s));
}

/// Files of a plan (for `check --emit` too).
pub fn emitted(host: &Host, f: &Facts, advice: &[Advice]) -> Vec<Emitted> {
    emit::files(host, f, advice)
}
