//! The one door to the host's state.
//!
//! Every read of `/sys`, `/proc`, `/etc` goes through a [`Host`], which
//! prefixes a root directory. A `Host` cannot write: every change to the
//! host is a `crate::change::Change`, journaled before it is made (the one
//! attribute write is private to src/change). With the
//! default root `/` this is the live machine; with `--root DIR` it is a fixture
//! tree laid out like the real one, so any host can be replayed in a test.
//!
//! Reads return `Result`, and the [`Known`] wrapper turns a failed read into
//! "unknown, because …" so one unreadable file never aborts a report.

use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
}

impl Default for Host {
    fn default() -> Self {
        Host::live()
    }
}

impl Host {
    /// The machine innotune runs on.
    pub fn live() -> Self {
        Host {
            root: PathBuf::from("/"),
        }
    }

    /// A host replayed from a fixture tree (or a chroot).
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        Host { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// Map a host-absolute path (`/sys/block/sda`) into the root.
    pub fn path(&self, p: impl AsRef<Path>) -> PathBuf {
        let p = p.as_ref();
        let rel = p.strip_prefix("/").unwrap_or(p);
        self.root.join(rel)
    }

    /// Map a path inside the root back to its host-absolute form, e.g. the
    /// target of a sysfs symlink after canonicalisation.
    pub fn unroot(&self, p: &Path) -> PathBuf {
        match p.strip_prefix(&self.root) {
            Ok(rel) => Path::new("/").join(rel),
            Err(_) => p.to_path_buf(),
        }
    }

    pub fn read(&self, p: impl AsRef<Path>) -> io::Result<String> {
        std::fs::read_to_string(self.path(p))
    }

    /// Read a file's bytes as they are (`/proc/PID/cmdline` need not be UTF-8).
    pub fn read_bytes(&self, p: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        std::fs::read(self.path(p))
    }

    /// Read a one-value sysfs/procfs file, trimmed.
    pub fn read_trim(&self, p: impl AsRef<Path>) -> io::Result<String> {
        Ok(self.read(p)?.trim().to_string())
    }

    /// Read and parse a one-number file.
    pub fn read_u64(&self, p: impl AsRef<Path>) -> io::Result<u64> {
        let s = self.read_trim(p)?;
        s.parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("not a number: {s:?}")))
    }

    pub fn exists(&self, p: impl AsRef<Path>) -> bool {
        self.path(p).exists()
    }

    /// Names in a directory, sorted (sysfs order is not stable across hosts).
    pub fn list(&self, p: impl AsRef<Path>) -> io::Result<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(p))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Ok(v)
    }

    /// Resolve a symlink inside the root, returning a host-absolute path.
    /// Relative targets (the norm in sysfs) resolve against the link's parent;
    /// absolute targets are re-rooted, so fixtures may use either.
    pub fn resolve(&self, p: impl AsRef<Path>) -> io::Result<PathBuf> {
        let abs = p.as_ref();
        let target = std::fs::read_link(self.path(abs))?;
        let joined = if target.is_absolute() {
            target
        } else {
            abs.parent().unwrap_or(Path::new("/")).join(target)
        };
        Ok(normalize(&joined))
    }
}

/// Lexically normalise `a/b/../c` → `a/c` without touching the filesystem
/// (sysfs paths are full of `..` and the root may be a fixture).
pub fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A value read from the host, or why it could not be. Serialises as the
/// value itself, or as `{"unknown": "reason"}`, so JSON consumers can tell a
/// real `0` from a missing file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Known<T> {
    Value(T),
    Unknown { unknown: String },
}

/// Read back: an object whose only key is `unknown`, a string, is the
/// reason; anything else is the value (so a map, a list or a struct of
/// defaults is never mistaken for `{"unknown": …}`, nor the other way round).
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Known<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw<T> {
            Unknown(Reason),
            Value(T),
        }
        // An untagged enum's own error names neither; say what was expected.
        let raw = <Raw<T> as serde::Deserialize>::deserialize(d).map_err(|_| {
            <D::Error as serde::de::Error>::custom(format!(
                "neither a {} nor {{\"unknown\": \"<reason>\"}}",
                std::any::type_name::<T>()
                    .split('<')
                    .next()
                    .and_then(|t| t.rsplit("::").next())
                    .unwrap_or("value")
            ))
        })?;
        Ok(match raw {
            Raw::Unknown(r) => Known::Unknown { unknown: r.0 },
            Raw::Value(v) => Known::Value(v),
        })
    }
}

/// `{"unknown": "reason"}` and nothing else: a map of exactly that key (a
/// derived struct would also take `["reason"]` or ignore other keys).
struct Reason(String);

impl<'de> serde::Deserialize<'de> for Reason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Reason;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(r#"{"unknown": "<reason>"}"#)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Reason, A::Error> {
                let (Some((k, v)), None) = (
                    m.next_entry::<String, String>()?,
                    m.next_key::<serde::de::IgnoredAny>()?,
                ) else {
                    return Err(serde::de::Error::custom("not a lone \"unknown\" key"));
                };
                if k != "unknown" {
                    return Err(serde::de::Error::custom("not a lone \"unknown\" key"));
                }
                Ok(Reason(v))
            }
        }
        d.deserialize_map(V)
    }
}

impl<T> Known<T> {
    pub fn unknown(reason: impl Into<String>) -> Self {
        Known::Unknown {
            unknown: reason.into(),
        }
    }

    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            Known::Unknown { .. } => None,
        }
    }

    pub fn from_io(r: io::Result<T>, what: &str) -> Self {
        match r {
            Ok(v) => Known::Value(v),
            Err(e) => Known::unknown(format!("{what}: {e}")),
        }
    }
}

impl<T: std::fmt::Display> std::fmt::Display for Known<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Known::Value(v) => write!(f, "{v}"),
            Known::Unknown { unknown } => write!(f, "unknown ({unknown})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_rooted_and_unrooted() {
        let h = Host::with_root("/fx/nvme");
        assert_eq!(h.path("/sys/block"), PathBuf::from("/fx/nvme/sys/block"));
        assert_eq!(
            h.unroot(Path::new("/fx/nvme/sys/devices/x")),
            PathBuf::from("/sys/devices/x")
        );
        assert_eq!(
            normalize(Path::new("/sys/dev/block/../../devices/pci/nvme0n1")),
            PathBuf::from("/sys/devices/pci/nvme0n1")
        );
    }

    #[test]
    fn unreadable_becomes_unknown_with_reason() {
        let h = Host::with_root("/nonexistent-root-for-test");
        let k = Known::from_io(h.read_u64("/proc/sys/vm/swappiness"), "vm.swappiness");
        match k {
            Known::Unknown { unknown } => assert!(unknown.contains("vm.swappiness")),
            _ => panic!("expected unknown"),
        }
    }

    #[test]
    fn known_reads_back_a_lone_unknown_key_only() {
        use std::collections::BTreeMap;
        let back = |j: &str| serde_json::from_str::<Known<BTreeMap<String, String>>>(j).unwrap();
        assert_eq!(back(r#"{"unknown": "no file"}"#), Known::unknown("no file"));
        // A map that merely has the key, or none at all, is a value.
        let two = back(r#"{"unknown": "a", "b": "c"}"#);
        assert_eq!(two.value().map(|m| m.len()), Some(2));
        assert_eq!(back("{}").value().map(|m| m.len()), Some(0));
        // A one-item list is a value, not a positional reason.
        let list: Known<Vec<String>> = serde_json::from_str(r#"["none"]"#).unwrap();
        assert_eq!(list, Known::Value(vec!["none".to_string()]));
        let n: Known<u64> = serde_json::from_str("0").unwrap();
        assert_eq!(n, Known::Value(0));
        let j = serde_json::to_string(&Known::<u64>::unknown("r")).unwrap();
        assert_eq!(
            serde_json::from_str::<Known<u64>>(&j).unwrap(),
            Known::unknown("r")
        );
    }
}
