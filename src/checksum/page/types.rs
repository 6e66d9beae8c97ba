//! What a page verdict says: the algorithm that matched, the check that
//! failed, why a page was skipped, and page type names.

use serde::Serialize;

/// What `--algorithm` allows. A named algorithm is strict: pages written by
/// another one fail.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, serde::Deserialize, Default,
)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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
