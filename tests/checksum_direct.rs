//! `innotune checksum --direct` on a tablespace large enough to span several
//! reads and shards: the io_uring reader, the pread fallback
//! (`INNOTUNE_CHECKSUM_NO_URING=1`) and the page-cache path must report the
//! same bad pages, and must read a file whose size is not a multiple of the
//! read size to its last page.
//!
//! The file is a real MySQL 8.0 crc32 tablespace (the fixture's 22 pages,
//! page 0 included) extended with crc32 pages written here, so every page
//! but the planted ones verifies.

mod support;

use innotune::checksum::algo;
use serde_json::Value;
use std::fs;
use std::path::Path;

const FIXTURE: &str = "/work/shared/fixtures/mysql-tablespaces/sakila/8.0/sakila/film.ibd";
const PS: usize = 16384;
/// 2048 pages (one 32 MiB direct shard) + 512 (one 8 MiB pread chunk, two
/// 4 MiB ring reads) + 37: not a multiple of any read size or shard.
const PAGES: usize = 2048 + 512 + 37;
/// Planted corruptions: in the fixture's pages, on both sides of the first
/// read boundaries (4 MiB and 8 MiB), on both sides of the shard boundary,
/// and the file's last page (in the short tail read).
const BAD: [u64; 7] = [5, 255, 256, 512, 2047, 2048, PAGES as u64 - 1];

/// A crc32 page `no` of space `space` (as MySQL 8.0 writes them: the
/// checksum in the header and the trailer, the LSN's low word in the trailer).
fn crc32_page(seed: &mut u64, no: u32, space: u32) -> Vec<u8> {
    let mut p = vec![0u8; PS];
    for chunk in p.chunks_mut(8) {
        // xorshift64: page contents only need to differ, not to be random.
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        chunk.copy_from_slice(&seed.to_le_bytes()[..chunk.len()]);
    }
    p[4..8].copy_from_slice(&no.to_be_bytes());
    p[24..26].copy_from_slice(&17855u16.to_be_bytes()); // INDEX
    p[34..38].copy_from_slice(&space.to_be_bytes());
    let lsn_lo = [p[20], p[21], p[22], p[23]];
    p[PS - 4..].copy_from_slice(&lsn_lo);
    let c = algo::page_crc32(&p);
    p[..4].copy_from_slice(&c.to_be_bytes());
    p[PS - 8..PS - 4].copy_from_slice(&c.to_be_bytes());
    p
}

/// The big tablespace in `dir`, with [`BAD`] corrupted; returns its path.
fn big_tablespace(dir: &Path) -> std::path::PathBuf {
    let mut data = fs::read(FIXTURE).unwrap();
    let fixture_pages = data.len() / PS;
    let space = u32::from_be_bytes(data[34..38].try_into().unwrap());
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for no in fixture_pages..PAGES {
        data.extend_from_slice(&crc32_page(&mut seed, no as u32, space));
    }
    for &b in &BAD {
        data[b as usize * PS + 3000] ^= 0x10;
    }
    let path = dir.join("big.ibd");
    fs::write(&path, &data).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), (PAGES * PS) as u64);
    path
}

/// `checksum --format json ARGS` with `env`: (exit code, result).
fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let out = support::innotune()
        .args(["--format", "json", "checksum"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}",
            String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout)
        )
    });
    (code, v["result"].clone())
}

fn bad_pages(r: &Value) -> Vec<(u64, String)> {
    r["bad_pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["page"].as_u64().unwrap(),
                b["check"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Whether this kernel lets us make a ring (the sysctl that disables it).
fn io_uring_allowed() -> bool {
    fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .map(|s| s.trim() == "0")
        .unwrap_or(true)
}

#[test]
fn io_uring_pread_and_page_cache_paths_find_the_same_pages_to_the_tail() {
    // Not /tmp's default: O_DIRECT must be honoured (tmpfs refuses it).
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = big_tablespace(dir.path());
    let f = f.to_str().unwrap();
    let expected: Vec<(u64, String)> = BAD.iter().map(|&p| (p, "checksum".into())).collect();

    let mut runs = Vec::new();
    for threads in ["1", "2", "3"] {
        let (code, r) = run(&["--direct", "--threads", threads, f], &[]);
        if io_uring_allowed() {
            assert_eq!(r["reader"], "io_uring", "threads {threads}");
        }
        runs.push((format!("io_uring, {threads} threads"), code, r));
    }
    let (code, r) = run(
        &["--direct", "--threads", "2", f],
        &[("INNOTUNE_CHECKSUM_NO_URING", "1")],
    );
    assert_eq!(r["reader"], "pread");
    runs.push(("pread".into(), code, r));
    let (code, r) = run(&["--threads", "2", f], &[]);
    assert_eq!(r["reader"], "page_cache");
    runs.push(("page cache".into(), code, r));

    for (name, code, r) in &runs {
        assert_eq!(*code, 1, "{name}: exit code");
        assert_eq!(bad_pages(r), expected, "{name}");
        let file = &r["files"][0];
        assert_eq!(file["pages_checked"], PAGES as u64, "{name}");
        // The fixture has one empty page; everything else but BAD is crc32.
        assert_eq!(file["empty"], 1, "{name}");
        assert_eq!(
            file["valid"]["crc32"],
            (PAGES - BAD.len() - 1) as u64,
            "{name}"
        );
        assert_eq!(r["read_bytes"], (PAGES * PS) as u64, "{name}");
        assert_eq!(file, &runs[0].2["files"][0], "{name} vs {}", runs[0].0);
    }
}

/// A page range that starts and ends inside reads: the io_uring reader reads
/// exactly the selected pages, and one clean run exits 0.
#[test]
fn io_uring_page_ranges_select_pages() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = big_tablespace(dir.path());
    let f = f.to_str().unwrap();
    let (code, r) = run(
        &["--direct", "--start-page", "257", "--end-page", "511", f],
        &[],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["files"][0]["pages_checked"], 255);
    assert_eq!(r["read_bytes"], 255 * PS as u64);
    let (code, r) = run(&["--direct", "--start-page", "2000", f], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        bad_pages(&r),
        vec![
            (2047, "checksum".to_string()),
            (2048, "checksum".to_string()),
            (PAGES as u64 - 1, "checksum".to_string())
        ]
    );
    assert_eq!(r["files"][0]["pages_checked"], (PAGES - 2000) as u64);
}
