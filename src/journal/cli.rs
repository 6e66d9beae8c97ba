use clap::Args;

/// Put back every host setting an interrupted innotune run left changed.
///
/// Reads the journal (`$INNOTUNE_STATE_DIR/journal.json`, default
/// `/var/lib/innotune/journal.json`), writes each original value back,
/// stops throwaway servers it started (SIGTERM, SIGKILL after 30 s; only a
/// process whose start time and command line prove it is that server),
/// deletes files innotune created, and removes the journal once everything
/// is back. Refuses a journal (or state directory) another user owns or may
/// write, and any entry innotune could not have written.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  innotune restore --dry-run                 # list what an interrupted run left changed
  innotune restore                           # put it all back
  INNOTUNE_STATE_DIR=DIR innotune restore    # the journal of runs made with that state dir

Exit codes: 0 nothing pending or all restored; 2 something could not be restored \
(the journal is kept so you can retry), or the journal is unreadable or not one innotune writes.")]
pub struct RestoreArgs {
    /// List what would be put back, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}
