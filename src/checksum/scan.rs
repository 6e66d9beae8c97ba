//! Which files to check: explicit files, or the tablespaces of a directory.

use crate::error::Fix;
use anyhow::Result;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Is this file name an InnoDB tablespace a datadir walk should check?
/// `*.ibd` (file-per-table, general, `mysql.ibd`), `ibdata*` (system),
/// `undo*` (undo tablespaces, MySQL `undo_001`, MariaDB `undo001`).
/// Not `ibtmp1` (recreated at every start) nor redo logs (another format).
pub fn is_tablespace_name(name: &str) -> bool {
    name.ends_with(".ibd") || name.starts_with("ibdata") || name.starts_with("undo")
}

/// A file to check, or a name that looked like one but cannot be (a
/// dangling symlink, a FIFO named `x.ibd` in a datadir): reported with its
/// error next to the others.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub error: Option<String>,
}

/// What a non-regular file is, for messages.
pub fn kind_of(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Expand PATHs into files in a stable order: files as given, directories
/// walked recursively with entries sorted by name (so reports diff cleanly).
/// Walks follow symlinks, to files and to directories (a datadir may link a
/// schema directory or a tablespace elsewhere; each directory is walked
/// once, so a link loop ends); a link to nothing is reported, not skipped.
/// A path given that does not exist or is not a regular file or directory
/// is a usage error (reading a FIFO or a device would block or never end).
pub fn expand(paths: &[PathBuf]) -> Result<Vec<Found>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| {
            Fix::new(
                format!("cannot read {}: {e}", crate::output::path(p)),
                "check the path and that you may read it (run as the mysql user or root)",
            )
        })?;
        if meta.is_dir() {
            let before = out.len();
            walk(p, &mut out, &mut seen)?;
            if out.len() == before {
                return Err(Fix::new(
                    format!(
                        "no InnoDB tablespaces (*.ibd, ibdata*, undo*) under {}",
                        crate::output::path(p)
                    ),
                    "give the datadir or the tablespace files themselves",
                )
                .into());
            }
        } else if meta.is_file() {
            out.push(Found {
                path: p.clone(),
                error: None,
            });
        } else {
            return Err(Fix::new(
                format!(
                    "{} is {}, not a tablespace file",
                    crate::output::path(p),
                    kind_of(&meta.file_type())
                ),
                "give regular tablespace files (*.ibd, ibdata*, undo*) or a datadir",
            )
            .into());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<Found>, seen: &mut HashSet<(u64, u64)>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(md) = std::fs::metadata(dir) {
        if !seen.insert((md.dev(), md.ino())) {
            return Ok(());
        }
    }
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Fix::new(
            format!("cannot list {}: {e}", crate::output::path(dir)),
            "check permissions on the directory",
        )
    })?;
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(mut ft) = e.file_type() else { continue };
        let named = is_tablespace_name(&e.file_name().to_string_lossy());
        if ft.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(md) => ft = md.file_type(),
                Err(err) if named => {
                    out.push(Found {
                        error: Some(format!(
                            "{} is a symbolic link to nothing readable: {err}",
                            crate::output::path(&path)
                        )),
                        path,
                    });
                    continue;
                }
                Err(_) => continue,
            }
        }
        if ft.is_dir() {
            walk(&path, out, seen)?;
        } else if named {
            let error = (!ft.is_file()).then(|| {
                format!(
                    "{} is {}, not a tablespace file",
                    crate::output::path(&path),
                    kind_of(&ft)
                )
            });
            out.push(Found { path, error });
        }
    }
    Ok(())
}

/// Which page numbers of a file to check (`--start-page/--end-page/--page`,
/// 0-based and inclusive, as innochecksum).
#[derive(Debug, Clone, Copy)]
pub struct PageRange {
    pub start: u64,
    /// Inclusive; `u64::MAX` means to the end.
    pub end: u64,
}

impl PageRange {
    /// Clamp to a file of `pages` pages: half-open `[start, end)`.
    pub fn clamp(&self, pages: u64) -> (u64, u64) {
        let end = self.end.saturating_add(1).min(pages);
        (self.start.min(end), end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for n in ["t.ibd", "mysql.ibd", "ibdata1", "undo001", "undo_002"] {
            assert!(is_tablespace_name(n), "{n}");
        }
        for n in ["ibtmp1", "ib_logfile0", "t.frm", "aria_log.00000001"] {
            assert!(!is_tablespace_name(n), "{n}");
        }
    }

    #[test]
    fn range_clamps() {
        let r = PageRange { start: 2, end: 5 };
        assert_eq!(r.clamp(10), (2, 6));
        assert_eq!(r.clamp(4), (2, 4));
        assert_eq!(r.clamp(1), (1, 1));
        let all = PageRange {
            start: 0,
            end: u64::MAX,
        };
        assert_eq!(all.clamp(7), (0, 7));
    }
}
