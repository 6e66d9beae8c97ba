//! sysfs multiple-choice files: `none [mq-deadline] kyber bfq`
//! (queue/scheduler), `always [madvise] never` (transparent hugepages).
//!
//! The one parser of that format in innotune: the block queue reader, the
//! host reader, sweep and the sysfs `Change` (`crate::change::sysfs::norm`,
//! which compares and restores the active value) all go through [`parse`].
//! Hand-written: it is a
//! one-line format that procfs-core does not cover (it parses /proc, not
//! /sys).

use serde::Serialize;

/// A parsed choice file: the active value and every value offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Choice {
    pub active: String,
    /// Every value the kernel offers, in its order (the active one included).
    pub offered: Vec<String>,
    /// The file marked the active value with brackets. A file with one bare
    /// word (bio-based md/dm print just `none`) offers no choice at all.
    pub bracketed: bool,
}

impl Choice {
    /// More than one value to choose from: writing the file can change
    /// something (a bio-based device's `none` cannot be switched).
    pub fn switchable(&self) -> bool {
        self.bracketed && self.offered.len() > 1
    }
}

/// Parse a choice file. `None` when it has several words and none in
/// brackets, or nothing at all: the format is not what the kernel writes.
pub fn parse(s: &str) -> Option<Choice> {
    let mut active = None;
    let mut offered = Vec::new();
    for w in s.split_whitespace() {
        match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(inner) if !inner.is_empty() => {
                if active.is_some() {
                    return None; // two bracketed values: not a choice file
                }
                active = Some(inner.to_string());
                offered.push(inner.to_string());
            }
            _ => offered.push(w.to_string()),
        }
    }
    match active {
        Some(active) => Some(Choice {
            active,
            offered,
            bracketed: true,
        }),
        None if offered.len() == 1 => Some(Choice {
            active: offered[0].clone(),
            offered,
            bracketed: false,
        }),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_and_thp_lines() {
        let c = parse("none [mq-deadline] kyber bfq \n").unwrap();
        assert_eq!(c.active, "mq-deadline");
        assert_eq!(c.offered, ["none", "mq-deadline", "kyber", "bfq"]);
        assert!(c.switchable());
        let c = parse("none\n").unwrap();
        assert_eq!((c.active.as_str(), c.bracketed), ("none", false));
        assert!(!c.switchable(), "bio-based md/dm: nothing to switch");
        assert!(!parse("[none]").unwrap().switchable());
        assert_eq!(
            parse("always defer defer+madvise [madvise] never")
                .unwrap()
                .active,
            "madvise"
        );
        assert_eq!(parse("none kyber"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("[a] [b]"), None);
        assert_eq!(parse("[] x"), None);
    }
}
