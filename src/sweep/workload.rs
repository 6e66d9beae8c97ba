//! Sweep's side of the trial workloads ([`crate::trial::workload`]): they
//! load with bench's errors rewritten into fixes naming sweep's flags.

pub use crate::trial::workload::{BenchTrial, OltpTrial, Spec, TrialWorkload};
use anyhow::Result;
use std::path::Path;

/// The long flags `innotune sweep` has.
fn sweep_flags() -> Vec<String> {
    crate::trial::workload::long_flags::<super::cli::SweepArgs>("sweep")
}

/// `bench`'s errors name `bench`'s flags (`--directory`, `--bs`); in a
/// sweep those do not exist. Keep what went wrong and give a fix that
/// sweep can act on. (Checked against the clap definition, so a flag sweep
/// gains later passes through.)
pub fn for_sweep(e: anyhow::Error) -> anyhow::Error {
    crate::trial::workload::for_command(e, "sweep", &sweep_flags())
}

/// Load every workload named (OLTP names first, then presets and job
/// files), bench's errors naming sweep's flags.
pub fn load(names: &[String], workdir: &Path) -> Result<Vec<Spec>> {
    crate::trial::workload::load(names, workdir, for_sweep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Fix;
    use crate::trial::trials::Unit;

    #[test]
    fn bench_fixes_never_name_flags_sweep_lacks() {
        let e = for_sweep(
            Fix::new(
                "not enough space in /x: the files need 1GiB, 10MiB is free",
                "lower --size, or choose another --directory",
            )
            .into(),
        );
        let s = e.to_string();
        assert!(!s.contains("--directory"), "{s}");
        assert!(
            s.contains("--size") && s.contains("not enough space"),
            "{s}"
        );
        // A fix naming only sweep's own flags is kept as it is.
        let kept = for_sweep(Fix::new("x", "give --size 1g or --choose").into());
        assert_eq!(kept.to_string(), "x (fix: give --size 1g or --choose)");
        assert!(sweep_flags().contains(&"--oltp-threads".to_string()));
    }

    #[test]
    fn presets_load_with_their_file_bytes() {
        let t = BenchTrial::load("mixed", Path::new("/nonexistent/work"), for_sweep).unwrap();
        assert_eq!(t.file_bytes(), 2 << 30, "two jobs of 1 GiB");
        assert_eq!(t.unit(), Unit::Iops);
        assert!(matches!(
            load(&["oltp_insert".into()], Path::new("/x")).unwrap()[0],
            Spec::Oltp { .. }
        ));
        let e = load(&["no-such".into()], Path::new("/x")).unwrap_err();
        assert!(e.to_string().contains("no preset or job file"), "{e}");
    }
}
