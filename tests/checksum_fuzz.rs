//! Stable stand-in for the cargo-fuzz target (fuzz/fuzz_targets/page.rs):
//! the same entry point over random and mutated pages with fixed seeds, so
//! it runs in CI without nightly. Plus one property a fuzzer cannot check:
//! a single flipped bit in a crc32 page is always caught.

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
