//! The typed result of `innotune checksum` (JSON documented in docs/json-checksum.md).

use super::page::{Algo, Check, Layout, Mode};
use crate::error::exit;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
pub struct ChecksumReport {
    /// `--algorithm` as given.
    pub algorithm: Mode,
    pub threads: usize,
    pub direct: bool,
    pub files: Vec<FileReport>,
    /// One object per bad page, in file order then page order.
    pub bad_pages: Vec<BadPage>,
    /// Bad pages beyond [`MAX_LISTED_BAD`] are counted but not listed.
    pub bad_pages_not_listed: u64,
    pub totals: Totals,
    pub allow_mismatches: u64,
    /// More bad pages than `--allow-mismatches` (exit 1).
    pub exceeded: bool,
    pub bytes_read: u64,
    pub seconds: f64,
    /// Decimal megabytes per second (10^6), as fio and innochecksum benchmarks quote.
    pub mb_per_s: f64,
    #[serde(skip)]
    pub page_type_summary: bool,
}

/// Cap on listed bad pages so a file of garbage cannot exhaust memory.
pub const MAX_LISTED_BAD: usize = 100_000;

#[derive(Debug, Serialize, Default, Clone)]
pub struct Totals {
    pub files: u64,
    pub pages_checked: u64,
    pub valid: u64,
    pub empty: u64,
    pub skipped: u64,
    pub bad: u64,
}

#[derive(Debug, Serialize, Clone)]
pub struct FileReport {
    pub path: String,
    /// classic | compressed | full_crc32
    pub format: &'static str,
    pub page_size: usize,
    pub physical_page_size: usize,
    pub space_id: u32,
    pub pages_in_file: u64,
    pub pages_checked: u64,
    /// Valid pages by the algorithm that validated them (non-zero entries only).
    pub valid: BTreeMap<&'static str, u64>,
    pub empty: u64,
    pub skipped: Skipped,
    pub bad: u64,
    /// A server holds this file (refused lock or open in mysqld/mariadbd).
    pub live_server: bool,
    /// Pages that mismatched once but verified on re-read (live server only).
    pub recovered_on_reread: u64,
    /// Page counts by type; only with --page-type-summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_types: Option<BTreeMap<&'static str, u64>>,
    /// A read error that stopped checking this file (exit 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize, Default, Clone)]
pub struct Skipped {
    pub doublewrite: u64,
    pub encrypted: u64,
    pub page_compressed: u64,
    /// Pages that failed but are marked free in their extent descriptor.
    pub free: u64,
}

#[derive(Debug, Serialize, Clone)]
pub struct BadPage {
    pub file: String,
    pub page: u64,
    pub page_type: &'static str,
    /// Value found on the page (checksum, trailer LSN word, page number or space id).
    pub stored: u32,
    /// Value expected (computed checksum, header LSN word, position, space id of page 0).
    pub computed: u32,
    pub check: Check,
    /// For `check == "checksum"`: the algorithm `stored`/`computed` belong to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<Algo>,
}

impl FileReport {
    pub fn new(path: String, layout: &Layout, pages_in_file: u64) -> FileReport {
        FileReport {
            path,
            format: layout.format_name(),
            page_size: layout.logical,
            physical_page_size: layout.physical,
            space_id: layout.space_id,
            pages_in_file,
            pages_checked: 0,
            valid: BTreeMap::new(),
            empty: 0,
            skipped: Skipped::default(),
            bad: 0,
            live_server: false,
            recovered_on_reread: 0,
            page_types: None,
            error: None,
        }
    }
}

impl crate::output::Report for ChecksumReport {
    const COMMAND: &'static str = "checksum";

    fn render_text(
        &self,
        out: &mut dyn std::io::Write,
        style: crate::output::Style,
    ) -> std::io::Result<()> {
        super::render::text(self, out, style)
    }

    /// innochecksum-compatible: 0 clean (mismatches within the allowance are
    /// still reported), 1 beyond the allowance, 2 a file could not be read.
    fn exit_code(&self) -> i32 {
        if self.files.iter().any(|f| f.error.is_some()) {
            exit::ERROR
        } else if self.exceeded {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}
