//! One shape for every command, and the one dispatcher that runs them.
//!
//! A command implements [`Command`] on its options (the clap `Args` in
//! `<cmd>/cli.rs`): `execute(&Env, opts) -> Result<Report>`. [`dispatch`]
//! is the only caller the command line has. It checks the global flags
//! against the command, builds the [`Env`] (the host, where live output
//! goes, the host stamp), runs `execute`, ends the journal if the command
//! began one, and renders the typed report with the [`Sink`]
//! (`--format`, `--output`). No command renders or prints its result.
//!
//! What a command needs from the process goes through [`Env`]:
//! - `host`: every read of /sys, /proc, /etc (`--root` replays a tree);
//! - [`Env::guard`]: the journal, begun on first use, so only commands that
//!   change the host take its lock; the dispatcher ends it (restoring what
//!   is still journaled) when `execute` returns, before the report is
//!   rendered, and [`Env::end_journal`] ends it earlier;
//! - `stream`: results shown while the command runs (oltp's interval
//!   lines), in text on stdout only;
//! - `progress`: live lines on stderr (trace's event count, bench's
//!   per-second figures, oltp's thread counts);
//! - `stop`: Ctrl-C as a request to stop early ([`Stop::catch`]), for
//!   commands that end gracefully (trace, bench).
//!
//! Everything a report shows is gathered during `execute`: the host stamp
//! of the JSON envelope is read when the `Env` is made, before `execute`;
//! check's Prometheus metrics come from state read in its `execute`.

use crate::error::Fix;
use crate::export::json::HostStamp;
use crate::export::{Format, Report, Sink, Stream};
use crate::host::Host;
use crate::journal::{Guard, Journal};
use anyhow::Result;
use indicatif::ProgressBar;
use signal_hook::SigId;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A command: its options (`Self`, the clap `Args`) in, a typed report out.
pub trait Command: Sized {
    /// What `execute` returns; the dispatcher renders it.
    type Report: Report;

    /// Warn first when an interrupted run left host changes unrestored
    /// (every command but `restore`, whose job that is).
    const WARN_IF_PENDING: bool = true;

    /// Where the report goes: the global `--format` and `--output`, unless
    /// the command has its own say (`report -o FILE` picks the format by
    /// the file's extension). Called before `execute`.
    fn sink(&self, global: Sink) -> Result<Sink> {
        Ok(global)
    }

    /// Run the command. Bad input fails before the host is changed, with
    /// one line naming the fix ([`crate::error::Fix`]).
    fn execute(env: &Env, opts: Self) -> Result<Self::Report>;
}

/// Run `opts`'s command on `host` and render its report into `sink` (the
/// global flags); returns the process exit code.
pub fn dispatch<C: Command>(host: Host, sink: Sink, opts: C) -> Result<i32> {
    if sink.format == Format::Prometheus && !C::Report::METRICS {
        return Err(Fix::new(
            "--format prometheus is only for `innotune check`",
            "use --format json (or text, markdown) with this command",
        )
        .into());
    }
    if let Some(o) = &sink.output {
        // Before the command runs, not only when its report is written.
        crate::export::check_output(o)?;
    }
    if C::WARN_IF_PENDING {
        crate::journal::warn_if_pending();
    }
    let sink = opts.sink(sink)?;
    let env = Env::new(host, &sink);
    let report = C::execute(&env, opts);
    let (stamp, after) = env.finish();
    let report = report?;
    let code = sink.emit(&stamp, &report)?;
    if sink.format != Format::Text || sink.output.is_some() {
        if let Some(line) = report.closing_line() {
            // The text page ends with it; elsewhere say it on stderr.
            eprintln!("innotune: {line}");
        }
    }
    match after {
        Some(e) => Err(e),
        None => Ok(code),
    }
}

/// What a command gets from the process: see the module documentation.
pub struct Env {
    pub host: Host,
    /// Results shown while the command runs (text on stdout only).
    pub stream: Stream,
    /// Live lines on stderr.
    pub progress: Progress,
    /// Ctrl-C as a request to stop early.
    pub stop: Stop,
    stamp: HostStamp,
    guard: Mutex<Option<Arc<Guard>>>,
    after_report: Mutex<Option<anyhow::Error>>,
}

impl Env {
    /// The environment of a command whose report goes to `sink`: the host
    /// stamp is read now, before the command runs.
    pub fn new(host: Host, sink: &Sink) -> Env {
        Env {
            stamp: HostStamp::read(&host),
            stream: sink.stream(),
            progress: Progress::for_sink(sink),
            stop: Stop::process(),
            host,
            guard: Mutex::new(None),
            after_report: Mutex::new(None),
        }
    }

    /// The host the report describes, as read before the command ran (the
    /// JSON envelope's `host`).
    pub fn stamp(&self) -> &HostStamp {
        &self.stamp
    }

    /// The run's journal, begun on the first call ([`Journal::begin`]: the
    /// journal lock, refused while an earlier run's changes are pending).
    /// A signal restores at once and exits 128+signo, unless the command
    /// catches signals itself ([`Stop::catch`], before this call): then the
    /// journal restores when the command returns, or `innotune restore`
    /// does after a second signal.
    pub fn guard(&self) -> Result<Arc<Guard>> {
        let mut g = self.guard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(guard) = &*g {
            return Ok(guard.clone());
        }
        let command = crate::journal::command_line();
        let guard = Arc::new(if self.stop.catching() {
            Journal::begin_in(&crate::journal::state_dir(), &command, false)?
        } else {
            Journal::begin(&command)?
        });
        *g = Some(guard.clone());
        Ok(guard)
    }

    /// End the journal now, if one was begun: what is still journaled is
    /// restored (warning for what cannot be), the journal removed and its
    /// lock released. The dispatcher does this when `execute` returns;
    /// call it earlier to end the journal at a point of the command's
    /// choosing. Every [`Env::guard`] handle must be dropped first.
    pub fn end_journal(&self) {
        let g = self.guard.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(g) = g {
            debug_assert_eq!(
                Arc::strong_count(&g),
                1,
                "a guard handle outlives the journal"
            );
            drop(g);
        }
    }

    /// An error that ends the command *after* its report is written: the
    /// run measured something worth keeping (an OLTP run cut short by a
    /// dying server, a checksum result whose `--record` could not be
    /// saved), so the dispatcher renders the report first, then fails
    /// with this one line (exit 2). The first one given is kept.
    pub fn fail_after_report(&self, e: anyhow::Error) {
        let mut a = self.after_report.lock().unwrap_or_else(|p| p.into_inner());
        if a.is_none() {
            *a = Some(e);
        }
    }

    /// End the journal and hand back what the report's rendering needs,
    /// and the error to end with after it ([`Env::fail_after_report`]).
    fn finish(self) -> (HostStamp, Option<anyhow::Error>) {
        self.end_journal();
        let after = self
            .after_report
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        (self.stamp, after)
    }
}

/// Live progress on stderr.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    shown: bool,
    live: bool,
}

impl Progress {
    /// Bars and status lines whenever stderr is a terminal; a command's own
    /// live figures ([`Progress::live`]) only with a text page.
    pub fn for_sink(sink: &Sink) -> Progress {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        Progress {
            shown: terminal,
            live: terminal && sink.format == Format::Text,
        }
    }

    /// A spinner-style status line the command updates.
    pub fn status_line(&self) -> ProgressBar {
        if self.shown {
            crate::output::progress::status_line()
        } else {
            ProgressBar::hidden()
        }
    }

    /// A byte-counting bar with throughput.
    pub fn bytes_bar(&self, total: u64) -> ProgressBar {
        if self.shown {
            crate::output::progress::bytes_bar(total)
        } else {
            ProgressBar::hidden()
        }
    }

    /// Is progress shown at all (stderr is a terminal)?
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// Show the command's own live figures (bench's per-second line).
    pub fn live(&self) -> bool {
        self.live
    }
}

/// The process's request to stop early: one flag, since signals are the
/// process's. Set only while a command catches signals ([`Stop::catch`]);
/// otherwise a signal ends the process (restoring first when a journal is
/// open).
#[derive(Debug, Clone)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    catching: Arc<AtomicUsize>,
    /// The number of the last signal that set `flag` (0: none).
    signal: Arc<AtomicUsize>,
}

impl Stop {
    /// The process's stop flag.
    pub fn process() -> Stop {
        static STOP: OnceLock<Stop> = OnceLock::new();
        STOP.get_or_init(|| Stop {
            flag: Arc::new(AtomicBool::new(false)),
            catching: Arc::new(AtomicUsize::new(0)),
            signal: Arc::new(AtomicUsize::new(0)),
        })
        .clone()
    }

    /// Has a stop been asked for?
    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The signal that asked for the stop (`SIGINT`, `SIGTERM`…), if one
    /// did: a command that ends early on it exits 128 + its number, as the
    /// shell reports a death by that signal.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }

    /// The flag itself, for loops that poll it.
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    fn catching(&self) -> bool {
        self.catching.load(Ordering::SeqCst) > 0
    }

    /// Until the returned handle drops, the first of `signals` sets the
    /// flag and a second one ends the process at once (exit 128+signo).
    pub fn catch(&self, signals: &[libc::c_int]) -> Result<Catch> {
        self.catch_with(signals, true)
    }

    /// Until the returned handle drops, every one of `signals` only sets
    /// the flag: none ends the process. For a command whose stop is short
    /// and bounded and whose report must survive a burst of signals (GNU
    /// `timeout` sends its signal to the child and then to the whole
    /// process group: two at once), as `trace` is.
    pub fn catch_all(&self, signals: &[libc::c_int]) -> Result<Catch> {
        self.catch_with(signals, false)
    }

    fn catch_with(&self, signals: &[libc::c_int], second_exits: bool) -> Result<Catch> {
        use anyhow::Context;
        self.catching.fetch_add(1, Ordering::SeqCst);
        // On an error, dropping it releases what was registered.
        let mut catch = Catch {
            ids: Vec::new(),
            catching: self.catching.clone(),
        };
        for &sig in signals {
            // Registered first, so it sees the flag as it was before this
            // signal.
            if second_exits {
                let once = signal_hook::flag::register_conditional_shutdown(
                    sig,
                    128 + sig,
                    self.flag.clone(),
                );
                catch.ids.push(once.context("installing signal handlers")?);
            }
            let set = signal_hook::flag::register(sig, self.flag.clone());
            catch.ids.push(set.context("installing signal handlers")?);
            let which = signal_hook::flag::register_usize(sig, self.signal.clone(), sig as usize);
            catch.ids.push(which.context("installing signal handlers")?);
        }
        Ok(catch)
    }
}

/// Signals caught by [`Stop::catch`]; released on drop.
#[derive(Debug)]
pub struct Catch {
    ids: Vec<SigId>,
    catching: Arc<AtomicUsize>,
}

impl Drop for Catch {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        self.catching.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Document;
    use std::path::{Path, PathBuf};

    /// What the test command saw of the host while it ran.
    #[derive(serde::Serialize)]
    struct Seen {
        hostname: String,
    }

    impl Report for Seen {
        const COMMAND: &'static str = "test";
        fn document(&self) -> Document {
            Document::new(self.hostname.clone())
        }
    }

    /// Renames the (replayed) host while it runs, as a long command may
    /// see the host change under it.
    struct Rename {
        root: PathBuf,
        ran: Arc<AtomicBool>,
    }

    impl Command for Rename {
        type Report = Seen;
        // Leaves this machine's state directory alone.
        const WARN_IF_PENDING: bool = false;

        fn execute(env: &Env, opts: Self) -> Result<Seen> {
            opts.ran.store(true, Ordering::SeqCst);
            std::fs::write(opts.root.join("proc/sys/kernel/hostname"), "after\n")?;
            Ok(Seen {
                hostname: env.host.read_trim("/proc/sys/kernel/hostname")?,
            })
        }
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
        std::fs::write(root.join("proc/sys/kernel/hostname"), "before\n").unwrap();
        (d, root)
    }

    fn sink(format: Format, out: &Path) -> Sink {
        Sink {
            format,
            format_given: true,
            color: crate::output::ColorChoice::Never,
            output: Some(out.to_path_buf()),
        }
    }

    /// The envelope's host is the host as the command found it, read
    /// before it ran, not when the report was rendered.
    #[test]
    fn the_json_envelope_stamps_the_host_before_the_command_runs() {
        let (d, root) = tree();
        let out = d.path().join("out.json");
        let ran = Arc::new(AtomicBool::new(false));
        let opts = Rename {
            root: root.clone(),
            ran: ran.clone(),
        };
        let code = dispatch(Host::with_root(&root), sink(Format::Json, &out), opts).unwrap();
        assert_eq!(code, crate::error::exit::OK);
        assert!(ran.load(Ordering::SeqCst));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(v["schema"], "test/2");
        assert_eq!(v["result"]["hostname"], "after");
        assert_eq!(v["host"]["hostname"], "before", "{v}");
    }

    /// `--format prometheus` with a command that has no metrics is refused
    /// before the command runs (nothing changed, nothing written).
    #[test]
    fn prometheus_is_refused_before_a_command_without_metrics_runs() {
        let (d, root) = tree();
        let out = d.path().join("out.prom");
        let ran = Arc::new(AtomicBool::new(false));
        let opts = Rename {
            root: root.clone(),
            ran: ran.clone(),
        };
        let e = dispatch(Host::with_root(&root), sink(Format::Prometheus, &out), opts).unwrap_err();
        assert!(
            crate::error::one_line(&e).contains("--format prometheus is only for `innotune check`"),
            "{e}"
        );
        assert!(!ran.load(Ordering::SeqCst));
        assert!(!out.exists());
        assert_eq!(
            std::fs::read_to_string(root.join("proc/sys/kernel/hostname")).unwrap(),
            "before\n"
        );
    }

    /// A handle on caught signals releases them when dropped, and only
    /// while one is held does a journal leave signals to the command.
    #[test]
    fn catching_lasts_as_long_as_its_handle() {
        let stop = Stop {
            flag: Arc::new(AtomicBool::new(false)),
            catching: Arc::new(AtomicUsize::new(0)),
            signal: Arc::new(AtomicUsize::new(0)),
        };
        assert!(!stop.catching());
        assert_eq!(stop.signal(), None);
        // SIGUSR2: a signal nothing else in the test binary uses.
        let c = stop.catch(&[libc::SIGUSR2]).unwrap();
        assert!(stop.catching());
        assert!(!stop.requested());
        signal_hook::low_level::raise(libc::SIGUSR2).unwrap();
        assert!(stop.requested());
        // Which signal it was, for exit 128 + its number.
        assert_eq!(stop.signal(), Some(libc::SIGUSR2));
        drop(c);
        assert!(!stop.catching());
    }
}
