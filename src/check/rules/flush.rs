//! innodb_flush_method: O_DIRECT, so data pages are not cached twice (in
//! the buffer pool and the page cache).

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.flush_method",
    layer: crate::finding::Layer::Server,
    // MariaDB 11 deprecates the variable for innodb_data_file_buffering.
    scope: Scope::Server(Versions {
        mysql: &[(5, 7), (8, 0), (8, 4)],
        mariadb: &[10],
    }),
    about: "innodb_flush_method O_DIRECT (no double buffering)",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    if f.mount.as_ref().is_some_and(|m| m.fs_type == "tmpfs") {
        return Vec::new(); // O_DIRECT is refused there
    }
    let m = s.var("innodb_flush_method").unwrap_or("").to_string();
    let up = m.to_ascii_uppercase();
    // 5.7 shows NULL/empty for the default, fsync.
    let buffered = matches!(
        up.as_str(),
        "" | "NULL" | "FSYNC" | "0" | "LITTLESYNC" | "NOSYNC" | "O_DSYNC"
    );
    if !buffered {
        return Vec::new();
    }
    vec![server_advice(
        s,
        "server.flush_method",
        Severity::Notice,
        "innodb_flush_method",
        "O_DIRECT",
        format!(
            "innodb_flush_method {} writes data files through the page cache: every page is cached twice (buffer pool and page cache), memory the buffer pool could use, and checkpoints flush through the kernel's writeback. O_DIRECT (MariaDB's default since 10.6, MySQL's in 8.4) bypasses it; takes effect at restart.",
            if m.is_empty() { "fsync (the default)" } else { m.as_str() }
        ),
        Source::RuleOfThumb,
        "pt-variable-advisor rule flush_method; MySQL manual, optimizing InnoDB disk I/O".into(),
    )]
}
