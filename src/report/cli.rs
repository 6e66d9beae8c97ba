use clap::Args;
use std::path::PathBuf;

/// Render one or several innotune results (JSON v2 from any command's
/// `--format json`, or a tune report directory's *.json) into one
/// self-contained HTML page or markdown for a ticket, each as its command's
/// own `--format html` shows it. Several results are shown side by side,
/// with a comparison table of the figures they share. Reads only the files
/// given (and, for a tune.json, the sweep.json tune wrote next to it).
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  innotune report probe.json check.json sweep.json -o report.html
  innotune report before.json after.json -o compare.html     # both runs side by side
  innotune report innotune-db1-20261125-101500/*.json -o summary.md
  innotune report sweep.json --format markdown                # to stdout

-o/--output FILE: the format follows FILE's extension (.html/.htm, .md/.markdown, .txt, .json);
a --format that disagrees with it is refused. Other extensions (and stdout) take --format.
Exit codes: 0 rendered; 2 a file is missing, is not an innotune JSON v2 result, or was written by
an innotune whose result this one cannot read back.")]
pub struct ReportArgs {
    /// Result files written by innotune with --format json (envelope v2).
    #[arg(required = true, value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,

    /// The old name of `-o/--output FILE` (hidden: tune's `--out` is a
    /// directory, so report's file is `--output`, as every command's).
    #[arg(long = "out", value_name = "FILE", hide = true)]
    pub out: Option<PathBuf>,

    /// Title of the page (default: "innotune report" and the hosts).
    #[arg(long)]
    pub title: Option<String>,
}
