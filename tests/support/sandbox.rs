//! Throwaway servers for tests that need a real one: each test starts its
//! own sandbox (stopped and removed by Drop on every path), in a short
//! directory under /tmp (a Unix socket path has room for ~100 bytes). The
//! server at 3306 is never touched.

use innotune::sandbox::{Profile, Sandbox, SandboxOpts};
use mysql::prelude::Queryable;
use std::path::PathBuf;

pub struct TestServer {
    // Field order matters: the sandbox stops before its parent dir goes.
    pub sb: Sandbox,
    pub parent: tempfile::TempDir,
}

/// A sandbox with the server's defaults.
pub fn server() -> TestServer {
    TestServer::start(|_| {})
}

impl TestServer {
    /// A sandbox whose options `adjust` has set (profile, keep, …; the
    /// directory is chosen here).
    pub fn start(adjust: impl FnOnce(&mut SandboxOpts)) -> TestServer {
        let parent = tempfile::Builder::new()
            .prefix("itsb")
            .tempdir_in("/tmp")
            .unwrap();
        let mut o = SandboxOpts::new(parent.path().join("sb"));
        adjust(&mut o);
        let sb = Sandbox::start(o).unwrap_or_else(|e| panic!("sandbox start failed: {e:#}"));
        TestServer { sb, parent }
    }

    /// A sandbox with the server variables of `profile` (`name = value`
    /// lines, as `--profile FILE` reads them).
    pub fn with_profile(profile: &str) -> TestServer {
        TestServer::start(|o| {
            let f = o.dir.with_file_name("profile.cnf");
            std::fs::write(&f, profile).unwrap();
            o.profile = Profile::parse(f.to_str().unwrap()).unwrap();
        })
    }

    pub fn socket(&self) -> PathBuf {
        self.sb.socket().to_path_buf()
    }

    /// The connection options every innotune command that talks to a
    /// server takes.
    pub fn sock_args(&self) -> Vec<String> {
        vec![
            "--socket".into(),
            self.socket().display().to_string(),
            "--user".into(),
            "root".into(),
            "--no-defaults".into(),
        ]
    }

    pub fn conn(&self) -> mysql::Conn {
        self.sb.conn_spec().connect().unwrap()
    }

    pub fn query<T: mysql::prelude::FromRow>(&self, q: &str) -> Vec<T> {
        self.conn().query(q).unwrap()
    }

    /// A global variable's value.
    pub fn var(&self, name: &str) -> String {
        let r: Option<(String, String)> = self
            .conn()
            .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
            .unwrap();
        r.unwrap_or_else(|| panic!("no variable {name}")).1
    }
}

/// The planted "live" server: a sandbox the innotune binary starts
/// (`innotune sandbox start --profile … --keep`, so it runs as a server
/// found on the host would, never the one at 3306) with an undersized
/// buffer pool (8 MiB), in `parent/live-sb`, its state (the sandbox's
/// record) in `state`. Stopped and removed on drop (`sandbox stop`),
/// panics included. [`Planted::load`] puts OLTP data several times the
/// pool in it.
pub struct Planted {
    pub dir: PathBuf,
    state: PathBuf,
}

/// Its buffer pool.
pub const PLANTED_POOL: &str = "8M";

impl Planted {
    pub fn start(parent: &std::path::Path, state: &std::path::Path) -> Planted {
        Planted::start_with(parent, state, &[("innodb_buffer_pool_size", PLANTED_POOL)])
    }

    /// A planted server with the server variables `vars` (`name = value`
    /// profile lines), e.g. several storage mistakes at once.
    pub fn start_with(
        parent: &std::path::Path,
        state: &std::path::Path,
        vars: &[(&str, &str)],
    ) -> Planted {
        let dir = parent.join("live-sb");
        let prof = parent.join("live.cnf");
        let lines: String = vars.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        std::fs::write(&prof, lines).unwrap();
        let p = Planted {
            dir,
            state: state.to_path_buf(),
        };
        let o = p
            .sandbox("start")
            .arg("--profile")
            .arg(&prof)
            .arg("--keep")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "planted sandbox: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        p
    }

    fn sandbox(&self, verb: &str) -> std::process::Command {
        let mut c = super::innotune_sys();
        c.env("INNOTUNE_STATE_DIR", &self.state)
            .args(["sandbox", verb, "--dir"])
            .arg(&self.dir);
        c
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysql.sock")
    }

    /// `--socket SOCK --user root`, as a user of a found server gives them.
    pub fn sock_args(&self) -> Vec<String> {
        vec![
            "--socket".into(),
            self.socket().display().to_string(),
            "--user".into(),
            "root".into(),
        ]
    }

    /// How innotune's library reaches it (root over the socket).
    pub fn spec(&self) -> innotune::db::ConnSpec {
        innotune::db::ConnSpec::socket(self.socket(), "root")
    }

    fn conn(&self) -> mysql::Conn {
        self.spec().connect().unwrap()
    }

    /// Load `tables` × `rows` of sysbench's tables (`innotune oltp
    /// oltp_read_only prepare`), then refresh InnoDB's table statistics
    /// (what check reads as the data size lags a bulk load) as a DBA
    /// would.
    pub fn load(&self, tables: u32, rows: u32) {
        let o = super::innotune_in(&self.state)
            .args(["oltp", "oltp_read_only", "prepare"])
            .args(self.sock_args())
            .args(["--tables", &tables.to_string()])
            .args(["--table-size", &rows.to_string()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let list: Vec<String> = (1..=tables).map(|i| format!("sbtest.sbtest{i}")).collect();
        self.conn()
            .query_drop(format!("ANALYZE TABLE {}", list.join(", ")))
            .unwrap();
    }

    /// A global variable's value.
    pub fn var(&self, name: &str) -> String {
        let r: Option<(String, String)> = self
            .conn()
            .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
            .unwrap();
        r.unwrap_or_else(|| panic!("no variable {name}")).1
    }

    /// Set a global variable (as a DBA would, outside innotune).
    pub fn set(&self, name: &str, value: &str) {
        self.conn()
            .query_drop(format!("SET GLOBAL {name} = {value}"))
            .unwrap();
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = self.sandbox("stop").output();
    }
}
