//! The stall veto: a candidate that stalled a direction (a read or write
//! waited past the limit, or none completed in a window) on a workload
//! where the setting it would replace never did is not recommended,
//! whatever its medians say (see [`super::super::recommend`]). The
//! sequential design uses the same test to stop early.

use super::super::plan::Candidate;
use crate::trial::trials::Trial;

/// (windows, windows stalled, longest I/O) of one candidate on one
/// workload in one direction.
type Tally = (usize, usize, Option<u64>);

/// Where `x` stalled a direction on a workload that every one of `others`
/// ran without ever stalling it: `none stalled reads in 2 of 5 mixed
/// windows (longest read 2.64 s; a read waited over 500 ms, or none
/// completed), mq-deadline in none of 5 (longest read 21 ms)`. None when
/// it did not (the veto of the module doc).
pub fn starves_alone(x: &Candidate, others: &[&Candidate], trials: &[Trial]) -> Option<String> {
    let stalled = |t: &Trial, dir: &str| t.starved.iter().chain(&t.stalled).any(|d| d == dir);
    // (windows, windows stalled in `dir`, longest I/O of `dir`) of
    // candidate `c` on workload `w`.
    let tally = |c: &str, w: &str, dir: &str| {
        trials
            .iter()
            .filter(|t| t.candidate == c && t.workload == w)
            .fold((0, 0, None::<u64>), |(n, k, m), t| {
                let longest = if dir == "read" {
                    t.read_max_ns
                } else {
                    t.write_max_ns
                };
                (
                    n + 1,
                    k + usize::from(stalled(t, dir)),
                    // None orders below Some: the longest seen, if any.
                    m.max(longest),
                )
            })
    };
    if others.is_empty() {
        return None;
    }
    let longest =
        |dir: &str, m: Option<u64>| m.map(|m| format!("longest {dir} {}", crate::units::fmt_ns(m)));
    // Workloads in the order they ran, each once.
    let mut seen = std::collections::BTreeSet::new();
    let workloads = trials
        .iter()
        .map(|t| t.workload.as_str())
        .filter(|w| seen.insert(*w));
    let mut found = Vec::new();
    for w in workloads {
        for dir in ["read", "write"] {
            let (n, k, m) = tally(&x.label, w, dir);
            if k == 0 {
                continue;
            }
            let theirs: Vec<(&Candidate, Tally)> = others
                .iter()
                .map(|o| (*o, tally(&o.label, w, dir)))
                .collect();
            if theirs.iter().all(|(_, (n, k, _))| *n > 0 && *k == 0) {
                let them: Vec<String> = theirs
                    .iter()
                    .map(|(o, (n, _, m))| match longest(dir, *m) {
                        Some(l) => format!("{} in none of {n} ({l})", o.setting()),
                        None => format!("{} in none of {n}", o.setting()),
                    })
                    .collect();
                let limit =
                    crate::units::fmt_ns(crate::trial::trials::stall_limit_ns(dir == "read"));
                found.push(format!(
                    "{} stalled {dir}s in {k} of {n} {w} windows ({}a {dir} waited over {limit}, or none completed), {}",
                    x.setting(),
                    longest(dir, m).map(|l| l + "; ").unwrap_or_default(),
                    them.join(", ")
                ));
            }
        }
    }
    (!found.is_empty()).then(|| found.join("; "))
}
