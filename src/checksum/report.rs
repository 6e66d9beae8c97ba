//! The typed result of `innotune checksum` (JSON documented in
//! docs/json-checksum.md). Its document is built in [`super::render`].

use super::page::{Algo, Check, Layout, Mode};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ChecksumReport {
    /// `--algorithm` as given.
    pub algorithm: Mode,
    pub threads: usize,
    pub direct: bool,
    /// How pages were read: `io_uring`, `pread` (`--direct` without
    /// io_uring) or `page_cache`.
    pub reader: super::pipeline::ReadPath,
    /// Every file, in scan order; one that could not be checked carries `error`.
    pub files: Vec<FileReport>,
    /// One object per bad page, in file order then page order.
    pub bad_pages: Vec<BadPage>,
    /// Bad pages beyond [`MAX_LISTED_BAD`] are counted but not listed.
    pub bad_pages_not_listed: u64,
    pub totals: Totals,
    pub allow_mismatches: u64,
    /// More bad pages than `--allow-mismatches` (exit 1).
    pub exceeded: bool,
    pub read_bytes: u64,
    pub elapsed_s: f64,
    pub read_bytes_per_s: f64,
}

/// Cap on listed bad pages so a file of garbage cannot exhaust memory.
pub const MAX_LISTED_BAD: usize = 100_000;

#[derive(Debug, Serialize, serde::Deserialize, Default, Clone)]
pub struct Totals {
    pub files: u64,
    /// Files that could not be checked (each has an `error`).
    pub files_with_errors: u64,
    pub pages_checked: u64,
    pub valid: u64,
    pub empty: u64,
    pub skipped: u64,
    pub bad: u64,
}

/// What page 0 says about a file (absent when it could not be read or is
/// not a tablespace).
#[derive(Debug, Serialize, serde::Deserialize, Clone)]
pub struct Geometry {
    /// classic | compressed | full_crc32
    pub format: Cow<'static, str>,
    pub page_size_bytes: usize,
    pub physical_page_size_bytes: usize,
    pub space_id: u32,
    pub pages_in_file: u64,
}

#[derive(Debug, Serialize, serde::Deserialize, Clone)]
pub struct FileReport {
    pub path: String,
    #[serde(flatten)]
    pub geometry: Option<Geometry>,
    pub pages_checked: u64,
    /// Valid pages by the algorithm that validated them (non-zero entries only).
    pub valid: BTreeMap<Cow<'static, str>, u64>,
    pub empty: u64,
    pub skipped: Skipped,
    pub bad: u64,
    /// A mysqld/mariadbd holds this file ([`FileReport::held_by`] names it).
    pub live_server: bool,
    /// Another process had the file open (a server, per /proc) or held a
    /// write lock on it while it was checked: mismatching pages were
    /// re-read before being reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<Holder>,
    /// Pages that mismatched once but verified on re-read (live server only).
    pub recovered_on_reread: u64,
    /// Page counts by type; only with --page-type-summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_types: Option<BTreeMap<Cow<'static, str>, u64>>,
    /// Why this file could not be (fully) checked (exit 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Who held a file while it was checked.
#[derive(Debug, Serialize, serde::Deserialize, Clone, PartialEq)]
pub struct Holder {
    /// `open` (a mysqld/mariadbd has it open, per /proc) or `lock`
    /// (a write lock refused innotune's shared read lock).
    pub how: Cow<'static, str>,
    /// Its pid, when known (the kernel names no pid for an
    /// open-file-description lock, nor once the holder let go).
    pub pid: Option<u32>,
    /// Its command name (`/proc/PID/comm`), when known.
    pub command: Option<String>,
}

impl Holder {
    /// Is the holder a MySQL/MariaDB server?
    pub fn is_server(&self) -> bool {
        self.command
            .as_deref()
            .is_some_and(|c| crate::model::process::SERVER_COMMS.contains(&c))
    }

    /// What holds the file, as the start of a sentence about it:
    /// "mariadbd (pid 812) has this file open", "process 4242 (cp) holds a
    /// write lock on this file", "another process holds a write lock on
    /// this file".
    pub fn sentence(&self) -> String {
        let who = match (&self.command, self.pid) {
            (Some(c), Some(p)) if self.is_server() => {
                format!("{} (pid {p})", crate::output::escape(c))
            }
            (Some(c), Some(p)) => format!("process {p} ({})", crate::output::escape(c)),
            (None, Some(p)) => format!("process {p}"),
            _ => "another process".to_string(),
        };
        if self.how == "open" {
            format!("{who} has this file open")
        } else {
            format!("{who} holds a write lock on this file")
        }
    }
}

#[derive(Debug, Serialize, serde::Deserialize, Default, Clone)]
pub struct Skipped {
    pub doublewrite: u64,
    pub encrypted: u64,
    pub page_compressed: u64,
    /// Pages that failed but are marked free in their extent descriptor.
    pub free: u64,
}

#[derive(Debug, Serialize, serde::Deserialize, Clone)]
pub struct BadPage {
    pub file: String,
    pub page: u64,
    pub page_type: Cow<'static, str>,
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
        let mut f = FileReport::failed(path, None);
        f.geometry = Some(Geometry {
            format: layout.format_name().into(),
            page_size_bytes: layout.logical,
            physical_page_size_bytes: layout.physical,
            space_id: layout.space_id,
            pages_in_file,
        });
        f
    }

    /// A file that could not be checked at all.
    pub fn failed(path: String, error: Option<String>) -> FileReport {
        FileReport {
            path,
            geometry: None,
            pages_checked: 0,
            valid: BTreeMap::new(),
            empty: 0,
            skipped: Skipped::default(),
            bad: 0,
            live_server: false,
            held_by: None,
            recovered_on_reread: 0,
            page_types: None,
            error,
        }
    }
}
