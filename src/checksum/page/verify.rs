//! The checks of one page, in the order the module doc of [`super`] gives.

use super::*;

/// Per-thread memory of the last algorithm that matched, tried first (as
/// MySQL does): a file is almost always written with one algorithm, so the
/// common case computes one checksum per page.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hint(Option<Algo>);

impl Hint {
    /// The algorithm the previous page matched.
    pub fn last(&self) -> Option<Algo> {
        self.0
    }
}

fn is_zero(p: &[u8]) -> bool {
    // Word-wise: the compiler vectorises this; a byte loop would be 8× slower.
    let (pre, mid, post) = unsafe { p.align_to::<u64>() };
    pre.iter().all(|&b| b == 0) && mid.iter().all(|&w| w == 0) && post.iter().all(|&b| b == 0)
}

/// Verify one page found at position `page_no` of a file with `layout`.
/// `page.len()` must be `layout.physical`; anything else is reported bad
/// (never a panic), so arbitrary input is safe.
pub fn verify(page: &[u8], page_no: u32, layout: &Layout, mode: Mode, hint: &mut Hint) -> Verdict {
    verify_pre(page, page_no, layout, mode, hint, None)
}

/// [`verify`] with the page's innodb "new" checksum already computed (by
/// [`algo::page_innodb_new_x4`], four pages at a time, on innodb-format files).
pub fn verify_pre(
    page: &[u8],
    page_no: u32,
    layout: &Layout,
    mode: Mode,
    hint: &mut Hint,
    innodb_new: Option<u32>,
) -> Verdict {
    if page.len() != layout.physical || page.len() < MIN_PAGE {
        return Verdict::Bad(Failure {
            check: Check::Checksum,
            algorithm: None,
            stored: 0,
            computed: 0,
        });
    }
    if layout.space_id == 0 {
        let e = layout.extent_pages();
        if page_no >= e && page_no < 3 * e {
            return Verdict::Skipped(Skip::Doublewrite);
        }
    }
    let v = if layout.full_crc32 {
        verify_full_crc32(page, mode)
    } else if layout.is_zip() {
        verify_zip(page, page_no, layout, mode, hint)
    } else {
        verify_classic(page, page_no, layout, mode, hint, innodb_new)
    };
    // full_crc32 page_compressed pages compress, and encrypted ones (key
    // version at 0) encrypt, the bytes holding the space id; the page
    // number stays in clear.
    let fcrc32_compressed =
        layout.full_crc32 && (u16_at(page, 24) & 0x8000 != 0 || u32_at(page, 0) != 0);
    match v {
        Verdict::Valid(_) => identity(page, page_no, layout, fcrc32_compressed).unwrap_or(v),
        other => other,
    }
}

/// Page number and space id, once the checksum holds.
fn identity(page: &[u8], page_no: u32, layout: &Layout, no_space_id: bool) -> Option<Verdict> {
    let stored_no = u32_at(page, 4);
    if stored_no != page_no {
        return Some(Verdict::Bad(Failure {
            check: Check::PageNumber,
            algorithm: None,
            stored: stored_no,
            computed: page_no,
        }));
    }
    let space = u32_at(page, 34);
    if !no_space_id && space != layout.space_id {
        return Some(Verdict::Bad(Failure {
            check: Check::SpaceId,
            algorithm: None,
            stored: space,
            computed: layout.space_id,
        }));
    }
    None
}

fn bad(check: Check, algorithm: Option<Algo>, stored: u32, computed: u32) -> Verdict {
    Verdict::Bad(Failure {
        check,
        algorithm,
        stored,
        computed,
    })
}

fn verify_full_crc32(page: &[u8], mode: Mode) -> Verdict {
    if is_zero(page) {
        return Verdict::Empty;
    }
    let n = page.len();
    if !matches!(mode, Mode::Auto | Mode::FullCrc32) {
        // Strict classic algorithm on a full_crc32 file: every written page fails.
        let (algo, computed) = match mode {
            Mode::Innodb => (Algo::Innodb, algo::page_innodb_new(page)),
            Mode::None => (Algo::None, NO_CHECKSUM_MAGIC),
            _ => (Algo::Crc32, algo::page_crc32(page)),
        };
        return bad(Check::Checksum, Some(algo), u32_at(page, 0), computed);
    }
    let t = u16_at(page, 24);
    let compressed = t & 0x8000 != 0;
    let size = if compressed {
        let s = ((t & 0x7FFF) as usize) << 8;
        if s >= n || s < FIL_PAGE_DATA + 4 {
            return bad(Check::CompressedSize, None, s as u32, n as u32);
        }
        s
    } else {
        n
    };
    let stored = u32_at(page, size - 4);
    let computed = algo::full_crc32(&page[..size]);
    if stored != computed {
        return bad(Check::Checksum, Some(Algo::FullCrc32), stored, computed);
    }
    // key_version at 0: encrypted pages carry no plain LSN copy.
    if !compressed && u32_at(page, 0) == 0 {
        let head = u32_at(page, 20);
        let tail = u32_at(page, size - 8);
        if head != tail {
            return bad(Check::Lsn, None, tail, head);
        }
    }
    Verdict::Valid(Algo::FullCrc32)
}

/// Algorithms allowed for a classic uncompressed page, in default order.
fn classic_allowed(mode: Mode) -> &'static [Algo] {
    match mode {
        Mode::Auto => &[Algo::Crc32, Algo::Innodb, Algo::None, Algo::Crc32LegacyBe],
        Mode::Crc32 => &[Algo::Crc32, Algo::Crc32LegacyBe],
        Mode::Innodb => &[Algo::Innodb],
        Mode::None => &[Algo::None],
        // Strict full_crc32 on a classic file: the full_crc32 rule is applied.
        Mode::FullCrc32 => &[Algo::FullCrc32],
    }
}

fn zip_allowed(mode: Mode) -> &'static [Algo] {
    match mode {
        Mode::Auto => &[Algo::ZipCrc32, Algo::ZipInnodb, Algo::ZipNone],
        Mode::Crc32 => &[Algo::ZipCrc32],
        Mode::Innodb => &[Algo::ZipInnodb],
        Mode::None => &[Algo::ZipNone],
        Mode::FullCrc32 => &[Algo::FullCrc32],
    }
}

/// Does `algo` accept this page? Cheap field comparisons go first so that a
/// non-matching algorithm usually costs nothing.
fn accepts(page: &[u8], algo: Algo, innodb_new: Option<u32>) -> bool {
    let n = page.len();
    let f1 = u32_at(page, 0);
    let f2 = u32_at(page, n - 8);
    match algo {
        Algo::Crc32 => f1 == f2 && f1 == algo::page_crc32(page),
        Algo::Crc32LegacyBe => f1 == f2 && f1 == algo::page_crc32_legacy_be(page),
        Algo::Innodb => {
            (f2 == u32_at(page, 16) || f2 == algo::page_innodb_old(page))
                && (f1 == 0 || f1 == innodb_new.unwrap_or_else(|| algo::page_innodb_new(page)))
        }
        Algo::None => f1 == NO_CHECKSUM_MAGIC && f2 == NO_CHECKSUM_MAGIC,
        Algo::FullCrc32 => u32_at(page, n - 4) == algo::full_crc32(page),
        Algo::ZipCrc32 => f1 == algo::zip_crc32(page),
        Algo::ZipInnodb => f1 == algo::zip_adler32(page),
        Algo::ZipNone => f1 == NO_CHECKSUM_MAGIC,
        Algo::EncryptedCrc32 => u32_at(page, 30) == algo::page_crc32(page),
    }
}

/// The value `algo` would store (for the report of a bad page).
fn computed(page: &[u8], algo: Algo) -> (u32, u32) {
    let n = page.len();
    let f1 = u32_at(page, 0);
    match algo {
        Algo::Crc32 => (f1, algo::page_crc32(page)),
        Algo::Crc32LegacyBe => (f1, algo::page_crc32_legacy_be(page)),
        Algo::Innodb => (f1, algo::page_innodb_new(page)),
        Algo::None | Algo::ZipNone => (f1, NO_CHECKSUM_MAGIC),
        Algo::FullCrc32 => (u32_at(page, n - 4), algo::full_crc32(page)),
        Algo::ZipCrc32 => (f1, algo::zip_crc32(page)),
        Algo::ZipInnodb => (f1, algo::zip_adler32(page)),
        Algo::EncryptedCrc32 => (u32_at(page, 30), algo::page_crc32(page)),
    }
}

fn try_algos(page: &[u8], allowed: &[Algo], hint: &mut Hint, innodb_new: Option<u32>) -> Verdict {
    if let Some(h) = hint.0 {
        if allowed.contains(&h) && accepts(page, h, innodb_new) {
            return Verdict::Valid(h);
        }
    }
    for &a in allowed {
        if Some(a) != hint.0 && accepts(page, a, innodb_new) {
            hint.0 = Some(a);
            return Verdict::Valid(a);
        }
    }
    // Report against what this file was written with, if we know it.
    let expect = match hint.0 {
        Some(h) if allowed.contains(&h) => h,
        _ => allowed[0],
    };
    let (stored, comp) = computed(page, expect);
    bad(Check::Checksum, Some(expect), stored, comp)
}

fn encrypted_or_compressed(page: &[u8]) -> Option<Skip> {
    match u16_at(page, 24) {
        15..=17 | 37401 => Some(Skip::Encrypted),
        14 | 34354 => Some(Skip::PageCompressed),
        _ => None,
    }
}

/// MariaDB classic encryption: key_version at 26 on every page but page 0 of
/// a space whose page 0 carries crypt data. Such pages cannot be decrypted
/// here, but MariaDB stores a checksum of the *encrypted* bytes at offset 30
/// (`fil_space_verify_crypt_checksum`): crc32 over the usual ranges (zip
/// pages: the zip crc32), so they are verified rather than skipped.
fn is_mariadb_encrypted(page: &[u8], page_no: u32, layout: &Layout) -> bool {
    layout.encrypted && page_no != 0 && u32_at(page, 26) != 0
}

/// The post-encryption checksum check (zip pages: the zip crc32).
fn verify_encrypted(page: &[u8], zip: bool) -> Verdict {
    let stored = u32_at(page, 30);
    let computed = if zip {
        algo::zip_crc32(page)
    } else {
        algo::page_crc32(page)
    };
    if stored == computed {
        Verdict::Valid(Algo::EncryptedCrc32)
    } else {
        bad(
            Check::Checksum,
            Some(Algo::EncryptedCrc32),
            stored,
            computed,
        )
    }
}

fn verify_classic(
    page: &[u8],
    page_no: u32,
    layout: &Layout,
    mode: Mode,
    hint: &mut Hint,
    innodb_new: Option<u32>,
) -> Verdict {
    let n = page.len();
    let f1 = u32_at(page, 0);
    let f2 = u32_at(page, n - 8);
    if f1 == 0 && f2 == 0 && u32_at(page, 16) == 0 && u32_at(page, 20) == 0 {
        // MySQL's empty rule: all zero except FLUSH_LSN [26, 34).
        return if is_zero(&page[..26]) && is_zero(&page[34..]) {
            Verdict::Empty
        } else {
            bad(Check::NotEmpty, None, 0, 0)
        };
    }
    if let Some(s) = encrypted_or_compressed(page) {
        return Verdict::Skipped(s);
    }
    let head = u32_at(page, 20);
    let tail = u32_at(page, n - 4);
    if head != tail && mode != Mode::FullCrc32 {
        return bad(Check::Lsn, None, tail, head);
    }
    if is_mariadb_encrypted(page, page_no, layout) {
        return verify_encrypted(page, false);
    }
    try_algos(page, classic_allowed(mode), hint, innodb_new)
}

fn verify_zip(page: &[u8], page_no: u32, layout: &Layout, mode: Mode, hint: &mut Hint) -> Verdict {
    if u32_at(page, 0) == 0 && u32_at(page, 16) == 0 && u32_at(page, 20) == 0 {
        return if is_zero(page) {
            Verdict::Empty
        } else {
            bad(Check::NotEmpty, None, 0, 0)
        };
    }
    if let Some(s) = encrypted_or_compressed(page) {
        return Verdict::Skipped(s);
    }
    if is_mariadb_encrypted(page, page_no, layout) {
        return verify_encrypted(page, true);
    }
    try_algos(page, zip_allowed(mode), hint, None)
}
