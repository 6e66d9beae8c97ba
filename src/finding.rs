//! Advice as data: a [`Finding`] says what was observed, what it should be,
//! why, on what evidence, and which [`Change`] would fix it.
//!
//! Why typed findings instead of free-text notes: `check` sorts them worst
//! first and groups them by layer, `apply` turns their changes into a plan,
//! the Prometheus exporter counts them by id, a fleet report groups the same
//! id across hosts, and tests assert on ids and values rather than wording.
//! The id is the stable part (`storage.scheduler.class`); wording may change.

use crate::change::Change;
use serde::{Deserialize, Serialize};

/// How much a finding matters. Ordered: `Info < Notice < Warning < Critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to do.
    #[default]
    Info,
    /// A better setting exists; the current one is not harmful.
    Notice,
    /// Costs performance or safety on a database host: fix it.
    Warning,
    /// Data at risk or a setting that defeats the server.
    Critical,
}

impl Severity {
    pub fn as_str(&self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The layer of the stack a finding is about; reports group by it, in this
/// order (bottom of the stack first).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Block devices, RAID, schedulers, queues.
    Storage,
    /// Filesystems and mounts.
    Filesystem,
    /// Kernel and process settings: sysctls, THP, limits, NUMA, NICs.
    #[default]
    Os,
    /// The MySQL/MariaDB server and InnoDB.
    Server,
    /// innotune itself (an unfinished journal, an unreadable file).
    Innotune,
}

impl Layer {
    pub fn as_str(&self) -> &'static str {
        match self {
            Layer::Storage => "storage",
            Layer::Filesystem => "filesystem",
            Layer::Os => "os",
            Layer::Server => "server",
            Layer::Innotune => "innotune",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Subject {
    pub kind: SubjectKind,
    /// `vda`, `/var/lib/mysql`, `vm.swappiness`, `innodb_buffer_pool_size`, …
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectKind {
    Device,
    Mount,
    Path,
    Sysctl,
    KernelParameter,
    Process,
    ServerVariable,
    File,
    Host,
    /// A class of statements in a slow query log, named by pt-query-digest's
    /// short id (`0x…`).
    Query,
}

impl Subject {
    pub fn new(kind: SubjectKind, name: impl Into<String>) -> Subject {
        Subject {
            kind,
            name: name.into(),
        }
    }
}

/// Where the evidence for a finding comes from, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Measured on this host (bench, sweep, a sampled status window).
    Measured,
    /// Read from this host's state and compared with a documented rule.
    Observed,
    /// A rule of thumb from vendor guides or the tools innotune replaces.
    RuleOfThumb,
}

/// Why innotune believes a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub source: Source,
    /// The numbers or the rule, in a sentence.
    pub detail: String,
    /// Where the rule is documented (a manual page, an upstream doc URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// One piece of advice.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id: `<layer>.<topic>[.<detail>]`, e.g. `storage.scheduler.class`.
    pub id: String,
    pub severity: Severity,
    pub layer: Layer,
    pub subject: Subject,
    /// What is there now, as the host shows it.
    pub observed: String,
    /// The value innotune recommends; `None` when the finding only informs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended: Option<String>,
    /// One or two sentences: why it matters.
    pub reason: String,
    pub evidence: Evidence,
    /// The change that would fix it, when innotune can make it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Box<dyn Change>>,
    /// What the change was measured to do (tune's before/after: one entry
    /// per workload × threads it was tried on). Absent when not measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<Measurement>,
    /// Why it was not measured (rule of thumb only; not measurable on a
    /// sandbox; durability trade-off not allowed). Absent when measured, or
    /// when nothing tried to measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

/// One measurement of a finding's change: the ratio after/before of a
/// workload's throughput at a thread count, with its interval, the exact
/// test's p-value, the rounds, and the verdict word (`faster`, `slower`,
/// `no_difference`, `too_few_rounds`, as `stats::Effect` serialises it: the
/// word is kept as text here so the vocabulary layer needs no statistics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub workload: String,
    pub threads: u32,
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p: f64,
    pub rounds: u32,
    pub verdict: String,
}

impl Measurement {
    /// `oltp_read_only at 8 threads: 1.234× (CI 1.10–1.35), faster, p 0.029, 4 rounds`.
    pub fn line(&self) -> String {
        format!(
            "{} at {} thread(s): {:.3}× after/before (95 % CI {:.3}–{:.3}), {}, p {:.3}, {} rounds",
            self.workload,
            self.threads,
            self.ratio,
            self.ci_low,
            self.ci_high,
            self.verdict_words(),
            self.p,
            self.rounds
        )
    }

    /// The verdict as reports show it.
    pub fn verdict_words(&self) -> &str {
        match self.verdict.as_str() {
            "no_difference" => "no measurable difference",
            "too_few_rounds" => "too few rounds",
            v => v,
        }
    }

    /// Whether the verdict claims a difference (colour only these).
    pub fn claims(&self) -> bool {
        matches!(self.verdict.as_str(), "faster" | "slower")
    }
}

impl Finding {
    /// A finding with the required parts; refine with the builder methods.
    pub fn new(
        id: impl Into<String>,
        severity: Severity,
        layer: Layer,
        subject: Subject,
        observed: impl Into<String>,
        reason: impl Into<String>,
    ) -> Finding {
        Finding {
            id: id.into(),
            severity,
            layer,
            subject,
            observed: observed.into(),
            recommended: None,
            reason: reason.into(),
            evidence: Evidence {
                source: Source::Observed,
                detail: String::new(),
                reference: None,
            },
            change: None,
            measured: Vec::new(),
            not_measured: None,
        }
    }

    pub fn recommend(mut self, v: impl Into<String>) -> Finding {
        self.recommended = Some(v.into());
        self
    }

    pub fn evidence(mut self, source: Source, detail: impl Into<String>) -> Finding {
        self.evidence.source = source;
        self.evidence.detail = detail.into();
        self
    }

    pub fn reference(mut self, r: impl Into<String>) -> Finding {
        self.evidence.reference = Some(r.into());
        self
    }

    pub fn fix(mut self, c: impl Change + 'static) -> Finding {
        self.change = Some(Box::new(c));
        self
    }
}

/// Sort worst first, then by layer (bottom of the stack first), id and
/// subject, so the same state always prints in the same order.
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.layer.cmp(&b.layer))
            .then(a.id.cmp(&b.id))
            .then(a.subject.name.cmp(&b.subject.name))
    });
}

/// The worst severity present, if any.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}
