use clap::Args;
use std::path::PathBuf;

/// Merge `innotune oltp run --json-histogram` results of several clients
/// that ran together against one server into one result.
#[derive(Debug, Args)]
#[command(
    after_help = "Start the clients together (the same --start-at on each), each with --format json --json-histogram --output clientN.json, then:\n  innotune merge client1.json client2.json\nTransactions and queries are summed, rates are the sum of each client's rate, and latency percentiles come from the merged histogram (never averaged). Each client's share is shown.\nJSON fields: docs/json-merge.md."
)]
pub struct MergeArgs {
    /// oltp results (JSON, envelope v2) made with --json-histogram; two or more.
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
}
