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
    let all = datadirs(host);
    for dd in &all {
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
            elsewhere(&abs, &all),
        )
        .into());
    }
    Ok(())
}

/// The fix for a refused directory: a directory on the same filesystem
/// (what is measured is that filesystem), outside every datadir, that
/// exists: /var/tmp or /tmp when they are on it, else the nearest
/// ancestor that is; or why there is none.
fn elsewhere(dir: &Path, all: &[Datadir]) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = dir
        .ancestors()
        .find_map(|a| std::fs::metadata(a).ok())
        .map(|m| m.dev());
    let clear = |c: &Path| {
        all.iter()
            .all(|dd| !c.starts_with(&dd.path) && !dd.path.starts_with(c.join("innotune")))
    };
    let mut candidates = vec![PathBuf::from("/var/tmp"), PathBuf::from("/tmp")];
    candidates.extend(dir.ancestors().skip(1).map(Path::to_path_buf));
    let found = dev.and_then(|dev| {
        candidates
            .into_iter()
            .find(|c| std::fs::metadata(c).is_ok_and(|m| m.is_dir() && m.dev() == dev) && clear(c))
    });
    match found {
        Some(c) => format!(
            "use a directory of its own on the same filesystem, outside every datadir, e.g. {}",
            c.join("innotune").display()
        ),
        None => "use a directory of its own outside every datadir; none was found on this filesystem (every directory on it that exists is in a datadir), so make one beside the datadir or measure from another filesystem".to_string(),
    }
}

/// A scratch filesystem: one on a loop device (major 7: its backing file
/// is the disposable part) or in RAM (tmpfs, ramfs). What it holds is made
/// for a test; a remount there risks nothing anyone keeps.
pub fn is_scratch(m: &crate::model::mount::Mount) -> bool {
    m.major() == Some(7) || matches!(m.fs_type.as_str(), "tmpfs" | "ramfs")
}

/// Refuse to switch a mount option (`prove --change mount=…`) on the
/// filesystem `path` is on, in one line, before anything is switched:
/// - the root filesystem, always (what the system runs from);
/// - a filesystem that holds a datadir (of a running server, or the one
///   the server option files name), unless it is a scratch filesystem
///   ([`is_scratch`]: a loop device or RAM, e.g. a test server's).
///
/// Any other filesystem (a data disk without a datadir) may be switched.
/// Returns the mount point to switch.
pub fn refuse_remount(host: &Host, path: &Path) -> Result<PathBuf> {
    let mounts = crate::model::mount::Mounts::read(host)?;
    let here = canonical(host, path);
    let m = mounts.for_path(&here).ok_or_else(|| {
        Fix::new(
            format!("no mount holds {}", path.display()),
            "give a directory on a mounted filesystem",
        )
    })?;
    let mp = PathBuf::from(&m.mount_point);
    if mp == Path::new("/") {
        return Err(Fix::new(
            format!(
                "--change mount=…: {} is on the root filesystem, which innotune never remounts",
                path.display()
            ),
            "prove mount options on a scratch filesystem (a loop device or tmpfs mounted for the test) or a data disk with no datadir",
        )
        .into());
    }
    if !is_scratch(m) {
        for dd in datadirs(host) {
            let on = mounts
                .for_path(&dd.path)
                .is_some_and(|d| d.mount_point == m.mount_point && d.maj_min == m.maj_min);
            if on {
                return Err(Fix::new(
                    format!(
                        "--change mount=…: {} holds the MySQL datadir {} ({}); innotune remounts only a filesystem without one, or a scratch one (a loop device or RAM)",
                        mp.display(),
                        dd.path.display(),
                        dd.source
                    ),
                    "prove mount options on a scratch filesystem (a loop device or tmpfs mounted for the test)",
                )
                .into());
            }
        }
    }
    Ok(mp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// prove's mount-option rule on a replayed host: `/` never; a data
    /// disk holding the option files' datadir refused; the same datadir
    /// on a loop device's filesystem (scratch) allowed; a data disk
    /// without a datadir allowed. Each refusal is one line with a fix.
    #[test]
    fn remount_rule_root_datadir_scratch() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("proc/self")).unwrap();
        std::fs::create_dir_all(r.join("etc/mysql")).unwrap();
        std::fs::write(
            r.join("proc/self/mountinfo"),
            "20 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n\
             30 20 8:17 / /data rw,relatime - xfs /dev/sdb1 rw\n\
             31 20 8:33 / /spare rw,relatime - xfs /dev/sdc1 rw\n\
             32 20 7:0 / /scratch rw,relatime - ext4 /dev/loop0 rw\n",
        )
        .unwrap();
        let host = Host::with_root(r);
        let refused = |p: &str, what: &str| {
            let e = refuse_remount(&host, Path::new(p)).unwrap_err();
            let f = e.downcast_ref::<Fix>().expect("one line with a fix");
            assert!(f.what.contains(what), "{p}: {}", f.what);
        };
        let cnf = |d: &str| {
            std::fs::write(
                r.join("etc/mysql/my.cnf"),
                format!("[mysqld]\ndatadir = {d}\n"),
            )
            .unwrap()
        };
        cnf("/data/mysql");
        refused("/", "root filesystem");
        refused("/var/tmp", "root filesystem");
        refused("/data/bench", "holds the MySQL datadir /data/mysql");
        assert_eq!(
            refuse_remount(&host, Path::new("/spare/x")).unwrap(),
            Path::new("/spare")
        );
        cnf("/scratch/mysql");
        assert_eq!(
            refuse_remount(&host, Path::new("/scratch")).unwrap(),
            Path::new("/scratch")
        );
        assert_eq!(
            refuse_remount(&host, Path::new("/data/bench")).unwrap(),
            Path::new("/data")
        );
    }

    /// Issue 46: the fix said /var/tmp even when /var/tmp was on another
    /// filesystem. The suggestion is on the refused directory's
    /// filesystem, outside the datadir.
    #[test]
    fn suggestion_is_on_the_same_filesystem() {
        use std::os::unix::fs::MetadataExt;
        for base in ["/tmp", "/dev/shm", "/var/tmp"] {
            if !Path::new(base).is_dir() {
                continue;
            }
            let t = tempfile::tempdir_in(base).unwrap();
            let dd = Datadir {
                path: t.path().to_path_buf(),
                source: "test".into(),
            };
            let fix = elsewhere(&t.path().join("bench"), std::slice::from_ref(&dd));
            let at = fix.find("e.g. ").map(|i| &fix[i + 5..]).expect(&fix);
            let suggested = Path::new(at);
            assert!(!suggested.starts_with(t.path()), "{fix}");
            let parent = suggested.parent().unwrap();
            assert_eq!(
                std::fs::metadata(parent).unwrap().dev(),
                std::fs::metadata(t.path()).unwrap().dev(),
                "{base}: {fix}"
            );
        }
    }

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
