//! One result read back into its command's own typed report, so `innotune
//! report` renders it through that command's [`Report::document`] — the
//! same sections and figures as the command's `--format html` — instead of
//! a second renderer of the JSON.
//!
//! Dispatch is on the envelope's schema command. A command this innotune
//! does not know (a newer innotune's, same envelope major) gets a minimal
//! generic view of its top-level values; a known command whose result does
//! not read back (written by another innotune version) is refused with one
//! line naming the field, see [`super::load`].

use crate::apply::ApplyReport;
use crate::bench::report::BenchResult;
use crate::check::report::CheckReport;
use crate::checksum::report::ChecksumReport;
use crate::export::doc::{Document, KeyValues, Tone};
use crate::export::Report;
use crate::journal::RestoreReport;
use crate::merge::MergeReport;
use crate::oltp::OltpReport;
use crate::probe::ProbeReport;
use crate::sandbox::SandboxReport;
use crate::slowlog::report::SlowlogReport;
use crate::sweep::SweepReport;
use crate::trace::TraceReport;
use crate::tune::report::{OltpSide, TuneReport};
use serde_json::Value;

/// A result as its command's typed report.
#[derive(Debug)]
pub enum Typed {
    Probe(Box<ProbeReport>),
    Check(Box<CheckReport>),
    Sweep(Box<SweepReport>),
    Bench(Box<BenchResult>),
    Oltp(Box<OltpReport>),
    Tune(Box<TuneReport>),
    /// tune's oltp-before.json / oltp-after.json.
    TuneOltp(Box<OltpSide>),
    Slowlog(Box<SlowlogReport>),
    Checksum(Box<ChecksumReport>),
    Trace(Box<TraceReport>),
    Merge(Box<MergeReport>),
    Apply(Box<ApplyReport>),
    Restore(Box<RestoreReport>),
    Sandbox(Box<SandboxReport>),
    /// A command this innotune has no type for: the `result` object as is.
    Other(Value),
}

/// Why a result did not read back: the path of the field and serde's words.
pub type ReadError = serde_path_to_error::Error<serde_json::Error>;

fn de<T: serde::de::DeserializeOwned>(v: Value) -> Result<Box<T>, ReadError> {
    serde_path_to_error::deserialize(v).map(Box::new)
}

impl Typed {
    /// Read `result` of a `<command>/2` envelope.
    pub fn read(command: &str, result: Value) -> Result<Typed, ReadError> {
        Ok(match command {
            ProbeReport::COMMAND => Typed::Probe(de(result)?),
            CheckReport::COMMAND => Typed::Check(de(result)?),
            SweepReport::COMMAND => Typed::Sweep(de(result)?),
            BenchResult::COMMAND => Typed::Bench(Box::new(BenchResult::from_value(result)?)),
            OltpReport::COMMAND => Typed::Oltp(de(result)?),
            TuneReport::COMMAND => Typed::Tune(de(result)?),
            OltpSide::COMMAND => Typed::TuneOltp(de(result)?),
            SlowlogReport::COMMAND => Typed::Slowlog(de(result)?),
            ChecksumReport::COMMAND => Typed::Checksum(de(result)?),
            TraceReport::COMMAND => Typed::Trace(de(result)?),
            MergeReport::COMMAND => Typed::Merge(de(result)?),
            ApplyReport::COMMAND => Typed::Apply(de(result)?),
            RestoreReport::COMMAND => Typed::Restore(de(result)?),
            SandboxReport::COMMAND => Typed::Sandbox(de(result)?),
            _ => Typed::Other(result),
        })
    }

    /// The command's own document (for [`Typed::Other`], the generic view).
    pub fn document(&self) -> Document {
        match self {
            Typed::Probe(r) => r.document(),
            Typed::Check(r) => r.document(),
            Typed::Sweep(r) => r.document(),
            Typed::Bench(r) => r.document(),
            Typed::Oltp(r) => r.document(),
            Typed::Tune(r) => r.document(),
            Typed::TuneOltp(r) => r.document(),
            Typed::Slowlog(r) => r.document(),
            Typed::Checksum(r) => r.document(),
            Typed::Trace(r) => r.document(),
            Typed::Merge(r) => r.document(),
            Typed::Apply(r) => r.document(),
            Typed::Restore(r) => r.document(),
            Typed::Sandbox(r) => r.document(),
            Typed::Other(v) => generic(v),
        }
    }
}

/// A value as one line: strings as they are, `{"unknown": r}` as
/// `unknown (r)`, arrays and objects by their size.
fn short(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Null => "—".into(),
        Value::Array(a) => format!("{} item(s)", a.len()),
        Value::Object(o) => match o.get("unknown") {
            Some(Value::String(r)) if o.len() == 1 => format!("unknown ({r})"),
            _ => format!("{} field(s)", o.len()),
        },
    }
}

/// A result of a command this innotune does not know: its top-level values.
fn generic(r: &Value) -> Document {
    let mut d = Document::new("");
    d.note(
        Tone::Plain,
        "No view for this command in this innotune: its top-level values follow (every field is in the JSON).",
    );
    let mut kv = KeyValues::new();
    if let Some(o) = r.as_object() {
        for (k, v) in o {
            kv.add(k.as_str(), short(v));
        }
    }
    d.key_values(kv);
    d
}
