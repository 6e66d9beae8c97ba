//! `innotune checksum` through the real binary, on real tablespaces: the
//! read-only fixtures written by MySQL 5.0–8.4, and copies with planted
//! corruptions.

mod support;
use support::Start as _;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

const FIXTURES: &str = "/work/shared/fixtures/mysql-tablespaces";
/// A MySQL 8.0 crc32 tablespace: 22 pages, 21 crc32 + 1 empty.
const CRC32_FILE: &str = "sakila/8.0/sakila/film.ibd";
const PS: usize = 16384;

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join(rel)
}

/// Run `checksum --format json ARGS`, returning (exit code, result object, stderr).
fn json(args: &[&str]) -> (i32, Value, String) {
    let out = support::innotune()
        .args(["--format", "json", "checksum"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = if out.stdout.is_empty() {
        Value::Null
    } else {
        let env: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(env["schema"], "checksum/2");
        env["result"].clone()
    };
    (code, v, stderr)
}

fn sum_valid(r: &Value, algo: &str) -> u64 {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["valid"][algo].as_u64().unwrap_or(0))
        .sum()
}

fn copy_to(dir: &Path, rel: &str) -> PathBuf {
    let dst = dir.join(Path::new(rel).file_name().unwrap());
    fs::copy(fixture(rel), &dst).unwrap();
    let mut p = fs::metadata(&dst).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(false);
    fs::set_permissions(&dst, p).unwrap();
    dst
}

fn patch(path: &Path, off: usize, f: impl FnOnce(&mut [u8])) {
    let mut data = fs::read(path).unwrap();
    f(&mut data[off..]);
    fs::write(path, data).unwrap();
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

#[test]
fn every_fixture_passes_with_the_algorithm_it_was_written_with() {
    let (code, r, _) = json(&[FIXTURES]);
    assert_eq!(code, 0);
    // Independent count (a script mirroring MySQL's rules, run once over
    // the fixtures).
    assert_eq!(sum_valid(&r, "crc32"), 661);
    assert_eq!(sum_valid(&r, "innodb"), 465);
    assert_eq!(r["totals"]["empty"], 177);
    assert_eq!(r["totals"]["bad"], 0);
    assert_eq!(r["totals"]["files"], 121);
    assert_eq!(r["totals"]["pages_checked"], 1303);
}

#[test]
fn t_10k_rows_page_0_is_valid_innodb_checksum() {
    let f = fixture("t_10k_rows.ibd");
    let (code, r, _) = json(&["--page", "0", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(r["files"][0]["pages_checked"], 1);
    assert_eq!(r["files"][0]["valid"]["innodb"], 1);
    // MariaDB's innochecksum refuses it (it does not try the innodb
    // checksum on page 0 of a MySQL file); keep the contrast honest.
    if which::which("innochecksum").is_ok() {
        let st = std::process::Command::new("innochecksum")
            .arg(&f)
            .output()
            .unwrap();
        assert_ne!(
            st.status.code(),
            Some(0),
            "MariaDB innochecksum now accepts it?"
        );
    }
}

#[test]
fn named_algorithm_is_strict() {
    let f = fixture("t_10k_rows.ibd");
    let f = f.to_str().unwrap();
    let (code, r, _) = json(&["--algorithm", "innodb", f]);
    assert_eq!(code, 0);
    assert_eq!(r["totals"]["bad"], 0);
    let (code, r, _) = json(&["--algorithm", "crc32", f]);
    assert_eq!(code, 1);
    // Every written page fails, empty pages still pass.
    assert_eq!(r["totals"]["bad"], 21);
    assert_eq!(r["bad_pages"][0]["check"], "checksum");
    assert_eq!(r["bad_pages"][0]["algorithm"], "crc32");
}

#[test]
fn bit_flip_is_found_with_stored_and_computed() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    patch(&f, 5 * PS + 5000, |b| b[0] ^= 0x04);
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(bad_pages(&r), vec![(5, "checksum".to_string())]);
    let b = &r["bad_pages"][0];
    assert_eq!(b["file"], f.to_str().unwrap());
    assert_eq!(b["page_type"], "INDEX");
    assert_eq!(b["algorithm"], "crc32");
    assert_ne!(b["stored"], b["computed"]);
    // Text output names page, check and values, and exits 1.
    let out = support::innotune()
        .args(["checksum", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("page 5 (INDEX): checksum crc32 stored 0x"),
        "{text}"
    );
    assert!(text.contains("CORRUPT"), "{text}");
}

#[test]
fn torn_page_and_wrong_lsn_trailer_fail_the_lsn_check() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    let data = fs::read(&f).unwrap();
    // Torn write: page 4's first half is new, its second half an older write
    // (here page 3's bytes, which carry another LSN in the trailer).
    let lsn = |p: usize| &data[p * PS + 20..p * PS + 24];
    assert_ne!(lsn(3), lsn(4), "fixture pages should differ in LSN");
    let old_half = data[3 * PS + PS / 2..4 * PS].to_vec();
    patch(&f, 4 * PS + PS / 2, |b| {
        b[..PS / 2].copy_from_slice(&old_half)
    });
    // Wrong LSN in page 6's trailer only.
    patch(&f, 7 * PS - 1, |b| b[0] ^= 0xFF);
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        bad_pages(&r),
        vec![(4, "lsn".to_string()), (6, "lsn".to_string())]
    );
}

#[test]
fn misdirected_write_fails_the_page_number_check() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    let data = fs::read(&f).unwrap();
    let page3 = data[3 * PS..4 * PS].to_vec();
    patch(&f, 4 * PS, |b| b[..PS].copy_from_slice(&page3));
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(bad_pages(&r), vec![(4, "page_number".to_string())]);
    assert_eq!(r["bad_pages"][0]["stored"], 3);
    assert_eq!(r["bad_pages"][0]["computed"], 4);
}

#[test]
fn allow_mismatches_reports_but_exits_0_within_the_allowance() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    patch(&f, 2 * PS + 100, |b| b[0] ^= 1);
    patch(&f, 9 * PS + 100, |b| b[0] ^= 1);
    let p = f.to_str().unwrap();
    let (code, r, _) = json(&["--allow-mismatches", "2", p]);
    assert_eq!(code, 0);
    assert_eq!(r["totals"]["bad"], 2);
    assert_eq!(r["exceeded"], false);
    assert_eq!(r["bad_pages"].as_array().unwrap().len(), 2);
    let (code, r, _) = json(&["-a", "1", p]);
    assert_eq!(code, 1);
    assert_eq!(r["exceeded"], true);
}

/// Issue 11, item 5: a truncated or otherwise uncheckable file among
/// several no longer throws the other results away: every file is in the
/// report, the bad one with an `error`, and the exit code is 2 at the end.
#[test]
fn one_bad_file_among_several_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let good = copy_to(dir.path(), CRC32_FILE);
    let sub = dir.path().join("t");
    fs::create_dir(&sub).unwrap();
    let trunc = copy_to(&sub, CRC32_FILE);
    let len = fs::metadata(&trunc).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&trunc)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    let other = copy_to(dir.path(), "t_10k_rows.ibd");
    let (code, r, err) = json(&[
        good.to_str().unwrap(),
        trunc.to_str().unwrap(),
        other.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    let files = r["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["valid"]["crc32"], 21);
    assert_eq!(files[2]["valid"]["innodb"], 21);
    let e = files[1]["error"].as_str().unwrap();
    assert!(
        e.contains("film.ibd") && e.contains("not a multiple of its page size 16384"),
        "{e}"
    );
    assert!(files[0].get("error").is_none());
    assert_eq!(r["totals"]["files_with_errors"], 1);
    // Text: the table, an error line for the bad file, and the verdict.
    let out = support::innotune()
        .args(["checksum", good.to_str().unwrap(), trunc.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error: ") && text.contains("not a multiple") && text.contains("INCOMPLETE"),
        "{text}"
    );
    assert!(text.contains("21 (crc32:21)"), "{text}");
}

/// Issue 11, item 5, the unreadable case: run as the unprivileged user
/// `nobody`, one tablespace it may not read (root's, 0600) among two it
/// may: both others are reported, the unreadable one has an `error`
/// naming it, and the exit code is 2.
#[test]
fn an_unreadable_file_among_several_keeps_the_others() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let a = copy_to(dir.path(), CRC32_FILE);
    let sub = dir.path().join("secret");
    fs::create_dir(&sub).unwrap();
    fs::set_permissions(&sub, fs::Permissions::from_mode(0o755)).unwrap();
    let hidden = copy_to(&sub, CRC32_FILE);
    let b = copy_to(dir.path(), "t_10k_rows.ibd");
    for (f, mode) in [(&a, 0o644), (&hidden, 0o600), (&b, 0o644)] {
        fs::set_permissions(f, fs::Permissions::from_mode(mode)).unwrap();
    }
    let out = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(support::bin::INNOTUNE)
        .args(["--format", "json", "checksum"])
        .args([&a, &hidden, &b])
        .env("INNOTUNE_STATE_DIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = v["result"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{v:#}");
    assert_eq!(files[0]["valid"]["crc32"], 21);
    assert_eq!(files[2]["valid"]["innodb"], 21);
    let e = files[1]["error"].as_str().unwrap();
    assert!(
        e.contains(hidden.to_str().unwrap()) && e.contains("ermission denied"),
        "{e}"
    );
    assert_eq!(v["result"]["totals"]["files_with_errors"], 1);
}

/// Issue 11, item 6: a page range past the end used to check 0 pages and
/// say OK: now an error naming the page count.
#[test]
fn a_page_range_past_the_end_names_the_page_count() {
    let f = fixture(CRC32_FILE);
    for args in [["-p", "999"], ["-s", "100"]] {
        let (code, r, _) = json(&[args[0], args[1], f.to_str().unwrap()]);
        assert_eq!(code, 2, "{args:?}");
        let e = r["files"][0]["error"].as_str().unwrap();
        assert!(
            e.contains("past the end") && e.contains("22 pages (0–21)"),
            "{e}"
        );
        assert_eq!(r["files"][0]["pages_checked"], 0);
    }
    // The last page itself is fine.
    let (code, r, _) = json(&["-p", "21", f.to_str().unwrap()]);
    assert_eq!(
        (code, r["files"][0]["pages_checked"].as_u64()),
        (0, Some(1))
    );
}

/// Issue 11, item 7: a FIFO named like a tablespace used to block forever.
/// Given as an argument: one line, exit 2. Met in a walk: an error for that
/// entry. A symlinked .ibd in a walk is followed (it used to be skipped
/// silently, hiding a corrupt file), a dangling one reported.
#[test]
fn fifos_and_symlinks_are_refused_or_followed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.ibd");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let run = |args: &[&str]| {
        let mut child = support::innotune_sys()
            .args(["--format", "json", "checksum"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .start();
        // A hang is the bug: give it a generous bound, then kill it.
        let t0 = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if t0.elapsed().as_secs() > 60 {
                let _ = child.kill();
                panic!("checksum {args:?} blocked");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.output_within(support::WAIT)
    };
    let out = run(&[fifo.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("is a FIFO, not a tablespace file") && err.contains("fix:"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // A character device named like a tablespace (/dev/zero's numbers:
    // it would be read forever) is refused the same way.
    let dev = dir.path().join("zero.ibd");
    let c = std::ffi::CString::new(dev.to_str().unwrap()).unwrap();
    // SAFETY: valid path; makedev(1, 5) is /dev/zero.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) };
    assert_eq!(made, 0, "mknod (the tests run as root)");
    let out = run(&[dev.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a character device, not a tablespace file") && err.contains("fix:"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    fs::remove_file(&dev).unwrap();

    // In a walk: the FIFO is an error entry; a symlinked corrupt .ibd is
    // checked (exit 2 for the FIFO, and the bad page listed).
    let elsewhere = tempfile::tempdir().unwrap();
    let bad = copy_to(elsewhere.path(), CRC32_FILE);
    patch(&bad, 5 * PS + 5000, |b| b[0] ^= 0x04);
    std::os::unix::fs::symlink(&bad, dir.path().join("linked.ibd")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/gone.ibd", dir.path().join("gone.ibd")).unwrap();
    let out = run(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    let by = |name: &str| {
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} missing from {r}"))
            .clone()
    };
    assert!(by("x.ibd")["error"].as_str().unwrap().contains("FIFO"));
    assert!(by("gone.ibd")["error"]
        .as_str()
        .unwrap()
        .contains("symbolic link"));
    assert_eq!(by("linked.ibd")["bad"], 1);
    assert_eq!(bad_pages(r), vec![(5, "checksum".to_string())]);
}

/// Issue 11, item 8: a text file whose bytes happen to be valid flags was
/// reported as "CORRUPT: 4 bad"; it is not an InnoDB tablespace at all.
#[test]
fn a_text_file_is_not_an_innodb_tablespace() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("notes.ibd");
    let mut text = "These are my notes about the database server.    \n"
        .repeat(1400)
        .into_bytes();
    text.truncate(65536);
    // Spaces at the flags' offset: 0x20202020 is a valid 16K classic layout.
    text[54..58].copy_from_slice(b"    ");
    fs::write(&f, &text).unwrap();
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    let e = r["files"][0]["error"].as_str().unwrap();
    assert!(e.contains("not an InnoDB tablespace"), "{e}");
    assert_eq!(r["totals"]["bad"], 0);
    assert!(r["bad_pages"].as_array().unwrap().is_empty());
}

#[test]
fn missing_file_and_empty_directory_are_exit_2() {
    let out = support::innotune()
        .args(["checksum", "/nonexistent/x.ibd"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("innotune: error: cannot read /nonexistent/x.ibd"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = support::innotune()
        .args(["checksum", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no InnoDB tablespaces"));
}

#[test]
fn page_ranges_select_pages() {
    let f = fixture(CRC32_FILE);
    let p = f.to_str().unwrap();
    let (_, r, _) = json(&["--start-page", "2", "--end-page", "5", p]);
    assert_eq!(r["files"][0]["pages_checked"], 4);
    let (_, r, _) = json(&["-s", "20", p]);
    assert_eq!(r["files"][0]["pages_checked"], 2);
    let (code, _, err) = json(&["-s", "5", "-e", "2", p]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--start-page 5 is after --end-page 2"),
        "{err}"
    );
    // A bad page outside the range is not seen.
    let dir = tempfile::tempdir().unwrap();
    let c = copy_to(dir.path(), CRC32_FILE);
    patch(&c, 7 * PS + 100, |b| b[0] ^= 1);
    let (code, _, _) = json(&["--page", "6", c.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (code, _, _) = json(&["--page", "7", c.to_str().unwrap()]);
    assert_eq!(code, 1);
}

#[test]
fn threads_direct_and_summary_agree() {
    let (_, one, _) = json(&["--threads", "1", FIXTURES]);
    let (_, two, _) = json(&["--threads", "2", "--direct", FIXTURES]);
    assert_eq!(one["files"], two["files"]);
    assert_eq!(two["direct"], true);
    let (_, s, _) = json(&[
        "--page-type-summary",
        &fixture(CRC32_FILE).to_string_lossy(),
    ]);
    let types = &s["files"][0]["page_types"];
    assert_eq!(types["FSP_HDR"], 1);
    assert!(types["INDEX"].as_u64().unwrap() > 10);
    let total: u64 = types
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 22);
}

/// Removes the immutable attribute on every exit path.
struct Immutable(PathBuf);
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// An immutable file cannot be opened for writing even by root: if innotune
/// ever opened for writing, this run would fail.
#[test]
fn never_opens_for_writing() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    let ok = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&f)
        .status();
    if !matches!(ok, Ok(s) if s.success()) {
        eprintln!("chattr +i unsupported here; skipping");
        return;
    }
    let _guard = Immutable(f.clone());
    assert!(fs::OpenOptions::new().write(true).open(&f).is_err());
    let (code, r, _) = json(&["--direct", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(r["files"][0]["valid"]["crc32"], 21);
}

/// A write lock held by another process stands in for a running server.
fn hold_write_lock(f: &fs::File) {
    use std::os::fd::AsRawFd;
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl) }, 0);
}

#[test]
fn live_file_mismatch_is_reread_before_reporting() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    let good = fs::read(&f).unwrap()[8 * PS..9 * PS].to_vec();
    patch(&f, 8 * PS + 200, |b| b[0] ^= 1);
    let lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    hold_write_lock(&lock);
    // Still corrupt after the re-reads: reported, and the file marked live.
    let (code, r, err) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    // Issue 39: the holder is named as what it is (this test process, not
    // a server), from the lock's own pid.
    let me = std::process::id();
    assert_eq!(r["files"][0]["live_server"], false);
    assert_eq!(r["files"][0]["held_by"]["how"], "lock");
    assert_eq!(r["files"][0]["held_by"]["pid"], me);
    assert_eq!(bad_pages(&r), vec![(8, "checksum".to_string())]);
    assert!(
        !err.contains("holds a write lock"),
        "said once, on the page: {err}"
    );
    // Issue 46: said once — on the page, not again on stderr.
    let out = support::innotune()
        .env("NO_COLOR", "1")
        .arg("checksum")
        .arg(&f)
        .output()
        .unwrap();
    let (page, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        page.matches(&format!("process {me} (")).count(),
        1,
        "{page}"
    );
    assert!(page.contains("holds a write lock on this file"), "{page}");
    assert!(
        !page.contains("server") && !err.contains("write lock"),
        "{page}{err}"
    );
    // The "server" finishes its write during the re-reads: not reported.
    // Readiness: the process's own read counter past the whole file (the
    // scan has read the bad page and is in its 5 x 50 ms re-read window),
    // then the good page is written.
    let child = support::innotune_sys()
        .args(["--format", "json", "checksum", f.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    let size = fs::metadata(&f).unwrap().len();
    let rchar = |pid: u32| -> u64 {
        fs::read_to_string(format!("/proc/{pid}/io"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("rchar: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    let t0 = std::time::Instant::now();
    // Page 0's head (64 KiB) was read before the warning; the scan reads the file.
    while rchar(child.id()) < size + 65536 {
        assert!(t0.elapsed().as_secs() < 30, "scan never read the file");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    {
        use std::os::unix::fs::FileExt;
        let w = fs::OpenOptions::new().write(true).open(&f).unwrap();
        w.write_all_at(&good, 8 * PS as u64).unwrap();
    }
    let out = child.output_within(support::WAIT);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &r["result"];
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["files"][0]["recovered_on_reread"], 1);
    assert_eq!(r["totals"]["bad"], 0);
    drop(lock);
}

/// Server detection through /proc goes through the rooted host reader, so a
/// fixture tree stands in for a machine where mariadbd holds the file open.
#[test]
fn server_holding_the_file_is_detected_from_proc() {
    let root = tempfile::tempdir().unwrap();
    let datadir = root.path().join("var/lib/mysql/db");
    fs::create_dir_all(&datadir).unwrap();
    let f = copy_to(&datadir, CRC32_FILE);
    let proc_fd = root.path().join("proc/4242/fd");
    fs::create_dir_all(&proc_fd).unwrap();
    fs::write(root.path().join("proc/4242/comm"), "mariadbd\n").unwrap();
    // The kernel shows host-absolute targets; the host reader re-roots them.
    std::os::unix::fs::symlink("/var/lib/mysql/db/film.ibd", proc_fd.join("17")).unwrap();
    let out = support::innotune()
        .args([
            "--root",
            root.path().to_str().unwrap(),
            "--format",
            "json",
            "checksum",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"]["files"][0]["live_server"], true);
    assert_eq!(v["result"]["files"][0]["held_by"]["command"], "mariadbd");
    let out = support::innotune()
        .args(["--root", root.path().to_str().unwrap(), "checksum"])
        .arg(&f)
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains("mariadbd (pid 4242) has this file open"),
        "{page}"
    );
    // Another process name does not count.
    fs::write(root.path().join("proc/4242/comm"), "cp\n").unwrap();
    let (_, r, _) = json(&["--root", root.path().to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(r["files"][0]["live_server"], false);
    assert!(r["files"][0].get("held_by").is_none(), "{r:#}");
}

/// innodb-format files are folded four pages at a time; a bad page inside a
/// group of four must still be the one reported.
#[test]
fn bad_page_in_an_innodb_file_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), "t_10k_rows.ibd");
    patch(&f, 6 * PS + 7000, |b| b[0] ^= 0x40);
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(bad_pages(&r), vec![(6, "checksum".to_string())]);
    assert_eq!(r["bad_pages"][0]["algorithm"], "innodb");
    assert_eq!(r["files"][0]["valid"]["innodb"], 20);
}

/// Warm chunks are mapped from the page cache, cold ones are read, and
/// `--direct` reads around the cache: all must report the same pages. The copy is fsynced and dropped from
/// the cache (POSIX_FADV_DONTNEED) between the two runs.
#[test]
fn page_cache_mapped_and_read_paths_agree() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    patch(&f, 5 * PS + 5000, |b| b[0] ^= 0x04);
    patch(&f, 9 * PS + 100, |b| b[0] ^= 0x80);
    let (code, warm, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    let fh = fs::File::open(&f).unwrap();
    fh.sync_all().unwrap();
    // SAFETY: valid fd; advice only.
    let r = unsafe { libc::posix_fadvise(fh.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(r, 0);
    let (code, cold, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(bad_pages(&warm), bad_pages(&cold));
    // And with O_DIRECT, several readers per checker.
    let (code, direct, _) = json(&["--direct", "--threads", "2", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(bad_pages(&warm), bad_pages(&direct));
    assert_eq!(
        bad_pages(&warm),
        vec![(5, "checksum".to_string()), (9, "checksum".to_string())]
    );
    assert_eq!(warm["files"], cold["files"]);
}

/// Issue 39: control bytes in a file name (an ESC sequence that clears the
/// screen and retitles the terminal) reached stdout and the error line
/// raw. The per-file error and the table show them escaped, and the one
/// error line is escaped where it is printed.
#[test]
fn control_bytes_in_a_path_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("x\x1b[2J\x1b]0;pwned\x07.ibd");
    fs::write(&evil, "not a tablespace\n".repeat(200)).unwrap();
    let out = support::innotune()
        .env("NO_COLOR", "1")
        .arg("checksum")
        .arg(&evil)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !bytes.iter().any(|b| *b == 0x1b || *b == 0x07),
            "raw control bytes on {what}: {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r"x\e[2J\e]0;pwned\x07.ibd"), "{text}");

    // A usage error (the file is gone): the one error line.
    let gone = dir.path().join("gone\x1b[31m.ibd");
    let out = support::innotune()
        .arg("checksum")
        .arg(&gone)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.stderr.contains(&0x1b), "{err:?}");
    assert!(err.contains(r"gone\e[31m.ibd"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // report's error line goes through the same printer.
    let out = support::innotune()
        .arg("report")
        .arg(dir.path().join("r\x1b[31m.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.stderr.contains(&0x1b), "{err:?}");
    assert!(err.contains(r"r\e[31m.json"), "{err}");
}

/// Issue 39: a table just created has its file extended but page 0 not yet
/// written back; "not an InnoDB tablespace" sent the user looking for
/// corruption. An all-zero page 0 now says it may be new and unflushed.
#[test]
fn an_unflushed_page_0_is_said_to_be_maybe_new() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new_table.ibd");
    fs::write(&f, vec![0u8; 7 * PS]).unwrap();
    let (code, r, _) = json(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    let err = r["files"][0]["error"].as_str().unwrap();
    assert!(
        err.contains("page 0 is all zeros") && err.contains("not flushed yet"),
        "{err}"
    );
    // A copy whose first page alone was zeroed says the same.
    let g = copy_to(dir.path(), CRC32_FILE);
    patch(&g, 0, |b| b[..PS].fill(0));
    let (code, r, _) = json(&[g.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        r["files"][0]["error"]
            .as_str()
            .unwrap()
            .contains("not flushed yet"),
        "{r:#}"
    );
}

/// Issue 39: `valid 0 ()` — a file whose checked pages are all empty
/// showed an empty breakdown; now just the count.
#[test]
fn no_empty_breakdown_when_no_page_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to(dir.path(), CRC32_FILE);
    patch(&f, 5 * PS, |b| b[..PS].fill(0));
    let out = support::innotune()
        .env("NO_COLOR", "1")
        .args(["checksum", "--page", "5"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 empty"), "{text}");
    assert!(!text.contains("()"), "{text}");
    // With valid pages the breakdown stays.
    let out = support::innotune()
        .env("NO_COLOR", "1")
        .args(["checksum", "--page", "4"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 (crc32:1)"));
}
