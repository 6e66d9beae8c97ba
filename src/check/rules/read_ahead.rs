//! read_ahead_kb of the device the filesystem reads through, when InnoDB's
//! reads go through the page cache on an SSD.
//!
//! With O_DIRECT (the default of MariaDB ≥ 10.6 and MySQL 8.4) InnoDB's
//! data files bypass the page cache and read-ahead never applies to them;
//! the rule then stays silent. With buffered reads, every 16 KiB page read
//! may pull in a read-ahead window: on an SSD nothing is gained by it.

use super::{finding, Advice, Rule, Scope, Setting};
use crate::check::facts::Facts;
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "storage.read_ahead",
    layer: Layer::Storage,
    scope: Scope::Host,
    about: "read_ahead_kb on SSDs when InnoDB reads through the page cache",
    run,
};

/// The kernel's default window (VM_READAHEAD_PAGES: 128 KiB).
const KERNEL_DEFAULT_KB: u64 = 128;

/// Does InnoDB read its data files through the page cache?
pub fn innodb_buffered(f: &Facts) -> Option<bool> {
    let s = f.server.as_ref()?;
    if s.is_mariadb() && s.at_least(11, 0, 0) {
        if let Some(b) = s.var_on("innodb_data_file_buffering") {
            return Some(b);
        }
    }
    let m = s.var("innodb_flush_method")?.to_ascii_uppercase();
    Some(!(m.starts_with("O_DIRECT") || m == "4" || m == "ALL_O_DIRECT"))
}

fn run(f: &Facts) -> Vec<Advice> {
    if innodb_buffered(f) != Some(true) {
        return Vec::new();
    }
    // The mounted device, or the disk of a mounted partition: its queue's
    // read_ahead_kb is the filesystem's window.
    let Some(top) = f
        .devices
        .iter()
        .find(|d| !d.partition && (d.depth == 0 || d.relation == "whole_disk"))
    else {
        return Vec::new();
    };
    match (top.rotational, top.read_ahead_kb) {
        (Some(false), Some(ra)) if ra > KERNEL_DEFAULT_KB => {
            vec![Advice::new(
                finding(
                    "storage.read_ahead",
                    Severity::Notice,
                    Layer::Storage,
                    SubjectKind::Device,
                    &top.name,
                    ra.to_string(),
                    format!(
                        "InnoDB reads its pages through the page cache (innodb_flush_method is not O_DIRECT), and {} is an SSD with a {ra} KiB read-ahead window: random 16 KiB page reads pull in data nobody asked for. The kernel's default window is enough for sequential scans.",
                        top.name
                    ),
                )
                .recommend(KERNEL_DEFAULT_KB.to_string())
                .evidence(
                    Source::Observed,
                    format!("queue/read_ahead_kb {ra}, rotational 0"),
                ),
            )
            .set(Setting::queue(
                &top.name,
                "read_ahead_kb",
                &KERNEL_DEFAULT_KB.to_string(),
            ))]
        }
        _ => Vec::new(),
    }
}
