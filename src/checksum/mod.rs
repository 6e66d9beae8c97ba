//! `innotune checksum`: InnoDB tablespace verification at disk speed.
//!
//! - [`page`]: one page — geometry from page 0, the validation rules (pure).
//! - [`algo`]: the checksum functions.
//! - [`scan`]: which files and pages.
//! - [`reader`]: the I/O engine (large aligned reads overlapped with checking, threads).
//! - [`report`]: the typed result; [`render`]: its document (text, markdown).
//!
//! Flow: [`cli::ChecksumArgs`] → its [`Command`] impl → [`check`] →
//! [`report::ChecksumReport`] → exporters.
pub mod algo;
pub mod cli;
pub mod page;
pub mod pipeline;
pub mod reader;
pub mod record;
pub mod render;
pub mod report;
mod ring;
pub mod scan;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::host::Host;
use anyhow::Result;
use page::{Algo, Layout};
use report::{BadPage, ChecksumReport, FileReport, Holder, Totals};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `innotune checksum`: [`check`], then `--record` keeps the result for
/// check's metrics.
impl Command for cli::ChecksumArgs {
    type Report = ChecksumReport;

    fn execute(env: &Env, args: Self) -> Result<ChecksumReport> {
        let report = check(&args, &env.host)?;
        // The result is shown first: a record that cannot be written (a
        // full state directory) is an error of its own, never the loss of
        // the result.
        if args.record {
            if let Err(e) = record::save(&args.paths, &report) {
                env.fail_after_report(e);
            }
        }
        Ok(report)
    }
}

/// A file that passed the checks before the scan.
struct Ready {
    layout: Layout,
    pages: u64,
    first: u64,
    end: u64,
    lock_refused: bool,
    /// The pid of the write lock's holder, when the kernel names it.
    lock_pid: Option<u32>,
    base: u64,
}

/// Options → the report; the caller renders it. Usage errors (a bad range,
/// a path that does not exist) fail the whole run; a file that cannot be
/// checked gets an `error` in its report and the others are still checked.
pub fn check(args: &cli::ChecksumArgs, host: &Host) -> Result<ChecksumReport> {
    let range = page_range(args)?;
    let threads = match args.threads {
        Some(0) => {
            return Err(Fix::new(
                "--threads 0 checks nothing",
                "give --threads 1 or more, or leave it out",
            )
            .into())
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let found = scan::expand(&args.paths)?;
    let live_paths = server_open_files(host);
    let range_flag = if args.page.is_some() {
        "--page"
    } else {
        "--start-page"
    };
    let mut targets = Vec::with_capacity(found.len());
    // Report index of each target.
    let mut target_file = Vec::with_capacity(found.len());
    let mut reports = Vec::with_capacity(found.len());
    for f in &found {
        let shown = crate::output::path(&f.path);
        let ready = match &f.error {
            Some(e) => Err(e.clone()),
            None => prepare(&f.path, &range, range_flag, args.algorithm),
        };
        let r = match ready {
            Ok(r) => r,
            Err(e) => {
                reports.push(FileReport::failed(shown, Some(e)));
                continue;
            }
        };
        // Who holds the file: a server that has it open (per /proc), or
        // whichever process holds the write lock that refused ours.
        let open_by = std::fs::canonicalize(&f.path)
            .ok()
            .and_then(|c| live_paths.get(&c).copied());
        let holder = match (open_by, r.lock_refused) {
            (Some(pid), _) => Some(Holder {
                how: "open".into(),
                pid: Some(pid),
                command: crate::model::process::comm(host, pid).ok(),
            }),
            (None, true) => Some(Holder {
                how: "lock".into(),
                pid: r.lock_pid,
                command: r
                    .lock_pid
                    .and_then(|p| crate::model::process::comm(host, p).ok()),
            }),
            (None, false) => None,
        };
        let live = holder.is_some();
        target_file.push(reports.len());
        let mut fr = FileReport::new(shown, &r.layout, r.pages);
        fr.live_server = holder.as_ref().is_some_and(Holder::is_server);
        fr.held_by = holder;
        reports.push(fr);
        targets.push(reader::Target {
            path: f.path.clone(),
            layout: r.layout,
            first: r.first,
            end: r.end,
            live,
            base: r.base,
        });
    }
    let total: u64 = targets
        .iter()
        .map(|t| (t.end - t.first) * t.layout.physical as u64)
        .sum();
    let bar = crate::output::progress::bytes_bar(total);
    // Said once, on the page (a note per held file, with what re-reads
    // recovered); while the scan runs, the bar says it on a terminal.
    let held = targets.iter().filter(|t| t.live).count();
    if held > 0 {
        bar.set_message(format!(
            "{held} file(s) held by another process: mismatching pages are re-read {} times {} ms apart",
            reader::LIVE_REREADS,
            reader::LIVE_REREAD_DELAY.as_millis()
        ));
    }
    let started = Instant::now();
    let opts = reader::Options {
        threads,
        direct: args.direct,
        mode: args.algorithm,
    };
    let (results, read_path) = pipeline::run(&targets, opts, &|n| bar.inc(n));
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();

    let mut counts = vec![reader::Counts::default(); targets.len()];
    let mut raw_bad = Vec::new();
    let mut bytes_read = 0;
    let mut lock_refused = vec![false; targets.len()];
    let mut direct_refused = false;
    for r in results {
        counts[r.file].add(&r.counts);
        bytes_read += r.bytes;
        lock_refused[r.file] |= r.lock_refused;
        direct_refused |= r.direct_unsupported;
        if let Some(e) = r.error {
            reports[target_file[r.file]].error.get_or_insert(e);
        }
        raw_bad.extend(r.bad.into_iter().map(|b| (r.file, b)));
    }
    if direct_refused {
        crate::output::warn(
            "--direct: the filesystem refused O_DIRECT; read through the page cache instead",
        );
    }
    raw_bad.sort_by_key(|(f, b)| (*f, b.page));

    let mut totals = Totals {
        files: reports.len() as u64,
        ..Default::default()
    };
    for (i, c) in counts.iter().enumerate() {
        let fr = &mut reports[target_file[i]];
        fr.pages_checked = c.checked;
        for a in Algo::ALL {
            if c.valid[a.index()] > 0 {
                fr.valid.insert(a.name().into(), c.valid[a.index()]);
            }
        }
        fr.empty = c.empty;
        fr.skipped.doublewrite = c.doublewrite;
        fr.skipped.encrypted = c.encrypted;
        fr.skipped.page_compressed = c.page_compressed;
        fr.skipped.free = c.free;
        fr.bad = c.bad;
        if lock_refused[i] && fr.held_by.is_none() {
            // A write lock taken after the checks before the scan.
            fr.held_by = Some(Holder {
                how: "lock".into(),
                pid: None,
                command: None,
            });
        }
        fr.recovered_on_reread = c.recovered_on_reread;
        if args.page_type_summary {
            let mut m = BTreeMap::new();
            for (slot, n) in c.types.iter().enumerate() {
                if *n > 0 {
                    m.insert(page::TYPE_NAMES[slot].into(), *n);
                }
            }
            fr.page_types = Some(m);
        }
        totals.pages_checked += c.checked;
        totals.valid += c.valid.iter().sum::<u64>();
        totals.empty += c.empty;
        totals.skipped += c.doublewrite + c.encrypted + c.page_compressed + c.free;
        totals.bad += c.bad;
    }
    totals.files_with_errors = reports.iter().filter(|f| f.error.is_some()).count() as u64;
    let not_listed = raw_bad.len().saturating_sub(report::MAX_LISTED_BAD) as u64;
    raw_bad.truncate(report::MAX_LISTED_BAD);
    let bad_pages = raw_bad
        .into_iter()
        .map(|(f, b)| BadPage {
            file: reports[target_file[f]].path.clone(),
            page: b.page,
            page_type: page::page_type_name(b.page_type, targets[f].layout.full_crc32).into(),
            stored: b.failure.stored,
            computed: b.failure.computed,
            check: b.failure.check,
            algorithm: b.failure.algorithm,
        })
        .collect();
    Ok(ChecksumReport {
        algorithm: args.algorithm,
        threads,
        direct: args.direct,
        reader: read_path,
        exceeded: totals.bad > args.allow_mismatches,
        files: reports,
        bad_pages,
        bad_pages_not_listed: not_listed,
        totals,
        allow_mismatches: args.allow_mismatches,
        read_bytes: bytes_read,
        elapsed_s: seconds,
        read_bytes_per_s: if seconds > 0.0 {
            bytes_read as f64 / seconds
        } else {
            0.0
        },
    })
}

/// Geometry, page count and page range of one file, or why it cannot be
/// checked (one line, without the "fix:" of a usage error: the run goes on).
fn prepare(
    path: &Path,
    range: &scan::PageRange,
    flag: &str,
    mode: page::Mode,
) -> Result<Ready, String> {
    let (layout, pages, lock, base) = match system_continuation(path)? {
        Some((layout, base)) => {
            let (pages, lock) = inspect_continuation(path, &layout)?;
            (layout, pages, lock, base)
        }
        None => {
            let (layout, pages, lock) = inspect(path)?;
            (layout, pages, lock, 0)
        }
    };
    if let Some(why) = layout.refuses(mode) {
        return Err(format!("{}: {why}", crate::output::path(path)));
    }
    if range.start >= pages {
        return Err(format!(
            "{}: {flag} {} is past the end: the file has {pages} pages (0–{})",
            crate::output::path(path),
            range.start,
            pages.saturating_sub(1)
        ));
    }
    let (first, end) = range.clamp(pages);
    Ok(Ready {
        layout,
        pages,
        first,
        end,
        lock_refused: lock.is_some(),
        lock_pid: lock.flatten(),
        base,
    })
}

fn page_range(args: &cli::ChecksumArgs) -> Result<scan::PageRange> {
    if let Some(p) = args.page {
        return Ok(scan::PageRange { start: p, end: p });
    }
    let start = args.start_page.unwrap_or(0);
    let end = args.end_page.unwrap_or(u64::MAX);
    if start > end {
        return Err(Fix::new(
            format!("--start-page {start} is after --end-page {end}"),
            "give a start page at or before the end page",
        )
        .into());
    }
    Ok(scan::PageRange { start, end })
}

/// A write lock that refused our shared one: `Some(pid)` when the kernel
/// names its holder.
type Lock = Option<Option<u32>>;

/// Open read-only, refusing anything but a regular file (a FIFO or device
/// named `x.ibd` would block or read forever), and take the shared lock.
fn open_checked(path: &Path) -> Result<(std::fs::File, Lock, u64), String> {
    let (f, _) = reader::open_readonly(path, false)
        .map_err(|e| format!("cannot open {}: {e}", crate::output::path(path)))?;
    let md = f
        .metadata()
        .map_err(|e| format!("cannot inspect {}: {e}", crate::output::path(path)))?;
    if !md.is_file() {
        return Err(format!(
            "{} is {}, not a tablespace file",
            crate::output::path(path),
            scan::kind_of(&md.file_type())
        ));
    }
    let lock = (!reader::shared_lock(&f)).then(|| reader::write_lock_holder(&f));
    Ok((f, lock, md.len()))
}

/// Geometry and page count of one file, from page 0; and whether a writer
/// (a server) refused our shared lock.
fn inspect(path: &Path) -> Result<(Layout, u64, Lock), String> {
    let (f, lock, size) = open_checked(path)?;
    let mut head = vec![0u8; size.min(65536) as usize];
    f.read_exact_at(&mut head, 0)
        .map_err(|e| format!("cannot read {}: {e}", crate::output::path(path)))?;
    let not_innodb = |why: String| {
        format!(
            "{}: not an InnoDB tablespace: {why}",
            crate::output::path(path)
        )
    };
    // Its FIL and FSP headers (the first 1024 bytes, the smallest page)
    // all zeros.
    if head.len() >= page::MIN_PAGE && head[..page::MIN_PAGE].iter().all(|b| *b == 0) {
        // A table just created: the server has extended the file but not
        // yet written page 0 back (it does at the next checkpoint).
        return Err(format!(
            "{}: page 0 is all zeros: a tablespace just created whose first page the server has not flushed yet, or not a tablespace; check it again after the server flushes it (FLUSH TABLES t FOR EXPORT, or wait for the next checkpoint)",
            crate::output::path(path)
        ));
    }
    if let Some(why) = page::not_page0(&head) {
        return Err(not_innodb(why));
    }
    let mut layout = Layout::from_page0(&head).map_err(|e| not_innodb(e.to_string()))?;
    whole_pages(path, size, layout.physical)?;
    if head.len() >= layout.physical {
        layout.detect_encryption(&head[..layout.physical]);
    }
    Ok((layout, size / layout.physical as u64, lock))
}

/// `ibdata2`, `ibdata3`…: later files of a multi-file system tablespace
/// (`innodb_data_file_path=ibdata1:…;ibdata2:…`). Their first page is not a
/// page 0 (no flags), and their pages continue ibdata1's numbering, so the
/// geometry comes from ibdata1 and the numbering from the sizes of the files
/// before them. Returns (layout, number of this file's first page).
fn system_continuation(path: &Path) -> Result<Option<(Layout, u64)>, String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(n) = name
        .strip_prefix("ibdata")
        .and_then(|d| d.parse::<u32>().ok())
    else {
        return Ok(None);
    };
    if n < 2 {
        return Ok(None);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let first = dir.join("ibdata1");
    if !first.exists() {
        return Err(format!(
            "{}: continues the system tablespace, but {} is missing",
            crate::output::path(path),
            crate::output::path(&first)
        ));
    }
    let (layout, _, _) = inspect(&first)?;
    let mut base = 0;
    for k in 1..n {
        let prev = dir.join(format!("ibdata{k}"));
        let size = std::fs::metadata(&prev)
            .map_err(|e| {
                format!(
                    "{}: needs {} to number its pages: {e}",
                    crate::output::path(path),
                    crate::output::path(&prev)
                )
            })?
            .len();
        base += size / layout.physical as u64;
    }
    Ok(Some((layout, base)))
}

/// A tablespace is a whole number of pages; anything else was truncated or
/// copied in part, and its last page cannot be checked.
fn whole_pages(path: &Path, size: u64, physical: usize) -> Result<(), String> {
    if size % physical as u64 != 0 {
        return Err(format!(
            "{}: size {size} is not a multiple of its page size {physical} (truncated or partly copied file; restore or re-copy it)",
            crate::output::path(path),
        ));
    }
    Ok(())
}

fn inspect_continuation(path: &Path, layout: &Layout) -> Result<(u64, Lock), String> {
    let (_f, lock, size) = open_checked(path)?;
    whole_pages(path, size, layout.physical)?;
    Ok((size / layout.physical as u64, lock))
}

/// Files that a running mysqld/mariadbd has open, and its pid, read from
/// /proc through the host (so fixture trees can replay it). Best effort:
/// unreadable /proc entries are ignored (the fcntl lock is the other
/// detector).
pub fn server_open_files(host: &Host) -> HashMap<PathBuf, u32> {
    let mut out = HashMap::new();
    for pid in crate::model::process::server_pids(host) {
        let fd_dir = format!("/proc/{pid}/fd");
        for fd in host.list(&fd_dir).unwrap_or_default() {
            if let Ok(target) = host.resolve(format!("{fd_dir}/{fd}")) {
                out.entry(host.path(&target)).or_insert(pid);
            }
        }
    }
    out
}
