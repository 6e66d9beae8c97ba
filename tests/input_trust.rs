//! Input files the user names (`check --results`, `check --slowlog`,
//! `report FILE…`, `bench --job-file`, `slowlog FILE`): only regular files
//! are read, a FIFO or device is refused without blocking; result files
//! of another schema version are refused; slow logs are read in bounded
//! memory, whatever they hold (docs/security.md, "inputs").

mod support;

use serde_json::Value;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Every command here answers within this (it reads small files or gives
/// up at once); a FIFO that blocked would fail the test here.
const LIMIT: Duration = Duration::from_secs(60);

fn inn(state: &Path) -> Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn run(mut c: Command) -> Output {
    support::spawn(&mut c).output_within(LIMIT)
}

/// Exit 2, one error line naming `path` and the fix, containing `what`,
/// nothing on stdout.
fn refused(o: &Output, path: &Path, what: &str, args: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args}: {err}");
    assert!(err.contains(&*path.to_string_lossy()), "{args}: {err}");
    assert!(err.contains(what) && err.contains("fix:"), "{args}: {err}");
    assert!(o.stdout.is_empty(), "{args}");
}

fn check_host() -> PathBuf {
    support::fixture_host("check-clean")
}

/// The argument lists that read `input`, each with its own scratch.
fn readers(input: &Path, scratch: &Path) -> Vec<Vec<std::ffi::OsString>> {
    let root = check_host();
    let i = input.as_os_str().to_owned();
    let mut out = vec![
        vec![
            "--root".into(),
            root.clone().into(),
            "check".into(),
            "/var/lib/mysql".into(),
            "--results".into(),
            i.clone(),
        ],
        vec![
            "--root".into(),
            root.into(),
            "check".into(),
            "/var/lib/mysql".into(),
            "--slowlog".into(),
            i.clone(),
        ],
        vec!["report".into(), i.clone()],
        vec!["slowlog".into(), i.clone()],
        vec![
            "bench".into(),
            "--job-file".into(),
            i.clone(),
            "--directory".into(),
            scratch.into(),
        ],
    ];
    for a in &mut out {
        a.splice(0..0, ["--format".into(), "json".into()]);
    }
    out
}

fn show(args: &[std::ffi::OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A FIFO nobody writes to would block every reader forever; /dev/zero
/// would be read until memory ran out; a directory cannot be read. Each is
/// refused in one line naming it, at once.
#[test]
fn fifos_devices_and_directories_are_refused_without_blocking() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.json");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let scratch = dir.path().join("bench");
    std::fs::create_dir(&scratch).unwrap();
    let sub = dir.path().join("a-directory");
    std::fs::create_dir(&sub).unwrap();
    for (input, what) in [
        (fifo.as_path(), "is a FIFO, not a regular file"),
        (
            Path::new("/dev/zero"),
            "is a character device, not a regular file",
        ),
        (sub.as_path(), "is a directory"),
    ] {
        for args in readers(input, &scratch) {
            let mut c = inn(state.path());
            c.args(&args);
            refused(&run(c), input, what, &show(&args));
        }
    }
    // The FIFO is still a FIFO, and bench made no file.
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    // A stream is still read from stdin: `slowlog -` fed from the FIFO's
    // contents would be the way (here: a plain pipe).
    let mut c = inn(state.path());
    c.args(["--format", "json", "slowlog", "-"])
        .stdin(Stdio::piped());
    let mut child = support::spawn(&mut c);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"# Time: 241125 16:00:01\n# User@Host: a[a] @ h []\n# Query_time: 1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n")
        .unwrap();
    let o = child.output_within(LIMIT);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"]["totals"]["entries"], 1);
}

/// `check --results` reads a result of another envelope version no more
/// than `report` does: one line naming the version and the innotune that
/// wrote it, the same words for both commands.
#[test]
fn results_of_another_schema_version_are_refused_as_report_refuses_them() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/sweep.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    v["schema"] = "sweep/99".into();
    v["version"] = "99.0.0".into();
    let f = dir.path().join("sweep99.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let mut lines = Vec::new();
    for args in [
        vec![
            "--root".into(),
            check_host().into_os_string(),
            "check".into(),
            "/var/lib/mysql".into(),
            "--results".into(),
            f.clone().into_os_string(),
        ],
        vec!["report".into(), f.clone().into_os_string()],
    ] {
        let mut c = inn(state.path());
        c.args(&args);
        let o = run(c);
        refused(&o, &f, "schema sweep/99 is version 99", &show(&args));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(err.contains("99.0.0"), "{err}");
        lines.push(err[err.find("schema").unwrap()..].to_string());
    }
    assert_eq!(lines[0], lines[1]);
    // The same file at version 2 is read (the refusal is the version).
    v["schema"] = "sweep/2".into();
    std::fs::write(&f, v.to_string()).unwrap();
    let mut c = inn(state.path());
    c.args(["--format", "json", "--root"])
        .arg(check_host())
        .args(["check", "/var/lib/mysql", "--results"])
        .arg(&f);
    let o = run(c);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Limit the child's data (heap and private writable mappings) to `bytes`:
/// a reader whose memory grew with its input would die here.
fn limit_data(c: &mut Command, bytes: u64) {
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the
    // child between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

const DATA_LIMIT: u64 = 512 << 20;

/// A 4 MB gzip file of 4 GiB of zeros: gzip members of 1 MiB of zeros,
/// compressed once and repeated (a gzip stream may hold many members).
fn gzip_of_zeros(path: &Path, gib: u64) {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = enc.finish().unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..(gib << 10) {
        f.write_all(&member).unwrap();
    }
    f.flush().unwrap();
}

/// A gzip bomb (4 GiB of zeros in 4 MB) is read in bounded memory and
/// refused in one line naming the entry limit and the flag that raises
/// it, by `slowlog` and by `check --slowlog` (each under a 512 MiB data
/// limit: the old reader asked for 4 GiB at once and aborted).
#[test]
fn a_gzip_of_four_gib_of_zeros_is_refused_in_bounded_memory() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("slow.log.gz");
    gzip_of_zeros(&gz, 4);
    assert!(std::fs::metadata(&gz).unwrap().len() < 8 << 20);
    for (args, flag) in [
        (
            vec!["slowlog".into(), gz.clone().into_os_string()],
            "--max-entry-size 64MiB",
        ),
        (
            vec![
                "--root".into(),
                check_host().into_os_string(),
                "check".into(),
                "/var/lib/mysql".into(),
                "--slowlog".into(),
                gz.clone().into_os_string(),
            ],
            "--slowlog-max-entry-size 64MiB",
        ),
    ] {
        let mut c = inn(state.path());
        c.args(&args);
        limit_data(&mut c, DATA_LIMIT);
        let o = run(c);
        refused(&o, &gz, flag, &show(&args));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("raise --"), "{err}");
    }
    // Raised past the data limit, the limit is what stops it: the entry
    // cap is what bounds the memory.
    let mut c = inn(state.path());
    c.arg("slowlog").arg(&gz).args(["--max-entry-size", "1KiB"]);
    limit_data(&mut c, DATA_LIMIT);
    refused(
        &run(c),
        &gz,
        "--max-entry-size 1KiB",
        "slowlog --max-entry-size 1KiB",
    );
}

/// 1 GiB of newlines on stdin (twice the data limit) holds no entry: read
/// in bounded memory, digested as empty.
#[test]
fn a_gib_of_newlines_on_stdin_is_read_in_bounded_memory() {
    let state = tempfile::tempdir().unwrap();
    let mut c = inn(state.path());
    c.args(["--format", "json", "slowlog", "-"])
        .stdin(Stdio::piped());
    limit_data(&mut c, DATA_LIMIT);
    let mut child = support::spawn(&mut c);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![b'\n'; 1 << 20];
        for _ in 0..1024 {
            if stdin.write_all(&block).is_err() {
                return false;
            }
        }
        true
    });
    let o = child.output_within(Duration::from_secs(300));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(writer.join().unwrap(), "innotune stopped reading");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"]["read_bytes"], 1u64 << 30);
    assert_eq!(v["result"]["totals"]["entries"], 0);
    assert_eq!(v["result"]["totals"]["malformed"], 0);
}

/// The entry cap holds for a plain (mapped) file too, so the same log
/// gives the same answer plain, gzipped or on stdin.
#[test]
fn the_entry_cap_is_the_same_for_mapped_gzip_and_stdin() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let long = format!(
        "# Time: 241125 16:00:01\n# User@Host: a[a] @ h []\n# Query_time: 1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT '{}';\n# Time: 241125 16:00:02\n# User@Host: a[a] @ h []\n# Query_time: 2  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 2;\n",
        "x".repeat(4000)
    );
    let plain = dir.path().join("slow.log");
    std::fs::write(&plain, &long).unwrap();
    let gz = dir.path().join("slow.log.1");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(long.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    for f in [&plain, &gz] {
        for (cap, ok) in [("1KiB", false), ("8KiB", true)] {
            for stdin in [false, true] {
                let mut c = inn(state.path());
                c.args(["--format", "json", "slowlog", "--max-entry-size", cap]);
                if stdin {
                    c.arg("-").stdin(std::fs::File::open(f).unwrap());
                } else {
                    c.arg(f);
                }
                let o = run(c);
                let err = String::from_utf8_lossy(&o.stderr);
                let what = format!("{} {cap} stdin={stdin}", f.display());
                if ok {
                    assert!(o.status.success(), "{what}: {err}");
                    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
                    assert_eq!(v["result"]["totals"]["entries"], 2, "{what}");
                } else {
                    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
                    assert!(
                        err.contains("longer than --max-entry-size 1KiB"),
                        "{what}: {err}"
                    );
                    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
                }
            }
        }
    }
}
