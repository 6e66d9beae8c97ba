//! Reads of the host go through `Host` (src/host) and the host model
//! (src/model); only src/change, which writes the host, opens /proc and
//! /sys itself. This test scans every source file under src/ for a std::fs
//! read (`fs::read*`, `File::open`, `OpenOptions`, `fs::metadata`,
//! `fs::canonicalize`, …) whose statement names a `/proc` or `/sys` path,
//! so a new one fails here instead of bypassing `--root` fixtures.

mod support;

use std::path::{Path, PathBuf};

/// Directories allowed to touch /proc and /sys with std::fs.
const ALLOWED_DIRS: [&str; 3] = ["src/host/", "src/model/", "src/change/"];

/// Reads outside those directories that are not host state, each with
/// why: (file, the path literal it opens).
const EXCEPTIONS: [(&str, &str, &str); 1] = [(
    "src/db/argv.rs",
    "/proc/self/mem",
    "this process's own memory, opened to overwrite passwords in its argv; not a fact about the host",
)];

/// std::fs calls that read (or open, or stat) a path.
const READS: [&str; 12] = [
    "fs::read(",
    "fs::read_to_string(",
    "fs::read_dir(",
    "fs::read_link(",
    "fs::metadata(",
    "fs::symlink_metadata(",
    "fs::canonicalize(",
    "fs::exists(",
    "File::open(",
    "OpenOptions::new(",
    "read_to_string(\"/",
    "read_dir(\"/",
];

/// The call expression starting at the start of `text`: its balanced
/// argument list, and any `.method(…)` or `?` chained after it (a builder
/// such as `OpenOptions::new().read(true).open(P)` names P last).
fn call_expr(text: &str) -> &str {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        // Up to the next '(' (the call's, or the chained method's).
        while i < b.len() && b[i] != b'(' {
            if b[i] == b';' || b[i] == b'{' || b[i] == b'}' {
                return &text[..i];
            }
            i += 1;
        }
        let mut depth = 0usize;
        let mut in_str = false;
        while i < b.len() {
            match b[i] {
                b'\\' if in_str => i += 1,
                b'"' => in_str = !in_str,
                b'(' if !in_str => depth += 1,
                b')' if !in_str => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let rest = text[i..].trim_start_matches(|c: char| c.is_whitespace() || c == '?');
        if !rest.starts_with('.') {
            return &text[..i.min(text.len())];
        }
        i = text.len() - rest.len() + 1;
    }
}

/// `(line, call)` of every std::fs read in `src` whose call expression
/// (arguments and chained methods, up to 12 lines) holds a string literal
/// starting with `/proc` or `/sys`. Line comments are skipped.
fn violations(src: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = src
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let mut out = Vec::new();
    for (i, code) in lines.iter().enumerate() {
        let Some(at) = READS.iter().filter_map(|r| code.find(r)).min() else {
            continue;
        };
        let window = std::iter::once(&code[at..])
            .chain(lines.iter().skip(i + 1).take(12).map(|l| l.trim()))
            .collect::<Vec<_>>()
            .join(" ");
        let call = call_expr(&window);
        if ["\"/proc", "\"/sys"].iter().any(|p| call.contains(p)) {
            out.push((i + 1, call.trim().to_string()));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_std_fs_read_of_proc_or_sys_outside_host_model_and_change() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(
        files.len() > 50,
        "found only {} files under src",
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if ALLOWED_DIRS.iter().any(|d| rel.starts_with(d)) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (line, stmt) in violations(&text) {
            let excused = EXCEPTIONS
                .iter()
                .any(|(file, lit, _)| rel == *file && stmt.contains(&format!("\"{lit}")));
            if !excused {
                bad.push(format!("{rel}:{line}: {stmt}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "read /proc and /sys through Host and src/model (Host::live() where --root has no meaning):\n{}",
        bad.join("\n")
    );
}

/// The scanner finds what it is meant to find (so the test above cannot
/// pass by finding nothing).
#[test]
fn the_scanner_catches_direct_and_split_reads_but_not_comments() {
    let caught = |s: &str| violations(s).len();
    assert_eq!(
        caught(r#"let t = std::fs::read_to_string("/proc/self/stat")?;"#),
        1
    );
    assert_eq!(
        caught(r#"let t = fs::read(format!("/proc/{pid}/cmdline"));"#),
        1
    );
    assert_eq!(
        caught("let f = std::fs::OpenOptions::new()\n    .read(true)\n    .open(\"/sys/block/sda/queue/scheduler\")?;"),
        1
    );
    assert_eq!(
        caught(r#"let d = std::fs::read_dir("/sys/block").unwrap();"#),
        1
    );
    assert_eq!(caught(r#"let f = File::open("/proc/mounts")?;"#), 1);
    // Not reads of /proc or /sys.
    assert_eq!(caught(r#"let t = std::fs::read_to_string(path)?;"#), 0);
    assert_eq!(
        caught(r#"// std::fs::read_to_string("/proc/self/stat")"#),
        0
    );
    assert_eq!(caught(r#"let t = host.read("/proc/self/stat")?;"#), 0);
    assert_eq!(
        caught("let a = std::fs::read(x)?;\nlet b = host.read(\"/proc/x\");"),
        0,
        "the call ends at its semicolon"
    );
    assert_eq!(
        caught("fn f(&self) -> String { fs::read_to_string(self.p()).unwrap() }\nconst P: &str = \"/sys/x\";"),
        0,
        "the call ends with its arguments"
    );
    assert_eq!(
        caught(
            "let t = std::fs::read_to_string(\n    format!(\"/proc/{pid}/stat\"),\n)\n.unwrap();"
        ),
        1
    );
}
