//! What `innotune bench` returns: the typed reports (the `result` of the
//! JSON envelope, docs/json-bench.md). Their documents are built in
//! [`super::render`].

use super::presets;
use super::result::WorkloadResult;
use serde::Serialize;

/// A run (and/or a `--cleanup`) of `innotune bench`.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct BenchReport {
    /// Where the job files live (the device for `--filename DEV`).
    pub directory: String,
    /// The run; absent for `--cleanup` alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<WorkloadResult>,
    /// Files `--cleanup` removed.
    pub removed: Vec<String>,
    /// Why the run's I/O did not (all) reach a device: RAM filesystem, a
    /// loop device through the page cache, device counters far below what
    /// the jobs moved. Empty (absent) when it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_on_device: Vec<super::reach::NotOnDevice>,
    /// The signal that ended the run early (SIGINT, SIGTERM): the exit
    /// code is 128 + its number once the partial report is written. Not
    /// JSON (`result.interrupted` says it there).
    #[serde(skip)]
    pub signal: Option<i32>,
}

/// `--list-presets`.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct PresetList {
    pub presets: Vec<PresetInfo>,
    /// Measured window of a preset run without `--runtime`/`--io_size`.
    pub default_runtime_s: f64,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct PresetInfo {
    pub name: String,
    pub models: String,
    pub jobs: Vec<PresetJob>,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct PresetJob {
    pub name: String,
    /// fio-style settings, exactly what runs (`rw=randread bs=16k …`).
    pub options: String,
}

impl PresetList {
    pub fn build() -> anyhow::Result<PresetList> {
        let presets = presets::PRESETS
            .iter()
            .map(|p| {
                Ok(PresetInfo {
                    name: p.name.into(),
                    models: p.models.into(),
                    jobs: p
                        .jobs()?
                        .iter()
                        .map(|j| PresetJob {
                            name: j.name.clone(),
                            options: j.describe(),
                        })
                        .collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(PresetList {
            presets,
            default_runtime_s: presets::DEFAULT_RUNTIME.as_secs_f64(),
        })
    }
}

/// Any of bench's three results (`bench/2`), read back from JSON by the
/// key that tells them apart: `survey` (`--survey`), `presets`
/// (`--list-presets`), else a run or a cleanup. Renders through each one's
/// own document.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum BenchResult {
    Run(BenchReport),
    Presets(PresetList),
    Survey(super::survey::SurveyReport),
}

impl BenchResult {
    /// Read `result` of a `bench/2` envelope.
    pub fn from_value(
        v: serde_json::Value,
    ) -> Result<BenchResult, serde_path_to_error::Error<serde_json::Error>> {
        if v.get("survey").is_some() {
            serde_path_to_error::deserialize(v).map(BenchResult::Survey)
        } else if v.get("presets").is_some() {
            serde_path_to_error::deserialize(v).map(BenchResult::Presets)
        } else {
            serde_path_to_error::deserialize(v).map(BenchResult::Run)
        }
    }
}

impl crate::export::Report for BenchResult {
    const COMMAND: &'static str = "bench";

    fn document(&self) -> crate::export::Document {
        match self {
            BenchResult::Run(r) => r.document(),
            BenchResult::Presets(p) => p.document(),
            BenchResult::Survey(s) => s.document(),
        }
    }
}
