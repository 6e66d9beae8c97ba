//! `SET GLOBAL` (or `SET PERSIST` on MySQL 8.0.11+) of one server
//! variable: its previous value and whether it was persisted are kept.
//!
//! The connection is stored as an endpoint (socket or host:port, user, and
//! the option file innotune was given, `--defaults-file`): undo reconnects
//! and reads the password from option files again. A password is never
//! stored in the journal.

use super::{Change, Outcome, Priority, Undone};
use crate::db::{parse_size, ServerEndpoint};
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `SET GLOBAL` (or `SET PERSIST` on MySQL 8) of one variable. The
/// connection is stored as an endpoint (socket or host:port, user, the
/// option file innotune was given): the password is read from option files
/// again when undoing, never stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerVariable {
    pub endpoint: ServerEndpoint,
    pub name: String,
    pub value: String,
    /// SET PERSIST instead of SET GLOBAL.
    pub persist: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// MySQL 8: whether it was already in mysqld-auto.cnf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was_persisted: Option<bool>,
}

fn valid_var_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value as an SQL literal: numbers and keywords bare, else quoted.
fn literal(v: &str) -> String {
    if v.parse::<f64>().is_ok()
        || ["ON", "OFF", "TRUE", "FALSE", "DEFAULT"].contains(&v.to_ascii_uppercase().as_str())
    {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''"))
    }
}

impl ServerVariable {
    pub fn new(endpoint: &ServerEndpoint, name: &str, value: &str, persist: bool) -> Self {
        ServerVariable {
            endpoint: endpoint.clone(),
            name: name.into(),
            value: value.into(),
            persist,
            original: None,
            was_persisted: None,
        }
    }

    fn connect(&self) -> Result<mysql::Conn> {
        let e = &self.endpoint;
        let args = crate::db::ConnArgs {
            socket: e.socket.as_ref().map(PathBuf::from),
            host: e.host.clone(),
            port: e.port,
            user: Some(e.user.clone()),
            defaults_file: e.defaults_file.as_ref().map(PathBuf::from),
            no_defaults: e.no_defaults,
            ..Default::default()
        };
        args.resolve(&Host::live())?.connect()
    }
    fn read(&self, c: &mut mysql::Conn) -> Result<Option<String>> {
        use mysql::prelude::Queryable;
        let r: Option<(String, String)> =
            c.query_first(format!("SHOW GLOBAL VARIABLES LIKE '{}'", self.name))?;
        Ok(r.map(|(_, v)| v))
    }
    fn set(&self, c: &mut mysql::Conn, v: &str, persist: bool) -> Result<()> {
        use mysql::prelude::Queryable;
        let verb = if persist { "PERSIST" } else { "GLOBAL" };
        c.query_drop(format!("SET {verb} {} = {}", self.name, literal(v)))
            .with_context(|| format!("SET {verb} {} = {v}", self.name))
    }
    /// Compare as the server shows values (ON/1, sizes as bytes).
    fn same(a: &str, b: &str) -> bool {
        let n = |s: &str| match s.to_ascii_uppercase().as_str() {
            "ON" | "TRUE" => "1".to_string(),
            "OFF" | "FALSE" => "0".to_string(),
            _ => parse_size(s)
                .map(|x| x.to_string())
                .unwrap_or_else(|| s.to_ascii_uppercase()),
        };
        n(a) == n(b)
    }
}

#[typetag::serde(name = "server_variable")]
impl Change for ServerVariable {
    fn target(&self) -> String {
        let at = self.endpoint.socket.clone().unwrap_or_else(|| {
            format!(
                "{}:{}",
                self.endpoint.host.as_deref().unwrap_or("?"),
                self.endpoint.port.unwrap_or(3306)
            )
        });
        format!("{}@{at}", self.name)
    }
    fn describe(&self) -> String {
        let verb = if self.persist {
            "SET PERSIST"
        } else {
            "SET GLOBAL"
        };
        match &self.original {
            Some(o) => format!("{verb} {}: {o} → {}", self.name, self.value),
            None => format!("{verb} {} = {}", self.name, self.value),
        }
    }
    fn capture(&mut self, _host: &Host) -> Result<()> {
        let mut c = self.connect()?;
        self.original = self.read(&mut c)?;
        if self.original.is_none() {
            bail!("the server has no variable {}", self.name);
        }
        if self.persist {
            use mysql::prelude::Queryable;
            let n: Option<u64> = c
                .query_first(format!(
                    "SELECT COUNT(*) FROM performance_schema.persisted_variables WHERE VARIABLE_NAME = '{}'",
                    self.name
                ))
                .ok()
                .flatten();
            self.was_persisted = n.map(|n| n > 0);
        }
        Ok(())
    }
    fn apply(&mut self, _host: &Host) -> Result<()> {
        let mut c = self.connect()?;
        self.set(&mut c, &self.value, self.persist)
    }
    fn is_applied(&self, _host: &Host) -> Result<bool> {
        let mut c = self.connect()?;
        Ok(self
            .read(&mut c)?
            .is_some_and(|v| Self::same(&v, &self.value)))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let Some(orig) = &self.original else {
            return Undone::outcome(Outcome::Gone);
        };
        let mut c = match self.connect() {
            Ok(c) => c,
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: crate::error::one_line(&e),
                })
            }
        };
        let now = match self.read(&mut c) {
            Ok(Some(v)) => v,
            Ok(None) => return Undone::outcome(Outcome::Gone),
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: crate::error::one_line(&e),
                })
            }
        };
        let mut u = Undone::outcome(Outcome::Restored);
        u.original = Some(orig.clone());
        u.found = Some(now.clone());
        if Self::same(&now, orig) && !self.persist {
            u.outcome = Outcome::AlreadyOriginal;
            return u;
        }
        if dry_run {
            u.outcome = Outcome::WouldRestore;
            return u;
        }
        let r = if self.persist && self.was_persisted != Some(true) {
            use mysql::prelude::Queryable;
            self.set(&mut c, orig, false).and_then(|_| {
                c.query_drop(format!("RESET PERSIST IF EXISTS {}", self.name))
                    .map_err(Into::into)
            })
        } else {
            self.set(&mut c, orig, self.persist)
        };
        if let Err(e) = r {
            u.outcome = Outcome::Failed {
                reason: crate::error::one_line(&e),
            };
        }
        u
    }
    /// A `_max` variable raised by apply is undone after its base, one
    /// lowered before it: the server adjusts the pair to keep max ≥ base
    /// (MariaDB lowers innodb_io_capacity with innodb_io_capacity_max).
    fn priority(&self) -> Priority {
        let base = Priority::SERVER_VARIABLE.0;
        if !self.name.ends_with("_max") {
            return Priority::SERVER_VARIABLE;
        }
        let num = |s: &str| s.parse::<f64>().ok();
        match (self.original.as_deref().and_then(num), num(&self.value)) {
            (Some(o), Some(v)) if v > o => Priority(base + 1),
            (Some(o), Some(v)) if v < o => Priority(base - 1),
            _ => Priority::SERVER_VARIABLE,
        }
    }
    fn validate(&self) -> Result<(), String> {
        if !valid_var_name(&self.name) {
            return Err(format!("{:?} is not a server variable name", self.name));
        }
        if let Some(f) = &self.endpoint.defaults_file {
            if !std::path::Path::new(f).is_absolute() {
                return Err(format!("option file {f:?} is not an absolute path"));
            }
        }
        Ok(())
    }
}
