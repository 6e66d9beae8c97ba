//! MySQL option files (`my.cnf`): groups, `key = value`, quotes, comments,
//! `!include` and `!includedir`. Hand-written because no crate follows
//! MySQL's rules (`-`/`_` interchangeable in keys, `!include*` directives,
//! `.cnf`-only includedir); INI crates get these wrong.

use crate::error::Fix;
use crate::host::Host;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The groups innotune reads as a client (see the module docs of `db` for why).
pub const GROUPS: &[&str] = &["client", "client-server", "innotune"];

/// Whose options to collect: one parser serves the client side (credentials
/// for `oltp`, `sandbox`) and the server side (`probe` finding a datadir).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Groups {
    /// `[client]`, `[client-server]`, `[innotune]`. Paths outside /etc (such as
    /// ~/.my.cnf or an extra file) are the user's and are read directly.
    #[default]
    Client,
    /// What mysqld/mariadbd reads: `[mysqld]`, `[mariadbd]`, `[server]`,
    /// `[mariadb]` and their versioned forms (`[mysqld-8.0]`). Every file is
    /// the host's, so every path goes through the rooted reader.
    Server,
}

impl Groups {
    pub fn matches(self, group: &str) -> bool {
        match self {
            Groups::Client => GROUPS.contains(&group),
            Groups::Server => ["mysqld", "mariadbd", "server", "mariadb"].iter().any(|n| {
                group == *n
                    || group
                        .strip_prefix(n)
                        .and_then(|r| r.strip_prefix('-'))
                        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            }),
        }
    }
}

/// Options gathered from files; later files override earlier ones.
#[derive(Default)]
pub struct Options {
    groups: Groups,
    /// Normalised key → (value, `file:line` it came from).
    values: BTreeMap<String, (String, String)>,
    /// Files actually read, in order (for diagnostics).
    pub files: Vec<PathBuf>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may hold a password: list keys only.
        f.debug_struct("Options")
            .field("keys", &self.values.keys().collect::<Vec<_>>())
            .field("files", &self.files)
            .finish()
    }
}

fn norm_key(k: &str) -> String {
    k.trim().replace('-', "_").to_ascii_lowercase()
}

impl Options {
    pub fn new(groups: Groups) -> Options {
        Options {
            groups,
            ..Options::default()
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(&norm_key(key)).map(|(v, _)| v.as_str())
    }

    /// Where the winning value of `key` was set, as `file:line`.
    pub fn origin(&self, key: &str) -> Option<&str> {
        self.values.get(&norm_key(key)).map(|(_, o)| o.as_str())
    }

    /// Read one file through the rooted reader (absent is fine), following
    /// its includes.
    pub fn read_host_file(&mut self, host: &Host, p: &Path) -> Result<()> {
        self.read_host_file_at(host, p, 0)
    }

    fn is_host_path(&self, p: &Path) -> bool {
        self.groups == Groups::Server || p.starts_with("/etc")
    }

    /// The default chain, or only `defaults_file` when given.
    pub fn load_chain(
        host: &Host,
        defaults_file: Option<&Path>,
        extra: Option<&Path>,
    ) -> Result<Options> {
        let mut o = Options::default();
        if let Some(f) = defaults_file {
            let text = std::fs::read_to_string(f).map_err(|e| {
                Fix::new(
                    format!("cannot read --defaults-file {}: {e}", f.display()),
                    "pass an existing, readable option file",
                )
            })?;
            o.parse_text(host, &text, f, 0)?;
            return Ok(o);
        }
        for g in ["/etc/my.cnf", "/etc/mysql/my.cnf"] {
            o.read_host_file_at(host, Path::new(g), 0)?;
        }
        if let Some(f) = extra {
            let text = std::fs::read_to_string(f).map_err(|e| {
                Fix::new(
                    format!("cannot read --defaults-extra-file {}: {e}", f.display()),
                    "pass an existing, readable option file",
                )
            })?;
            o.parse_text(host, &text, f, 0)?;
        }
        if let Some(home) = std::env::var_os("HOME") {
            let p = PathBuf::from(home).join(".my.cnf");
            // ~/.my.cnf is the user's, not the host's: read it directly
            // (also under --root, which replays /sys, /proc and /etc only).
            if let Ok(text) = std::fs::read_to_string(&p) {
                o.parse_text(host, &text, &p, 0)?;
            }
        }
        Ok(o)
    }

    /// A host file (under /etc): through the rooted reader; absent is fine.
    fn read_host_file_at(&mut self, host: &Host, p: &Path, depth: u32) -> Result<()> {
        if let Ok(text) = host.read(p) {
            self.parse_text(host, &text, p, depth)?;
        }
        Ok(())
    }

    fn include(&mut self, host: &Host, p: &Path, depth: u32) -> Result<()> {
        if self.is_host_path(p) {
            self.read_host_file_at(host, p, depth)
        } else if let Ok(text) = std::fs::read_to_string(p) {
            self.parse_text(host, &text, p, depth)
        } else {
            Ok(())
        }
    }

    /// Parse one file's text, following includes (max depth 10, as MySQL).
    pub fn parse_text(&mut self, host: &Host, text: &str, origin: &Path, depth: u32) -> Result<()> {
        if depth > 10 {
            anyhow::bail!(Fix::new(
                format!(
                    "option files include each other too deeply at {}",
                    origin.display()
                ),
                "remove the !include loop"
            ));
        }
        self.files.push(origin.to_path_buf());
        let mut in_group = false;
        for (lineno, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(rest) = line.strip_prefix("!includedir") {
                let dir = PathBuf::from(rest.trim());
                let mut names: Vec<String> = if self.is_host_path(&dir) {
                    host.list(&dir).unwrap_or_default()
                } else {
                    std::fs::read_dir(&dir)
                        .map(|rd| {
                            rd.filter_map(|e| e.ok())
                                .map(|e| e.file_name().to_string_lossy().into_owned())
                                .collect()
                        })
                        .unwrap_or_default()
                };
                names.sort();
                for n in names {
                    if n.ends_with(".cnf") {
                        self.include(host, &dir.join(n), depth + 1)?;
                    }
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("!include") {
                let p = PathBuf::from(rest.trim());
                self.include(host, &p, depth + 1)?;
                continue;
            }
            if line.starts_with('[') {
                let name = line.trim_start_matches('[').split(']').next().unwrap_or("");
                in_group = self.groups.matches(&name.trim().to_ascii_lowercase());
                continue;
            }
            if !in_group {
                continue;
            }
            let (k, v) = match line.split_once('=') {
                Some((k, v)) => (k, unquote(v.trim())),
                None => (line, String::new()),
            };
            let k = norm_key(k);
            // MySQL accepts prefixes such as `loose-`.
            let k = k.strip_prefix("loose_").unwrap_or(&k).to_string();
            let origin = format!("{}:{}", origin.display(), lineno + 1);
            self.values.insert(k, (v, origin));
        }
        Ok(())
    }
}

/// Value rules: quoted strings keep `#` and handle `\` escapes; unquoted
/// values end at a ` #` comment.
fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') {
        let q = b[0] as char;
        let mut out = String::new();
        let mut it = v[1..].chars();
        while let Some(c) = it.next() {
            if c == q {
                break;
            }
            if c == '\\' {
                match it.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('s') => out.push(' '),
                    Some(o) => out.push(o),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        return out;
    }
    match v.find(" #").or_else(|| v.find("\t#")) {
        Some(i) => v[..i].trim_end().to_string(),
        None => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_quotes_includes() {
        let dir = tempfile::tempdir().unwrap();
        let inc = dir.path().join("conf.d");
        std::fs::create_dir(&inc).unwrap();
        std::fs::write(inc.join("a.cnf"), "[client]\nport=3310\n").unwrap();
        std::fs::write(inc.join("b.txt"), "[client]\nport=9999\n").unwrap();
        let main = format!(
            "# comment\n[mysqld]\nport=1\n[client]\nuser = app # who\npassword=\"p#ss\\\"w\"\nloose-default-character-set=utf8\n[mysql]\npager=less\n!includedir {}\n",
            inc.display()
        );
        let mut o = Options::default();
        o.parse_text(&Host::live(), &main, Path::new("x"), 0)
            .unwrap();
        assert_eq!(o.get("user"), Some("app"));
        assert_eq!(o.get("password"), Some("p#ss\"w"));
        assert_eq!(o.get("port"), Some("3310"));
        assert_eq!(o.get("default_character_set"), Some("utf8"));
        assert_eq!(o.get("pager"), None);
        assert!(!format!("{o:?}").contains("p#ss"));
    }

    #[test]
    fn etc_chain_through_rooted_host_with_includedir() {
        let root = tempfile::tempdir().unwrap();
        let etc = root.path().join("etc/mysql");
        std::fs::create_dir_all(etc.join("conf.d")).unwrap();
        std::fs::write(
            etc.join("my.cnf"),
            "[client-server]\nsocket = /run/x.sock\n!includedir /etc/mysql/conf.d/\n",
        )
        .unwrap();
        std::fs::write(
            etc.join("conf.d/50-client.cnf"),
            "[client]\nuser = fromconfd\n",
        )
        .unwrap();
        let extra = root.path().join("extra.cnf");
        std::fs::write(&extra, "[client]\nport = 3399\n").unwrap();
        let host = Host::with_root(root.path());
        let o = Options::load_chain(&host, None, Some(&extra)).unwrap();
        assert_eq!(o.get("socket"), Some("/run/x.sock"));
        assert_eq!(o.get("user"), Some("fromconfd"));
        assert_eq!(o.get("port"), Some("3399"));
        // --defaults-file replaces the chain.
        let o = Options::load_chain(&host, Some(&extra), None).unwrap();
        assert_eq!(o.get("socket"), None);
        assert!(Options::load_chain(&host, Some(&root.path().join("missing")), None).is_err());
    }

    /// Random and truncated option files never panic the parser, in
    /// either scope (a seeded loop for a fixed time budget; a failure
    /// prints the seed and input to replay). Includes point only into a
    /// private directory, some of them at each other (loops must end at
    /// the depth limit), some at non-UTF-8 or missing files.
    #[test]
    fn fuzz_random_and_truncated_input_never_panics() {
        use rand::{Rng, SeedableRng};
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        std::fs::write(
            dir.path().join("a.cnf"),
            format!("[client]\n!include {d}/b.cnf\nport=1\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.cnf"),
            format!("!include {d}/a.cnf\n[mysqld]\ndatadir=/x\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("bin.cnf"), [0xff, 0xfe, b'[', 0x80, b'\n']).unwrap();
        let tokens: Vec<String> = vec![
            "[client]".into(),
            "[mysqld]".into(),
            "[mysqld-8.0]".into(),
            "[mariadb-".into(),
            "[".into(),
            "]".into(),
            "[client-server".into(),
            "=".into(),
            "==".into(),
            "\"".into(),
            "'".into(),
            "\\".into(),
            "\\\"".into(),
            "#".into(),
            " #".into(),
            ";".into(),
            "\n".into(),
            "\r\n".into(),
            "\t".into(),
            " ".into(),
            "loose-".into(),
            "password".into(),
            "port".into(),
            "socket".into(),
            "datadir".into(),
            "user".into(),
            "é".into(),
            "\u{0}".into(),
            "💥".into(),
            "-".into(),
            "_".into(),
            "1".into(),
            format!("!include {d}/a.cnf"),
            format!("!include {d}/missing.cnf"),
            format!("!includedir {d}"),
            format!("!include {d}/bin.cnf"),
            "!include".into(),
            "!includedir".into(),
            "!include ".into(),
            "!".into(),
        ];
        let budget = std::time::Duration::from_millis(1500);
        let t0 = std::time::Instant::now();
        let mut seed = 1u64;
        let host = Host::live();
        while t0.elapsed() < budget {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let mut text = String::new();
            for _ in 0..rng.gen_range(0..60) {
                if rng.gen_bool(0.2) {
                    // Random code points, not just the vocabulary.
                    let c: char = rng.gen();
                    text.push(c);
                } else {
                    text.push_str(&tokens[rng.gen_range(0..tokens.len())]);
                }
            }
            // Every prefix on a char boundary (a file cut short).
            let cuts: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            let cut = cuts[rng.gen_range(0..cuts.len())];
            for t in [&text[..], &text[..cut]] {
                for g in [Groups::Client, Groups::Server] {
                    let r = std::panic::catch_unwind(|| {
                        let mut o = Options::new(g);
                        let _ = o.parse_text(&host, t, Path::new("fuzz.cnf"), 0);
                        let _ = (o.get("password"), o.origin("port"), format!("{o:?}"));
                    });
                    assert!(r.is_ok(), "seed {seed}: panic on {t:?}");
                }
            }
            seed += 1;
        }
        assert!(seed > 100, "only {seed} inputs in the budget");
    }
}
