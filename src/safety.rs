//! Refusals shared by every command that writes on a host others use.
//!
//! innotune runs as root on database hosts. Whatever directory it writes
//! into (bench files, a sandbox, sweep's work directory) must not be a live
//! server's datadir, inside one (a stray directory there becomes a bogus
//! database), or contain one (a cleanup there would walk over it). The
//! datadirs are those of every running mysqld/mariadbd and the one the
//! server option files name (or the compiled-in default).

use crate::error::Fix;
use crate::host::{normalize, Host};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A datadir innotune must keep out of, and how it knows of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Datadir {
    pub path: PathBuf,
    /// `running server pid 1234` or the option file that names it.
    pub source: String,
}

/// Every datadir of a running server, then the option files' one; each
/// path once, canonical where it exists.
pub fn datadirs(host: &Host) -> Vec<Datadir> {
    let mut out: Vec<Datadir> = Vec::new();
    let mut push = |p: &str, source: String| {
        let p = Path::new(p);
        if !p.is_absolute() {
            return;
        }
        let path = canonical(host, p);
        if !out.iter().any(|d| d.path == path) {
            out.push(Datadir { path, source });
        }
    };
    for m in crate::model::server::find(host) {
        push(&m.datadir, format!("running server pid {}", m.pid));
    }
    let (d, src) = crate::model::server::datadir(host, &["mysqld".to_string()]);
    push(&d, format!("server option files ({src})"));
    out
}

/// The canonical form of `p` on the live host: the longest existing
/// ancestor canonicalised (symlinks followed), the rest appended, so a path
/// that does not exist yet (a sandbox about to be created) compares right.
/// On a replayed host (`--root`), the lexical form.
pub fn canonical(host: &Host, p: &Path) -> PathBuf {
    let p = normalize(p);
    if !host.is_live() {
        return p;
    }
    let mut base = p.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&base) {
            let mut c = c;
            for r in rest.iter().rev() {
                c.push(r);
            }
            return c;
        }
        match (base.file_name().map(|f| f.to_os_string()), base.parent()) {
            (Some(f), Some(parent)) => {
                rest.push(f);
                base = parent.to_path_buf();
            }
            _ => return p,
        }
    }
}

/// Refuse `dir` (which `what` names, e.g. `bench --directory`) when it is a
/// datadir, inside one, or contains one.
pub fn refuse_near_datadir(host: &Host, dir: &Path, what: &str) -> Result<()> {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let d = canonical(host, &abs);
    for dd in datadirs(host) {
        let relation = if d == dd.path {
            "is"
        } else if d.starts_with(&dd.path) {
            "is inside"
        } else if dd.path.starts_with(&d) {
            "contains"
        } else {
            continue;
        };
        return Err(Fix::new(
            format!(
                "{what} {} {relation} the MySQL datadir {} ({})",
                dir.display(),
                dd.path.display(),
                dd.source
            ),
            "use a directory of its own on the same filesystem, outside every datadir (e.g. /var/tmp/innotune)",
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_keeps_missing_tail() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let c = canonical(&Host::live(), &link.join("not/yet"));
        assert_eq!(
            c,
            std::fs::canonicalize(&real)
                .unwrap()
                .join("not")
                .join("yet")
        );
    }
}
