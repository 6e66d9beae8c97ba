//! The parsers a user reaches that tests/checksum_fuzz.rs does not cover:
//! MySQL option files (with includes), the journal (a file that may be
//! truncated by a crash or edited by hand), and saved block traces. Each is
//! fed random, truncated and mutated input for a fixed time budget
//! (INNOTUNE_FUZZ_SECS, default 3 s each) with fixed seeds: any panic fails
//! the test. Then the same inputs through the real binary
//! (`restore --dry-run`, `trace --input`) must end with exit 0 or 2 and one
//! error line, never a panic (exit 101).

mod support;

use innotune::host::Host;
use innotune::model::optfile::{Groups, Options};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::{Duration, Instant};

fn budget() -> Duration {
    let s = std::env::var("INNOTUNE_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(s)
}

/// Mutate `base`: truncate, flip bytes, splice junk, duplicate a slice.
fn mutate(rng: &mut SmallRng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..rng.gen_range(1..6) {
        if v.is_empty() {
            v.push(rng.gen());
            continue;
        }
        let at = rng.gen_range(0..v.len());
        match rng.gen_range(0..5) {
            0 => v.truncate(at),
            1 => v[at] ^= 1 << rng.gen_range(0..8),
            2 => {
                const JUNK: &[&[u8]] = &[
                    b"\n",
                    b"[",
                    b"]",
                    b"=",
                    b"\"",
                    b"'",
                    b"\\",
                    b"#",
                    b"!include ",
                    b"!includedir ",
                    b"\x00",
                    b"\xff\xfe",
                    b"{",
                    b"}",
                    b":",
                    b",",
                    b"-1",
                    b"18446744073709551616",
                    b"1e309",
                    b"null",
                    b"\t",
                    b"\r\n",
                ];
                let j = JUNK[rng.gen_range(0..JUNK.len())];
                v.splice(at..at, j.iter().copied());
            }
            3 => {
                let end = rng.gen_range(at..v.len().min(at + 64) + 1).min(v.len());
                let dup = v[at..end].to_vec();
                v.splice(at..at, dup);
            }
            _ => {
                let end = rng.gen_range(at..v.len() + 1);
                v.drain(at..end);
            }
        }
    }
    v
}

const OPTION_FILE: &str = "# a client option file\n[client]\nuser = app\nsocket=/run/mysqld/mysqld.sock\nport=3306\npassword=\"s3cr\\\"et\"\n\n[mysqld]\ndatadir=/var/lib/mysql\ninnodb_buffer_pool_size=1G\nskip-name-resolve\n!include /etc/mysql/extra.cnf\n!includedir /etc/mysql/conf.d/\n[mysqld-8.0]\ninnodb_redo_log_capacity = 2G\n";

#[test]
fn option_files_never_panic() {
    let t = tempfile::tempdir().unwrap();
    // Includes resolve inside this tree (a --root host); some exist.
    std::fs::create_dir_all(t.path().join("etc/mysql/conf.d")).unwrap();
    std::fs::write(t.path().join("etc/mysql/extra.cnf"), "[client]\nhost=db\n").unwrap();
    std::fs::write(
        t.path().join("etc/mysql/conf.d/a.cnf"),
        "[mysqld]\n!include /etc/mysql/conf.d/a.cnf\n",
    )
    .unwrap();
    let host = Host::with_root(t.path());
    let mut rng = SmallRng::seed_from_u64(0x0F_11E5);
    let end = Instant::now() + budget();
    let mut n = 0u64;
    while Instant::now() < end || n < 200 {
        let bytes = mutate(&mut rng, OPTION_FILE.as_bytes());
        let text = String::from_utf8_lossy(&bytes);
        for g in [Groups::Client, Groups::Server] {
            let mut o = Options::new(g);
            let _ = o.parse_text(&host, &text, Path::new("/etc/mysql/my.cnf"), 0);
            let _ = o.get("socket");
            let _ = o.get("datadir");
        }
        n += 1;
    }
    eprintln!("option files: {n} inputs");
}

const JOURNAL: &str = r#"{
  "version": 2,
  "owner": {"pid": 4194303, "command": "innotune sweep /data", "started": "2026-11-25T10:00:00Z", "start_ticks": 1},
  "entries": [
    {"kind": "change", "id": 1, "change": {"kind": "sysfs", "path": "/sys/block/loop7/queue/scheduler", "value": "kyber", "label": "loop7", "original": "none"}},
    {"kind": "change", "id": 2, "change": {"kind": "file", "path": "/tmp/innotune-fuzz-nonexistent/x.rules", "content": "x"}},
    {"kind": "change", "id": 3, "change": {"kind": "server", "dir": "/tmp/innotune-fuzz-nonexistent/sb", "pid": 4194303, "start_ticks": 5}}
  ]
}
"#;

#[test]
fn journals_never_panic_in_load_or_restore() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("journal.json");
    // The base is a journal innotune reads, so mutations reach deep.
    std::fs::write(&path, JOURNAL).unwrap();
    let base = innotune::journal::load(&path).unwrap().unwrap();
    assert_eq!(base.entries.len(), 3);
    let mut rng = SmallRng::seed_from_u64(0x0000_70A1);
    let end = Instant::now() + budget();
    let mut n = 0u64;
    let mut samples = Vec::new();
    while Instant::now() < end || n < 200 {
        let bytes = mutate(&mut rng, JOURNAL.as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let _ = innotune::journal::load(&path);
        if n % 50 == 0 {
            samples.push(bytes);
        }
        n += 1;
    }
    eprintln!("journals: {n} inputs");
    // Through the binary, dry run only: exit 0 or 2 and no panic.
    for bytes in samples.iter().take(12) {
        let state = tempfile::tempdir().unwrap();
        std::fs::write(state.path().join("journal.json"), bytes).unwrap();
        let o = support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", state.path())
            .args(["restore", "--dry-run"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(0) | Some(2)),
            "exit {:?}: {err}\ninput: {}",
            o.status.code(),
            String::from_utf8_lossy(bytes)
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn saved_traces_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace");
    let mut bases = Vec::new();
    for name in [
        "loop-mq-deadline-randrw.trace",
        "loop-mq-deadline-randrw.blkparse",
        "edge-cases.trace",
    ] {
        let b = std::fs::read(dir.join(name)).unwrap();
        // A slice of a few hundred lines keeps each round fast.
        let cut = b
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == b'\n')
            .nth(400)
            .map_or(b.len(), |(i, _)| i + 1);
        bases.push(b[..cut].to_vec());
    }
    let mut rng = SmallRng::seed_from_u64(0x7_4ACE);
    let end = Instant::now() + budget();
    let mut n = 0u64;
    let mut keep = Vec::new();
    while Instant::now() < end || n < 100 {
        let base = &bases[rng.gen_range(0..bases.len())];
        let bytes = mutate(&mut rng, base);
        let mut f = innotune::trace::feed::Feeder::default();
        // Fed in random chunk sizes, as a pipe delivers them.
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let k = rng.gen_range(1..rest.len().min(4096) + 1);
            f.feed(&rest[..k]);
            rest = &rest[k..];
        }
        f.flush();
        let _ = f.analyzer.finish();
        if n % 40 == 0 {
            keep.push(bytes);
        }
        n += 1;
    }
    eprintln!("traces: {n} inputs");
    let t = tempfile::tempdir().unwrap();
    for (i, bytes) in keep.iter().take(8).enumerate() {
        let p = t.path().join(format!("t{i}.trace"));
        std::fs::write(&p, bytes).unwrap();
        let o = support::innotune_sys()
            .args(["--format", "json", "trace", "--input"])
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(0) | Some(2)),
            "exit {:?}: {err}",
            o.status.code()
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}
