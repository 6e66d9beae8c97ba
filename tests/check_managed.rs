//! Managed servers (RDS, Aurora, Azure flexible server, Cloud SQL):
//! `check --server-capture` replays tests/fixtures/servers/* (built by
//! make-server-fixtures.py from the providers' documented defaults);
//! the provider is recognised, findings cite it, what it does not allow
//! is never emitted, and each emitted parameter file is read back by its
//! parser (serde_json for the AWS CLI input, `terraform fmt -check` for
//! the Terraform block, `bash -n` for the scripts).

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/servers")
        .join(name)
}

/// (exit code, `result`, stderr).
fn check(state: &Path, fixture: &str, extra: &[&str]) -> (i32, Value, String) {
    let out = support::innotune_in(state)
        .arg("check")
        .arg("--server-capture")
        .arg(capture(fixture))
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr: {stderr}"));
    (out.status.code().unwrap(), v["result"].clone(), stderr)
}

const PROVIDERS: &[(&str, &str, &str)] = &[
    ("rds-mysql80", "rds", "Amazon RDS for MySQL"),
    ("aurora-mysql3", "aurora", "Amazon Aurora MySQL"),
    (
        "azure-flexible80",
        "azure",
        "Azure Database for MySQL flexible server",
    ),
    ("cloudsql-mysql80", "cloudsql", "Cloud SQL for MySQL"),
];

/// Every `managed` entry of every finding.
fn managed(r: &Value) -> Vec<Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["managed"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn each_provider_is_recognised_and_its_findings_cite_it() {
    let st = tempfile::tempdir().unwrap();
    for (fx, name, label) in PROVIDERS {
        let (code, r, _) = check(st.path(), fx, &[]);
        assert_eq!(code, 1, "{fx}: the planted window has warnings");
        assert_eq!(r["provider"]["name"], *name, "{fx}");
        assert_eq!(r["provider"]["forced"], false);
        assert!(r["provider"]["evidence"].as_str().unwrap().contains('@') || *name == "cloudsql");
        // Server rules ran; every rule that reads the host says why not.
        let rules = r["rules"].as_array().unwrap();
        for id in [
            "storage.scheduler",
            "filesystem.mount",
            "os.swappiness",
            "os.numa",
            "os.rps",
        ] {
            let x = rules.iter().find(|x| x["id"] == id).unwrap();
            assert_eq!(x["status"], "skipped", "{fx} {id}");
            assert!(
                x["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("not visible from a client"),
                "{x}"
            );
        }
        for id in ["server.redo", "server.tmp_tables", "server.log_buffer"] {
            let x = rules.iter().find(|x| x["id"] == id).unwrap();
            assert_eq!(x["status"], "ran", "{fx} {id}");
        }
        // Every server-variable finding cites the provider, with a status.
        let ms = managed(&r);
        assert!(!ms.is_empty(), "{fx}");
        for f in r["findings"].as_array().unwrap() {
            if f["subject"]["kind"] == "server_variable" {
                assert!(f["reason"].as_str().unwrap().contains(label), "{f}");
                assert!(
                    f.get("change").is_none(),
                    "no SET GLOBAL on a managed server: {f}"
                );
            }
        }
        for m in &ms {
            assert_eq!(m["provider"], *name);
            let st = m["status"].as_str().unwrap();
            assert!(["emit", "not_modifiable", "not_listed", "cluster_parameter"].contains(&st));
            assert_eq!(m.get("value").is_some(), st == "emit", "{m}");
        }
    }
}

#[test]
fn aurora_redo_and_log_buffer_are_reported_as_not_modifiable() {
    let st = tempfile::tempdir().unwrap();
    let (_, r, _) = check(st.path(), "aurora-mysql3", &[]);
    let ms = managed(&r);
    for p in ["innodb_redo_log_capacity", "innodb_log_buffer_size"] {
        let m = ms.iter().find(|m| m["parameter"] == p).unwrap();
        assert_eq!(m["status"], "not_modifiable", "{m}");
        // ... and no setting carries it (apply and --emit read settings).
        let f = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["subject"]["name"] == p)
            .unwrap();
        assert!(f.get("settings").is_none(), "{f}");
    }
    // RDS, same window: the redo capacity is a dynamic parameter there.
    let (_, r, _) = check(st.path(), "rds-mysql80", &[]);
    let m = managed(&r)
        .into_iter()
        .find(|m| m["parameter"] == "innodb_redo_log_capacity")
        .unwrap();
    assert_eq!(m["status"], "emit");
    assert_eq!(m["apply"], "immediate");
    let m = managed(&r)
        .into_iter()
        .find(|m| m["parameter"] == "innodb_log_buffer_size")
        .unwrap();
    assert_eq!(m["apply"], "pending-reboot", "static on RDS");
}

#[test]
fn self_managed_capture_keeps_todays_advice() {
    let st = tempfile::tempdir().unwrap();
    let (_, r, _) = check(st.path(), "self-mysql80", &[]);
    assert_eq!(r["provider"]["name"], "self");
    assert!(managed(&r).is_empty());
    // The settings stay (apply and the my.cnf drop-in use them) and no
    // reason names a provider.
    let fs = r["findings"].as_array().unwrap();
    assert!(fs.iter().any(|f| f["subject"]["name"] == "tmp_table_size"
        && f["settings"][0]["name"] == "tmp_table_size"));
    for f in fs {
        let why = f["reason"].as_str().unwrap();
        for (_, _, label) in PROVIDERS {
            assert!(!why.contains(label), "{why}");
        }
    }
}

#[test]
fn a_contradicting_provider_is_warned_about_and_used() {
    let st = tempfile::tempdir().unwrap();
    let (_, r, stderr) = check(st.path(), "rds-mysql80", &["--provider", "azure"]);
    assert!(stderr.contains("--provider azure contradicts"), "{stderr}");
    assert_eq!(r["provider"]["name"], "azure");
    assert_eq!(r["provider"]["detected"], "rds");
    assert_eq!(r["provider"]["forced"], true);
    assert!(managed(&r).iter().all(|m| m["provider"] == "azure"));
}

/// Every parameter in an emitted file, with its value.
fn emitted_params(dir: &Path, provider: &str) -> Vec<(String, String)> {
    match provider {
        "rds" | "aurora" => {
            let text = std::fs::read_to_string(dir.join("rds-parameters.json")).unwrap();
            // The AWS CLI's --parameters shape: a list of Parameter
            // structures with exactly these members.
            let list: Vec<serde_json::Map<String, Value>> = serde_json::from_str(&text).unwrap();
            list.iter()
                .map(|p| {
                    let mut keys: Vec<&str> = p.keys().map(String::as_str).collect();
                    keys.sort();
                    assert_eq!(keys, ["ApplyMethod", "ParameterName", "ParameterValue"]);
                    assert!(["immediate", "pending-reboot"]
                        .contains(&p["ApplyMethod"].as_str().unwrap()));
                    (
                        p["ParameterName"].as_str().unwrap().to_string(),
                        p["ParameterValue"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        }
        "azure" => std::fs::read_to_string(dir.join("azure-parameters.sh"))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("az mysql flexible-server parameter set"))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let at = |k: &str| {
                    w[w.iter().position(|x| *x == k).unwrap() + 1]
                        .trim_matches('\'')
                        .to_string()
                };
                (at("--name"), at("--value"))
            })
            .collect(),
        "cloudsql" => {
            let t = std::fs::read_to_string(dir.join("cloudsql-flags.sh")).unwrap();
            let l = t
                .lines()
                .find(|l| l.starts_with("gcloud sql instances patch"))
                .unwrap();
            let flags = l
                .split("--database-flags=")
                .nth(1)
                .unwrap()
                .trim_matches('\'');
            flags
                .split(',')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect()
        }
        _ => unreachable!(),
    }
}

#[test]
fn emitted_parameter_files_parse_and_hold_only_what_the_provider_allows() {
    let st = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for (fx, name, _) in PROVIDERS {
        let dir = out.path().join(fx);
        let (_, r, _) = check(st.path(), fx, &["--emit", dir.to_str().unwrap()]);
        let ms = managed(&r);
        let got = emitted_params(&dir, name);
        assert!(!got.is_empty(), "{fx}");
        for (p, v) in &got {
            let m = ms
                .iter()
                .find(|m| m["parameter"] == *p)
                .unwrap_or_else(|| panic!("{fx}: {p} not advised"));
            assert_eq!(m["status"], "emit", "{fx}: {p} emitted though {m}");
            let want = m["value"].as_str().unwrap();
            assert!(
                v == want || (v == "on" && want == "ON"),
                "{fx} {p}: {v} vs {want}"
            );
        }
        // Everything allowed is there; nothing else is.
        let allowed = ms.iter().filter(|m| m["status"] == "emit").count();
        assert_eq!(got.len(), allowed, "{fx}");
        // Each file as its tool reads it, and innotune's own validation.
        for e in r["emitted"].as_array().unwrap() {
            let path = Path::new(e["written"].as_str().unwrap());
            let ok = |cmd: &mut std::process::Command| cmd.status().unwrap().success();
            if path.extension().is_some_and(|x| x == "sh") {
                assert!(
                    ok(std::process::Command::new("bash").arg("-n").arg(path)),
                    "{}",
                    path.display()
                );
            }
            if path.extension().is_some_and(|x| x == "tf") {
                if which::which("terraform").is_ok() {
                    assert!(ok(std::process::Command::new("terraform")
                        .args(["fmt", "-check"])
                        .arg(path)
                        .env("TF_CLI_CONFIG_FILE", "/dev/null")));
                } else {
                    eprintln!("terraform not installed: checked by innotune's validation only");
                }
            }
            if !e["validation"].is_null() {
                assert_eq!(e["validation"]["ok"], true, "{e}");
            }
        }
    }
    // Aurora's file never holds what Aurora fixes.
    let got = emitted_params(&out.path().join("aurora-mysql3"), "aurora");
    assert!(
        got.iter()
            .all(|(p, _)| !p.starts_with("innodb_redo") && p != "innodb_log_buffer_size"),
        "{got:?}"
    );
}

/// docs/managed.md's `—` rows: a parameter a provider's documentation
/// does not list as modifiable (Azure: the redo capacity and log buffer;
/// Cloud SQL: the redo capacity) is reported — the finding stays, with
/// its recommended value and why it is not emitted — and is in no file
/// `--emit` writes, while the same finding on RDS is emitted.
#[test]
fn a_parameter_the_provider_does_not_list_is_reported_not_emitted() {
    let st = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for (fx, provider, unlisted) in [
        (
            "azure-flexible80",
            "azure",
            &["innodb_redo_log_capacity", "innodb_log_buffer_size"][..],
        ),
        (
            "cloudsql-mysql80",
            "cloudsql",
            &["innodb_redo_log_capacity"][..],
        ),
    ] {
        let dir = out.path().join(fx);
        let (_, r, _) = check(st.path(), fx, &["--emit", dir.to_str().unwrap()]);
        let texts: String = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        let emitted = emitted_params(&dir, provider);
        assert!(!emitted.is_empty(), "{fx}: the listed ones are emitted");
        for p in unlisted {
            let f = r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["subject"]["name"] == *p)
                .unwrap_or_else(|| panic!("{fx}: {p} is reported"));
            let m = &f["managed"][0];
            assert_eq!(m["status"], "not_listed", "{fx}: {m}");
            assert_eq!(m["provider"], provider);
            assert!(m["recommended"].as_str().is_some_and(|v| !v.is_empty()));
            assert!(m.get("value").is_none(), "{m}");
            assert!(
                m["note"]
                    .as_str()
                    .unwrap()
                    .contains("reported, not emitted"),
                "{m}"
            );
            assert!(f.get("settings").is_none(), "{fx}: nothing to apply: {f}");
            assert!(!texts.contains(p), "{fx}: {p} in an emitted file");
        }
    }
    // The same capture's redo finding on RDS, where it is listed: emitted.
    let dir = out.path().join("rds");
    check(st.path(), "rds-mysql80", &["--emit", dir.to_str().unwrap()]);
    assert!(emitted_params(&dir, "rds")
        .iter()
        .any(|(p, _)| p == "innodb_redo_log_capacity"));
}

#[test]
fn an_emit_dir_with_foreign_files_is_refused_and_a_rerun_is_not() {
    let st = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // innotune's own files may be replaced by the next run.
    for _ in 0..2 {
        let (code, _, stderr) = check(st.path(), "rds-mysql80", &["--emit", d]);
        assert_eq!(code, 1, "{stderr}");
    }
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let before = std::fs::read(dir.path().join("rds-parameters.json")).unwrap();
    std::fs::remove_file(dir.path().join("rds-parameters.json")).unwrap();
    let out = support::innotune_in(st.path())
        .arg("check")
        .arg("--server-capture")
        .arg(capture("rds-mysql80"))
        .args(["--emit", d])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds files innotune did not write (notes.txt)"),
        "{err}"
    );
    assert!(
        !dir.path().join("rds-parameters.json").exists(),
        "nothing written"
    );
    assert_eq!(
        std::fs::read(dir.path().join("notes.txt")).unwrap(),
        b"mine"
    );
    assert!(!before.is_empty());
}

#[test]
fn a_password_given_is_never_printed_or_emitted() {
    let st = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secret = "s3cret-Pw-42";
    let out = support::innotune_in(st.path())
        .arg("check")
        .arg("--server-capture")
        .arg(capture("azure-flexible80"))
        .arg(format!("--password={secret}"))
        .args(["--format", "json", "--emit"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.code().unwrap() < 2,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(secret));
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let t = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!t.contains(secret));
    }
}

#[test]
fn apply_refuses_a_server_whose_host_is_not_visible() {
    let st = tempfile::tempdir().unwrap();
    let out = support::innotune_in(st.path())
        .arg("apply")
        .arg("--server-capture")
        .arg(capture("rds-mysql80"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("check --provider NAME --emit DIR"), "{err}");
}

/// A real server reached over TCP (a sandbox on 127.0.0.1) with
/// --no-host-facts: the server rules run on what the connection shows,
/// every rule that reads the host is listed as skipped with why, and the
/// password given never appears.
#[test]
fn tcp_server_with_no_host_facts_runs_server_rules_only() {
    if !support::live() {
        return;
    }
    use mysql::prelude::Queryable;
    let srv = support::server();
    let pw = "tcp-Pw-7731";
    let mut c = srv.conn();
    c.query_drop(format!(
        "CREATE USER 'itc'@'127.0.0.1' IDENTIFIED BY '{pw}'"
    ))
    .unwrap();
    c.query_drop("GRANT SELECT, PROCESS ON *.* TO 'itc'@'127.0.0.1'")
        .unwrap();
    let st = tempfile::tempdir().unwrap();
    let out = support::innotune_in(st.path())
        .args([
            "check",
            "--no-host-facts",
            "--no-defaults",
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &srv.sb.port().to_string(), "--user", "itc"])
        .arg(format!("--password={pw}"))
        .args(["--sample", "2s", "--format", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().unwrap() < 2, "{stderr}");
    assert!(!stdout.contains(pw) && !stderr.contains(pw));
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let r = &r["result"];
    assert_eq!(r["server"]["reached"], true, "{r:#}");
    assert!(r["server"]["endpoint"]
        .as_str()
        .unwrap()
        .contains("127.0.0.1"));
    assert_eq!(r["provider"]["name"], "self");
    assert_eq!(r["provider"]["host_not_visible"], "--no-host-facts");
    // No host fact was read: no mount, no device, no process.
    assert!(r["facts"].get("mount").is_none() && r["facts"]["devices"] == serde_json::json!([]));
    let rules = r["rules"].as_array().unwrap();
    let mut skipped_host = 0;
    for x in rules {
        let layer = x["layer"].as_str().unwrap();
        if layer != "server" {
            assert_eq!(x["status"], "skipped", "{x}");
            assert!(
                x["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("not visible from a client")
                    && x["reason"].as_str().unwrap().ends_with("--no-host-facts"),
                "{x}"
            );
            skipped_host += 1;
        }
    }
    assert!(skipped_host >= 10, "{rules:?}");
    for id in ["server.buffer_pool", "server.redo", "server.connections"] {
        let x = rules.iter().find(|x| x["id"] == id).unwrap();
        assert_eq!(x["status"], "ran", "{x}");
    }
    // The text page lists the skipped rules with their reasons.
    let text = support::innotune_in(st.path())
        .args([
            "check",
            "--no-host-facts",
            "--no-defaults",
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &srv.sb.port().to_string(), "--user", "itc"])
        .arg(format!("--password={pw}"))
        .args(["--sample", "0"])
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&text.stdout);
    assert!(
        page.contains("Skipped rules")
            && page.contains("not visible from a client: --no-host-facts"),
        "{page}"
    );
    assert!(!page.contains(pw));
}
