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
