//! Connecting to MySQL/MariaDB the way its own clients do.
//!
//! Every command that talks to a server flattens [`ConnArgs`] and calls
//! [`ConnArgs::resolve`] to get a [`ConnSpec`]; `ConnSpec::connect` opens a
//! connection. Precedence is libmysqlclient's: command line, then option
//! files (later files win), then `MYSQL_PWD` for the password only.
//!
//! Option files: unless `--no-defaults`, the chain is `/etc/my.cnf`,
//! `/etc/mysql/my.cnf`, `--defaults-extra-file`, `~/.my.cnf`
//! (`--defaults-file` replaces the whole chain), with `!include` and
//! `!includedir`. Groups read: `[client]`, `[client-server]` (MariaDB's
//! shared group) and `[innotune]`. `[mysql]` is deliberately not read: it
//! belongs to the `mysql` command-line client and carries its settings
//! (pager, prompt) that mean nothing here.
//!
//! Secrets: the password lives in [`Secret`], whose `Debug` prints
//! `<redacted>` and which is never serialised; nothing here logs it. A
//! password given on the command line is overwritten in this process's
//! argv at start-up ([`argv`]), as the MySQL clients do.
//!
//! Timeouts: no connection waits forever. `--connect-timeout` (10 s, the
//! mysql client's option and default) bounds the TCP connect, every read
//! and write of the handshake, and then every statement on the connection
//! ([`ConnSpec::connect`]). Statements whose duration grows with the data
//! (bulk loads, CREATE INDEX, DROP TABLE) lift the bound explicitly with
//! [`set_io_timeout`]; the OLTP hot path bounds its own waits
//! (`oltp::wire`).

pub mod argv;

use crate::error::Fix;
use crate::host::Host;
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// A password. `Debug`/`Display` never show it; it is not `Serialize`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    /// The clear text, for the one place that needs it: the handshake.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// Connection flags shared by every command that talks to MySQL. The
/// `--mysql-*` aliases accept sysbench's spellings.
#[derive(Debug, Clone, Default, Args)]
pub struct ConnArgs {
    /// Unix socket of the server (default: from option files, else /run/mysqld/mysqld.sock).
    #[arg(
        long,
        visible_alias = "mysql-socket",
        alias = "mysql_socket",
        value_name = "PATH"
    )]
    pub socket: Option<PathBuf>,
    /// Server host; `localhost` means the socket, as in the mysql client.
    #[arg(
        long = "host",
        visible_alias = "mysql-host",
        alias = "mysql_host",
        value_name = "HOST"
    )]
    pub host: Option<String>,
    /// TCP port (default 3306). Given without --host, connects to 127.0.0.1.
    #[arg(
        long,
        visible_alias = "mysql-port",
        alias = "mysql_port",
        value_name = "N"
    )]
    pub port: Option<u16>,
    /// User name (default: from option files, else the login name).
    #[arg(
        long,
        short = 'u',
        visible_alias = "mysql-user",
        alias = "mysql_user",
        value_name = "NAME"
    )]
    pub user: Option<String>,
    /// Password (`--password=X` or `-pX`); `--password`/`-p` alone prompts. On the command line it is wiped from ps at start-up but may stay in shell history: prefer ~/.my.cnf [client].
    #[arg(
        long,
        short = 'p',
        visible_alias = "mysql-password",
        alias = "mysql_password",
        value_name = "PASSWORD",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "\u{0}prompt"
    )]
    pub password: Option<Secret>,
    /// Read options only from this file.
    #[arg(long, alias = "defaults_file", value_name = "FILE")]
    pub defaults_file: Option<PathBuf>,
    /// Read this file after the global option files, before ~/.my.cnf.
    #[arg(long, alias = "defaults_extra_file", value_name = "FILE")]
    pub defaults_extra_file: Option<PathBuf>,
    /// Read no option files.
    #[arg(long)]
    pub no_defaults: bool,
    /// Seconds to wait for the server to connect and answer each statement (default: option files' connect-timeout, else 10).
    #[arg(long, alias = "connect_timeout", value_name = "SECS")]
    pub connect_timeout: Option<u64>,
}

/// The mysql client's default `--connect-timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the password came from (reported, never the password itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PasswordSource {
    None,
    CommandLine,
    Prompt,
    OptionFile,
    Env,
}

/// Everything needed to open connections; cheap to clone for worker threads.
#[derive(Debug, Clone)]
pub struct ConnSpec {
    pub socket: Option<PathBuf>,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<Secret>,
    pub password_source: PasswordSource,
    pub db: Option<String>,
    /// Bounds the connect, the handshake and each statement's reads and
    /// writes (see the module docs).
    pub connect_timeout: Duration,
}

/// Where the server was reached; stored in journaled changes so `restore`
/// can reconnect (credentials come from option files then, never stored).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ServerEndpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    pub user: String,
    /// `--defaults-file` given to innotune, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defaults_file: Option<String>,
    /// innotune was told to read no option files (`--no-defaults`).
    #[serde(default)]
    pub no_defaults: bool,
}

impl ServerEndpoint {
    pub fn describe(&self) -> String {
        match (&self.socket, &self.host) {
            (Some(s), _) => format!("{} (socket) as {}", s, self.user),
            (None, Some(h)) => format!("{}:{} as {}", h, self.port.unwrap_or(3306), self.user),
            _ => format!("? as {}", self.user),
        }
    }
}

/// Parse a MySQL size (`128M`, `1G`, `134217728`) into bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        't' | 'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// The endpoint as users read it, without the password. JSON: `socket`,
/// or `host` and `port`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Endpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    pub user: String,
    pub password_source: PasswordSource,
}

/// The login name, as libmysqlclient defaults the user: $USER, $LOGNAME,
/// then the password database entry of the real uid.
fn login_name() -> Option<String> {
    for v in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(v) {
            if !u.is_empty() {
                return Some(u);
            }
        }
    }
    // SAFETY: getpwuid returns a pointer into static storage or null; we
    // copy the name out before any other call can overwrite it.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if pw.is_null() || (*pw).pw_name.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr((*pw).pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";
pub const PROMPT_MARK: &str = "\u{0}prompt";

impl ConnArgs {
    /// Connection flags for a local socket (tests, sandbox).
    pub fn for_socket(socket: impl Into<PathBuf>, user: &str) -> ConnArgs {
        ConnArgs {
            socket: Some(socket.into()),
            user: Some(user.to_string()),
            no_defaults: true,
            ..Default::default()
        }
    }

    /// Merge command line, option files and environment into a spec.
    pub fn resolve(&self, host: &Host) -> Result<ConnSpec> {
        let files = if self.no_defaults {
            crate::model::optfile::Options::default()
        } else {
            crate::model::optfile::Options::load_chain(
                host,
                self.defaults_file.as_deref(),
                self.defaults_extra_file.as_deref(),
            )?
        };
        let (password, password_source) = match &self.password {
            Some(p) if p.expose() == PROMPT_MARK => {
                let pw = rpassword::prompt_password("Enter password: ").map_err(|e| {
                    Fix::new(
                        format!("cannot read the password from the terminal: {e}"),
                        "put it in ~/.my.cnf [client] password=…, or use --defaults-file",
                    )
                })?;
                (Some(Secret(pw)), PasswordSource::Prompt)
            }
            Some(p) => {
                crate::output::warn(
                    "Using a password on the command line interface can be insecure.",
                );
                (Some(p.clone()), PasswordSource::CommandLine)
            }
            None => match files.get("password") {
                Some(p) => (Some(Secret(p.to_string())), PasswordSource::OptionFile),
                None => match std::env::var("MYSQL_PWD") {
                    Ok(p) => (Some(Secret(p)), PasswordSource::Env),
                    Err(_) => (None, PasswordSource::None),
                },
            },
        };
        let host_name = self
            .host
            .clone()
            .or_else(|| files.get("host").map(str::to_string));
        let port = match self.port {
            Some(p) => Some(p),
            None => match files.get("port") {
                Some(p) => Some(p.parse::<u16>().map_err(|_| {
                    Fix::new(
                        format!("option file port={p:?} is not a port number"),
                        "fix the port= line in your option file",
                    )
                })?),
                None => None,
            },
        };
        let socket = self
            .socket
            .clone()
            .or_else(|| files.get("socket").map(PathBuf::from));
        // The mysql client's rule: "localhost" (or no host) means the socket,
        // unless only a port was given on the command line, which means TCP
        // on the loopback (MariaDB ≥ 10.6.1 behaves the same).
        let use_socket = match host_name.as_deref() {
            Some("localhost") => true,
            Some(_) => false,
            None => self.port.is_none() || self.socket.is_some(),
        };
        let connect_timeout = match self.connect_timeout {
            Some(s) => positive_secs(s, "--connect-timeout")?,
            None => match files.get("connect_timeout") {
                Some(v) => {
                    let origin = files.origin("connect_timeout").unwrap_or("option file");
                    let s = v.trim().parse::<u64>().map_err(|_| {
                        Fix::new(
                            format!("connect-timeout={v:?} ({origin}) is not a number of seconds"),
                            "fix the connect-timeout line in your option file",
                        )
                    })?;
                    positive_secs(s, &format!("connect-timeout ({origin})"))?
                }
                None => DEFAULT_CONNECT_TIMEOUT,
            },
        };
        let user = self
            .user
            .clone()
            .or_else(|| files.get("user").map(str::to_string))
            .or_else(login_name)
            .unwrap_or_else(|| "root".to_string());
        Ok(ConnSpec {
            socket: if use_socket {
                Some(socket.unwrap_or_else(|| PathBuf::from(DEFAULT_SOCKET)))
            } else {
                None
            },
            host: match host_name {
                Some(h) if h != "localhost" => h,
                _ => "127.0.0.1".to_string(),
            },
            port: port.unwrap_or(3306),
            user,
            password,
            password_source,
            db: files.get("database").map(str::to_string),
            connect_timeout,
        })
    }
}

/// A timeout of `s` seconds, refusing 0 (it would mean "wait forever" to
/// the mysql client, which innotune never does) and absurd values.
fn positive_secs(s: u64, what: &str) -> Result<Duration> {
    if s == 0 || s > 365 * 24 * 3600 {
        anyhow::bail!(Fix::new(
            format!("{what} must be 1 second to one year, not {s}"),
            "give --connect-timeout SECS such as 10",
        ));
    }
    Ok(Duration::from_secs(s))
}

/// Set the read and write timeouts of an open connection's socket: `None`
/// lets a statement take as long as it takes (see the module docs for
/// which statements may).
pub fn set_io_timeout(conn: &mysql::Conn, t: Option<Duration>) -> Result<()> {
    use rustix::net::sockopt::{set_socket_timeout, Timeout};
    use std::os::fd::{AsRawFd, BorrowedFd};
    // SAFETY: the descriptor belongs to `conn`, which outlives this borrow.
    let fd = unsafe { BorrowedFd::borrow_raw(conn.as_raw_fd()) };
    set_socket_timeout(fd, Timeout::Recv, t)?;
    set_socket_timeout(fd, Timeout::Send, t)?;
    Ok(())
}

/// Was this a timeout of the socket (a server that does not answer)?
/// (The crate reports a read timeout inside its packet codec, whose I/O
/// error is its `source`: the codec's type is not re-exported.)
pub fn timed_out(e: &mysql::Error) -> bool {
    let io = match e {
        mysql::Error::IoError(io) => io,
        mysql::Error::CodecError(c) => {
            match std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>()) {
                Some(io) => io,
                None => return false,
            }
        }
        _ => return false,
    };
    matches!(
        io.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl ConnSpec {
    /// A spec for a local socket with no password (sandbox root).
    pub fn socket(socket: impl Into<PathBuf>, user: &str) -> ConnSpec {
        ConnSpec {
            socket: Some(socket.into()),
            host: "127.0.0.1".into(),
            port: 3306,
            user: user.into(),
            password: None,
            password_source: PasswordSource::None,
            db: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    pub fn with_db(mut self, db: Option<&str>) -> ConnSpec {
        self.db = db.map(str::to_string);
        self
    }

    /// Where this spec reaches the server, for journaled changes (no
    /// password): `args` gives the option file to read again on undo.
    pub fn server_endpoint(&self, args: &ConnArgs) -> ServerEndpoint {
        ServerEndpoint {
            socket: self.socket.as_ref().map(|s| s.display().to_string()),
            host: self.socket.is_none().then(|| self.host.clone()),
            port: self.socket.is_none().then_some(self.port),
            user: self.user.clone(),
            defaults_file: args.defaults_file.as_ref().map(|p| p.display().to_string()),
            no_defaults: args.no_defaults,
        }
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            socket: self.socket.as_ref().map(|s| s.display().to_string()),
            host: self.socket.is_none().then(|| self.host.clone()),
            port: self.socket.is_none().then_some(self.port),
            user: self.user.clone(),
            password_source: self.password_source,
        }
    }

    /// Where we connect, for error messages (no password).
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(s) => format!("socket {} as {}", s.display(), self.user),
            None => format!("{}:{} as {}", self.host, self.port, self.user),
        }
    }

    fn opts(&self) -> mysql::Opts {
        let mut b = mysql::OptsBuilder::new()
            .user(Some(&self.user))
            .pass(self.password.as_ref().map(|p| p.expose().to_string()))
            .db_name(self.db.clone())
            // We decide socket vs TCP ourselves, like the mysql client;
            // the crate would otherwise silently switch TCP to the socket.
            .prefer_socket(false)
            .tcp_connect_timeout(Some(self.connect_timeout))
            .read_timeout(Some(self.connect_timeout))
            .write_timeout(Some(self.connect_timeout))
            .stmt_cache_size(Some(0));
        b = match &self.socket {
            Some(s) => b.socket(Some(s.display().to_string())),
            None => b.ip_or_hostname(Some(&self.host)).tcp_port(self.port),
        };
        b.into()
    }

    /// Where we connect, as `host:port` or `socket PATH` (no user).
    fn address(&self) -> String {
        match &self.socket {
            Some(s) => format!("socket {}", s.display()),
            None => format!("{}:{}", self.host, self.port),
        }
    }

    /// Open one connection; the error names the endpoint and the fix.
    /// `connect_timeout` bounds the whole of it: the TCP connect, the
    /// handshake and the login together (a server that trickles its
    /// greeting a byte at a time would pass every per-read timeout), and
    /// then every read and write on the connection.
    pub fn connect(&self) -> Result<mysql::Conn> {
        // The driver has no deadline for the whole handshake, only timeouts
        // per read and write, so the handshake runs on a thread and the
        // caller waits for it no longer than the timeout. A handshake still
        // running then is abandoned: its thread ends at its socket's next
        // read timeout or error, and a connection it completes later is
        // dropped (closed) when its result cannot be delivered.
        let opts = self.opts();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let started = std::thread::Builder::new()
            .name("db-connect".into())
            .spawn(move || {
                let _ = tx.send(mysql::Conn::new(opts));
            });
        let result = match started {
            Ok(_) => match rx.recv_timeout(self.connect_timeout) {
                Ok(r) => r,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    return Err(self.no_answer());
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    anyhow::bail!(
                        "cannot connect to MySQL at {}: the connecting thread failed",
                        self.describe()
                    )
                }
            },
            // No thread to spare: connect here, bounded per read only.
            Err(_) => mysql::Conn::new(self.opts()),
        };
        result.map_err(|e| {
            if timed_out(&e) {
                return self.no_answer();
            }
            if not_mysql(&e) {
                let fix = if self.socket.is_some() {
                    "point --socket at the MySQL/MariaDB server's socket (its `socket` option; SELECT @@socket)"
                } else {
                    "point --host and --port at the MySQL/MariaDB server (this port speaks another protocol; the server's own is often 3306: SELECT @@port)"
                };
                // The driver's own words would send the user after
                // max_allowed_packet or a protocol version.
                return Fix::new(
                    format!(
                        "{} did not answer as a MySQL/MariaDB server (what it sent is not a MySQL greeting)",
                        self.address(),
                    ),
                    fix,
                )
                .into();
            }
            let how = match &e {
                mysql::Error::MySqlError(me) if me.code == 1045 || me.code == 1698 => {
                    "check --user and the password (~/.my.cnf [client], --defaults-file, MYSQL_PWD or --password)"
                }
                mysql::Error::MySqlError(me) if me.code == 1049 => {
                    "create the database first (innotune oltp … prepare creates it) or pass --db"
                }
                _ => "start the server, or point --socket / --host and --port at it",
            };
            Fix::new(
                format!("cannot connect to MySQL at {}: {}", self.describe(), one_line(&e)),
                how,
            )
            .into()
        })
    }

    fn no_answer(&self) -> anyhow::Error {
        Fix::new(
            format!(
                "cannot connect to MySQL at {}: no answer within {} s (connect, handshake and login together)",
                self.describe(),
                self.connect_timeout.as_secs()
            ),
            "check that the address is a MySQL server that is up, or raise --connect-timeout",
        )
        .into()
    }
}

/// Did the peer answer with something that is not the MySQL protocol? A
/// packet header no server sends (HTTP's `HTT` reads as a 5.5 MB packet),
/// a greeting that does not parse, or a protocol version other than 10.
/// A refused or reset connection, a timeout and a server's own error are
/// not this.
pub fn not_mysql(e: &mysql::Error) -> bool {
    use mysql::DriverError as D;
    match e {
        // The codec's own errors (too large, out of sync, bad compressed
        // header) have no I/O source; an I/O error inside it does.
        mysql::Error::CodecError(c) => std::error::Error::source(c).is_none(),
        // The greeting's parser reports what it could not read as I/O errors.
        mysql::Error::IoError(io) => matches!(
            io.kind(),
            std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
        ),
        mysql::Error::DriverError(
            D::UnsupportedProtocol(_)
            | D::Protocol41NotSet
            | D::UnexpectedPacket
            | D::PacketOutOfSync
            | D::PacketTooLarge,
        ) => true,
        _ => false,
    }
}

/// A driver error on one line; server errors as the mysql client prints them.
pub fn one_line(e: &mysql::Error) -> String {
    let s = match e {
        mysql::Error::MySqlError(me) => {
            return format!("ERROR {} ({}): {}", me.code, me.state, me.message)
        }
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::IoError(io) => io.to_string(),
        other => other.to_string(),
    };
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Server flavour and version, from `SELECT VERSION()`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ServerVersion {
    /// The raw VERSION() string, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub raw: String,
    /// `mariadb` or `mysql`.
    pub flavor: String,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl ServerVersion {
    pub fn parse(raw: &str) -> ServerVersion {
        let flavor = if raw.to_ascii_lowercase().contains("mariadb") {
            "mariadb"
        } else {
            "mysql"
        };
        // MariaDB 10.x once reported "5.5.5-10.x.y-MariaDB" on the wire; VERSION() does not, but be safe.
        let s = raw.strip_prefix("5.5.5-").unwrap_or(raw);
        let nums: Vec<u32> = s
            .split(|c: char| !c.is_ascii_digit())
            .take(3)
            .map(|n| n.parse().unwrap_or(0))
            .collect();
        ServerVersion {
            raw: raw.to_string(),
            flavor: flavor.to_string(),
            major: nums.first().copied().unwrap_or(0),
            minor: nums.get(1).copied().unwrap_or(0),
            patch: nums.get(2).copied().unwrap_or(0),
        }
    }

    pub fn is_mariadb(&self) -> bool {
        self.flavor == "mariadb"
    }
}

/// Ask the server who it is.
pub fn server_version(conn: &mut mysql::Conn) -> Result<ServerVersion> {
    use mysql::prelude::Queryable;
    let v: Option<String> = conn
        .query_first("SELECT VERSION()")
        .context("SELECT VERSION()")?;
    Ok(ServerVersion::parse(&v.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_never_debugs() {
        let a = ConnArgs {
            password: Some(Secret::new("hunter2")),
            ..Default::default()
        };
        let s = format!("{a:?}");
        assert!(!s.contains("hunter2"), "{s}");
        assert!(s.contains("<redacted>"));
    }

    #[test]
    fn versions() {
        let v = ServerVersion::parse("10.11.19-MariaDB-0+deb12u1");
        assert_eq!(
            (v.flavor.as_str(), v.major, v.minor, v.patch),
            ("mariadb", 10, 11, 19)
        );
        let v = ServerVersion::parse("8.0.36-0ubuntu0.22.04.1");
        assert_eq!(
            (v.flavor.as_str(), v.major, v.minor, v.patch),
            ("mysql", 8, 0, 36)
        );
        let v = ServerVersion::parse("5.7.44-log");
        assert_eq!((v.major, v.minor), (5, 7));
    }

    #[test]
    fn localhost_means_socket_and_port_alone_means_tcp() {
        let h = Host::live();
        let a = ConnArgs {
            no_defaults: true,
            host: Some("localhost".into()),
            ..Default::default()
        };
        assert!(a.resolve(&h).unwrap().socket.is_some());
        let a = ConnArgs {
            no_defaults: true,
            port: Some(3307),
            ..Default::default()
        };
        let s = a.resolve(&h).unwrap();
        assert!(s.socket.is_none());
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 3307));
    }
}
