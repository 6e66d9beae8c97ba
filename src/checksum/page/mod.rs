//! One InnoDB page: what it is and whether it is intact.
//!
//! Pure parsing and validation, no I/O, no allocation per page: this is the
//! hot loop and the fuzz target (`fuzz/fuzz_targets/page.rs`,
//! `tests/checksum_fuzz.rs`). Rules follow the servers' own: MySQL 8
//! `BlockReporter::is_corrupted` (storage/innobase/buf/checksum.cc) and MariaDB
//! `buf_page_is_corrupted` (storage/innobase/buf/buf0buf.cc); the byte layout
//! is summarised in docs/reference/innodb-pages.md.
//!
//! - [`types`]: what a verdict says (algorithms, checks, skips, page types)
//! - [`layout`]: geometry from page 0, and whether page 0 is InnoDB's at all
//! - [`verify`]: the checks, in order
//!
//! Order of checks for a classic (non full_crc32) page, and why:
//! 1. doublewrite buffer pages of the system tablespace are skipped (they hold
//!    copies of other pages, with those pages' numbers);
//! 2. the all-zero rule (a never-written page is valid);
//! 3. MySQL-encrypted and classic page_compressed pages are "not verifiable",
//!    never "corrupt"; MariaDB-encrypted pages are verified through the
//!    checksum MariaDB keeps of their encrypted bytes;
//! 4. the LSN low word in the header vs the trailer (a torn write shows here
//!    first, and it is not covered by the crc32 ranges);
//! 5. the checksum, in the algorithms `--algorithm` allows;
//! 6. page number and space id (a misdirected write has a valid checksum).

mod layout;
mod types;
mod verify;

pub use layout::*;
pub use types::*;
pub use verify::*;

use super::algo;

pub const FIL_PAGE_DATA: usize = 38;
/// Absolute offset of FSP_SPACE_FLAGS on page 0 (FSP header at 38, +16).
pub const FSP_FLAGS_OFFSET: usize = 54;
/// `BUF_NO_CHECKSUM_MAGIC`
pub const NO_CHECKSUM_MAGIC: u32 = 0xDEAD_BEEF;
/// Bytes innochecksum reads before it knows the page size (`UNIV_ZIP_SIZE_MIN`).
pub const MIN_PAGE: usize = 1024;
/// MariaDB crypt_data magic on page 0 (`CRYPT_MAGIC`).
const CRYPT_MAGIC: &[u8; 6] = b"s\x0e\x0cREt";

#[inline(always)]
pub fn u32_at(p: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([p[off], p[off + 1], p[off + 2], p[off + 3]])
}
#[inline(always)]
pub fn u16_at(p: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([p[off], p[off + 1]])
}

/// The fuzz entry point (cargo-fuzz target `page` and the stable
/// `tests/checksum_fuzz.rs`): read a layout from the input as if it were
/// page 0, then verify every page-sized slice under every mode, and the
/// descriptor lookup. Arbitrary bytes must never panic.
pub fn fuzz_one(data: &[u8]) {
    let Ok(mut layout) = Layout::from_page0(data) else {
        return;
    };
    if data.len() >= layout.physical {
        layout.detect_encryption(&data[..layout.physical]);
    }
    let mut hint = Hint::default();
    for (i, pg) in data.chunks(layout.physical).enumerate() {
        for mode in [
            Mode::Auto,
            Mode::Crc32,
            Mode::Innodb,
            Mode::None,
            Mode::FullCrc32,
        ] {
            let _ = verify(pg, i as u32, &layout, mode, &mut hint);
        }
        let _ = xdes_is_free(pg, i as u64 * 7 + 1, &layout);
        if pg.len() >= 26 {
            let _ = page_type_name(u16_at(pg, 24), layout.full_crc32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout16() -> Layout {
        let mut p0 = vec![0u8; 16384];
        p0[34..38].copy_from_slice(&7u32.to_be_bytes());
        Layout::from_page0(&p0).unwrap()
    }

    /// A classic page written with crc32: numbers, LSN, type INDEX, payload.
    pub fn make_crc32_page(n: usize, page_no: u32, space: u32, lsn: u64) -> Vec<u8> {
        let mut p: Vec<u8> = (0..n).map(|i| (i * 31 + 7) as u8).collect();
        p[4..8].copy_from_slice(&page_no.to_be_bytes());
        p[16..24].copy_from_slice(&lsn.to_be_bytes());
        p[24..26].copy_from_slice(&17855u16.to_be_bytes());
        p[26..34].fill(0);
        p[34..38].copy_from_slice(&space.to_be_bytes());
        p[n - 4..].copy_from_slice(&(lsn as u32).to_be_bytes());
        let c = algo::page_crc32(&p);
        p[0..4].copy_from_slice(&c.to_be_bytes());
        p[n - 8..n - 4].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn page_size_from_flags() {
        let mut p0 = vec![0u8; 1024];
        let mut set = |f: u32| {
            p0[54..58].copy_from_slice(&f.to_be_bytes());
            Layout::from_page0(&p0)
        };
        // MySQL/MariaDB classic: ssize at bits 6-9.
        assert_eq!(set(0).unwrap().logical, 16384);
        assert_eq!(set(3 << 6).unwrap().logical, 4096);
        assert_eq!(set(7 << 6).unwrap().logical, 65536);
        // ROW_FORMAT=COMPRESSED 8K in a 16K space: zip_ssize 4, post_antelope.
        let l = set((4 << 1) | 1 | (1 << 5)).unwrap();
        assert_eq!((l.logical, l.physical), (16384, 8192));
        assert_eq!(set((1 << 1) | 1).unwrap().physical, 1024);
        // MariaDB full_crc32: marker bit 4, ssize in bits 0-3.
        let l = set(0x10 | 5).unwrap();
        assert!(l.full_crc32);
        assert_eq!(l.logical, 16384);
        assert_eq!(set(0x10 | 3).unwrap().logical, 4096);
        // MariaDB classic page_compression bit 16 does not change the size.
        assert_eq!(set(1 << 16).unwrap().logical, 16384);
        // Invalid sizes are errors, not guesses.
        assert!(set(1 << 6).is_err());
        assert!(set(0x10 | 9).is_err());
        assert!(Layout::from_page0(&[0u8; 100]).is_err());
    }

    #[test]
    fn an_algorithm_that_does_not_fit_the_format_is_named() {
        let mut p0 = vec![0u8; 1024];
        let mut set = |f: u32| {
            p0[54..58].copy_from_slice(&f.to_be_bytes());
            Layout::from_page0(&p0).unwrap()
        };
        let full = set(0x10 | 5);
        for m in [Mode::Crc32, Mode::Innodb, Mode::None] {
            let why = full.refuses(m).unwrap();
            assert!(why.contains("full_crc32 format"), "{why}");
            assert!(why.contains("give --algorithm full_crc32"), "{why}");
        }
        assert_eq!(full.refuses(Mode::FullCrc32), None);
        assert_eq!(full.refuses(Mode::Auto), None);
        let classic = set(0);
        let why = classic.refuses(Mode::FullCrc32).unwrap();
        assert!(why.contains("classic format"), "{why}");
        for m in [Mode::Auto, Mode::Crc32, Mode::Innodb, Mode::None] {
            assert_eq!(classic.refuses(m), None);
        }
        let zip = set((4 << 1) | 1 | (1 << 5));
        assert!(zip
            .refuses(Mode::FullCrc32)
            .unwrap()
            .contains("compressed format"));
    }

    #[test]
    fn crc32_page_valid_then_each_corruption_named() {
        let l = layout16();
        let mut h = Hint::default();
        let p = make_crc32_page(16384, 5, 7, 0x1234_5678_9abc);
        assert_eq!(
            verify(&p, 5, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::Crc32)
        );
        assert_eq!(
            verify(&p, 5, &l, Mode::Crc32, &mut h),
            Verdict::Valid(Algo::Crc32)
        );
        // Strict innodb refuses a crc32 page.
        assert!(matches!(
            verify(&p, 5, &l, Mode::Innodb, &mut h),
            Verdict::Bad(Failure {
                check: Check::Checksum,
                algorithm: Some(Algo::Innodb),
                ..
            })
        ));
        let mut q = p.clone();
        q[9000] ^= 0x10;
        assert!(matches!(
            verify(&q, 5, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::Checksum,
                ..
            })
        ));
        let mut q = p.clone();
        q[16383] ^= 1;
        assert!(matches!(
            verify(&q, 5, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::Lsn,
                ..
            })
        ));
        assert!(matches!(
            verify(&p, 6, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::PageNumber,
                stored: 5,
                computed: 6,
                ..
            })
        ));
        let other = make_crc32_page(16384, 5, 8, 1);
        assert!(matches!(
            verify(&other, 5, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::SpaceId,
                ..
            })
        ));
    }

    #[test]
    fn innodb_and_none_pages() {
        let l = layout16();
        let mut h = Hint::default();
        let mut p = make_crc32_page(16384, 3, 7, 99);
        let new = algo::page_innodb_new(&p);
        p[0..4].copy_from_slice(&new.to_be_bytes());
        let old = algo::page_innodb_old(&p);
        p[16376..16380].copy_from_slice(&old.to_be_bytes());
        assert_eq!(
            verify(&p, 3, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::Innodb)
        );
        assert_eq!(
            verify(&p, 3, &l, Mode::Innodb, &mut h),
            Verdict::Valid(Algo::Innodb)
        );
        assert!(matches!(
            verify(&p, 3, &l, Mode::Crc32, &mut h),
            Verdict::Bad(_)
        ));
        p[0..4].copy_from_slice(&NO_CHECKSUM_MAGIC.to_be_bytes());
        p[16376..16380].copy_from_slice(&NO_CHECKSUM_MAGIC.to_be_bytes());
        assert_eq!(
            verify(&p, 3, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::None)
        );
    }

    #[test]
    fn empty_rule_and_doublewrite() {
        let l = layout16();
        let mut h = Hint::default();
        let mut p = vec![0u8; 16384];
        assert_eq!(verify(&p, 9, &l, Mode::Crc32, &mut h), Verdict::Empty);
        p[30] = 1; // FLUSH_LSN area is exempt
        assert_eq!(verify(&p, 9, &l, Mode::Auto, &mut h), Verdict::Empty);
        p[5000] = 1;
        assert!(matches!(
            verify(&p, 9, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::NotEmpty,
                ..
            })
        ));
        let sys = Layout { space_id: 0, ..l };
        assert_eq!(
            verify(&p, 64, &sys, Mode::Auto, &mut h),
            Verdict::Skipped(Skip::Doublewrite)
        );
        assert_eq!(
            verify(&p, 191, &sys, Mode::Auto, &mut h),
            Verdict::Skipped(Skip::Doublewrite)
        );
        assert!(matches!(
            verify(&p, 192, &sys, Mode::Auto, &mut h),
            Verdict::Bad(_)
        ));
    }

    #[test]
    fn full_crc32_pages_including_page_compressed() {
        let mut p0 = vec![0u8; 16384];
        p0[54..58].copy_from_slice(&0x15u32.to_be_bytes());
        p0[34..38].copy_from_slice(&4u32.to_be_bytes());
        let l = Layout::from_page0(&p0).unwrap();
        let mut h = Hint::default();
        let mut p: Vec<u8> = (0..16384).map(|i| (i % 251) as u8).collect();
        p[0..4].fill(0);
        p[4..8].copy_from_slice(&2u32.to_be_bytes());
        p[20..24].copy_from_slice(&77u32.to_be_bytes());
        p[24..26].copy_from_slice(&17855u16.to_be_bytes());
        p[34..38].copy_from_slice(&4u32.to_be_bytes());
        p[16376..16380].copy_from_slice(&77u32.to_be_bytes());
        let c = algo::full_crc32(&p);
        p[16380..].copy_from_slice(&c.to_be_bytes());
        assert_eq!(
            verify(&p, 2, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::FullCrc32)
        );
        assert!(matches!(
            verify(&p, 2, &l, Mode::Crc32, &mut h),
            Verdict::Bad(_)
        ));
        // page_compressed: marker bit 15, size 0x20 << 8 = 8192.
        let mut q = p.clone();
        q[24..26].copy_from_slice(&(0x8000u16 | 0x20).to_be_bytes());
        let c = algo::full_crc32(&q[..8192]);
        q[8188..8192].copy_from_slice(&c.to_be_bytes());
        assert_eq!(
            verify(&q, 2, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::FullCrc32)
        );
        q[24..26].copy_from_slice(&(0x8000u16 | 0x7F).to_be_bytes());
        assert!(matches!(
            verify(&q, 2, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::CompressedSize,
                ..
            })
        ));
    }

    #[test]
    fn encrypted_pages_are_not_verifiable() {
        let l = layout16();
        let mut h = Hint::default();
        let mut p = make_crc32_page(16384, 5, 7, 1);
        p[24..26].copy_from_slice(&15u16.to_be_bytes());
        p[100] ^= 0xFF;
        assert_eq!(
            verify(&p, 5, &l, Mode::Auto, &mut h),
            Verdict::Skipped(Skip::Encrypted)
        );
    }

    #[test]
    fn zip_pages_crc32_adler_none_and_legacy_be() {
        // 8K compressed pages in a 16K space.
        let mut p0 = vec![0u8; 8192];
        p0[54..58].copy_from_slice(&((4u32 << 1) | 1 | (1 << 5)).to_be_bytes());
        p0[34..38].copy_from_slice(&7u32.to_be_bytes());
        let l = Layout::from_page0(&p0).unwrap();
        let mut h = Hint::default();
        let mut z: Vec<u8> = (0..8192).map(|i| (i * 13 + 1) as u8).collect();
        z[4..8].copy_from_slice(&3u32.to_be_bytes());
        z[34..38].copy_from_slice(&7u32.to_be_bytes());
        let c = algo::zip_crc32(&z);
        z[0..4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(
            verify(&z, 3, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::ZipCrc32)
        );
        let a = algo::zip_adler32(&z);
        z[0..4].copy_from_slice(&a.to_be_bytes());
        assert_eq!(
            verify(&z, 3, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::ZipInnodb)
        );
        assert!(matches!(
            verify(&z, 3, &l, Mode::Crc32, &mut h),
            Verdict::Bad(_)
        ));
        z[0..4].copy_from_slice(&NO_CHECKSUM_MAGIC.to_be_bytes());
        assert_eq!(
            verify(&z, 3, &l, Mode::Auto, &mut h),
            Verdict::Valid(Algo::ZipNone)
        );
        // No LSN trailer on zip pages: changing the last bytes breaks only the checksum.
        z[0..4].copy_from_slice(&a.to_be_bytes());
        z[8191] ^= 1;
        assert!(matches!(
            verify(&z, 3, &l, Mode::Auto, &mut h),
            Verdict::Bad(Failure {
                check: Check::Checksum,
                ..
            })
        ));

        // A classic page written by a legacy big-endian build.
        let l16 = layout16();
        let mut p = make_crc32_page(16384, 4, 7, 5);
        let be = algo::page_crc32_legacy_be(&p);
        p[0..4].copy_from_slice(&be.to_be_bytes());
        p[16376..16380].copy_from_slice(&be.to_be_bytes());
        let mut h = Hint::default();
        assert_eq!(
            verify(&p, 4, &l16, Mode::Crc32, &mut h),
            Verdict::Valid(Algo::Crc32LegacyBe)
        );
    }

    #[test]
    fn wrong_length_is_bad_not_panic() {
        let l = layout16();
        let mut h = Hint::default();
        assert!(matches!(
            verify(&[0u8; 100], 0, &l, Mode::Auto, &mut h),
            Verdict::Bad(_)
        ));
    }
}
