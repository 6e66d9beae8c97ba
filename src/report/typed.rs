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
use crate::prove::ProveReport;
use crate::replay::ReplayReport;
use crate::sandbox::SandboxReport;
use crate::search::SearchReport;
use crate::slowlog::capture::CaptureReport;
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
    Prove(Box<ProveReport>),
    Bench(Box<BenchResult>),
    Oltp(Box<OltpReport>),
    Tune(Box<TuneReport>),
    /// tune's oltp-before.json / oltp-after.json.
    TuneOltp(Box<OltpSide>),
    Slowlog(Box<SlowlogReport>),
    /// `slowlog --capture`.
    Capture(Box<CaptureReport>),
    Replay(Box<ReplayReport>),
    Checksum(Box<ChecksumReport>),
    Trace(Box<TraceReport>),
    Merge(Box<MergeReport>),
    Apply(Box<ApplyReport>),
    Restore(Box<RestoreReport>),
    Sandbox(Box<SandboxReport>),
    /// `tune --search`.
    Search(Box<SearchReport>),
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
            ProveReport::COMMAND => Typed::Prove(de(result)?),
            SearchReport::COMMAND => Typed::Search(de(result)?),
            BenchResult::COMMAND => Typed::Bench(Box::new(BenchResult::from_value(result)?)),
            OltpReport::COMMAND => Typed::Oltp(de(result)?),
            TuneReport::COMMAND => Typed::Tune(de(result)?),
            OltpSide::COMMAND => Typed::TuneOltp(de(result)?),
            SlowlogReport::COMMAND => Typed::Slowlog(de(result)?),
            CaptureReport::COMMAND => Typed::Capture(de(result)?),
            ReplayReport::COMMAND => Typed::Replay(de(result)?),
            ChecksumReport::COMMAND => Typed::Checksum(de(result)?),
            TraceReport::COMMAND => Typed::Trace(de(result)?),
            MergeReport::COMMAND => Typed::Merge(de(result)?),
            ApplyReport::COMMAND => Typed::Apply(de(result)?),
            RestoreReport::COMMAND => Typed::Restore(de(result)?),
            SandboxReport::COMMAND => Typed::Sandbox(de(result)?),
            _ => Typed::Other(result),
        })
    }

    /// The command's own document (for [`Typed::Other`], the generic view;
    /// for slowlog, without the sample statements).
    pub fn document(&self) -> Document {
        match self {
            Typed::Probe(r) => r.document(),
            Typed::Check(r) => r.document(),
            Typed::Sweep(r) => r.document(),
            Typed::Prove(r) => r.document(),
            Typed::Search(r) => r.document(),
            Typed::Bench(r) => r.document(),
            Typed::Oltp(r) => r.document(),
            Typed::Tune(r) => r.document(),
            Typed::TuneOltp(r) => r.document(),
            // Statements carry literal values a page passed around should
            // not: the worst sample of each class stays in the JSON.
            Typed::Slowlog(r) => r.document_without_samples(),
            Typed::Capture(r) => r.document(),
            Typed::Replay(r) => r.document(),
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

impl Typed {
    /// The result as JSON again (what the command wrote, when the type is
    /// faithful: the round trip the tests check).
    pub fn to_value(&self) -> serde_json::Result<Value> {
        match self {
            Typed::Probe(r) => serde_json::to_value(r),
            Typed::Check(r) => serde_json::to_value(r),
            Typed::Sweep(r) => serde_json::to_value(r),
            Typed::Prove(r) => serde_json::to_value(r),
            Typed::Search(r) => serde_json::to_value(r),
            Typed::Bench(r) => serde_json::to_value(r),
            Typed::Oltp(r) => serde_json::to_value(r),
            Typed::Tune(r) => serde_json::to_value(r),
            Typed::TuneOltp(r) => serde_json::to_value(r),
            Typed::Slowlog(r) => serde_json::to_value(r),
            Typed::Capture(r) => serde_json::to_value(r),
            Typed::Replay(r) => serde_json::to_value(r),
            Typed::Checksum(r) => serde_json::to_value(r),
            Typed::Trace(r) => serde_json::to_value(r),
            Typed::Merge(r) => serde_json::to_value(r),
            Typed::Apply(r) => serde_json::to_value(r),
            Typed::Restore(r) => serde_json::to_value(r),
            Typed::Sandbox(r) => serde_json::to_value(r),
            Typed::Other(v) => Ok(v.clone()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn results() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
    }

    /// Every result file innotune wrote for these tests (see the README
    /// there): the command of its schema and its `result`.
    fn fixtures() -> Vec<(String, String, Value)> {
        let mut files: Vec<PathBuf> = Vec::new();
        for dir in [results(), results().join("tune")] {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "json") {
                    files.push(p);
                }
            }
        }
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                let schema = v["schema"].as_str().unwrap();
                let (command, major) = schema.rsplit_once('/').unwrap();
                assert_eq!(major, "2", "{}", p.display());
                (
                    p.strip_prefix(results()).unwrap().display().to_string(),
                    command.to_string(),
                    v["result"].clone(),
                )
            })
            .collect()
    }

    /// `a` and `b` are the same JSON; numbers equal within a relative 1e-12
    /// (a share written as percent and read back may differ in its last bit).
    fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let (kx, ky): (Vec<&String>, Vec<&String>) =
                    (x.keys().collect(), y.keys().collect());
                if kx != ky {
                    return Err(format!("{at}: keys {kx:?} became {ky:?}"));
                }
                for (k, v) in x {
                    same(v, &y[k], &format!("{at}.{k}"))?;
                }
                Ok(())
            }
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return Err(format!("{at}: {} items became {}", x.len(), y.len()));
                }
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    same(v, w, &format!("{at}[{i}]"))?;
                }
                Ok(())
            }
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                if x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()) {
                    Ok(())
                } else {
                    Err(format!("{at}: {x} became {y}"))
                }
            }
            _ if a == b => Ok(()),
            _ => Err(format!("{at}: {a} became {b}")),
        }
    }

    /// Read back, write again: the same JSON (nothing dropped, no unit lost
    /// on the way), and read again: the same document.
    #[test]
    fn every_result_reads_back_writes_the_same_and_renders_the_same() {
        let fx = fixtures();
        assert!(fx.len() >= 20, "{} fixtures", fx.len());
        for (name, command, result) in fx {
            let typed = Typed::read(&command, result.clone())
                .unwrap_or_else(|e| panic!("{name}: does not read back: {e}"));
            assert!(
                !matches!(typed, Typed::Other(_)),
                "{name}: no type for {command}"
            );
            let again = typed.to_value().unwrap();
            if let Err(e) = same(&result, &again, "result") {
                panic!("{name}: written again differs: {e}");
            }
            let twice = Typed::read(&command, again).unwrap();
            assert_eq!(
                format!("{:?}", typed.document()),
                format!("{:?}", twice.document()),
                "{name}: the document changed on the round trip"
            );
        }
    }

    /// Every schema innotune writes has a result here, so a type that stops
    /// reading back fails a test.
    #[test]
    fn every_command_has_a_result_to_read_back() {
        let have: Vec<String> = fixtures().into_iter().map(|(_, c, _)| c).collect();
        for c in [
            ProbeReport::COMMAND,
            CheckReport::COMMAND,
            SweepReport::COMMAND,
            ProveReport::COMMAND,
            SearchReport::COMMAND,
            BenchResult::COMMAND,
            OltpReport::COMMAND,
            TuneReport::COMMAND,
            OltpSide::COMMAND,
            SlowlogReport::COMMAND,
            CaptureReport::COMMAND,
            ReplayReport::COMMAND,
            ChecksumReport::COMMAND,
            TraceReport::COMMAND,
            MergeReport::COMMAND,
            ApplyReport::COMMAND,
            RestoreReport::COMMAND,
            SandboxReport::COMMAND,
        ] {
            assert!(have.iter().any(|h| h == c), "no result of {c}");
        }
        // bench's three shapes: a run, the presets, a survey.
        let bench: Vec<Typed> = fixtures()
            .into_iter()
            .filter(|(_, c, _)| c == "bench")
            .map(|(_, c, v)| Typed::read(&c, v).unwrap())
            .collect();
        for want in ["run", "presets", "survey"] {
            assert!(
                bench.iter().any(|t| matches!(
                    (t, want),
                    (Typed::Bench(b), "run") if matches!(**b, BenchResult::Run(_))
                ) || matches!(
                    (t, want),
                    (Typed::Bench(b), "presets") if matches!(**b, BenchResult::Presets(_))
                ) || matches!(
                    (t, want),
                    (Typed::Bench(b), "survey") if matches!(**b, BenchResult::Survey(_))
                )),
                "no bench {want}"
            );
        }
    }

    #[test]
    fn a_result_that_does_not_read_names_the_field() {
        let (_, _, mut probe) = fixtures()
            .into_iter()
            .find(|(n, _, _)| n == "probe.json")
            .unwrap();
        probe["stack"][0].as_object_mut().unwrap().remove("depth");
        let e = Typed::read("probe", probe).unwrap_err().to_string();
        assert!(e.starts_with("stack[0]"), "{e}");
        assert!(e.contains("missing field `depth`"), "{e}");
    }

    #[test]
    fn an_unknown_command_gets_its_top_level_values() {
        let v = serde_json::json!({"widgets": [1, 2], "name": "x", "why": {"unknown": "no file"}});
        let t = Typed::read("frobnicate", v).unwrap();
        let d = format!("{:?}", t.document());
        for want in ["2 item(s)", "\"x\"", "unknown (no file)"] {
            assert!(d.contains(want), "{want} in {d}");
        }
    }
}
