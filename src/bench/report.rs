//! What `innotune bench` returns: the typed reports (the `result` of the
//! JSON envelope, docs/json-bench.md). Their documents are built in
//! [`super::render`].

use super::presets;
use super::result::WorkloadResult;
use serde::Serialize;

/// A run (and/or a `--cleanup`) of `innotune bench`.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// Where the job files live (the device for `--filename DEV`).
    pub directory: String,
    /// The run; absent for `--cleanup` alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<WorkloadResult>,
    /// Files `--cleanup` removed.
    pub removed: Vec<String>,
}

/// `--list-presets`.
#[derive(Debug, Serialize)]
pub struct PresetList {
    pub presets: Vec<PresetInfo>,
    /// Measured window of a preset run without `--runtime`/`--io_size`.
    pub default_runtime_s: f64,
}

#[derive(Debug, Serialize)]
pub struct PresetInfo {
    pub name: String,
    pub models: String,
    pub jobs: Vec<PresetJob>,
}

#[derive(Debug, Serialize)]
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
