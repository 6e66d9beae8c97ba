//! Tablespaces written by a real (throwaway, bootstrap-only) MariaDB in
//! full_crc32 and crc32 format: innotune and MariaDB's own `innochecksum`
//! must agree page by page, clean and with planted corruptions.
//!
//! The server is a throwaway sandbox (support::TestServer) with the
//! checksum algorithm, page size and encryption under test, shut down
//! cleanly (files flushed) before the files are read. The 3306 server is
//! never touched.

mod support;

use innotune::sandbox::Profile;
use mysql::prelude::Queryable;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use support::TestServer;

/// ROW_FORMAT=COMPRESSED needs a 16K page size, so it is only made there.
const SQL_ZIP: &str = "
USE t;
CREATE TABLE z (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8;
INSERT INTO z SELECT seq, REPEAT('xyz', 60) FROM seq_1_to_3000;
";

const SQL: &str = "
CREATE DATABASE t;
USE t;
CREATE TABLE a (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(200), n INT) ENGINE=InnoDB;
INSERT INTO a (v, n) SELECT REPEAT(CHAR(65 + seq % 26), 100 + seq % 100), seq FROM seq_1_to_6000;
CREATE TABLE pc (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB PAGE_COMPRESSED=1;
INSERT INTO pc SELECT seq, REPEAT('abc', 60) FROM seq_1_to_3000;
CREATE TABLE e (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB ENCRYPTED=YES;
INSERT INTO e SELECT seq, REPEAT('q', 150) FROM seq_1_to_3000;
";

fn tools_present() -> bool {
    ["mariadb-install-db", "mariadbd", "innochecksum"]
        .iter()
        .all(|t| which::which(t).is_ok() || Path::new("/usr/sbin").join(t).exists())
}

/// A datadir with tables a (plain), z (ROW_FORMAT=COMPRESSED), pc
/// (PAGE_COMPRESSED), e (ENCRYPTED, key from a throwaway key file), made by
/// a sandbox server that is then shut down cleanly (files flushed); moved
/// to `dir/data`.
fn make_datadir(dir: &Path, algo: &str, page_size: usize) -> PathBuf {
    let keys = dir.join("keys.txt");
    fs::write(&keys, format!("1;{}\n", "ab".repeat(32))).unwrap();
    // A two-file system tablespace: ibdata2 continues ibdata1's numbering.
    let ibdata_mb = page_size * 1024 / 1_048_576 * 12 / 16;
    let vars = [
        ("innodb_checksum_algorithm", algo.to_string()),
        ("innodb_log_file_size", "8M".into()),
        ("innodb_buffer_pool_size", "32M".into()),
        ("plugin_load_add", "file_key_management".into()),
        ("file_key_management_filename", keys.display().to_string()),
        ("innodb_page_size", page_size.to_string()),
        (
            "innodb_data_file_path",
            format!("ibdata1:{ibdata_mb}M;ibdata2:{ibdata_mb}M:autoextend"),
        ),
    ];
    let TestServer { sb, parent } = TestServer::start(|o| {
        // The datadir outlives the server: the test reads it afterwards.
        o.keep = true;
        for (k, v) in &vars {
            o.profile = std::mem::replace(&mut o.profile, Profile::Default).with_var(k, v);
        }
    });
    let mut sql = SQL.to_string();
    if page_size == 16384 {
        sql.push_str(SQL_ZIP);
    }
    {
        let mut c = sb.conn_spec().connect().unwrap();
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            c.query_drop(stmt).unwrap_or_else(|e| panic!("{stmt}: {e}"));
        }
    }
    let dir_sb = sb.dir().to_path_buf();
    sb.stop().unwrap_or_else(|e| panic!("sandbox stop: {e:#}"));
    let d = dir.join("data");
    fs::rename(dir_sb.join("data"), &d).unwrap();
    drop(parent);
    d
}

fn innotune(args: &[&str]) -> (i32, Value) {
    let out = support::innotune()
        .args(["--format", "json", "checksum"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap(), v["result"].clone())
}

/// Pages MariaDB's innochecksum reports as invalid (`Fail: page::N invalid`).
fn innochecksum_fails(f: &Path) -> (i32, BTreeSet<u64>) {
    let out = std::process::Command::new("innochecksum")
        .args(["--allow-mismatches=1000000"])
        .arg(f)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let set = text
        .lines()
        .filter_map(|l| l.strip_prefix("Fail: page::"))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    (out.status.code().unwrap_or(-1), set)
}

/// Pages innochecksum verified, from its `--log` (one `page::N;` line each).
fn innochecksum_checked(f: &Path, log: &Path) -> BTreeSet<u64> {
    let st = std::process::Command::new("innochecksum")
        .arg(format!("--log={}", log.display()))
        .arg(f)
        .output()
        .unwrap();
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let i = l.find("page::")?;
            l[i + 6..].split(';').next()?.parse().ok()
        })
        .collect()
}

fn check_format(algo: &str, expect_valid: &str, page_size: usize) {
    if !tools_present() {
        eprintln!("MariaDB tools not installed; skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = make_datadir(tmp.path(), algo, page_size);

    // The whole datadir is clean for innotune.
    let (code, r) = innotune(&[data.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    let files = r["files"].as_array().unwrap();
    let get = |name: &str| -> &Value {
        files
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .unwrap()
    };
    let a = get("t/a.ibd");
    assert_eq!(
        a["format"],
        if algo == "full_crc32" {
            "full_crc32"
        } else {
            "classic"
        }
    );
    assert_eq!(a["page_size_bytes"], page_size);
    // Issue 46: a named algorithm that cannot fit the file's format (read
    // from page 0's FSP flags) is refused for that file, naming both,
    // instead of calling every written page bad (exit 1, "CORRUPT").
    let wrong = if algo == "full_crc32" {
        "crc32"
    } else {
        "full_crc32"
    };
    let a_path = data.join("t/a.ibd");
    let (code, r) = innotune(&["--algorithm", wrong, a_path.to_str().unwrap()]);
    assert_eq!(code, 2, "{r:#}");
    assert_eq!(r["totals"]["bad"], 0, "{r:#}");
    let err = r["files"][0]["error"].as_str().unwrap();
    assert!(
        err.contains(&format!("--algorithm {wrong} does not fit"))
            && err.contains(&format!("{} format", a["format"].as_str().unwrap())),
        "{err}"
    );
    assert!(a["valid"][expect_valid].as_u64().unwrap() > 20, "{a:#}");
    let zip = page_size == 16384;
    if zip {
        let z = get("t/z.ibd");
        assert_eq!(z["physical_page_size_bytes"], 8192);
        assert!(z["valid"]["zip_crc32"].as_u64().unwrap() > 10, "{z:#}");
    }
    let pc = get("t/pc.ibd");
    if algo == "full_crc32" {
        // page_compressed full_crc32 pages carry a checksum over their compressed size.
        assert!(pc["valid"]["full_crc32"].as_u64().unwrap() > 10, "{pc:#}");
    } else {
        assert!(
            pc["skipped"]["page_compressed"].as_u64().unwrap() > 10,
            "{pc:#}"
        );
    }
    // Encrypted pages: verified through the checksum of the encrypted bytes.
    let e = get("t/e.ibd");
    let enc_algo = if algo == "full_crc32" {
        "full_crc32"
    } else {
        "encrypted_crc32"
    };
    assert!(e["valid"][enc_algo].as_u64().unwrap() > 10, "{e:#}");
    let ibdata = get("ibdata1");
    // Two extents: 64 pages each up to 16K, 256 at 4K.
    let extent = if page_size <= 16384 {
        (1 << 20) / page_size
    } else {
        64
    };
    assert_eq!(ibdata["skipped"]["doublewrite"], 2 * extent);
    let ibdata2 = get("ibdata2");
    assert!(
        ibdata2["pages_checked"].as_u64().unwrap() > 0,
        "{ibdata2:#}"
    );
    assert_eq!(ibdata2["bad"], 0);

    for name in ["a.ibd", "z.ibd", "pc.ibd", "e.ibd"] {
        if name == "z.ibd" && !zip {
            continue;
        }
        let src = data.join("t").join(name);
        // Clean: the pages innochecksum verified are exactly those innotune
        // counts valid (empty pages are not logged by innochecksum), except
        // full_crc32 page_compressed pages, which innochecksum does not log.
        let seen = innochecksum_checked(&src, &tmp.path().join(format!("{name}.log")));
        let (code, r) = innotune(&[src.to_str().unwrap()]);
        assert_eq!(code, 0);
        let valid: u64 = r["files"][0]["valid"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        if !(algo == "full_crc32" && name == "pc.ibd") {
            assert_eq!(seen.len() as u64, valid, "{algo} {name}");
        }

        // Corrupt every 3rd page (not page 0, which MariaDB's tool refuses to
        // go past) at a varying offset; both tools must flag the same pages.
        let copy = tmp.path().join(format!("bad-{name}"));
        fs::copy(&src, &copy).unwrap();
        let mut bytes = fs::read(&copy).unwrap();
        let ps = r["files"][0]["physical_page_size_bytes"].as_u64().unwrap() as usize;
        let pages = bytes.len() / ps;
        for p in (3..pages).step_by(3) {
            bytes[p * ps + 100 + (p % 50) * 97 % (ps - 200)] ^= 0x20;
        }
        fs::write(&copy, &bytes).unwrap();
        let (ic_code, ic) = innochecksum_fails(&copy);
        let (code, r) = innotune(&["--allow-mismatches", "1000000", copy.to_str().unwrap()]);
        assert_eq!(code, 0);
        let ours: BTreeSet<u64> = r["bad_pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["page"].as_u64().unwrap())
            .collect();
        assert_eq!(
            ours, ic,
            "{algo} {name}: innotune vs innochecksum bad pages"
        );
        // Classic page_compressed pages carry no checksum: both tools skip them.
        if name != "pc.ibd" || algo == "full_crc32" {
            assert!(
                !ours.is_empty(),
                "{algo} {name}: no planted corruption was visible"
            );
        }
        if name == "a.ibd" {
            assert!(ours.len() > 5, "{algo} {name}: {}", ours.len());
            assert_eq!(ic_code, 0);
            // And beyond the allowance both exit 1.
            let (code, _) = innotune(&[copy.to_str().unwrap()]);
            assert_eq!(code, 1);
        }
    }
}

#[test]
fn full_crc32_tablespaces_agree_with_innochecksum() {
    check_format("full_crc32", "full_crc32", 16384);
}

#[test]
fn crc32_tablespaces_agree_with_innochecksum() {
    check_format("crc32", "crc32", 16384);
}

#[test]
fn page_size_4k_full_crc32_agrees_with_innochecksum() {
    check_format("full_crc32", "full_crc32", 4096);
}

#[test]
fn page_size_64k_crc32_agrees_with_innochecksum() {
    check_format("crc32", "crc32", 65536);
}
