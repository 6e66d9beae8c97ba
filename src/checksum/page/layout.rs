//! Page geometry and identity from page 0, and the extent descriptors.

use super::*;
use serde::Serialize;

/// Page geometry and identity, from page 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// `FIL_PAGE_TYPE_FSP_HDR`: the type of page 0 since MySQL 5.1 (earlier
/// servers left 0, `FIL_PAGE_TYPE_ALLOCATED`, on page 0).
const FIL_PAGE_TYPE_FSP_HDR: u16 = 8;
/// `FSP_SPACE_ID` and `FSP_SIZE` in the FSP header (at 38) of page 0.
const FSP_SPACE_ID_OFFSET: usize = 38;
const FSP_SIZE_OFFSET: usize = 46;

/// Why `head` is not page 0 of an InnoDB tablespace, if it is not: its own
/// page number must be 0, its type FSP_HDR (or 0 from servers before 5.1),
/// the space id in the FIL header equal to the FSP header's, and the size
/// in pages not zero. A text file or any other data fails at least one of
/// these, so its "pages" are never reported as corrupt InnoDB pages. (The
/// flags alone are no test: most 4-byte values are valid flags.)
pub fn not_page0(head: &[u8]) -> Option<String> {
    if head.len() < MIN_PAGE {
        return Some(format!(
            "only {} bytes, shorter than the smallest page (1024)",
            head.len()
        ));
    }
    let page_no = u32_at(head, 4);
    let ptype = u16_at(head, 24);
    if page_no != 0 {
        return Some(format!("its first page says it is page {page_no}, not 0"));
    }
    if ptype != FIL_PAGE_TYPE_FSP_HDR && ptype != 0 {
        return Some(format!(
            "its first page has type {ptype} ({}), not FSP_HDR",
            page_type_name(ptype, false)
        ));
    }
    let (a, b) = (u32_at(head, 34), u32_at(head, FSP_SPACE_ID_OFFSET));
    if a != b {
        return Some(format!("its first page names two space ids ({a} and {b})"));
    }
    if u32_at(head, FSP_SIZE_OFFSET) == 0 {
        return Some("its first page gives a size of 0 pages".into());
    }
    None
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

    /// Why `--algorithm mode` cannot verify a file of this format (from
    /// page 0's FSP flags), or `None` when it can. A full_crc32 file
    /// (MariaDB 10.5+) carries only full_crc32 checksums, and a classic or
    /// compressed file never does: checking one with the other's
    /// algorithm would call every written page bad.
    pub fn refuses(&self, mode: Mode) -> Option<String> {
        let named = match mode {
            Mode::Auto => return None,
            Mode::FullCrc32 if self.full_crc32 => return None,
            Mode::FullCrc32 => "full_crc32",
            _ if !self.full_crc32 => return None,
            Mode::Crc32 => "crc32",
            Mode::Innodb => "innodb",
            Mode::None => "none",
        };
        let fits = if self.full_crc32 {
            "full_crc32"
        } else {
            "crc32, innodb or none"
        };
        Some(format!(
            "--algorithm {named} does not fit this file: page 0's FSP flags (0x{:x}) say it is in {} format, whose pages carry {fits} checksums; give --algorithm {} or leave --algorithm out (auto)",
            self.flags,
            self.format_name(),
            if self.full_crc32 { "full_crc32" } else { "crc32" },
        ))
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
