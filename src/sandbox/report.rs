//! The `sandbox` command: its typed report, and options → its [`Command`] impl.

use super::{cli, read_state, socket_path, Profile, Sandbox, SandboxOpts, State};
use crate::command::{Command, Env};
use crate::db::ConnSpec;
use crate::error::exit;
use anyhow::Result;
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

impl SandboxReport {
    fn new(action: &'static str, dir: &Path, st: &State, running: bool) -> SandboxReport {
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

/// `innotune sandbox`: start, stop or inspect the sandbox the arguments name.
impl Command for cli::SandboxArgs {
    type Report = SandboxReport;

    fn execute(_env: &Env, args: Self) -> Result<SandboxReport> {
        act(args)
    }
}

fn act(args: cli::SandboxArgs) -> Result<SandboxReport> {
    use cli::SandboxAction::*;
    match args.action {
        Start(a) => {
            let opts = SandboxOpts {
                dir: a.dir.dir.clone(),
                profile: Profile::parse(&a.profile)?,
                port: a.port,
                keep: a.keep,
                timeout: Duration::from_secs(a.timeout),
            };
            let sb = Sandbox::start(opts)?;
            let dir = sb.dir().to_path_buf();
            let st = sb.detach();
            Ok(SandboxReport::new("start", &dir, &st, true))
        }
        Stop(a) => {
            let dir = absolute(&a.dir.dir)?;
            let mut sb = Sandbox::attach(&dir)?;
            let running = sb.is_running();
            // `--keep` on this stop, or `start --keep` for the server that
            // is running now. A sandbox already stopped and kept is removed
            // by a plain `stop`: keeping is what a stop does to a running
            // server, not a property that sticks to DIR.
            let keep = a.keep || (running && sb.state.keep);
            sb.set_keep(keep);
            let st = sb.state.clone();
            sb.stop()?;
            let mut r = SandboxReport::new("stop", &dir, &st, false);
            r.kept = keep;
            Ok(r)
        }
        Status(a) => {
            let dir = absolute(&a.dir)?;
            let mut st = read_state(&dir)?;
            let running = st.server_running(&dir);
            if running {
                // DIR's own socket, never one the manifest names.
                if let Ok(mut c) = ConnSpec::socket(socket_path(&dir), "root").connect() {
                    if let Ok(v) = crate::db::server_version(&mut c) {
                        st.version = v.raw;
                    }
                }
            }
            Ok(SandboxReport::new("status", &dir, &st, running))
        }
    }
}

fn absolute(p: &Path) -> Result<PathBuf> {
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    })
}
