use super::page::Mode;
use clap::Args;
use std::path::PathBuf;

/// Verify InnoDB tablespaces: every format MySQL and MariaDB write.
///
/// Exit codes (innochecksum's): 0 all pages valid, or mismatches within
/// --allow-mismatches (still reported); 1 more bad pages than allowed;
/// 2 a file could not be checked (every other file is still reported).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  innotune checksum /var/lib/mysql                    # every tablespace of a datadir\n  innotune checksum /var/lib/mysql/shop/orders.ibd -S # one file, with a summary of its page types\n  innotune checksum --direct --record /var/lib/mysql  # cold reads, the result kept for check's metrics\n\nDirectories are walked recursively in name order and symlinks are followed, to files and to directories (each directory once); a symlink to nothing, or a FIFO or device named like a tablespace, is reported as an error for that entry. A FIFO, device or socket given as PATH is refused at once.\n\nExit codes: 0 all pages valid, or bad pages within --allow-mismatches (still reported); 1 more bad pages than allowed; 2 a file could not be checked: unreadable, truncated (size not a multiple of the page size), not an InnoDB tablespace, an --algorithm its format cannot carry, or a page range past its end. Every other file is still checked and reported; the bad one carries an error.\nJSON fields: docs/json-checksum.md."
)]
pub struct ChecksumArgs {
    /// Tablespace files, or directories (a datadir: *.ibd, ibdata*, undo*, recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Checksum algorithm to accept; a named one is strict (pages written by another fail),
    /// and one that cannot fit a file's format (crc32, innodb or none on a MariaDB
    /// full_crc32 file, full_crc32 on any other; read from page 0) is an error for that file.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub algorithm: Mode,

    /// First page to check in each file (0-based).
    #[arg(short = 's', long, value_name = "N")]
    pub start_page: Option<u64>,

    /// Last page to check in each file (inclusive).
    #[arg(short = 'e', long, value_name = "N")]
    pub end_page: Option<u64>,

    /// Check only this page of each file.
    #[arg(short = 'p', long, value_name = "N", conflicts_with_all = ["start_page", "end_page"])]
    pub page: Option<u64>,

    /// Bad pages tolerated before exit 1 (over all files); all bad pages are still reported.
    #[arg(short = 'a', long, value_name = "N", default_value_t = 0)]
    pub allow_mismatches: u64,

    /// Also count pages by page type, per file.
    #[arg(short = 'S', long)]
    pub page_type_summary: bool,

    /// Read with O_DIRECT: cold reads that neither use nor fill the page cache.
    #[arg(long)]
    pub direct: bool,

    /// Checking threads (default: number of CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Keep this result in the state directory (/var/lib/innotune/checksum/, or
    /// $INNOTUNE_STATE_DIR), so `check --format prometheus` exports the last
    /// result and its age per PATH (for a timer that checks a datadir nightly).
    #[arg(long)]
    pub record: bool,
}
