//! Server limits a run needs, checked before any worker starts.
//!
//! At hundreds of threads a run fails part-way on the server's limits:
//! `max_connections` (one connection per worker plus the status sampler)
//! and `max_prepared_stmt_count` (every worker prepares its statements for
//! every table). sysbench fails the same way, after starting; checking
//! first turns a half-started run into one line naming the variable and
//! the value it needs. Clients already connected and statements already
//! prepared by others count against the same limits, so they are counted.

use super::OltpOptions;
use crate::db::ConnSpec;
use crate::error::Fix;
use anyhow::{Context, Result};
use mysql::prelude::Queryable;

/// What a run at `threads` threads needs of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// Worker connections plus the status connection.
    pub connections: u64,
    /// Server-side prepared statements across all workers.
    pub prepared_statements: u64,
}

/// The needs of `opts` at `threads` threads.
pub fn needs(opts: &OltpOptions, threads: u32) -> Needs {
    let per_conn = super::workload::statements_per_connection(&opts.effective());
    Needs {
        connections: threads as u64 + 1,
        prepared_statements: per_conn * threads as u64,
    }
}

/// What the server allows and what others use now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server {
    pub max_connections: u64,
    /// Connected clients other than the connection that asked.
    pub others_connected: u64,
    pub max_prepared_stmt_count: u64,
    /// Statements prepared now by other clients.
    pub prepared_now: u64,
}

/// Read the limits and current use.
pub fn read(conn: &mut mysql::Conn) -> Result<Server> {
    let (max_connections, max_prepared_stmt_count): (u64, u64) = conn
        .query_first("SELECT @@max_connections, @@max_prepared_stmt_count")?
        .unwrap_or((0, 0));
    let connected = status_var(conn, "Threads_connected")?;
    let prepared_now = status_var(conn, "Prepared_stmt_count")?;
    Ok(Server {
        max_connections,
        others_connected: connected.saturating_sub(1),
        max_prepared_stmt_count,
        prepared_now,
    })
}

fn status_var(conn: &mut mysql::Conn, name: &str) -> Result<u64> {
    let v: Option<(String, String)> =
        conn.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
    Ok(v.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
}

/// Refuse with the variable and the value it needs, or pass.
pub fn check(server: &Server, needs: &Needs, threads: u32, opts: &OltpOptions) -> Result<()> {
    let conns = needs.connections + server.others_connected;
    if conns > server.max_connections {
        anyhow::bail!(Fix::new(
            format!(
                "max_connections is {} but {threads} threads need {conns} connections ({threads} workers, 1 status connection, {} other clients connected now)",
                server.max_connections, server.others_connected
            ),
            format!("SET GLOBAL max_connections = {conns} (or more) on the server, or run fewer --threads"),
        ));
    }
    let stmts = needs.prepared_statements + server.prepared_now;
    if needs.prepared_statements > 0 && stmts > server.max_prepared_stmt_count {
        anyhow::bail!(Fix::new(
            format!(
                "max_prepared_stmt_count is {} but {threads} threads × {} statements ({} tables) need {stmts} ({} prepared by others now)",
                server.max_prepared_stmt_count,
                needs.prepared_statements / threads.max(1) as u64,
                opts.tables,
                server.prepared_now
            ),
            format!(
                "SET GLOBAL max_prepared_stmt_count = {stmts} (or more) on the server, or run fewer --threads or --tables, or --db-ps-mode disable"
            ),
        ));
    }
    Ok(())
}

/// Check the server behind `spec` (asked on `conn`, which counts as the
/// one connection that asks) for a run at `threads` threads.
pub fn check_server(
    conn: &mut mysql::Conn,
    spec: &ConnSpec,
    opts: &OltpOptions,
    threads: u32,
) -> Result<()> {
    let server =
        read(conn).with_context(|| format!("reading server limits at {}", spec.describe()))?;
    check(&server, &needs(opts, threads), threads, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oltp::Workload;

    #[test]
    fn needs_and_messages() {
        let o = OltpOptions {
            tables: 4,
            ..Default::default()
        };
        // oltp_read_write: BEGIN, COMMIT, and 9 statements per table.
        let n = needs(&o, 512);
        assert_eq!(n.connections, 513);
        assert_eq!(n.prepared_statements, 512 * (2 + 9 * 4));
        let srv = Server {
            max_connections: 151,
            others_connected: 2,
            max_prepared_stmt_count: 16382,
            prepared_now: 0,
        };
        let e = check(&srv, &n, 512, &o).unwrap_err().to_string();
        assert!(
            e.contains("max_connections is 151") && e.contains("= 515"),
            "{e}"
        );
        let srv = Server {
            max_connections: 2000,
            ..srv
        };
        let e = check(&srv, &n, 512, &o).unwrap_err().to_string();
        assert!(
            e.contains("max_prepared_stmt_count is 16382") && e.contains("= 19456"),
            "{e}"
        );
        // Text protocol and oltp_insert prepare nothing.
        let text = OltpOptions {
            ps: false,
            ..o.clone()
        };
        assert_eq!(needs(&text, 512).prepared_statements, 0);
        let ins = OltpOptions {
            workload: Workload::OltpInsert,
            ..o
        };
        assert_eq!(needs(&ins, 512).prepared_statements, 0);
        check(&srv, &needs(&ins, 512), 512, &ins).unwrap();
    }
}
