//! Children that behave the same however the test runner was started, and
//! waits that end.
//!
//! A shell started in the background (`.ci/run &`) runs its children with
//! SIGINT and SIGQUIT ignored, and an ignored signal stays ignored across
//! exec: a test that sent SIGINT to a `bash` child then waited for it
//! waited forever (bench_lib_live). Every child made here gets SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT back to their default before exec, and every
//! wait has a deadline after which the child is killed and the test fails
//! saying which command hung.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// How long a test waits for a child it expects to end soon (it was
/// signalled, or it has a short run of its own).
pub const WAIT: Duration = Duration::from_secs(120);

/// The longest any one innotune run may take in a test (the longest live
/// sweeps take a few minutes on a 2-core machine); past it the run is
/// killed, so a hang fails the test instead of the whole suite.
pub const RUN_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The signals a test runner may have inherited as ignored, which a child
/// is expected to act on.
const RESET: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Give the child default handling of [`RESET`]'s signals. std resets
/// only SIGPIPE and the signal mask, and no crate does this one thing, so
/// it is a `pre_exec` hook: between fork and exec, `signal` is
/// async-signal-safe.
pub fn reset_signals(cmd: &mut Command) -> &mut Command {
    // SAFETY: the hook calls only `signal`, which is async-signal-safe, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            for sig in RESET {
                if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        })
    }
}

/// `Command::new(program)` with default signal handling in the child.
pub fn sys(program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new(program);
    reset_signals(&mut c);
    c
}

/// Whether this process ignores `sig` (what its children would inherit).
pub fn ignored(sig: libc::c_int) -> bool {
    // SAFETY: a query only (null new action), into a zeroed sigaction.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// A running child and the command line that started it. Dropped while
/// still running (a test failed before waiting), it is killed and reaped.
pub struct Spawned {
    child: Child,
    what: String,
}

/// Start `cmd` (made with [`sys`] or not: the signal reset is added here
/// too); panics naming the command when it cannot start.
pub fn spawn(cmd: &mut Command) -> Spawned {
    let what = describe(cmd);
    reset_signals(cmd);
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{what}`: {e}"));
    Spawned { child, what }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

impl std::ops::Deref for Spawned {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for Spawned {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Spawned {
    /// The command line, for messages.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// Send `sig` to the child.
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling our own child, not yet reaped (it is reaped
        // only by the waits below, which take `&mut self` or `self`).
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(
            r,
            0,
            "kill({}, {sig}): {}",
            self.child.id(),
            io::Error::last_os_error()
        );
    }

    /// Wait for the child to exit, at most `limit`; past it the child is
    /// killed and the test fails naming the command.
    pub fn wait_within(&mut self, limit: Duration) -> ExitStatus {
        match self.child.wait_timeout(limit) {
            Ok(Some(st)) => st,
            Ok(None) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "`{}` was still running after {} s: killed it",
                    self.what,
                    limit.as_secs_f64()
                );
            }
            Err(e) => panic!("waiting for `{}`: {e}", self.what),
        }
    }

    /// Wait for the child, at most `limit`, collecting its piped stdout and
    /// stderr (what was not piped comes back empty); past the limit the
    /// child is killed and the test fails naming the command and showing
    /// what it had written.
    pub fn output_within(mut self, limit: Duration) -> Output {
        let out = self.child.stdout.take().map(reader::<ChildStdout>);
        let err = self.child.stderr.take().map(reader::<ChildStderr>);
        let t0 = Instant::now();
        let status = match self.child.wait_timeout(limit) {
            Ok(Some(st)) => Some(st),
            Ok(None) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                None
            }
            Err(e) => panic!("waiting for `{}`: {e}", self.what),
        };
        // A grandchild may still hold a pipe open: collect what is there
        // without waiting on it for long.
        let grace = Duration::from_secs(10);
        let collect = |r: Option<mpsc::Receiver<Vec<u8>>>| {
            r.and_then(|r| r.recv_timeout(grace).ok())
                .unwrap_or_default()
        };
        let stdout = collect(out);
        let stderr = collect(err);
        match status {
            Some(status) => Output {
                status,
                stdout,
                stderr,
            },
            None => panic!(
                "`{}` was still running after {:.0} s: killed it\nstdout: {}\nstderr: {}",
                self.what,
                t0.elapsed().as_secs_f64(),
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            ),
        }
    }
}

impl Spawned {
    /// Ctrl-C: SIGINT, then the output once it exits, which must be 130
    /// (the failure shows its stderr).
    pub fn interrupt(self) -> Output {
        self.signal(libc::SIGINT);
        let out = self.output_within(WAIT);
        assert_eq!(
            out.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// SIGKILL, which gives the child no chance to put anything back; waits
    /// until it has died of it.
    pub fn kill_now(self) {
        self.signal(libc::SIGKILL);
        let out = self.output_within(WAIT);
        assert_eq!(out.status.code(), None, "killed by the signal");
    }
}

/// The lines a child writes to its piped stdout, read on a thread so that
/// waiting for the next one has a deadline.
pub struct Lines {
    rx: mpsc::Receiver<String>,
    what: String,
}

impl Spawned {
    /// Take the child's piped stdout as [`Lines`].
    pub fn stdout_lines(&mut self) -> Lines {
        let out = self
            .child
            .stdout
            .take()
            .unwrap_or_else(|| panic!("`{}`: stdout is not piped", self.what));
        self.lines_of(out)
    }

    /// Take the child's piped stderr as [`Lines`] (its progress lines).
    pub fn stderr_lines(&mut self) -> Lines {
        let err = self
            .child
            .stderr
            .take()
            .unwrap_or_else(|| panic!("`{}`: stderr is not piped", self.what));
        self.lines_of(err)
    }

    fn lines_of<R: Read + Send + 'static>(&self, r: R) -> Lines {
        use std::io::BufRead;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in io::BufReader::new(r).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            what: self.what.clone(),
        }
    }
}

impl Lines {
    /// The next line; None once the child closed its stdout. Fails naming
    /// the command when no line came within `limit`.
    pub fn next_within(&self, limit: Duration) -> Option<String> {
        match self.rx.recv_timeout(limit) {
            Ok(l) => Some(l),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "`{}` wrote no line within {} s",
                self.what,
                limit.as_secs_f64()
            ),
        }
    }
}

fn reader<R: Read + Send + 'static>(mut r: R) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Poll `cond` (a condition on real state, not a guessed delay) every few
/// milliseconds until it holds; fails naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < limit,
            "timed out after {} s waiting for {what}",
            limit.as_secs()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `cmd.start()`: [`spawn`] as a method, in place of `.spawn().unwrap()`.
pub trait Start {
    fn start(&mut self) -> Spawned;
}

impl Start for Command {
    fn start(&mut self) -> Spawned {
        spawn(self)
    }
}
