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

/// A value as an SQL literal: numbers and keywords bare, sizes with a
/// suffix (`128M`, which SET GLOBAL does not take) as bytes, else quoted.
fn literal(v: &str) -> String {
    let sized = v.len() > 1
        && v[..v.len() - 1].chars().all(|c| c.is_ascii_digit())
        && v.ends_with(['k', 'K', 'm', 'M', 'g', 'G', 't', 'T']);
    if let Some(b) = sized.then(|| parse_size(v)).flatten() {
        return b.to_string();
    }
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

    /// What the server holds for this variable now (None: it has no such
    /// variable), read over a fresh connection to the endpoint.
    pub fn current(&self) -> Result<Option<String>> {
        let mut c = self.connect()?;
        self.read(&mut c)
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
        use std::time::Duration;
        const SET_TIMEOUT: Duration = Duration::from_secs(120);
        use mysql::prelude::Queryable;
        let verb = if persist { "PERSIST" } else { "GLOBAL" };
        // Some SETs wait for the server's work to drain: MariaDB 10.11
        // resizes its I/O thread pools in the statement, and under a
        // search's OLTP load `SET GLOBAL innodb_write_io_threads = 4` took
        // longer than the 10 s every statement gets (bench/search-gain.sh,
        // 2026-11-29: "Resource temporarily unavailable", the search
        // ended). Still bounded, as every network wait is.
        crate::db::set_io_timeout(c, Some(SET_TIMEOUT))?;
        c.query_drop(format!("SET {verb} {} = {}", self.name, literal(v)))
            .with_context(|| format!("SET {verb} {} = {v}", self.name))
    }
    /// Compare as the server shows values (ON/1, sizes as bytes).
    pub fn same(a: &str, b: &str) -> bool {
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
    /// One entry per variable and server in a run: undoing it puts back
    /// what the server held before every later SET (`prove` switches a
    /// variable between rounds).
    fn journal_once(&self) -> bool {
        true
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
    /// Only a variable a rule may change
    /// ([`super::allowed::SERVER_VARIABLES`]; never `general_log_file`
    /// and the like), values that are words or numbers, and an endpoint
    /// innotune stores: an absolute socket path or a host name, a user, an
    /// absolute option file. (That the endpoint is one the run recorded is
    /// the journal's check: `journal::restore::validate_entries`.)
    fn validate(&self) -> Result<(), String> {
        if !valid_var_name(&self.name) {
            return Err(format!("{:?} is not a server variable name", self.name));
        }
        let known = super::allowed::SERVER_VARIABLES;
        if !known.contains(&self.name.as_str()) {
            return Err(format!(
                "{} is not a server variable innotune changes (only {})",
                self.name,
                known.join(", ")
            ));
        }
        let value = |v: &str| {
            v.len() <= 64
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        };
        if let Some(v) = std::iter::once(&self.value)
            .chain(self.original.iter())
            .find(|v| !value(v))
        {
            return Err(format!("{}: {v:?} is not a value innotune sets", self.name));
        }
        let e = &self.endpoint;
        let path = |f: &String| super::plain_abs(std::path::Path::new(f));
        if let Some(s) = e.socket.as_ref().filter(|s| !path(s)) {
            return Err(format!("socket {s:?} is not a plain absolute path"));
        }
        if let Some(f) = e.defaults_file.as_ref().filter(|f| !path(f)) {
            return Err(format!("option file {f:?} is not a plain absolute path"));
        }
        let host = |h: &String| {
            !h.is_empty()
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'))
        };
        if let Some(h) = e.host.as_ref().filter(|h| !host(h)) {
            return Err(format!("host {h:?} is not a host name or address"));
        }
        if e.socket.is_none() && e.host.is_none() {
            return Err("the endpoint names neither a socket nor a host".into());
        }
        if e.user.is_empty()
            || e.user
                .chars()
                .any(|c| c.is_control() || c == '\'' || c == '\\')
        {
            return Err(format!("user {:?} is not one innotune connects as", e.user));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_set_as_bytes_and_words_quoted() {
        assert_eq!(literal("128M"), "134217728");
        assert_eq!(literal("1g"), "1073741824");
        assert_eq!(literal("2000"), "2000");
        assert_eq!(literal("ON"), "ON");
        assert_eq!(literal("O_DIRECT"), "'O_DIRECT'");
        assert_eq!(literal("M"), "'M'");
    }

    #[test]
    fn only_rule_variables_with_plain_values_at_a_stored_endpoint_validate() {
        let ep = ServerEndpoint {
            socket: Some("/run/mysqld/mysqld.sock".into()),
            user: "root".into(),
            ..Default::default()
        };
        let mut c = ServerVariable::new(&ep, "innodb_io_capacity", "2000", false);
        c.original = Some("200".into());
        assert!(c.validate().is_ok());
        for name in [
            "general_log_file",
            "general_log",
            "init_connect",
            "plugin_dir",
        ] {
            assert!(
                ServerVariable::new(&ep, name, "1", false)
                    .validate()
                    .is_err(),
                "{name}"
            );
        }
        for bad in ["/tmp/evil.log", "a b", "x'; DROP", ""] {
            let mut c = c.clone();
            c.original = Some(bad.into());
            // An empty original is a value the server may show; only
            // paths, spaces and quotes are refused.
            assert_eq!(c.validate().is_err(), !bad.is_empty(), "{bad:?}");
        }
        let mut e = ep.clone();
        e.socket = Some("relative.sock".into());
        assert!(ServerVariable::new(&e, "max_connections", "1", false)
            .validate()
            .is_err());
        e.socket = None;
        assert!(ServerVariable::new(&e, "max_connections", "1", false)
            .validate()
            .is_err());
        e.host = Some("db1.example".into());
        e.port = Some(3307);
        assert!(ServerVariable::new(&e, "max_connections", "1", false)
            .validate()
            .is_ok());
        e.host = Some("db1/../x".into());
        assert!(ServerVariable::new(&e, "max_connections", "1", false)
            .validate()
            .is_err());
    }
}
