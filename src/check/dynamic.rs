//! Which server variables `SET GLOBAL` can change on which server, so
//! `apply` changes them at runtime and writes the rest to the drop-in only
//! (to take effect at the next restart).
//!
//! From the MySQL reference manual's "Dynamic" row of each variable and
//! MariaDB's knowledge base ("Dynamic: Yes (>= MariaDB 10.9)"); checked on
//! MariaDB 10.11 for the ones whose answer changed between releases.

use super::facts::ServerFacts;

/// Can `SET GLOBAL name = …` change it on this server?
pub fn is_dynamic(s: &ServerFacts, name: &str) -> bool {
    let maria = s.is_mariadb();
    match name {
        // Resizable online since MySQL 5.7.5 and MariaDB 10.2.2.
        "innodb_buffer_pool_size" => {
            if maria {
                s.at_least(10, 2, 2)
            } else {
                s.at_least(5, 7, 5)
            }
        }
        // MySQL 8.0.30 introduced it, dynamic from the start.
        "innodb_redo_log_capacity" => !maria && s.at_least(8, 0, 30),
        // MariaDB 10.9 resizes the redo log online (MDEV-27812).
        "innodb_log_file_size" => maria && s.at_least(10, 9, 0),
        // MySQL 8.0 made it dynamic; MariaDB 10.11 reports it read-only.
        "innodb_log_buffer_size" => !maria && s.at_least(8, 0, 0),
        // MariaDB 10.11 changes the I/O thread counts online; MySQL does not.
        "innodb_read_io_threads" | "innodb_write_io_threads" => maria && s.at_least(10, 11, 0),
        "innodb_io_capacity"
        | "innodb_io_capacity_max"
        | "innodb_flush_log_at_trx_commit"
        | "sync_binlog"
        | "tmp_table_size"
        | "max_heap_table_size"
        | "query_cache_type"
        | "query_cache_size"
        | "innodb_file_per_table"
        | "max_connections"
        | "slow_query_log"
        | "long_query_time"
        | "innodb_max_dirty_pages_pct"
        | "innodb_flush_neighbors"
        | "innodb_lru_scan_depth"
        | "innodb_adaptive_hash_index"
        | "innodb_change_buffering"
        | "table_open_cache" => true,
        // innodb_flush_method, innodb_buffer_pool_chunk_size,
        // innodb_numa_interleave, open_files_limit, innodb_use_native_aio…
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::server;

    #[test]
    fn by_version() {
        let m = server("mariadb", 10, 11, 19);
        assert!(is_dynamic(&m, "innodb_log_file_size"));
        assert!(!is_dynamic(&m, "innodb_log_buffer_size"));
        assert!(!is_dynamic(&m, "innodb_flush_method"));
        let old = server("mariadb", 10, 6, 12);
        assert!(!is_dynamic(&old, "innodb_log_file_size"));
        let my = server("mysql", 8, 0, 36);
        assert!(is_dynamic(&my, "innodb_redo_log_capacity"));
        assert!(is_dynamic(&my, "innodb_log_buffer_size"));
        assert!(!is_dynamic(&my, "innodb_log_file_size"));
        assert!(!is_dynamic(
            &server("mysql", 8, 0, 29),
            "innodb_redo_log_capacity"
        ));
    }
}
