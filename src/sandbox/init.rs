//! Writing DIR/my.cnf and initialising DIR/data with the server's own
//! tool (`mysqld --initialize-insecure`, or `mariadb-install-db`).

use super::process::{find_binary, tail};
use super::profile::{Profile, CAPACITY, CAPACITY_THREADS};
use crate::db::ServerVersion;
use crate::error::Fix;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};

pub(super) fn my_cnf(dir: &Path, port: u16, ver: &ServerVersion, profile: &Profile) -> String {
    let d = dir.display();
    let mut s = format!(
        "# Written by innotune sandbox; removed with the sandbox.\n[mysqld]\n\
         datadir={d}/data\nsocket={d}/mysql.sock\nport={port}\nbind-address=127.0.0.1\n\
         pid-file={d}/mysqld.pid\nlog-error={d}/error.log\ntmpdir={d}/tmp\n\
         skip-name-resolve\n"
    );
    if rustix::process::geteuid().is_root() {
        s.push_str("user=root\n");
    }
    if !ver.is_mariadb() && ver.major >= 8 {
        s.push_str("mysqlx=OFF\ndisable-log-bin\n");
    }
    s.push_str(&format!(
        "# Room for {CAPACITY_THREADS} client threads: one connection each, and every\n\
         # connection's prepared statements (every sandbox; a profile may override).\n"
    ));
    for (k, v) in CAPACITY {
        s.push_str(&format!("{k}={v}\n"));
    }
    if !profile.vars().is_empty() {
        s.push_str(&format!("# Profile {}:\n", profile.name()));
    }
    for (k, v) in profile.vars() {
        s.push_str(&format!("{k}={v}\n"));
    }
    s.push_str(&format!("\n[client]\nsocket={d}/mysql.sock\nuser=root\n"));
    s
}

pub(super) fn initialise(server: &Path, ver: &ServerVersion, cnf: &Path, dir: &Path) -> Result<()> {
    let defaults = format!("--defaults-file={}", cnf.display());
    let mut cmd = if !ver.is_mariadb() && (ver.major, ver.minor) >= (5, 7) {
        let mut c = Command::new(server);
        c.arg(&defaults).arg("--initialize-insecure");
        c
    } else {
        let inst = find_binary(&["mariadb-install-db", "mysql_install_db"]).ok_or_else(|| {
            Fix::new(
                "no mariadb-install-db or mysql_install_db found",
                "install the server package that provides it",
            )
        })?;
        let mut c = Command::new(inst);
        c.arg(&defaults);
        if ver.is_mariadb() && (ver.major, ver.minor) >= (10, 5) {
            c.arg("--skip-test-db");
        }
        if ver.is_mariadb() && (ver.major, ver.minor) >= (10, 4) {
            // Socket authentication lets only the system user root log in
            // as root@localhost, which is what innotune connects as. A
            // sandbox started by another user (a DBA without root, or a
            // test as `nobody`) could then never be reached: it used to
            // wait out --timeout on "Access denied". For such a user,
            // root@localhost gets no password, as MySQL's
            // --initialize-insecure does; the server listens on 127.0.0.1
            // and lives only as long as the sandbox.
            if rustix::process::geteuid().is_root() {
                c.arg("--auth-root-authentication-method=socket");
            } else {
                c.arg("--auth-root-authentication-method=normal");
            }
        }
        c
    };
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .context("initialising the sandbox data directory")?;
    if !out.status.success() {
        let mut msg = String::from_utf8_lossy(&out.stderr).into_owned();
        if msg.trim().is_empty() {
            msg = tail(&dir.join("error.log"), 4);
        }
        let msg: Vec<&str> = msg.lines().filter(|l| !l.trim().is_empty()).collect();
        anyhow::bail!(Fix::new(
            format!(
                "initialising {} failed ({}): {}",
                dir.join("data").display(),
                out.status,
                msg[msg.len().saturating_sub(3)..].join(" | ")
            ),
            "check the profile's variables and the free space under DIR"
        ));
    }
    Ok(())
}
