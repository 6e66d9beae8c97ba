//! Passwords on the command line: recognised before the parser sees them,
//! never echoed in an error, and wiped from this process's argv so that
//! `ps` and /proc/PID/cmdline stop showing them, as the MySQL clients do
//! (they overwrite the option's bytes with `x` right after reading them).
//!
//! Spellings, as the mysql client's: `--password=X` (and sysbench's
//! `--mysql-password=X`), `-pX` (oltp only: `-p` is checksum's page
//! option), and a bare `--password`/`-p`, which prompts. `--password X`
//! with a space does not take X as the password (X stays an ordinary
//! argument, as in mysql); if the parser then rejects X, the error is
//! replaced by one that does not show it.
//!
//! How the bytes are overwritten, in safe Rust: the kernel serves
//! /proc/PID/cmdline straight from the process's own memory between the
//! `arg_start` and `arg_end` addresses that /proc/self/stat lists (fields
//! 48 and 49). Rust's std keeps no copy there that we could reach, and
//! taking a raw pointer to it would need `unsafe` plus an assumption about
//! how std captured argv. Instead we read that span through /proc/self/mem,
//! check it is exactly our argv (each argument NUL-terminated, in order;
//! otherwise nothing is written), and write back the same bytes with each
//! password's characters replaced by `x`. Writing one's own /proc/self/mem
//! needs no privilege. std reads argv again on every `env::args()`, so the
//! arguments are collected before the wipe and parsed from that copy.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// Long options that carry a password (all commands: a password passed
/// to the wrong command must be hidden too).
const LONG: &[&str] = &["--password", "--mysql-password", "--mysql_password"];
/// Global options that take the next argument as their value.
const GLOBAL_WITH_VALUE: &[&str] = &["--format", "--output", "--color", "--root"];

/// The command line after [`scan`].
#[derive(Debug)]
pub struct Scan {
    /// What the parser gets: `-pX` is written `--password=X`, `-p` as
    /// `--password`.
    pub args: Vec<OsString>,
    /// The arguments as the kernel holds them (the layout to wipe).
    original: Vec<OsString>,
    /// (argument index, byte offset where its password starts).
    wipe: Vec<(usize, usize)>,
    /// Values an error must not show: the passwords, and an argument that
    /// follows a bare `--password`/`-p` (the user may have meant it as one).
    secrets: Vec<Vec<u8>>,
}

/// Index of the subcommand's name, skipping global options.
fn subcommand(args: &[OsString]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_bytes();
        if a == b"--" {
            return None;
        }
        if GLOBAL_WITH_VALUE.iter().any(|g| a == g.as_bytes()) {
            i += 2;
            continue;
        }
        if !a.starts_with(b"-") {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Find the passwords in `args` (argv including the program name).
pub fn scan(args: Vec<OsString>) -> Scan {
    let oltp = subcommand(&args).filter(|&i| args[i].as_bytes() == b"oltp");
    let mut out = Scan {
        args: args.clone(),
        original: args,
        wipe: Vec::new(),
        secrets: Vec::new(),
    };
    let mut i = 1;
    while i < out.original.len() {
        let a = out.original[i].as_bytes().to_vec();
        if a == b"--" {
            break;
        }
        let in_oltp = oltp.is_some_and(|o| i > o);
        let mut bare = false;
        if let Some(long) = LONG.iter().find(|l| a.starts_with(l.as_bytes())) {
            let rest = &a[long.len()..];
            if let Some(v) = rest.strip_prefix(b"=") {
                if !v.is_empty() {
                    out.secrets.push(v.to_vec());
                    out.wipe.push((i, long.len() + 1));
                }
            } else if rest.is_empty() {
                bare = true;
            }
        } else if in_oltp && a.starts_with(b"-p") && !a.starts_with(b"--") {
            let v = &a[2..];
            if v.is_empty() {
                out.args[i] = OsString::from("--password");
                bare = true;
            } else {
                out.secrets.push(v.to_vec());
                out.wipe.push((i, 2));
                let mut w = b"--password=".to_vec();
                w.extend_from_slice(v);
                out.args[i] = OsString::from_vec(w);
            }
        }
        if bare {
            if let Some(next) = out.original.get(i + 1) {
                let n = next.as_bytes();
                if !n.is_empty() && !n.starts_with(b"-") {
                    out.secrets.push(n.to_vec());
                }
            }
        }
        i += 1;
    }
    out
}

impl Scan {
    /// Were there passwords to wipe?
    pub fn has_passwords(&self) -> bool {
        !self.wipe.is_empty()
    }

    /// Would printing `text` show a password (or what may be one)?
    pub fn leaks(&self, text: &str) -> bool {
        let t = text.as_bytes();
        self.secrets
            .iter()
            .any(|s| !s.is_empty() && t.windows(s.len()).any(|w| w == &s[..]))
    }

    /// Overwrite every password in this process's argv with `x`. Writes
    /// nothing unless the argv span is exactly [`Scan::original`].
    pub fn wipe(&self) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        if self.wipe.is_empty() {
            return Ok(());
        }
        let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_string());
        let stat = crate::model::process::own_stat(&crate::host::Host::live())
            .ok_or_else(|| bad("unreadable /proc/self/stat"))?;
        let (start, end) = match (stat.arg_start, stat.arg_end) {
            (Some(s), Some(e)) => (s, e),
            _ => return Err(bad("no arg_start/arg_end in /proc/self/stat")),
        };
        let mut expect: Vec<u8> = Vec::new();
        let mut at: Vec<usize> = Vec::new();
        for a in &self.original {
            at.push(expect.len());
            expect.extend_from_slice(a.as_bytes());
            expect.push(0);
        }
        if end < start || (end - start) as usize != expect.len() {
            return Err(bad("argv is not where /proc/self/stat says"));
        }
        let mem = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/proc/self/mem")?;
        let mut now = vec![0u8; expect.len()];
        mem.read_exact_at(&mut now, start)?;
        if now != expect {
            return Err(bad("argv was changed since start-up"));
        }
        for &(i, off) in &self.wipe {
            let len = self.original[i].as_bytes().len();
            for b in &mut now[at[i] + off..at[i] + len] {
                *b = b'x';
            }
        }
        mem.write_all_at(&now, start)
    }
}

/// The one error line for a rejected command line that named a password.
pub const REDACTED_USAGE: &str = "the command line is not valid, and the error would show the password (a value after a bare --password or -p is not taken as the password) (fix: write --password=VALUE or -pVALUE, or --password alone to be prompted; better, put it in ~/.my.cnf [client] password=…)";

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Scan {
        scan(v.iter().map(OsString::from).collect())
    }

    fn args(sc: &Scan) -> Vec<String> {
        sc.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn spellings() {
        let sc = s(&[
            "innotune",
            "--format",
            "json",
            "oltp",
            "oltp_read_only",
            "run",
            "-pSekr3t",
            "--mysql-password=Other1",
        ]);
        assert_eq!(args(&sc)[6], "--password=Sekr3t");
        assert_eq!(sc.wipe, vec![(6, 2), (7, 17)]);
        assert!(sc.leaks("unexpected 'Sekr3t'") && sc.leaks("Other1"));
        assert!(!sc.leaks("oltp_read_only"));
        // A bare -p prompts; the next argument is guarded, not taken.
        let sc = s(&["innotune", "oltp", "oltp_read_only", "run", "-p", "guess"]);
        assert_eq!(args(&sc)[4], "--password");
        assert!(sc.wipe.is_empty() && sc.leaks("'guess'"));
        let sc = s(&["innotune", "oltp", "x", "run", "--password", "guess"]);
        assert!(!sc.has_passwords() && sc.leaks("guess"));
        // -p belongs to checksum elsewhere, and `--output oltp` is a value.
        let sc = s(&["innotune", "checksum", "-p", "7", "f.ibd"]);
        assert_eq!(args(&sc)[2], "-p");
        assert!(!sc.leaks("7"));
        let sc = s(&["innotune", "--output", "oltp", "checksum", "-p9"]);
        assert_eq!(args(&sc)[4], "-p9");
        // --password=X is hidden whatever the command; `--password=` is empty.
        let sc = s(&[
            "innotune",
            "sandbox",
            "start",
            "--password=zz",
            "--password=",
        ]);
        assert_eq!(sc.wipe, vec![(3, 11)]);
        // Nothing after `--` is an option.
        let sc = s(&["innotune", "oltp", "--", "-pX"]);
        assert!(!sc.has_passwords());
    }

    /// The span check refuses to write when argv is not the one given.
    #[test]
    fn wipe_refuses_a_foreign_layout() {
        let mut sc = s(&["not", "this", "process", "--password=q"]);
        sc.wipe = vec![(3, 11)];
        assert!(sc.wipe().is_err());
    }
}
