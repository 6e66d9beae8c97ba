//! Shared helpers for tests that need a real server: each test starts its
//! own throwaway sandbox (stopped and removed by Drop on every path).
#![allow(dead_code)]

use innotune::sandbox::{Sandbox, SandboxOpts};
use mysql::prelude::Queryable;
use std::path::PathBuf;

pub struct TestServer {
    // Field order matters: the sandbox stops before its parent dir goes.
    pub sb: Sandbox,
    pub parent: tempfile::TempDir,
}

pub fn server() -> TestServer {
    let parent = tempfile::Builder::new()
        .prefix("itsb")
        .tempdir_in("/tmp")
        .unwrap();
    let sb = Sandbox::start(SandboxOpts::new(parent.path().join("sb")))
        .unwrap_or_else(|e| panic!("sandbox start failed: {e:#}"));
    TestServer { sb, parent }
}

impl TestServer {
    pub fn socket(&self) -> PathBuf {
        self.sb.socket().to_path_buf()
    }
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
}

pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("innotune").unwrap()
}
