//! SIGINT/SIGTERM/SIGHUP while the host is changed: restore at once, then
//! exit 128+signo (130 for Ctrl-C), as shells report a signal death. A
//! journaled server is stopped as part of the restore (it was started in
//! its own process group, so a terminal's Ctrl-C never reached it).
//!
//! One watcher thread per process (signal-hook's iterator), installed on the
//! first journal and kept: signal-hook cannot hand a signal back to its
//! default disposition, so when no journal is open the watcher does that
//! itself (`emulate_default_handler`: the process dies of the signal as it
//! would have without innotune).

use super::{lock, Inner};
use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::{Arc, Mutex, Once};

static ACTIVE: Mutex<Option<Arc<Mutex<Inner>>>> = Mutex::new(None);
static INSTALL: Once = Once::new();
static HOOK: Mutex<Option<InterruptHook>> = Mutex::new(None);

/// Called once a signal's restore is done, before the process exits
/// (`tune` writes its partial report there). Gets the signal's name.
pub type InterruptHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Install (or, with `None`, remove) the hook run after a signal's restore.
/// It runs on the signal thread with the journal locked (the main thread
/// can make no change meanwhile): it must not use the journal.
pub fn set_interrupt_hook(hook: Option<InterruptHook>) {
    *HOOK.lock().unwrap_or_else(|p| p.into_inner()) = hook;
}

pub(super) fn activate(shared: Arc<Mutex<Inner>>) -> Result<()> {
    let mut err = None;
    INSTALL.call_once(|| match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(mut signals) => {
            std::thread::Builder::new()
                .name("innotune-signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        on_signal(sig);
                    }
                })
                .map(|_| ())
                .unwrap_or_else(|e| err = Some(e));
        }
        Err(e) => err = Some(e),
    });
    if let Some(e) = err {
        return Err(e).context("installing signal handlers");
    }
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(shared);
    Ok(())
}

pub(super) fn deactivate(shared: &Arc<Mutex<Inner>>) {
    let mut a = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
    if a.as_ref().is_some_and(|s| Arc::ptr_eq(s, shared)) {
        *a = None;
    }
}

fn on_signal(sig: i32) {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let Some(shared) = active else {
        let _ = signal_hook::low_level::emulate_default_handler(sig);
        std::process::exit(128 + sig);
    };
    let name = match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    // Hold the lock until exit: the main thread can make no further change.
    let mut inner = lock(&shared);
    inner.closed = true;
    let results = inner.restore();
    let failed = inner.file.entries.len();
    if failed == 0 {
        let _ = super::remove_journal(&inner.path);
        eprintln!(
            "innotune: interrupted by {name}: {} host change(s) put back",
            results.len()
        );
    } else {
        eprintln!(
            "innotune: interrupted by {name}: {failed} change(s) could not be restored; run `innotune restore`"
        );
    }
    let hook = HOOK.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(h) = hook {
        h(name);
    }
    std::process::exit(128 + sig);
}
