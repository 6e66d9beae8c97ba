//! Stable stand-in for the cargo-fuzz target (fuzz/fuzz_targets/page.rs):
//! the same entry point over random and mutated pages with fixed seeds, so
//! it runs in CI without nightly. Plus one property a fuzzer cannot check:
//! a single flipped bit in a crc32 page is always caught. And, for a fixed
//! time budget each, every parser a user reaches in bench and checksum: CLI
//! values, job files, and tablespace files through the whole check.

use innotune::checksum::algo;
use innotune::checksum::page::{self, Hint, Layout, Mode, Verdict};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Page-0-like prefix with the given flags so layouts of every kind are hit.
fn with_flags(buf: &mut [u8], flags: u32) {
    buf[54..58].copy_from_slice(&flags.to_be_bytes());
}

fn crc32_page(rng: &mut SmallRng, n: usize, page_no: u32, space: u32) -> Vec<u8> {
    let mut p = vec![0u8; n];
    rng.fill(&mut p[..]);
    p[4..8].copy_from_slice(&page_no.to_be_bytes());
    p[24..26].copy_from_slice(&17855u16.to_be_bytes());
    p[34..38].copy_from_slice(&space.to_be_bytes());
    let lsn_lo = [p[20], p[21], p[22], p[23]];
    p[n - 4..].copy_from_slice(&lsn_lo);
    let c = algo::page_crc32(&p);
    p[..4].copy_from_slice(&c.to_be_bytes());
    p[n - 8..n - 4].copy_from_slice(&c.to_be_bytes());
    p
}

#[test]
fn random_and_mutated_inputs_never_panic() {
    let mut rng = SmallRng::seed_from_u64(0x1_2345);
    let flag_choices: [u32; 10] = [
        0,
        3 << 6,
        7 << 6,
        (4 << 1) | 1,
        (1 << 1) | 1,
        0x15,
        0x13,
        0x10,
        1 << 13,
        u32::MAX,
    ];
    for round in 0..3000 {
        let len = match round % 4 {
            0 => rng.gen_range(0..2048),
            1 => 16384 * rng.gen_range(1..3),
            2 => 4096 * rng.gen_range(1..4),
            _ => 1024 * rng.gen_range(1..9),
        };
        let mut data = vec![0u8; len];
        rng.fill(&mut data[..]);
        if len >= 58 && round % 2 == 0 {
            with_flags(&mut data, flag_choices[round % flag_choices.len()]);
        }
        if len > 64 && round % 3 == 0 {
            // Mostly zero pages with a few random bytes: the empty-page paths.
            data[64..].fill(0);
            for _ in 0..rng.gen_range(0..4) {
                let i = rng.gen_range(0..len);
                data[i] = rng.gen();
            }
        }
        page::fuzz_one(&data);
    }
    // Mutations of real pages (fixtures) keep the parser on realistic paths.
    let real = std::fs::read("/work/shared/fixtures/mysql-tablespaces/t_10k_rows.ibd")
        .unwrap_or_else(|_| crc32_page(&mut rng, 16384 * 4, 0, 0));
    for _ in 0..300 {
        let mut d = real.clone();
        for _ in 0..rng.gen_range(1..16) {
            let i = rng.gen_range(0..d.len());
            d[i] = rng.gen();
        }
        let cut = rng.gen_range(0..d.len());
        page::fuzz_one(&d[..cut]);
        // A trailing fragment of 1 byte after whole pages.
        page::fuzz_one(&d[..16385.min(d.len())]);
        page::fuzz_one(&d);
    }
}

#[test]
fn any_single_bit_flip_in_a_crc32_page_is_caught() {
    let mut rng = SmallRng::seed_from_u64(7);
    for &n in &[4096usize, 8192, 16384, 32768, 65536] {
        let mut p0 = vec![0u8; 1024];
        let ssize = (n / 512).trailing_zeros();
        with_flags(&mut p0, ssize << 6);
        p0[34..38].copy_from_slice(&9u32.to_be_bytes());
        let layout = Layout::from_page0(&p0).unwrap();
        assert_eq!(layout.logical, n);
        let page = crc32_page(&mut rng, n, 3, 9);
        let mut h = Hint::default();
        assert_eq!(
            page::verify(&page, 3, &layout, Mode::Auto, &mut h),
            Verdict::Valid(page::Algo::Crc32)
        );
        for _ in 0..400 {
            let byte = rng.gen_range(0..n);
            if (26..34).contains(&byte) {
                continue; // FLUSH_LSN / key version: outside every checksum, by design
            }
            let mut q = page.clone();
            q[byte] ^= 1 << rng.gen_range(0..8);
            let v = page::verify(&q, 3, &layout, Mode::Auto, &mut h);
            assert!(matches!(v, Verdict::Bad(_)), "{n} byte {byte}: {v:?}");
        }
    }
}

/// Each parser a user reaches gets random and truncated input for this long
/// (`INNOTUNE_FUZZ_SECS` overrides; CI runs the default).
fn budget() -> std::time::Duration {
    let s = std::env::var("INNOTUNE_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    std::time::Duration::from_secs_f64(s)
}

/// Strings a user (or a careless script) might type: fragments of valid
/// values, numbers of every size, units, signs, junk and control bytes.
fn value(rng: &mut SmallRng) -> String {
    const PARTS: &[&str] = &[
        "1",
        "0",
        "-1",
        "16",
        "k",
        "KiB",
        "m",
        "g",
        "t",
        "p",
        "e300",
        ".",
        "5",
        "nan",
        "inf",
        "99999999999999999999",
        "1e300",
        "s",
        "ms",
        "h",
        "d",
        "y",
        "randrw",
        "io_uring",
        "true",
        " ",
        "\u{0}",
        "\n",
        "=",
        "_",
        "-",
        "/",
        "..",
        "µs",
        "💥",
    ];
    let mut s = String::new();
    for _ in 0..rng.gen_range(0..6) {
        if rng.gen_bool(0.8) {
            s.push_str(PARTS[rng.gen_range(0..PARTS.len())]);
        } else {
            s.push(char::from_u32(rng.gen_range(0..0x3000)).unwrap_or('x'));
        }
    }
    s
}

/// CLI values: every size and duration parser, every job option through
/// `JobSpec::set`, and whole `bench`/`checksum` command lines through clap
/// and option resolution (nothing runs). An error is fine; a panic is not.
#[test]
fn cli_values_never_panic() {
    use innotune::bench::job::{JobSpec, OPTIONS};
    use innotune::units::{parse_duration, parse_size};
    let mut rng = SmallRng::seed_from_u64(11);
    let t0 = std::time::Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < budget() {
        let v = value(&mut rng);
        let _ = parse_size(&v);
        let _ = parse_duration(&v);
        let mut j = JobSpec::default();
        for o in OPTIONS {
            let _ = j.set(o.name, &value(&mut rng));
        }
        let _ = j.validate();
        let _ = j.describe();
        let flag = OPTIONS[rng.gen_range(0..OPTIONS.len())].name;
        let argv = [
            "innotune".to_string(),
            "bench".into(),
            format!("--{flag}={v}"),
            "--rw".into(),
            value(&mut rng),
        ];
        if let Ok(cli) = <innotune::cli::Cli as clap::Parser>::try_parse_from(&argv) {
            if let innotune::cli::Command::Bench(a) = cli.command {
                let mut j = JobSpec::default();
                for (k, v) in a.job_options() {
                    let _ = j.set(k, &v);
                }
            }
        }
        let argv = [
            "innotune",
            "checksum",
            "-p",
            &v,
            "-s",
            &value(&mut rng),
            "x.ibd",
        ];
        let _ = <innotune::cli::Cli as clap::Parser>::try_parse_from(argv);
        n += 1;
    }
    assert!(n > 100, "only {n} rounds in the budget");
}

/// Job files: random TOML, and valid ones mutated and cut anywhere.
#[test]
fn job_files_never_panic() {
    let mut rng = SmallRng::seed_from_u64(12);
    let valid = "[global]\nruntime = \"2s\"\nramp_time = 1\nbs = \"16k\"\ndirect = true\n\
                 size = \"8m\"\n[[job]]\nname = \"r\"\nrw = \"randread\"\niodepth = 8\n\
                 [[job]]\nname = \"w\"\nrw = \"write\"\nbs = \"1m\"\nnrfiles = 2\n";
    let p = std::path::Path::new("fuzz.toml");
    let t0 = std::time::Instant::now();
    while t0.elapsed() < budget() {
        let mut text = valid.as_bytes().to_vec();
        match rng.gen_range(0..4) {
            0 => {
                for _ in 0..rng.gen_range(1..8) {
                    let i = rng.gen_range(0..text.len());
                    text[i] = rng.gen();
                }
            }
            1 => text.truncate(rng.gen_range(0..text.len())),
            2 => {
                let i = rng.gen_range(0..text.len());
                let ins = value(&mut rng);
                text.splice(i..i, ins.bytes());
            }
            _ => {
                text = (0..rng.gen_range(0..300)).map(|_| rng.gen()).collect();
            }
        }
        let text = String::from_utf8_lossy(&text);
        let _ = innotune::bench::parse_job_file(&text, p);
    }
}

/// Tablespace pages through the whole command path (`checksum::check` on
/// real files: page 0 checks, range, reader, verdicts), random and cut
/// copies of a real tablespace, for the budget.
#[test]
fn tablespace_files_never_panic() {
    let mut rng = SmallRng::seed_from_u64(13);
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read("/work/shared/fixtures/mysql-tablespaces/sakila/8.0/sakila/film.ibd")
        .unwrap_or_else(|_| crc32_page(&mut rng, 16384 * 4, 0, 0));
    let host = innotune::host::Host::live();
    let t0 = std::time::Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < budget() {
        let mut d = if rng.gen_bool(0.8) {
            real.clone()
        } else {
            (0..rng.gen_range(0..40000)).map(|_| rng.gen()).collect()
        };
        for _ in 0..rng.gen_range(0..12) {
            if d.is_empty() {
                break;
            }
            let i = rng.gen_range(0..d.len().min(70000));
            d[i] = rng.gen();
        }
        if rng.gen_bool(0.3) && !d.is_empty() {
            d.truncate(rng.gen_range(0..d.len()));
        }
        let f = dir.path().join(format!("f{}.ibd", n % 4));
        std::fs::write(&f, &d).unwrap();
        page::fuzz_one(&d);
        let argv = [
            "innotune",
            "checksum",
            "--threads",
            "1",
            "--allow-mismatches",
            "1000000",
            f.to_str().unwrap(),
        ];
        let cli = <innotune::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
        let innotune::cli::Command::Checksum(a) = cli.command else {
            unreachable!()
        };
        let _ = innotune::checksum::check(&a, &host);
        n += 1;
    }
    assert!(n > 20, "only {n} rounds in the budget");
}
