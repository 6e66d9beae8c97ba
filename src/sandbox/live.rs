//! `sandbox start --from-live`: the sandbox's data from a running server.
//! `mariadb-backup --backup` then `--prepare` into DIR/data when it is
//! installed (a physical copy: every schema, the grants too), else a
//! logical copy: `mysqldump` of every schema but the system ones, loaded
//! into the freshly initialised sandbox with the `mysql` client. Either is
//! refused in one line, before DIR is made, when the schemas to copy hold
//! more than `--max-size`.
//!
//! Credentials as everywhere: the live server's connection options come
//! from option files and innotune's flags; the tools get them in a 0600
//! option file inside DIR (removed once copied), never on their command
//! line.

use crate::db::ConnSpec;
use crate::error::Fix;
use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How the copy is made.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum CopyMethod {
    /// mariadb-backup when installed, else logical.
    Auto,
    /// mariadb-backup --backup + --prepare (physical).
    Backup,
    /// mysqldump of the non-system schemas.
    Logical,
}

/// Schemas never copied by the logical path (the sandbox has its own).
const SYSTEM: &[&str] = &["mysql", "information_schema", "performance_schema", "sys"];

/// What was found on the live server, before anything is made.
#[derive(Debug, Clone)]
pub struct Live {
    pub spec: ConnSpec,
    pub datadir: PathBuf,
    pub schemas: Vec<String>,
    /// data_length + index_length of the schemas to copy.
    pub bytes: u64,
    pub method: CopyMethod,
    pub tool: PathBuf,
}

/// Look at the live server: its datadir, its schemas and their size;
/// refuse above `max_size`, or with a DIR at or in its datadir.
pub fn survey(spec: ConnSpec, dir: &Path, method: CopyMethod, max_size: u64) -> Result<Live> {
    let mut c = spec.connect()?;
    let q = |c: &mut mysql::Conn, sql: &str| -> Result<Vec<mysql::Row>> {
        c.query(sql)
            .map_err(|e| anyhow::anyhow!("{}: {}", sql, crate::db::one_line(&e)))
    };
    let datadir: String = q(&mut c, "SELECT @@datadir")?
        .first()
        .and_then(|r| r.get::<String, _>(0))
        .unwrap_or_default();
    let datadir = PathBuf::from(datadir.trim_end_matches('/'));
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    if !datadir.as_os_str().is_empty() && (abs.starts_with(&datadir) || datadir.starts_with(&abs)) {
        return Err(Fix::new(
            format!(
                "{} is at, in or around the live server's datadir {}; nothing was copied",
                dir.display(),
                datadir.display()
            ),
            "give --dir a directory outside every datadir (e.g. under /var/tmp or the filesystem under test)",
        )
        .into());
    }
    let mut schemas: Vec<String> = q(
        &mut c,
        "SELECT schema_name FROM information_schema.schemata ORDER BY 1",
    )?
    .into_iter()
    .filter_map(|r| r.get::<String, _>(0))
    .filter(|s| !SYSTEM.contains(&s.to_ascii_lowercase().as_str()))
    .collect();
    schemas.sort();
    let in_list = schemas
        .iter()
        .map(|s| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",");
    let bytes: u64 = if schemas.is_empty() {
        0
    } else {
        q(
            &mut c,
            &format!(
                "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS UNSIGNED) FROM information_schema.tables WHERE table_schema IN ({in_list})"
            ),
        )?
        .first()
        .and_then(|r| r.get::<u64, _>(0))
        .unwrap_or(0)
    };
    if bytes > max_size {
        return Err(Fix::new(
            format!(
                "the live server's schemas ({}) hold {}, more than --max-size {}; nothing was copied",
                schemas.join(", "),
                crate::units::fmt_size(bytes),
                crate::units::fmt_size(max_size)
            ),
            "raise --max-size if the filesystem under DIR has the room, or copy a smaller server",
        )
        .into());
    }
    let is_mariadb = crate::db::server_version(&mut c)?.is_mariadb();
    let backup = super::process::find_binary(&["mariadb-backup", "mariabackup"]);
    let dump = super::process::find_binary(&["mariadb-dump", "mysqldump"]);
    let (method, tool) = match (method, backup, dump) {
        (CopyMethod::Auto | CopyMethod::Backup, Some(b), _) if is_mariadb => (CopyMethod::Backup, b),
        (CopyMethod::Backup, _, _) => {
            return Err(Fix::new(
                "--copy-method backup needs mariadb-backup and a MariaDB server",
                "install mariadb-backup (Debian: apt-get install mariadb-backup), or give --copy-method logical",
            )
            .into())
        }
        (_, _, Some(d)) => (CopyMethod::Logical, d),
        (_, _, None) => {
            return Err(Fix::new(
                "neither mariadb-backup nor mysqldump is installed",
                "install mariadb-backup or the client package (mariadb-client, mysql-client)",
            )
            .into())
        }
    };
    Ok(Live {
        spec,
        datadir,
        schemas,
        bytes,
        method,
        tool,
    })
}

impl Live {
    /// The live server's connection as an option file the tools read
    /// (0600, in DIR); removed by the caller once the copy is done.
    fn option_file(&self, dir: &Path) -> Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join("tmp").join("innotune-live.cnf");
        let s = &self.spec;
        let mut t = format!("[client]\nuser={}\n", s.user);
        match &s.socket {
            Some(sock) => t.push_str(&format!("socket={}\n", sock.display())),
            None => t.push_str(&format!("host={}\nport={}\nprotocol=tcp\n", s.host, s.port)),
        }
        if let Some(p) = &s.password {
            t.push_str(&format!(
                "password=\"{}\"\n",
                p.expose().replace('\\', "\\\\").replace('"', "\\\"")
            ));
        }
        t.push_str(&format!("[mysqld]\ndatadir={}\n", self.datadir.display()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        f.write_all(t.as_bytes())?;
        f.sync_all()?;
        Ok(path)
    }

    /// Physical copy into `data` (empty), prepared: before the sandbox
    /// server first starts on it.
    pub fn backup_into(&self, dir: &Path, data: &Path) -> Result<()> {
        let cnf = self.option_file(dir)?;
        let r = (|| {
            run(
                Command::new(&self.tool)
                    .arg(format!("--defaults-file={}", cnf.display()))
                    .arg("--backup")
                    .arg(format!("--target-dir={}", data.display())),
                "mariadb-backup --backup",
            )?;
            run(
                Command::new(&self.tool)
                    .arg("--no-defaults")
                    .arg("--prepare")
                    .arg(format!("--target-dir={}", data.display())),
                "mariadb-backup --prepare",
            )
        })();
        let _ = std::fs::remove_file(&cnf);
        r
    }

    /// Logical copy: the live schemas dumped into the running sandbox
    /// (`sandbox_cnf`: its my.cnf, whose [client] group reaches it).
    pub fn dump_into(&self, dir: &Path, sandbox_cnf: &Path) -> Result<()> {
        if self.schemas.is_empty() {
            return Ok(());
        }
        let cnf = self.option_file(dir)?;
        let r = (|| {
            let mut dump = Command::new(&self.tool);
            dump.arg(format!("--defaults-file={}", cnf.display()))
                .args([
                    "--single-transaction",
                    "--routines",
                    "--triggers",
                    "--events",
                    "--databases",
                ])
                .args(&self.schemas)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut d = dump.spawn().context("starting mysqldump")?;
            let out = d.stdout.take().context("mysqldump's output")?;
            let client = super::process::find_binary(&["mariadb", "mysql"]).ok_or_else(|| {
                Fix::new(
                    "no mariadb or mysql client found",
                    "install the client package (mariadb-client)",
                )
            })?;
            let load = Command::new(client)
                .arg(format!("--defaults-file={}", sandbox_cnf.display()))
                .stdin(Stdio::from(out))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .context("loading the dump into the sandbox")?;
            let dumped = d.wait_with_output().context("waiting for mysqldump")?;
            if !dumped.status.success() {
                anyhow::bail!(Fix::new(
                    format!("mysqldump of the live server failed ({}): {}", dumped.status, last_line(&dumped.stderr)),
                    "check the live server's connection options and the user's privileges (SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES)",
                ));
            }
            if !load.status.success() {
                anyhow::bail!(Fix::new(
                    format!(
                        "loading the dump into the sandbox failed ({}): {}",
                        load.status,
                        last_line(&load.stderr)
                    ),
                    "read the sandbox's error.log; the sandbox was removed",
                ));
            }
            Ok(())
        })();
        let _ = std::fs::remove_file(&cnf);
        r
    }
}

fn last_line(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {what}"))?;
    if !out.status.success() {
        anyhow::bail!(Fix::new(
            format!("{what} failed ({}): {}", out.status, last_line(&out.stderr)),
            "check the live server's connection options, and that this user can read its datadir",
        ));
    }
    Ok(())
}
