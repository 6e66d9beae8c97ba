//! `oltp … prepare` and `cleanup`: sysbench 1.0.20's schema and bulk load
//! (`oltp_common.lua`: CREATE TABLE text, multi-row INSERTs of at most
//! 512 KiB, CREATE INDEX after loading), and dropping the tables again.
//!
//! Loading and indexing take time in proportion to the data, so those
//! statements run without the connection's statement timeout (see
//! `db::set_io_timeout`); the quick ones (CREATE DATABASE, SHOW TABLES)
//! keep it.

use super::rand::{Rand, C_TEMPLATE, PAD_TEMPLATE};
use super::result::{PrepareResult, PreparedTable};
use super::{OltpOptions, Workload};
use crate::db::ConnSpec;
use crate::error::Fix;
use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use std::time::Instant;

/// sysbench's BULK_PACKET_SIZE.
const BULK_PACKET: usize = 512 * 1024;

/// A load the server refused for want of space (ER_RECORD_FILE_FULL "The
/// table is full", ER_DISK_FULL) says where the fix is; any other error
/// is left as it is.
fn disk_full(e: mysql::Error) -> anyhow::Error {
    match &e {
        mysql::Error::MySqlError(me) if me.code == 1114 || me.code == 1021 => Fix::new(
            format!("{} (error {})", me.message, me.code),
            "the server's disk is full: free space on the filesystem of its datadir, or load fewer rows",
        )
        .into(),
        _ => e.into(),
    }
}

fn create_table(
    conn: &mut mysql::Conn,
    o: &OltpOptions,
    n: u32,
    rng: &mut Rand,
) -> Result<PreparedTable> {
    let t0 = Instant::now();
    let id_def = if o.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let idx = if o.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    let ddl = ddl(n, id_def, idx, &o.storage_engine);
    crate::db::set_io_timeout(conn, None)?;
    conn.query_drop(&ddl).map_err(|e| match &e {
        mysql::Error::MySqlError(me) if me.code == 1050 => anyhow::Error::new(Fix::new(
            format!("table sbtest{n} already exists in {}", o.db),
            format!(
                "run `innotune oltp {} cleanup` with the same --tables first",
                o.workload.name()
            ),
        )),
        _ => anyhow::anyhow!("creating sbtest{n}: {e}"),
    })?;
    let rows = if o.workload == Workload::OltpInsert && !o.auto_inc {
        0
    } else {
        o.table_size
    };
    let prefix = if o.auto_inc {
        format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
    };
    let mut q = String::with_capacity(BULK_PACKET + 256);
    let mut row = String::with_capacity(256);
    let mut inserts = 0;
    let mut pending = 0;
    for i in 1..=rows {
        use std::fmt::Write;
        row.clear();
        let k = rng.default(1, o.table_size.max(1));
        if o.auto_inc {
            let _ = write!(row, "({k}, '");
        } else {
            let _ = write!(row, "({i}, {k}, '");
        }
        rng.fill_template(C_TEMPLATE, &mut row);
        row.push_str("', '");
        rng.fill_template(PAD_TEMPLATE, &mut row);
        row.push_str("')");
        if pending > 0 && q.len() + 1 + row.len() > BULK_PACKET {
            conn.query_drop(&q)
                .map_err(disk_full)
                .with_context(|| format!("loading sbtest{n}"))?;
            inserts += 1;
            pending = 0;
        }
        if pending == 0 {
            q.clear();
            q.push_str(&prefix);
        } else {
            q.push(',');
        }
        q.push_str(&row);
        pending += 1;
    }
    if pending > 0 {
        conn.query_drop(&q)
            .map_err(disk_full)
            .with_context(|| format!("loading sbtest{n}"))?;
        inserts += 1;
    }
    if o.create_secondary {
        conn.query_drop(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"))
            .map_err(disk_full)
            .with_context(|| format!("creating index k_{n}"))?;
    }
    Ok(PreparedTable {
        table: format!("sbtest{n}"),
        rows: rows as u64,
        inserts,
        seconds: t0.elapsed().as_secs_f64(),
        secondary_index: o.create_secondary,
    })
}

/// sysbench 1.0.20's CREATE TABLE text, byte for byte.
pub fn ddl(n: u32, id_def: &str, idx: &str, engine: &str) -> String {
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {idx} (id)\n) /*! ENGINE = {engine} */ "
    )
}

pub(super) fn check_name(db: &str) -> Result<()> {
    if db.is_empty()
        || !db
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    {
        anyhow::bail!(Fix::new(
            format!("database name {db:?} is not a plain identifier"),
            "use letters, digits and _ in --db"
        ));
    }
    Ok(())
}

/// Create the database (if missing) and the tables, in parallel: thread
/// `t` loads tables t+1, t+1+threads, … as sysbench does.
pub fn prepare(spec: &ConnSpec, opts: &OltpOptions, threads: u32) -> Result<PrepareResult> {
    check_name(&opts.db)?;
    let t0 = Instant::now();
    let mut c = spec.connect()?;
    c.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", opts.db))
        .context("CREATE DATABASE")?;
    drop(c);
    let spec_db = spec.clone().with_db(Some(&opts.db));
    let threads = threads.clamp(1, opts.tables.max(1));
    let seed = if opts.rand_seed == 0 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    } else {
        opts.rand_seed
    };
    let results: Vec<Result<Vec<PreparedTable>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|tid| {
                let spec_db = &spec_db;
                s.spawn(move || -> Result<Vec<PreparedTable>> {
                    let mut conn = spec_db.connect()?;
                    let mut rng = Rand::new(
                        &opts.rand,
                        seed ^ (tid as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    );
                    let mut out = Vec::new();
                    let mut i = tid + 1;
                    while i <= opts.tables {
                        out.push(create_table(&mut conn, opts, i, &mut rng)?);
                        i += threads;
                    }
                    Ok(out)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a prepare thread panicked")))
            })
            .collect()
    });
    let mut tables = Vec::new();
    for r in results {
        tables.extend(r?);
    }
    tables.sort_by_key(|t| {
        t.table
            .trim_start_matches("sbtest")
            .parse::<u32>()
            .unwrap_or(0)
    });
    let secs = t0.elapsed().as_secs_f64();
    let rows: u64 = tables.iter().map(|t| t.rows).sum();
    Ok(PrepareResult {
        tables,
        seconds: secs,
        rows_per_sec: if secs > 0.0 { rows as f64 / secs } else { 0.0 },
    })
}

/// Drop sbtest1..N (IF EXISTS, as sysbench).
pub fn cleanup(spec: &ConnSpec, opts: &OltpOptions) -> Result<Vec<String>> {
    check_name(&opts.db)?;
    let mut c = spec.clone().with_db(Some(&opts.db)).connect()?;
    crate::db::set_io_timeout(&c, None)?;
    let mut dropped = Vec::new();
    for i in 1..=opts.tables {
        c.query_drop(format!("DROP TABLE IF EXISTS sbtest{i}"))
            .with_context(|| format!("dropping sbtest{i}"))?;
        dropped.push(format!("sbtest{i}"));
    }
    Ok(dropped)
}

/// Refuse to run before prepare: every sbtest table must exist (asked on
/// `conn`, a connection to the server behind `spec`).
pub fn check_tables(conn: &mut mysql::Conn, spec: &ConnSpec, opts: &OltpOptions) -> Result<()> {
    check_name(&opts.db)?;
    for i in 1..=opts.tables {
        let n: Option<String> = conn
            .query_first(format!("SHOW TABLES FROM `{}` LIKE 'sbtest{i}'", opts.db))
            .with_context(|| format!("looking for sbtest{i} at {}", spec.describe()))?;
        if n.is_none() {
            anyhow::bail!(Fix::new(
                format!("table sbtest{i} does not exist in {}", opts.db),
                format!(
                    "run `innotune oltp {} prepare` with the same --tables and --table-size first",
                    opts.workload.name()
                )
            ));
        }
    }
    Ok(())
}
