//! One InnoDB page: what it is and whether it is intact.
//!
//! Pure parsing and validation, no I/O, no allocation per page: this is the
//! hot loop and the fuzz target (`fuzz/fuzz_targets/page.rs`,
//! `tests/checksum_fuzz.rs`). Rules follow `/work/shared/reference/innodb-pages.md`
//! (MySQL 8 `BlockReporter::is_corrupted`, MariaDB `buf_page_is_corrupted`).
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

use super::algo;
use serde::Serialize;

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

/// What `--algorithm` allows. A named algorithm is strict: pages written by
/// another one fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Whatever the page was validly written with (full_crc32 when page 0 says so).
    #[default]
    Auto,
    /// CRC-32C (and its legacy big-endian variant; zip pages: crc32).
    Crc32,
    /// The legacy innodb fold checksum (zip pages: adler32).
    Innodb,
    /// No checksum: 0xDEADBEEF in both fields.
    None,
    /// MariaDB 10.5+ full_crc32.
    #[value(name = "full_crc32")]
    FullCrc32,
}

/// The algorithm a page was found valid with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Algo {
    Crc32,
    Crc32LegacyBe,
    Innodb,
    None,
    FullCrc32,
    ZipCrc32,
    ZipInnodb,
    ZipNone,
    /// MariaDB classic encryption: the post-encryption crc32 at offset 30.
    EncryptedCrc32,
}

impl Algo {
    pub const COUNT: usize = 9;
    pub const ALL: [Algo; Algo::COUNT] = [
        Algo::Crc32,
        Algo::Crc32LegacyBe,
        Algo::Innodb,
        Algo::None,
        Algo::FullCrc32,
        Algo::ZipCrc32,
        Algo::ZipInnodb,
        Algo::ZipNone,
        Algo::EncryptedCrc32,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Algo::Crc32 => "crc32",
            Algo::Crc32LegacyBe => "crc32_legacy_be",
            Algo::Innodb => "innodb",
            Algo::None => "none",
            Algo::FullCrc32 => "full_crc32",
            Algo::ZipCrc32 => "zip_crc32",
            Algo::ZipInnodb => "zip_innodb",
            Algo::ZipNone => "zip_none",
            Algo::EncryptedCrc32 => "encrypted_crc32",
        }
    }
}

/// Which check a bad page failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// No allowed algorithm reproduces the stored checksum.
    Checksum,
    /// LSN low word in the header differs from the trailer's (torn write).
    Lsn,
    /// The page says it is another page (misdirected write).
    PageNumber,
    /// The page says it belongs to another tablespace.
    SpaceId,
    /// Checksums and LSN are zero but the page is not (MySQL's empty rule).
    NotEmpty,
    /// full_crc32 page_compressed size field is out of range.
    CompressedSize,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::Checksum => "checksum",
            Check::Lsn => "lsn",
            Check::PageNumber => "page_number",
            Check::SpaceId => "space_id",
            Check::NotEmpty => "not_empty",
            Check::CompressedSize => "compressed_size",
        }
    }
}

/// Why a page was not verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// Doublewrite buffer area of the system tablespace.
    Doublewrite,
    /// Encrypted: its checksum cannot be verified without the key.
    Encrypted,
    /// MariaDB classic page_compressed or MySQL transparent page compression:
    /// no checksum over the stored bytes.
    PageCompressed,
    /// Failed, but the extent descriptor marks the page free: InnoDB no
    /// longer reads it (MariaDB does not even write freed pages), so its
    /// stale bytes are not corruption. innochecksum skips these too.
    Free,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub check: Check,
    /// The algorithm `stored`/`computed` refer to (checksum failures).
    pub algorithm: Option<Algo>,
    pub stored: u32,
    pub computed: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Valid(Algo),
    Empty,
    Skipped(Skip),
    Bad(Failure),
}

/// Page geometry and identity, from page 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// Logical page size (4–64 KiB).
    pub logical: usize,
    /// Size of a page in the file: ROW_FORMAT=COMPRESSED size (1–16 KiB) or logical.
    pub physical: usize,
    /// MariaDB full_crc32 format (flags bit 4).
    pub full_crc32: bool,
    pub space_id: u32,
    pub flags: u32,
    /// MySQL encryption flag or MariaDB crypt data with scheme 1 on page 0.
    pub encrypted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    TooShort(usize),
    BadFlags(u32),
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::TooShort(n) => {
                write!(f, "only {n} bytes, shorter than the smallest page (1024)")
            }
            LayoutError::BadFlags(fl) => {
                write!(f, "page 0 has invalid tablespace flags 0x{fl:08x}")
            }
        }
    }
}

impl Layout {
    /// Geometry from the first bytes of page 0 (at least 1024, the smallest
    /// page). MySQL and MariaDB classic layouts share bits 0–9; MariaDB
    /// full_crc32 is marked by bit 4, which is the top ZIP_SSIZE bit in the
    /// classic layout and therefore always 0 there.
    pub fn from_page0(head: &[u8]) -> Result<Layout, LayoutError> {
        if head.len() < MIN_PAGE {
            return Err(LayoutError::TooShort(head.len()));
        }
        let flags = u32_at(head, FSP_FLAGS_OFFSET);
        let space_id = u32_at(head, 34);
        let bad = || LayoutError::BadFlags(flags);
        let size_of = |ssize: u32| -> Result<usize, LayoutError> {
            match ssize {
                0 => Ok(16384),
                3..=7 => Ok(512usize << ssize),
                _ => Err(bad()),
            }
        };
        if flags & (1 << 4) != 0 {
            let logical = size_of(flags & 0xF)?;
            return Ok(Layout {
                logical,
                physical: logical,
                full_crc32: true,
                space_id,
                flags,
                encrypted: false,
            });
        }
        let zip_ssize = (flags >> 1) & 0xF;
        let page_ssize = (flags >> 6) & 0xF;
        let logical = size_of(page_ssize)?;
        let physical = match zip_ssize {
            0 => logical,
            1..=5 => 512usize << zip_ssize,
            _ => return Err(bad()),
        };
        if physical > logical {
            return Err(bad());
        }
        // A zip_ssize without POST_ANTELOPE (bit 0) is invalid in both servers.
        if zip_ssize != 0 && flags & 1 == 0 {
            return Err(bad());
        }
        Ok(Layout {
            logical,
            physical,
            full_crc32: false,
            space_id,
            flags,
            encrypted: flags & (1 << 13) != 0,
        })
    }

    /// Look for MariaDB crypt data (scheme 1) on a whole page 0. Searching
    /// for the magic rather than computing its offset keeps this independent
    /// of the XDES array size for each page size.
    pub fn detect_encryption(&mut self, page0: &[u8]) {
        if let Some(pos) = page0
            .windows(CRYPT_MAGIC.len())
            .position(|w| w == CRYPT_MAGIC)
        {
            if page0.get(pos + CRYPT_MAGIC.len()) == Some(&1) {
                self.encrypted = true;
            }
        }
    }

    pub fn is_zip(&self) -> bool {
        self.physical < self.logical
    }

    /// Pages per extent (`FSP_EXTENT_SIZE`): 1 MiB worth up to 16 KiB pages, 64 above.
    pub fn extent_pages(&self) -> u32 {
        if self.logical <= 16384 {
            (1 << 20) / self.logical as u32
        } else {
            64
        }
    }

    pub fn format_name(&self) -> &'static str {
        if self.full_crc32 {
            "full_crc32"
        } else if self.is_zip() {
            "compressed"
        } else {
            "classic"
        }
    }
}

/// Start of the extent descriptor array on an FSP_HDR/XDES page
/// (`XDES_ARR_OFFSET` = FIL header 38 + FSP header 112).
const XDES_ARR_OFFSET: usize = 150;
/// `XDES_BITMAP`: id (8) + list node (12) + state (4).
const XDES_BITMAP: usize = 24;

/// Is `page_no` marked free in the descriptor page `xdes` that covers it
/// (page `page_no - page_no % physical`)? The caller verifies `xdes` first.
pub fn xdes_is_free(xdes: &[u8], page_no: u64, layout: &Layout) -> bool {
    let ext = layout.extent_pages() as u64;
    let xdes_size = XDES_BITMAP + (ext as usize * 2).div_ceil(8);
    let idx = ((page_no % layout.physical as u64) / ext) as usize;
    let bit = 2 * (page_no % ext) as usize; // XDES_FREE_BIT = 0
    let off = XDES_ARR_OFFSET + idx * xdes_size + XDES_BITMAP + bit / 8;
    match xdes.get(off) {
        Some(b) => (b >> (bit % 8)) & 1 == 1,
        None => false,
    }
}

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

/// Page type field, resolved to a name.
pub fn page_type_name(t: u16, full_crc32: bool) -> &'static str {
    if full_crc32 && t & 0x8000 != 0 {
        return "PAGE_COMPRESSED";
    }
    match t {
        0 => "ALLOCATED",
        2 => "UNDO_LOG",
        3 => "INODE",
        4 => "IBUF_FREE_LIST",
        5 => "IBUF_BITMAP",
        6 => "SYS",
        7 => "TRX_SYS",
        8 => "FSP_HDR",
        9 => "XDES",
        10 => "BLOB",
        11 => "ZBLOB",
        12 => "ZBLOB2",
        13 => "UNKNOWN",
        14 => "COMPRESSED",
        15 => "ENCRYPTED",
        16 => "COMPRESSED_AND_ENCRYPTED",
        17 => "ENCRYPTED_RTREE",
        18 => "SDI_BLOB",
        19 => "SDI_ZBLOB",
        17853 => "SDI",
        17854 => "RTREE",
        17855 => "INDEX",
        34354 => "PAGE_COMPRESSED",
        37401 => "PAGE_COMPRESSED_ENCRYPTED",
        _ => "OTHER",
    }
}

/// Dense index for the page-type summary (see [`TYPE_NAMES`]).
pub const TYPE_SLOTS: usize = 26;
pub const TYPE_NAMES: [&str; TYPE_SLOTS] = [
    "ALLOCATED",
    "1",
    "UNDO_LOG",
    "INODE",
    "IBUF_FREE_LIST",
    "IBUF_BITMAP",
    "SYS",
    "TRX_SYS",
    "FSP_HDR",
    "XDES",
    "BLOB",
    "ZBLOB",
    "ZBLOB2",
    "UNKNOWN",
    "COMPRESSED",
    "ENCRYPTED",
    "COMPRESSED_AND_ENCRYPTED",
    "ENCRYPTED_RTREE",
    "SDI_BLOB",
    "SDI_ZBLOB",
    "SDI",
    "RTREE",
    "INDEX",
    "PAGE_COMPRESSED",
    "PAGE_COMPRESSED_ENCRYPTED",
    "OTHER",
];

pub fn type_slot(t: u16, full_crc32: bool) -> usize {
    if full_crc32 && t & 0x8000 != 0 {
        return 23;
    }
    match t {
        0..=19 => t as usize,
        17853 => 20,
        17854 => 21,
        17855 => 22,
        34354 => 23,
        37401 => 24,
        _ => 25,
    }
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
