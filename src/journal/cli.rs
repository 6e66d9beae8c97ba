use clap::Args;

/// Put back every host setting an interrupted innotune run left changed.
///
/// Reads the journal (`$INNOTUNE_STATE_DIR/journal.json`, default
/// `/var/lib/innotune/journal.json`), writes each original value back,
/// stops throwaway servers it started (SIGTERM, SIGKILL after 30 s; only a
/// process whose start time and command line prove it is that server),
/// deletes files innotune created, and removes the journal once everything
/// is back. Exit codes: 0 nothing pending or all restored; 2 something could not
/// be restored (the journal is kept so you can retry).
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// List what would be put back, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}
