//! The `sandbox` command's typed report. (Its [`crate::command::Command`]
//! impl is `check::sandbox`: `--profile after` runs check's rules.)

use super::State;
use crate::error::exit;
use serde::Serialize;
use std::borrow::Cow;
use std::path::Path;

/// What `innotune sandbox start|stop|status` reports.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SandboxReport {
    pub action: Cow<'static, str>,
    pub dir: String,
    pub running: bool,
    /// Present while the server runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub port: u16,
    pub socket: String,
    pub version: String,
    pub profile: String,
    pub kept: bool,
    /// `status`: DIR does not exist (a plain `stop` removed it, or it was
    /// never started); the other fields are empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
    /// `start --from-live`: what was copied, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied: Option<Copied>,
    /// `start --profile after`: the server variables check recommended for
    /// a `before` server here, which `after` sets on top of `before`
    /// (empty: check recommended none, so `after` is `before`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advised: Option<Vec<Advised>>,
}

/// One server variable `after` sets because check recommends it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Advised {
    pub name: String,
    pub value: String,
    /// The id of check's finding (`server.flush_method`, …).
    pub finding: String,
}

/// The live server's data copied into the sandbox.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct Copied {
    /// `backup` (mariadb-backup) or `logical` (mysqldump).
    pub method: super::live::CopyMethod,
    /// The non-system schemas (the backup copies the system ones too).
    pub schemas: Vec<String>,
    /// Their data and indexes, as information_schema.tables says.
    pub bytes: u64,
    /// Where the live server was reached (no password).
    pub from: String,
}

impl SandboxReport {
    pub fn new(action: &'static str, dir: &Path, st: &State, running: bool) -> SandboxReport {
        SandboxReport {
            action: action.into(),
            dir: dir.display().to_string(),
            running,
            pid: running.then_some(st.pid),
            port: st.port,
            socket: super::socket_path(dir).display().to_string(),
            version: st.version.clone(),
            profile: st.profile.clone(),
            kept: st.keep,
            gone: false,
            copied: None,
            advised: None,
        }
    }
}

impl SandboxReport {
    /// `status` of a sandbox whose server is not running finds what it
    /// looks for missing: exit 1.
    pub fn code(&self) -> i32 {
        if self.action == "status" && !self.running {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}
