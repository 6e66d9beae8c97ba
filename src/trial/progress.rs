//! What a running trial loop is doing, for a progress display: sweep's
//! and prove's status line, or a caller's callback.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// What a running experiment is doing, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Laying out a workload's files, before any device is switched.
    Layout { workload: String, bytes: u64 },
    /// Starting the OLTP server and loading its tables.
    Server {
        dir: PathBuf,
        tables: u32,
        table_size: u32,
    },
    /// A trial is about to run (`index` counts from 1 to `total`).
    Trial {
        round: u32,
        rounds: u32,
        candidate: String,
        workload: String,
        index: usize,
        total: usize,
    },
    /// The last trial is over: stopping the server, putting devices back.
    Restoring,
}

impl Event {
    /// One line for a status display.
    pub fn message(&self) -> String {
        match self {
            Event::Layout { workload, bytes } => format!(
                "laying out {} of files for {workload}",
                crate::units::fmt_size(*bytes)
            ),
            Event::Server {
                dir,
                tables,
                table_size,
            } => format!(
                "starting the OLTP server in {} and loading {tables} × {table_size} rows",
                dir.display()
            ),
            Event::Trial {
                round,
                rounds,
                candidate,
                workload,
                index,
                total,
            } => format!(
                "round {}/{rounds} · {candidate} · {workload} · trial {index}/{total}",
                round + 1
            ),
            Event::Restoring => "putting the devices back".to_string(),
        }
    }
}

/// A progress callback: called on the sweeping thread, keep it short.
pub type Callback = Arc<dyn Fn(&Event) + Send + Sync>;

/// Where [`Event`]s go. Never stdout: that is the report's.
#[derive(Clone, Default)]
pub enum Progress {
    /// innotune's status line on stderr (shown only on a terminal).
    #[default]
    StatusLine,
    /// Nowhere.
    Quiet,
    /// To the caller.
    Callback(Callback),
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Progress::StatusLine => "StatusLine",
            Progress::Quiet => "Quiet",
            Progress::Callback(_) => "Callback",
        })
    }
}

/// A running progress display.
pub struct Reporter {
    bar: Option<indicatif::ProgressBar>,
    callback: Option<Callback>,
}

impl Reporter {
    pub fn new(p: &Progress) -> Reporter {
        match p {
            Progress::StatusLine => Reporter {
                bar: Some(crate::output::progress::status_line()),
                callback: None,
            },
            Progress::Quiet => Reporter {
                bar: None,
                callback: None,
            },
            Progress::Callback(c) => Reporter {
                bar: None,
                callback: Some(c.clone()),
            },
        }
    }

    pub fn event(&self, e: Event) {
        if let Some(b) = &self.bar {
            b.set_message(e.message());
            b.tick();
        }
        if let Some(c) = &self.callback {
            c(&e);
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
