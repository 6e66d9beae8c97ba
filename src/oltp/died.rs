//! Telling "the server died" from "the connection was lost": a run whose
//! server is killed mid-way (SIGKILL, the OOM killer, a crash) otherwise
//! ends on whatever its client saw last (a refused reconnect, a broken
//! pipe) and advises starting the server. Knowing the server's process
//! (its pid and start time, so a recycled pid is not mistaken for it), a
//! failed run is checked against it and, if it is gone, the error says
//! so, with how it ended when innotune itself started it.

use crate::db::ConnSpec;
use crate::error::Fix;
use crate::host::Host;
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};

/// A server process on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerProcess {
    pub pid: u32,
    /// /proc/PID/stat's start time, to tell the process from a later one
    /// with the same pid.
    start_ticks: u64,
}

/// Signal names for the ways a server is usually ended (any other is
/// given by number).
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

impl ServerProcess {
    /// The process `pid`, if it is running now.
    pub fn of_pid(pid: u32) -> Option<ServerProcess> {
        let start_ticks = crate::model::process::live_start_ticks(&Host::live(), pid)?;
        Some(ServerProcess { pid, start_ticks })
    }

    /// The server behind `conn`, when `spec` reaches it on this machine (a
    /// Unix socket, or a loopback address): the pid in its `@@pid_file`,
    /// if that process is a mysqld or mariadbd. None when it cannot be
    /// told (a remote server, an unreadable pid file).
    pub fn of_conn(conn: &mut mysql::Conn, spec: &ConnSpec) -> Option<ServerProcess> {
        let local = spec.socket.is_some()
            || matches!(spec.host.as_str(), "127.0.0.1" | "::1" | "localhost");
        if !local {
            return None;
        }
        let (pid_file, datadir): (Option<String>, Option<String>) = conn
            .query_first("SELECT @@pid_file, @@datadir")
            .ok()
            .flatten()?;
        let pid_file = PathBuf::from(pid_file?);
        // A relative pid file is relative to the datadir.
        let pid_file = match datadir {
            Some(d) if pid_file.is_relative() => Path::new(&d).join(pid_file),
            _ => pid_file,
        };
        let pid: u32 = std::fs::read_to_string(pid_file)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let host = Host::live();
        let comm = crate::model::process::comm(&host, pid).ok()?;
        if !matches!(comm.trim(), "mysqld" | "mariadbd") {
            return None;
        }
        ServerProcess::of_pid(pid)
    }

    /// How it ended, once it has (None while it runs): `killed by
    /// SIGKILL` or `exited with status N` when it is this process's
    /// child (looked at without reaping it: whoever waits for it still
    /// can), else that it is no longer running.
    pub fn ended(&self) -> Option<String> {
        let now = crate::model::process::live_start_ticks(&Host::live(), self.pid);
        if now == Some(self.start_ticks) {
            return None;
        }
        use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
        let peek = Pid::from_raw(self.pid as i32).and_then(|p| {
            waitid(
                WaitId::Pid(p),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
            )
            .ok()
            .flatten()
        });
        Some(match peek {
            Some(st) => match (st.terminating_signal(), st.exit_status()) {
                (Some(sig), _) => format!("killed by {}", signal_name(sig)),
                (None, Some(code)) => format!("exited with status {code}"),
                _ => "it is no longer running".to_string(),
            },
            None => "it is no longer running".to_string(),
        })
    }

    /// `e`, the error a run against this server ended with; or, when the
    /// server is gone, one line saying that `who` (`the OLTP server`)
    /// died during the run and how.
    pub fn explain(&self, e: anyhow::Error, who: &str) -> anyhow::Error {
        match self.ended() {
            None => e,
            Some(how) => {
                let partial = e
                    .downcast_ref::<super::runner::RunFailed>()
                    .map(|f| f.partial.clone());
                let died = anyhow::Error::from(Fix::new(
                    format!("{who} (pid {}) died during the run: {how}", self.pid),
                    "see the kernel log (dmesg: the OOM killer) and the server's error log, then run again",
                ));
                // A run's partial results stay with the error that ended it.
                match partial {
                    Some(partial) => super::runner::RunFailed::wrap(partial, died),
                    None => died,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_child_killed_is_told_apart_from_one_running() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let p = ServerProcess::of_pid(child.id()).unwrap();
        assert_eq!(p.ended(), None);
        let e = p.explain(anyhow::anyhow!("lost connection"), "the test server");
        assert_eq!(e.to_string(), "lost connection", "running: left as it was");
        child.kill().unwrap();
        // Not reaped by `ended`: the kill shows once the child is a zombie.
        let t0 = std::time::Instant::now();
        while p.ended().is_none() {
            assert!(t0.elapsed().as_secs() < 10, "never seen gone");
            std::thread::yield_now();
        }
        assert_eq!(p.ended().as_deref(), Some("killed by SIGKILL"));
        let e = p.explain(anyhow::anyhow!("lost connection"), "the test server");
        assert!(
            e.to_string().starts_with(&format!(
                "the test server (pid {}) died during the run: killed by SIGKILL",
                child.id()
            )),
            "{e}"
        );
        // Still the caller's to reap.
        assert!(child.wait().unwrap().signal().is_some());
    }
}
