//! The slow-log parser: bytes in, entries out. Pure (no I/O), streaming
//! over any byte region, allocation-free (entries borrow the input).
//!
//! Entry boundaries are pt-query-digest's: an entry ends at a line ending in
//! `;` that is followed by a line starting with `#` (pt reads records
//! separated by `";\n#"`). That is where every server writes `# Time:` or
//! `# User@Host:`, so a reader dropped anywhere in a file finds the next
//! entry with one `memmem` search (see [`next_boundary`]) — which is what
//! lets [`super::input`] cut a file into ranges for threads. Within an
//! entry, lines starting with `#`, `use ` and `SET timestamp|insert_id|
//! last_insert_id` are its header; the statement is everything from the
//! first other line to the end, however many lines it has and whatever
//! `#` or `;` its strings hold.
//!
//! One deliberate difference from pt: server start-up header lines
//! (`/usr/sbin/mysqld, Version: … started with:`, `Tcp port:`, `Time Id
//! Command Argument`) written mid-file after a restart or `FLUSH LOGS` end
//! the statement before them and the entry after them is read as its own.
//! pt deletes those lines but keeps the two entries glued into one (and for
//! `mariadbd` does not recognise the first line at all), so it counts one
//! entry fewer per restart.

use memchr::memmem;

/// One slow-log entry, borrowing the input.
#[derive(Debug, Default, Clone)]
pub struct Entry<'a> {
    /// `# Time:` as written (any format), if this entry has one.
    pub time: Option<&'a [u8]>,
    /// Seconds since the epoch: `SET timestamp=N` when present (every
    /// server writes it, and MariaDB writes `# Time:` only when the second
    /// changes), else `# Time:` read as UTC.
    pub ts: Option<i64>,
    pub user: Option<&'a [u8]>,
    /// The host name, or the IP when the host is empty (skip-name-resolve), as pt.
    pub host: Option<&'a [u8]>,
    pub thread_id: Option<u64>,
    /// `use db;` in this entry.
    pub db: Option<&'a [u8]>,
    /// MariaDB/Percona `Schema:`.
    pub schema: Option<&'a [u8]>,
    /// Nanoseconds (the log's microseconds, kept exact as integers so sums
    /// do not depend on the order threads add them in).
    pub query_time: Option<u64>,
    pub lock_time: u64,
    pub rows_sent: u64,
    pub rows_examined: u64,
    pub rows_affected: Option<u64>,
    pub bytes_sent: Option<u64>,
    pub qc_hit: bool,
    pub full_scan: bool,
    pub full_join: bool,
    pub tmp_table: bool,
    pub tmp_table_on_disk: bool,
    pub filesort: bool,
    pub filesort_on_disk: bool,
    /// The entry carried a query-plan attribute (MariaDB/Percona
    /// `Full_scan`/`Tmp_table_on_disk`, MySQL 8 `Select_scan`/
    /// `Created_tmp_disk_tables`): without them a "no" cannot be told
    /// from "not logged".
    pub plan: bool,
    /// The statement (without its final `;`), or `administrator command: X`.
    pub query: &'a [u8],
    pub admin: bool,
    /// Bytes of the record (header and statement).
    pub size: usize,
    /// A time or count attribute whose value is not a number that fits
    /// (`Query_time: abc`, `1e400`, a `Rows_sent` past 2⁶⁴): the entry is
    /// malformed, never read as 0.
    pub bad_value: bool,
}

/// What one entry turned out to be.
// Made and consumed one at a time on the stack; boxing the entry would cost
// an allocation per entry for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Parsed<'a> {
    Entry(Entry<'a>),
    /// Something that is not a whole entry (no statement, no `Query_time`,
    /// or an attribute whose value is not a number): counted and skipped.
    /// `size`: its bytes.
    Malformed {
        size: usize,
    },
}

/// The first `needle` in `hay`: memchr for its first byte, then a compare.
/// For the short needles searched once or more per entry, where building a
/// `memmem` searcher per call cost more than the search.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let mut from = 0;
    while let Some(o) = find_byte(&hay[from..], first) {
        let at = from + o;
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The separator pt-query-digest reads records by.
const SEP: &[u8] = b";\n#";

/// `# administrator command: Quit;` follows its entry's `SET timestamp=…;`
/// line: that `;\n#` is not a boundary (pt reads the line as the entry's
/// statement).
const ADMIN: &[u8] = b"# administrator command:";

/// Is the separator found at `sep` an entry boundary?
fn is_boundary(buf: &[u8], sep: usize) -> bool {
    !buf[sep + 2..].starts_with(ADMIN)
}

/// The first entry start at or after `from` in `buf` (an index just past a
/// `;\n` whose next line starts with `#`), or `buf.len()`.
pub fn next_boundary(buf: &[u8], from: usize) -> usize {
    if from == 0 {
        return 0;
    }
    let search = from.saturating_sub(2);
    memmem::find_iter(&buf[search..], SEP)
        .map(|off| search + off)
        .find(|&sep| is_boundary(buf, sep))
        .map_or(buf.len(), |sep| sep + 2)
}

/// How many bytes before new data a stream searches again for a boundary:
/// a separator, and the `# administrator command:` that may follow it,
/// straddling the old and the new.
pub const BOUNDARY_LOOKAHEAD: usize = SEP.len() + ADMIN.len();

/// The last entry start in `buf` (past its first byte), if any: where a
/// stream can cut what it has read so far.
pub fn last_boundary(buf: &[u8]) -> Option<usize> {
    memmem::rfind_iter(buf, SEP)
        .find(|&sep| sep + 2 + ADMIN.len() <= buf.len() && is_boundary(buf, sep))
        .map(|sep| sep + 2)
}

/// Call `f` for every entry in `region`, which starts at an entry boundary
/// (or the file start) and ends at one (`at_eof` false) or at the end of
/// the input (`at_eof` true).
///
/// Each record is first tried by [`Fast::record`], which reads the common
/// shape (header lines, then a one-line statement ending in `;` at the
/// next boundary) in one walk over its lines and finds the boundary as it
/// goes; anything else (a multi-line statement, an administrator command,
/// start-up lines, a value that is not a number, the input's last record)
/// is read by [`chunk`] between the separators `memmem` finds, as before.
/// Both give the same entries (`fast_and_generic_agree`).
pub fn for_each<'a>(region: &'a [u8], at_eof: bool, f: impl FnMut(Parsed<'a>)) {
    walk(region, at_eof, true, f)
}

/// [`for_each`], with the fast path or (`fast` false: the reference the
/// differential test holds it to) without.
fn walk<'a>(region: &'a [u8], at_eof: bool, fast: bool, mut f: impl FnMut(Parsed<'a>)) {
    let finder = memmem::Finder::new(SEP);
    let mut reader = Fast::default();
    let mut start = 0;
    loop {
        if fast {
            if let Some((e, next)) = reader.record(region, start) {
                f(Parsed::Entry(e));
                start = next;
                continue;
            }
        }
        let sep = finder
            .find_iter(&region[start..])
            .map(|o| start + o)
            .find(|&sep| is_boundary(region, sep));
        match sep {
            Some(sep) => {
                chunk(&region[start..sep], false, &mut f);
                start = sep + 2;
            }
            None => {
                if start < region.len() {
                    let mut last = &region[start..];
                    // pt: `s/;\n#?\Z//` (a final `;` without a newline stays, as in pt).
                    if let Some(s) = last.strip_suffix(b";\n") {
                        last = s;
                    }
                    chunk(last, at_eof, &mut f);
                }
                return;
            }
        }
    }
}

/// The first `b` in `h`. Header lines and statements are 10–100 bytes:
/// there, memchr's per-call set-up (~65 instructions a call, 13 calls an
/// entry, callgrind, bench/log/2026-11-29.md) cost more than the search,
/// so the first 128 bytes are searched 16 at a time inline (SSE2, part of
/// every x86-64 CPU) and only a longer search goes to memchr.
#[inline(always)]
pub fn find_byte(h: &[u8], b: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut i = 0;
        // SAFETY: SSE2 is in the x86-64 baseline; each load reads the 16
        // bytes h[i..i + 16], inside `h` by the loop's condition, or the
        // last 16 of `h` when it has them.
        unsafe {
            let n = _mm_set1_epi8(b as i8);
            while i + 16 <= h.len() {
                let v = _mm_loadu_si128(h.as_ptr().add(i).cast::<__m128i>());
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u32;
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += 16;
                if i == 128 {
                    return memchr::memchr(b, &h[i..]).map(|o| i + o);
                }
            }
            // The last 1–15 bytes: the 16 ending with `h`, the ones already
            // looked at shifted out, not a byte loop (up to ~60 instructions
            // on the short lines and values searched here: `is_header`,
            // which runs on every statement, went from 116 to 93 a
            // statement, callgrind, bench/log/2026-11-29.md).
            if i < h.len() && h.len() >= 16 {
                let at = h.len() - 16;
                let v = _mm_loadu_si128(h.as_ptr().add(at).cast::<__m128i>());
                let m = (_mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u32) >> (i - at);
                return (m != 0).then(|| i + m.trailing_zeros() as usize);
            }
        }
        h[i..].iter().position(|&c| c == b).map(|o| i + o)
    }
    #[cfg(not(target_arch = "x86_64"))]
    memchr::memchr(b, h)
}

/// The common record's reader, with what it keeps from one record to the
/// next: the last `# User@Host:` line and what it said (a log's entries
/// mostly repeat the same one).
#[derive(Default)]
struct Fast<'a> {
    user_host: Option<(&'a [u8], Option<UserHost<'a>>)>,
    /// Records in a row it left to [`chunk`], and how many more to leave
    /// without a try: a record it gives up on was walked twice (on a log
    /// of multi-line statements, +6.6 % instructions before this), so
    /// after [`MISSES`] in a row it tries one record in [`BACK_OFF`].
    misses: u32,
    skip: u32,
}

/// See [`Fast::misses`].
const MISSES: u32 = 8;
const BACK_OFF: u32 = 64;

impl<'a> Fast<'a> {
    /// [`Self::read`], unless it has been giving up (see [`Fast::misses`]).
    fn record(&mut self, r: &'a [u8], s: usize) -> Option<(Entry<'a>, usize)> {
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        let got = self.read(r, s);
        if got.is_some() {
            self.misses = 0;
        } else {
            self.misses += 1;
            if self.misses >= MISSES {
                self.misses = 0;
                self.skip = BACK_OFF;
            }
        }
        got
    }

    /// The record starting at `s`, when it is the common shape: `#`, `use`
    /// and `SET` lines, then one statement line ending in `;` followed by
    /// a line starting with `#` (a boundary). Returns the entry as
    /// [`entry`] reads `region[s..sep]`, and where the next record starts;
    /// `None` leaves the record to [`chunk`].
    fn read(&mut self, r: &'a [u8], s: usize) -> Option<(Entry<'a>, usize)> {
        let mut e = Entry::default();
        let mut got_set = false;
        let mut header = false;
        let mut p = s;
        loop {
            let n = p + find_byte(&r[p..], b'\n')?;
            let line = &r[p..n];
            let boundary = line.last() == Some(&b';')
                && r.get(n + 1) == Some(&b'#')
                && !r[n + 1..].starts_with(ADMIN);
            match line.first() {
                Some(b'#') => {
                    if boundary {
                        return None;
                    }
                    header = true;
                    self.meta_line(line, &mut e);
                    if e.admin {
                        return None;
                    }
                }
                _ if boundary && !header => return None,
                _ if line.starts_with(b"use ") => {
                    if boundary {
                        return None;
                    }
                    header = true;
                    if e.db.is_none() {
                        let v = &line[4..];
                        let end = find_byte(v, b';').unwrap_or(v.len());
                        e.db = Some(v[..end].trim_ascii());
                    }
                }
                _ if line.starts_with(b"SET timestamp")
                    || line.starts_with(b"SET insert_id")
                    || line.starts_with(b"SET last_insert_id") =>
                {
                    if boundary {
                        return None;
                    }
                    header = true;
                    if !got_set {
                        got_set = true;
                        set_line(line, &mut e);
                    }
                }
                _ => {
                    // The statement: one line, the record's last.
                    let q = &line[..line.len().saturating_sub(1)];
                    if !boundary || q.is_empty() || e.bad_value || is_header(q) {
                        return None;
                    }
                    e.query = q;
                    e.size = n - 1 - s;
                    return Some((e, n + 1));
                }
            }
            p = n + 1;
        }
    }

    /// [`meta_line`], with the `# User@Host:` line read once while it
    /// repeats.
    fn meta_line(&mut self, line: &'a [u8], e: &mut Entry<'a>) {
        let Some(v) = line.strip_prefix(b"# User@Host:") else {
            if !printed(line, e) {
                meta_line(line, e);
            }
            return;
        };
        if e.user.is_some() {
            return;
        }
        let got = match self.user_host {
            Some((last, got)) if last == v => got,
            _ => {
                let got = user_host(v);
                self.user_host = Some((v, got));
                got
            }
        };
        apply_user_host(got, e);
    }
}

/// A cursor over one header line, for [`printed`].
struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cursor<'a> {
    /// `s` here, stepped over.
    fn lit(&mut self, s: &[u8]) -> Option<()> {
        self.b[self.p..].starts_with(s).then(|| self.p += s.len())
    }
    /// One or more spaces and tabs.
    fn blanks(&mut self) -> Option<()> {
        let from = self.p;
        while matches!(self.b.get(self.p), Some(b' ' | b'\t')) {
            self.p += 1;
        }
        (self.p > from).then_some(())
    }
    /// A value: the bytes to the next blank or the end, not empty and not
    /// ending in `:` (which would make it the next key, not a value).
    fn value(&mut self) -> Option<&'a [u8]> {
        // Values are 1–10 bytes: a byte loop ends sooner than
        // [`blank_at`]'s words.
        let from = self.p;
        while let Some(&c) = self.b.get(self.p) {
            if c == b' ' || c == b'\t' {
                break;
            }
            self.p += 1;
        }
        let v = &self.b[from..self.p];
        (!v.is_empty() && !v.ends_with(b":")).then_some(v)
    }
    /// A count ([`num_u`] of a [`Self::value`]), read as it is walked.
    fn count(&mut self) -> Option<u64> {
        let (n, len) = digits_prefix(&self.b[self.p..])?;
        self.number_end(len).then_some(n)
    }
    /// Seconds in ns ([`seconds_ns`] of a [`Self::value`]), read as walked.
    fn seconds(&mut self) -> Option<u64> {
        // `D.DDDDDD`, as servers print a time under 10 s (`%.6f`), in
        // fixed places: a third of the digit-by-digit walk's cost.
        let b = &self.b[self.p..];
        if b.len() >= 8 && b[1] == b'.' && matches!(b.get(8), None | Some(b' ' | b'\t')) {
            let d = |k: usize| b[k].wrapping_sub(b'0');
            let f = [d(2), d(3), d(4), d(5), d(6), d(7)];
            if d(0) <= 9 && f.iter().all(|&x| x <= 9) {
                let frac = f.iter().fold(0u64, |n, &x| n * 10 + u64::from(x));
                self.p += 8;
                return Some(u64::from(d(0)) * 1_000_000_000 + frac * 1_000);
            }
        }
        let (ns, len) = seconds_prefix(&self.b[self.p..])?;
        self.number_end(len).then_some(ns)
    }
    /// A number of `len` bytes here is the whole value (a blank or the
    /// line's end follows): step over it.
    fn number_end(&mut self, len: usize) -> bool {
        let end = self.p + len;
        let whole = len > 0 && matches!(self.b.get(end), None | Some(b' ' | b'\t'));
        if whole {
            self.p = end;
        }
        whole
    }
    /// The end of the line, after any blanks.
    fn end(&mut self) -> Option<()> {
        while matches!(self.b.get(self.p), Some(b' ' | b'\t')) {
            self.p += 1;
        }
        (self.p == self.b.len()).then_some(())
    }
}

/// The attribute lines servers print with a fixed layout, read by matching
/// it: `# Query_time: T  Lock_time: T  Rows_sent: N  Rows_examined: N`
/// (every server), `# Thread_id: N  Schema: S  QC_hit: W` and
/// `# Rows_affected: N  Bytes_sent: N` (MariaDB). Blanks between pairs
/// may be any run (MySQL prints one before `Rows_sent`). `false`, with
/// nothing set, when the line is anything else or a value is not a number
/// that fits: [`meta_line`] reads it then. For these lines both give the
/// same fields: each value is the run of bytes up to the next blank, as in
/// [`attributes`]; only the key dispatch and the search for each token's
/// end are skipped (about 450 of 585 instructions a line, callgrind).
fn printed<'a>(line: &'a [u8], e: &mut Entry<'a>) -> bool {
    let mut c = Cursor { b: line, p: 0 };
    if line.starts_with(b"# Query_time: ") {
        let mut got = || -> Option<(u64, u64, u64, u64)> {
            c.p = 14;
            let qt = c.seconds()?;
            c.blanks()?;
            c.lit(b"Lock_time: ")?;
            let lt = c.seconds()?;
            c.blanks()?;
            c.lit(b"Rows_sent: ")?;
            let rs = c.count()?;
            c.blanks()?;
            c.lit(b"Rows_examined: ")?;
            let re = c.count()?;
            c.end()?;
            Some((qt, lt, rs, re))
        };
        let Some((qt, lt, rs, re)) = got() else {
            return false;
        };
        e.query_time = Some(qt);
        e.lock_time = lt;
        e.rows_sent = rs;
        e.rows_examined = re;
        return true;
    }
    if line.starts_with(b"# Thread_id: ") {
        let mut got = || {
            c.p = 13;
            let id = c.count()?;
            c.blanks()?;
            c.lit(b"Schema: ")?;
            let schema = c.value()?;
            c.blanks()?;
            c.lit(b"QC_hit: ")?;
            let hit = c.value()?;
            c.end()?;
            Some((id, schema, hit))
        };
        let Some((id, schema, hit)) = got() else {
            return false;
        };
        e.thread_id = Some(id);
        e.schema = Some(schema);
        e.qc_hit = yes(hit);
        return true;
    }
    if line.starts_with(b"# Rows_affected: ") {
        let mut got = || {
            c.p = 17;
            let ra = c.count()?;
            c.blanks()?;
            c.lit(b"Bytes_sent: ")?;
            let bs = c.count()?;
            c.end()?;
            Some((ra, bs))
        };
        let Some((ra, bs)) = got() else {
            return false;
        };
        e.rows_affected = Some(ra);
        e.bytes_sent = Some(bs);
        return true;
    }
    false
}

/// Is this line a server's start-up header (written when the log is opened)?
pub fn is_header(line: &[u8]) -> bool {
    if line.len() >= 9 && line[..9].eq_ignore_ascii_case(b"tcp port:") {
        return true;
    }
    // `Time\s+Id\s+Command` (MariaDB separates them with tabs).
    if let Some(rest) = line.strip_prefix(b"Time") {
        let spaced = |r: &[u8]| r.first().is_some_and(u8::is_ascii_whitespace);
        if spaced(rest) {
            if let Some(r) = rest.trim_ascii_start().strip_prefix(b"Id") {
                return spaced(r) && r.trim_ascii_start().starts_with(b"Command");
            }
        }
        return false;
    }
    match line.first() {
        Some(b'/' | b'A'..=b'Z') => match d_version(line) {
            Some(at) => {
                (line[..at].ends_with(b"mysql") || line[..at].ends_with(b"mariadb"))
                    && (find(line, b"started with:").is_some()
                        || find(line, b"embedded library").is_some())
            }
            None => false,
        },
        _ => false,
    }
}

/// Where `d, Version` starts in `line` (as `find(line, b"d, Version")`),
/// found by its comma: statements hold fewer commas than `d`s, and this
/// runs on every statement's first line.
fn d_version(line: &[u8]) -> Option<usize> {
    let mut from = 1;
    while let Some(o) = find_byte(line.get(from..)?, b',') {
        let at = from + o;
        if line[at - 1] == b'd' && line[at..].starts_with(b", Version") {
            return Some(at - 1);
        }
        from = at + 1;
    }
    None
}

/// Lines of `buf` as (start, line without '\n').
fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= buf.len() {
            return None;
        }
        let start = pos;
        let end = memchr::memchr(b'\n', &buf[pos..]).map_or(buf.len(), |o| pos + o);
        pos = end + 1;
        Some((start, &buf[start..end]))
    })
}

/// One record between separators; more than one entry when start-up
/// header lines sit inside it.
fn chunk<'a>(mut c: &'a [u8], at_eof: bool, f: &mut impl FnMut(Parsed<'a>)) {
    loop {
        if c.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        let (parsed, rest) = entry(c, at_eof);
        f(parsed);
        match rest {
            Some(r) => c = r,
            None => return,
        }
    }
}

/// What pt-query-digest calls an entry whose header has no statement after
/// it (when another entry follows; at the end of a file it is dropped).
pub const NO_QUERY: &[u8] = b"/* No query */";

/// Parse one entry; returns what follows a mid-entry header, if any.
///
/// Counted as pt counts: a header followed by a statement is an entry even
/// without `# Query_time` (its time is 0); a header with `# Query_time` and
/// no statement is an entry with the statement [`NO_QUERY`] unless it is the
/// last thing in the file (a log cut short). Malformed: a statement with no
/// `#` header line before it (a log that starts mid-entry), or a header
/// without `Query_time` and without a statement.
fn entry(c: &[u8], at_eof: bool) -> (Parsed<'_>, Option<&[u8]>) {
    let mut e = Entry::default();
    let mut got_set = false;
    let mut query: Option<&[u8]> = None;
    let mut rest = None;
    let mut no_header_yet = true;
    let mut it = lines(c);
    while let Some((start, line)) = it.next() {
        if line.first() == Some(&b'#') {
            no_header_yet = false;
            meta_line(line, &mut e);
            if e.admin && query.is_none() {
                query = Some(admin_text(line));
            }
            continue;
        }
        if line.starts_with(b"use ") {
            no_header_yet = false;
            if e.db.is_none() {
                let v = &line[4..];
                let end = memchr::memchr(b';', v).unwrap_or(v.len());
                e.db = Some(v[..end].trim_ascii());
            }
            continue;
        }
        if line.starts_with(b"SET timestamp")
            || line.starts_with(b"SET insert_id")
            || line.starts_with(b"SET last_insert_id")
        {
            no_header_yet = false;
            if !got_set {
                got_set = true;
                set_line(line, &mut e);
            }
            continue;
        }
        if is_header(line) {
            // Start-up lines before the entry (file start, or a range cut
            // right after a restart).
            continue;
        }
        if no_header_yet && line.trim_ascii().is_empty() {
            continue;
        }
        // The statement: to the end of the record, or to a start-up header
        // (a restart or FLUSH LOGS between two entries).
        let mut end = c.len();
        for (s, l) in it.by_ref() {
            if is_header(l) {
                end = s;
                let mut after = c.len();
                for (s2, l2) in it.by_ref() {
                    if !is_header(l2) {
                        after = s2;
                        break;
                    }
                }
                rest = Some(&c[after..]);
                break;
            }
        }
        let mut q = &c[start..end];
        if rest.is_some() {
            q = q.strip_suffix(b"\n").unwrap_or(q);
            q = q.strip_suffix(b";").unwrap_or(q);
        }
        if !e.admin {
            query = Some(q);
        }
        break;
    }
    e.size = rest.map_or(c.len(), |r| c.len() - r.len());
    let parsed = match query {
        _ if e.bad_value => Parsed::Malformed { size: e.size },
        Some(q) if !q.is_empty() && !no_header_yet => {
            e.query = q;
            Parsed::Entry(e)
        }
        None if e.query_time.is_some() && !at_eof && rest.is_none() => {
            e.query = NO_QUERY;
            Parsed::Entry(e)
        }
        _ => Parsed::Malformed { size: e.size },
    };
    (parsed, rest)
}

/// `# administrator command: Quit` → `administrator command: Quit`.
fn admin_text(line: &[u8]) -> &[u8] {
    line[1..].trim_ascii_start()
}

/// One `#` line of the entry header.
fn meta_line<'a>(line: &'a [u8], e: &mut Entry<'a>) {
    if let Some(v) = line.strip_prefix(b"# Time:") {
        if e.time.is_none() {
            let v = v.trim_ascii();
            e.time = Some(v);
            if e.ts.is_none() {
                e.ts = parse_time(v);
            }
        }
        return;
    }
    if let Some(v) = line.strip_prefix(b"# User@Host:") {
        if e.user.is_none() {
            apply_user_host(user_host(v), e);
        }
        return;
    }
    if line.starts_with(b"# administrator command:") {
        e.admin = true;
        return;
    }
    // pt: `^# +[A-Z][A-Za-z_]+: \S+`; MySQL 8 also indents nothing, Percona
    // indents InnoDB lines with "#   ".
    let body = line[1..].trim_ascii_start();
    if body.len() == line.len() - 1 || !body.first().is_some_and(u8::is_ascii_uppercase) {
        return;
    }
    attributes(body, e);
}

/// Offset of the first space or tab in `b` (its length without one),
/// eight bytes at a time: tokens of a header line are 5–20 bytes, too
/// short for memchr2's set-up to pay, and a byte loop cost ~6
/// instructions a byte there (callgrind). The classic zero-byte test on
/// `word ^ 0x20…20` and `word ^ 0x09…09`: its lowest flagged byte is
/// exact (a borrow only flags bytes above a true match).
#[inline(always)]
fn blank_at(b: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let mut i = 0;
    while let Some(w) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        let m = zero(w ^ (LO * u64::from(b' '))) | zero(w ^ (LO * u64::from(b'\t')));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
        i += 1;
    }
    i
}

/// `Key: value  Key: value …` pairs: the runs of bytes between spaces and
/// tabs, walked once; a run ending in `:` is a key and the run after it its
/// value, unless that one ends in `:` too (the value is then empty and that
/// run the next key). A value of digits and dots, the common one, ends at
/// the first other byte without a search for its blank.
fn attributes<'a>(b: &'a [u8], e: &mut Entry<'a>) {
    let skip = |mut i: usize| {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        i
    };
    let mut i = skip(0);
    while i < b.len() {
        let j = i + blank_at(&b[i..]);
        if b[j - 1] != b':' {
            i = skip(j);
            continue;
        }
        let key = key_of(&b[i..j - 1]);
        let k = skip(j);
        let mut l = k;
        while l < b.len() && (b[l].is_ascii_digit() || b[l] == b'.') {
            l += 1;
        }
        let next = if l > k && (l == b.len() || b[l] == b' ' || b[l] == b'\t') {
            set_attribute(key, &b[k..l], e);
            l
        } else if k == b.len() {
            set_attribute(key, b"", e);
            k
        } else {
            let l = k + blank_at(&b[k..]);
            if b[l - 1] == b':' {
                set_attribute(key, b"", e);
                k
            } else {
                set_attribute(key, &b[k..l], e);
                l
            }
        };
        i = skip(next);
    }
}

/// `1.000215` seconds → nanoseconds (at most 9 decimals are kept): digits,
/// at most one `.`, digits; anything else, no digit at all, or a value
/// past 2⁶⁴ ns is `None`.
pub fn seconds_ns(v: &[u8]) -> Option<u64> {
    seconds_prefix(v)
        .filter(|&(_, len)| len == v.len())
        .map(|(ns, _)| ns)
}

/// The seconds [`seconds_ns`] reads at the start of `v`, and their length:
/// one pass, which [`Cursor::seconds`] ends at the next blank.
fn seconds_prefix(v: &[u8]) -> Option<(u64, usize)> {
    static SCALE: [u64; 10] = [
        1_000_000_000,
        100_000_000,
        10_000_000,
        1_000_000,
        100_000,
        10_000,
        1_000,
        100,
        10,
        1,
    ];
    let (whole, mut i) = digits_prefix(v)?;
    let int_len = i;
    let (mut ns, mut frac_len) = (0u64, 0usize);
    if v.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c) = v.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if frac_len < 9 {
                ns = ns * 10 + u64::from(d);
            }
            frac_len += 1;
            i += 1;
        }
    }
    if int_len == 0 && frac_len == 0 {
        return None;
    }
    let ns = ns * SCALE[frac_len.min(9)];
    Some((whole.checked_mul(1_000_000_000)?.checked_add(ns)?, i))
}

/// The decimal digits at the start of `v` (maybe none: 0) and how many;
/// `None` past 2⁶⁴.
fn digits_prefix(v: &[u8]) -> Option<(u64, usize)> {
    let mut n = 0u64;
    let mut i = 0;
    while let Some(&c) = v.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
        i += 1;
    }
    Some((n, i))
}

/// A decimal count; `None` when it is not one or does not fit in 64 bits.
fn num_u(v: &[u8]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    // One pass: a byte that is not a digit, or a value past 2⁶⁴, is None.
    let mut n = 0u64;
    for &c in v {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// `v`, or `None` marking the entry malformed: an attribute the digest
/// sums must be a number, never read as 0.
fn valid<T>(v: Option<T>, e: &mut Entry<'_>) -> Option<T> {
    if v.is_none() {
        e.bad_value = true;
    }
    v
}

fn yes(v: &[u8]) -> bool {
    v.eq_ignore_ascii_case(b"yes") || num_u(v).is_some_and(|n| n > 0)
}

/// The attribute names the digest reads (pt's, MariaDB's, Percona's and
/// MySQL 8's `log_slow_extra`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    QueryTime,
    LockTime,
    RowsSent,
    RowsExamined,
    RowsAffected,
    BytesSent,
    ThreadId,
    Schema,
    QcHit,
    FullScan,
    FullJoin,
    TmpTable,
    TmpTableOnDisk,
    Filesort,
    FilesortOnDisk,
    CreatedTmpDiskTables,
    CreatedTmpTables,
    SelectScan,
    SortScanOrRange,
    Other,
}

/// A name's [`Key`], by its length first (one compare where a `match` on
/// the names tried them in turn).
fn key_of(k: &[u8]) -> Key {
    use Key::*;
    match k.len() {
        6 if k == b"Schema" => Schema,
        6 if k == b"QC_hit" || k == b"QC_Hit" => QcHit,
        8 if k == b"Filesort" => Filesort,
        9 if k == b"Lock_time" => LockTime,
        9 if k == b"Rows_sent" => RowsSent,
        9 if k == b"Thread_id" => ThreadId,
        9 if k == b"Full_scan" => FullScan,
        9 if k == b"Full_join" => FullJoin,
        9 if k == b"Tmp_table" => TmpTable,
        9 if k == b"Sort_scan" => SortScanOrRange,
        10 if k == b"Query_time" => QueryTime,
        10 if k == b"Bytes_sent" => BytesSent,
        10 if k == b"Sort_range" => SortScanOrRange,
        11 if k == b"Select_scan" => SelectScan,
        13 if k == b"Rows_examined" => RowsExamined,
        13 if k == b"Rows_affected" => RowsAffected,
        16 if k == b"Filesort_on_disk" => FilesortOnDisk,
        17 if k == b"Tmp_table_on_disk" => TmpTableOnDisk,
        18 if k == b"Created_tmp_tables" => CreatedTmpTables,
        23 if k == b"Created_tmp_disk_tables" => CreatedTmpDiskTables,
        _ => Other,
    }
}

fn set_attribute<'a>(key: Key, v: &'a [u8], e: &mut Entry<'a>) {
    use Key::*;
    match key {
        QueryTime => e.query_time = valid(seconds_ns(v), e),
        LockTime => e.lock_time = valid(seconds_ns(v), e).unwrap_or(0),
        RowsSent => e.rows_sent = valid(num_u(v), e).unwrap_or(0),
        RowsExamined => e.rows_examined = valid(num_u(v), e).unwrap_or(0),
        RowsAffected => e.rows_affected = valid(num_u(v), e),
        BytesSent => e.bytes_sent = valid(num_u(v), e),
        ThreadId => e.thread_id = num_u(v),
        Schema if !v.is_empty() => e.schema = Some(v),
        QcHit => e.qc_hit = yes(v),
        FullScan => {
            e.plan = true;
            e.full_scan = yes(v)
        }
        FullJoin => e.full_join = yes(v),
        TmpTable => e.tmp_table = yes(v),
        TmpTableOnDisk => {
            e.plan = true;
            e.tmp_table_on_disk = yes(v)
        }
        Filesort => e.filesort = yes(v),
        FilesortOnDisk => e.filesort_on_disk = yes(v),
        // MySQL 8 log_slow_extra names.
        CreatedTmpDiskTables => {
            e.plan = true;
            e.tmp_table_on_disk |= yes(v)
        }
        CreatedTmpTables => e.tmp_table |= yes(v),
        SelectScan => {
            e.plan = true;
            e.full_scan |= yes(v)
        }
        SortScanOrRange => e.filesort |= yes(v),
        Schema | Other => {}
    }
}

/// What a `# User@Host:` line says: user, host (or IP) and `Id:`.
type UserHost<'a> = (&'a [u8], &'a [u8], Option<u64>);

/// `# User@Host: user[user] @ host [ip]  Id: N` (pt's `$slow_log_uh_line`);
/// `None` when it is not that shape.
fn user_host(v: &[u8]) -> Option<UserHost<'_>> {
    let v = v.strip_prefix(b" ").unwrap_or(v);
    let user_end = if v.first() == Some(&b'[') {
        find_byte(v, b']')? + 1
    } else {
        match find_byte(v, b'[') {
            Some(i) if i > 0 => i,
            _ => return None,
        }
    };
    let user = &v[..user_end];
    let at = find(&v[user_end..], b"@ ").map(|o| user_end + o + 2)?;
    let host_end = v[at..]
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .map_or(v.len(), |o| at + o);
    let host = &v[at..host_end];
    if !v[host_end..].starts_with(b" [") {
        return None;
    }
    let close = memchr::memrchr(b']', v).filter(|&c| c > host_end + 1)?;
    let ip = &v[host_end + 2..close];
    let id = find(&v[close..], b"Id:").and_then(|id| {
        let t = v[close + id + 3..].trim_ascii_start();
        let n = t.iter().take_while(|b| b.is_ascii_digit()).count();
        num_u(&t[..n])
    });
    Some((user, if host.is_empty() { ip } else { host }, id))
}

fn apply_user_host<'a>(got: Option<UserHost<'a>>, e: &mut Entry<'a>) {
    if let Some((user, host, id)) = got {
        e.user = Some(user);
        e.host = Some(host);
        e.thread_id = id.or(e.thread_id);
    }
}

/// `SET timestamp=1732550401;` (the first SET line; pt reads only that one).
fn set_line(line: &[u8], e: &mut Entry<'_>) {
    // `SET timestamp=N;` as servers print it: the digits read in one pass.
    if let Some(v) = line.strip_prefix(b"SET timestamp=") {
        let mut t = 0u64;
        let mut n = 0;
        for &c in v {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            match t.checked_mul(10).and_then(|t| t.checked_add(u64::from(d))) {
                Some(x) => t = x,
                None => return set_line_generic(line, e),
            }
            n += 1;
        }
        if n > 0 {
            e.ts = Some(t as i64);
        }
        return;
    }
    set_line_generic(line, e)
}

fn set_line_generic(line: &[u8], e: &mut Entry<'_>) {
    if let Some(at) = find(line, b"timestamp=") {
        let v = &line[at + 10..];
        let n = v.iter().take_while(|b| b.is_ascii_digit()).count();
        if let Some(t) = num_u(&v[..n]) {
            e.ts = Some(t as i64);
        }
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm);
/// written here because no date crate is a dependency and this is 8 lines.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Epoch seconds (as UTC) of any epoch day/time; `None` when out of range.
pub fn epoch(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Option<i64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + s))
}

/// `# Time:` values: `241125 16:00:01`, `241125  6:00:01` (MySQL ≤ 5.6,
/// MariaDB) and `2024-11-25T16:00:03.123456Z` or `…+01:00` (MySQL ≥ 5.7,
/// the offset ignored: the value is read as UTC).
pub fn parse_time(v: &[u8]) -> Option<i64> {
    let digits = |s: &[u8]| -> Option<u32> {
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(s.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
    };
    if v.len() >= 19 && v[4] == b'-' && v[7] == b'-' && (v[10] == b'T' || v[10] == b' ') {
        return epoch(
            i64::from(digits(&v[0..4])?),
            digits(&v[5..7])?,
            digits(&v[8..10])?,
            digits(&v[11..13])?,
            digits(&v[14..16])?,
            digits(&v[17..19])?,
        );
    }
    if v.len() >= 6 && v.len() <= 16 {
        let date = &v[..6];
        let time = v[6..].trim_ascii();
        let mut parts = time.split(|&b| b == b':');
        let h = digits(parts.next()?.trim_ascii())?;
        let mi = digits(parts.next()?)?;
        let s = digits(parts.next()?)?;
        return epoch(
            2000 + i64::from(digits(&date[0..2])?),
            digits(&date[2..4])?,
            digits(&date[4..6])?,
            h,
            mi,
            s,
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> (Vec<String>, usize) {
        let mut q = Vec::new();
        let mut bad = 0;
        for_each(s.as_bytes(), true, |p| match p {
            Parsed::Entry(e) => q.push(String::from_utf8_lossy(e.query).into_owned()),
            Parsed::Malformed { .. } => bad += 1,
        });
        (q, bad)
    }

    /// Every entry `for_each` reads, as text (Debug), fast path or not.
    fn all(region: &[u8], at_eof: bool, generic: bool) -> Vec<String> {
        let mut out = Vec::new();
        let push = |p: Parsed<'_>| out.push(format!("{p:?}"));
        walk(region, at_eof, !generic, push);
        out
    }

    #[test]
    fn fast_and_generic_agree() {
        let mut logs: Vec<Vec<u8>> = [
            &include_bytes!("../../tests/fixtures/slowlog/edge.log")[..],
            include_bytes!("../../tests/fixtures/slowlog/mariadb.log"),
            include_bytes!("../../tests/fixtures/slowlog/mysql56.log"),
            include_bytes!("../../tests/fixtures/slowlog/mysql57.log"),
            include_bytes!("../../tests/fixtures/slowlog/mysql80.log"),
            include_bytes!("../../tests/fixtures/slowlog/percona.log"),
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect();
        // The shapes the fast path takes and the ones it must leave:
        // boundaries after header lines, `;` inside strings, blank and
        // start-up lines, a repeated and a changed User@Host, `use` and SET.
        logs.push(
            b"# User@Host: a[a] @ h [1.2.3.4]  Id: 7\n# Query_time: 0.5  Lock_time: 0  Rows_sent: 1  Rows_examined: 2\nuse d1;\nSET timestamp=10;\nSELECT 1;\n\
# User@Host: a[a] @ h [1.2.3.4]  Id: 7\n# Query_time: 1.5  Lock_time: 0  Rows_sent: 1  Rows_examined: 2\nSET timestamp=11;\nSELECT ';\n#';\n\
# User@Host: b[b] @  [5.6.7.8]\n# Thread_id: 9  Schema:   QC_hit: No\n# Query_time: x  Lock_time: 0\nSELECT 2;\n\
# Time: 241125 16:00:01\n# Query_time: 1\nSET timestamp=12;\n;\n# Query_time: 2\n\nSELECT 3;\n\
# Query_time: 3\nuse x;\n# Query_time: 4\nSET timestamp=1;\n# administrator command: Quit;\n\
# Query_time: 5\nTcp port: 3306  Unix socket: /s;\n# Query_time: 6\nSELECT\n 7;\n# Query_time: 7;\n\
# Query_time: 8\nSELECT 8;\n"
                .to_vec(),
        );
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        // Logs as servers write them at long_query_time = 0 (MariaDB's
        // three attribute lines; MySQL's one, `Id:` and one blank before
        // `Rows_sent`), every value varied, times of 1–12 digits.
        for mysql in [false, true] {
            let mut log = String::new();
            for k in 0..400 {
                let t = format!(
                    "{}.{:0w$}",
                    rnd(3) * rnd(12),
                    rnd(1_000_000),
                    w = 1 + rnd(9)
                );
                let (rs, re, tid) = (rnd(12), rnd(12), 1 + rnd(4));
                if mysql {
                    log += &format!(
                        "# Time: 2024-11-25T16:00:{:02}.{:06}Z\n# User@Host: u{tid}[u{tid}] @ localhost []  Id:{:>6}\n# Query_time: {t}  Lock_time: 0.{:06} Rows_sent: {rs}  Rows_examined: {re}\n",
                        k % 60,
                        rnd(999_999),
                        tid,
                        rnd(99),
                    );
                } else {
                    log += &format!(
                        "# User@Host: u{tid}[u{tid}] @ localhost []\n# Thread_id: {tid}  Schema: {}  QC_hit: {}\n# Query_time: {t}  Lock_time: 0.{:06}  Rows_sent: {rs}  Rows_examined: {re}\n# Rows_affected: {}  Bytes_sent: {}\n",
                        ["db", "sbtest"][rnd(2)],
                        ["No", "Yes"][rnd(2)],
                        rnd(99),
                        rnd(3),
                        rnd(5000),
                    );
                }
                log += &format!(
                    "SET timestamp={};\nSELECT c FROM t{} WHERE id={};\n",
                    1_700_000_000 + k,
                    rnd(4),
                    rnd(10_000)
                );
            }
            logs.push(log.into_bytes());
        }
        // Seeded mutations of each: bytes changed, dropped and doubled,
        // among the ones the two paths branch on.
        let alphabet = b"#;\n :.0123456789 []@TSau\t/";
        let base = logs.clone();
        for l in &base {
            for _ in 0..40 {
                let mut m = l.clone();
                for _ in 0..1 + rnd(6) {
                    let at = rnd(m.len().max(1));
                    match rnd(3) {
                        0 if at < m.len() => m[at] = alphabet[rnd(alphabet.len())],
                        1 if at < m.len() => {
                            m.remove(at);
                        }
                        _ => m.insert(at.min(m.len()), alphabet[rnd(alphabet.len())]),
                    }
                }
                logs.push(m);
            }
        }
        let mut fast_records = 0;
        for l in &logs {
            for at_eof in [true, false] {
                let (f, g) = (all(l, at_eof, false), all(l, at_eof, true));
                assert_eq!(f, g, "{:?}", String::from_utf8_lossy(l));
            }
            // Cut at a boundary in the middle, as threads and streams do.
            let cut = next_boundary(l, l.len() / 2);
            for (r, eof) in [(&l[..cut], false), (&l[cut..], true)] {
                assert_eq!(all(r, eof, false), all(r, eof, true));
            }
            let mut fast = Fast::default();
            let mut s = 0;
            while s < l.len() {
                s = match fast.read(l, s) {
                    Some((_, next)) => {
                        fast_records += 1;
                        next
                    }
                    None => next_boundary(l, s + 1),
                };
            }
        }
        // The fast path is taken, not only fallen back from.
        assert!(fast_records > 100, "{fast_records}");
    }

    #[test]
    fn blank_at_finds_the_first_space_or_tab_as_a_byte_loop_does() {
        let slow = |b: &[u8]| {
            b.iter()
                .position(|&c| c == b' ' || c == b'\t')
                .unwrap_or(b.len())
        };
        let mut cases: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"Query_time:".to_vec(),
            b"Query_time: 1".to_vec(),
            b"0123456789abcdef\t".to_vec(),
            b"\x21\x21\x21\x21\x21\x21\x21 ".to_vec(),
            b"\x20".to_vec(),
            b"\x08\x09".to_vec(),
            b"\xa0\x89\x80\x00\x01\x21\x1f\x0a\x0b\x08\xff\x09".to_vec(),
        ];
        // Every position of a blank in a 17-byte token, both blanks, and
        // bytes next to them in value (0x1f, 0x21, 0x08, 0x0a, 0xa0).
        for at in 0..17 {
            for blank in [b' ', b'\t'] {
                let mut v: Vec<u8> = (0..17)
                    .map(|k| [0x1f, 0x21, 0x08, 0x0a, 0xa0, b'x'][k % 6])
                    .collect();
                v[at] = blank;
                cases.push(v);
            }
        }
        for c in &cases {
            assert_eq!(blank_at(c), slow(c), "{c:?}");
        }
    }

    #[test]
    fn start_up_lines_are_headers_and_statements_are_not() {
        for h in [
            "Tcp port: 0  Unix socket: /tmp/sb/mysql.sock",
            "tcp PORT: 3306  Unix socket: /run/mysqld/mysqld.sock",
            "TCP port:",
            "Time                 Id Command    Argument",
            "Time\t\t    Id Command\tArgument",
            "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-0+deb12u1-log (Debian 12). started with:",
            "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:",
            "/opt/mysql/bin/mysqld, Version: 5.7.44 (MySQL Community Server (GPL)). embedded library",
        ] {
            assert!(is_header(h.as_bytes()), "{h}");
        }
        for q in [
            "",
            "t",
            "T",
            "tcp port",
            "Timeout 3",
            "Time Id",
            "SELECT c FROM sbtest1 WHERE id=5",
            "INSERT INTO t (id, k, c) VALUES (1, 2, 'd, Version started with:')",
            "/usr/sbin/mysqld, Version: 8.0.36",
            "select 'tcp port:'",
        ] {
            assert!(!is_header(q.as_bytes()), "{q}");
        }
    }

    #[test]
    fn find_byte_is_position() {
        // Every length around the 16-byte steps, the 128-byte hand-over to
        // memchr and the overlapping last load; the byte at each place,
        // twice, and absent.
        for len in 0..300 {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 23) as u8).collect();
            assert_eq!(find_byte(&base, b'#'), None, "len {len}");
            for at in 0..len {
                let mut h = base.clone();
                h[at] = b'#';
                assert_eq!(find_byte(&h, b'#'), Some(at), "len {len} at {at}");
                if at + 5 < len {
                    h[at + 5] = b'#';
                    assert_eq!(find_byte(&h, b'#'), Some(at), "len {len} at {at}, twice");
                }
                // A match before the start of a sub-slice is not seen.
                if at + 1 < len {
                    assert_eq!(
                        find_byte(&h[at + 1..], b'#').map(|o| o + at + 1),
                        h[at + 1..]
                            .iter()
                            .position(|&c| c == b'#')
                            .map(|o| o + at + 1),
                        "len {len} after {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn d_version_is_find_d_version() {
        for l in [
            &b"/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian 12). started with:"[..],
            b"d, Version",
            b", Version",
            b"SELECT a, b FROM t WHERE d, Version",
            b"SELECT d,, Version, d, Version",
            b"INSERT INTO t (id, k) VALUES (1, 2)",
            b"",
            b",",
        ] {
            assert_eq!(d_version(l), find(l, b"d, Version"), "{l:?}");
        }
    }

    #[test]
    fn seconds() {
        assert_eq!(seconds_ns(b"0.000215"), Some(215_000));
        assert_eq!(seconds_ns(b"12"), Some(12_000_000_000));
        assert_eq!(seconds_ns(b"1.5"), Some(1_500_000_000));
        assert_eq!(seconds_ns(b"x"), None);
        assert_eq!(seconds_ns(b"0.000623"), Some(623_000));
        assert_eq!(seconds_ns(b".5"), Some(500_000_000));
        assert_eq!(seconds_ns(b"5."), Some(5_000_000_000));
        assert_eq!(seconds_ns(b"0.1234567891234"), Some(123_456_789));
        assert_eq!(seconds_ns(b"18446744073.709551615"), Some(u64::MAX));
        for bad in [
            &b"."[..],
            b"",
            b"1.5.3",
            b"1e400",
            b"0.12345678912x",
            b"18446744073.709551616",
            b"-1",
            b"1 ",
        ] {
            assert_eq!(seconds_ns(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn values_that_are_not_numbers_make_the_entry_malformed() {
        let entry = |attrs: &str| {
            format!("# Time: 241125 16:00:01\n# User@Host: a[a] @ h []\n# {attrs}\nSELECT 1;\n")
        };
        let ok = "Query_time: 1.5  Lock_time: 0  Rows_sent: 18446744073709551615  Rows_examined: 0";
        assert_eq!(parse(&entry(ok)), (vec!["SELECT 1".into()], 0));
        for bad in [
            "Query_time: abc  Lock_time: 0  Rows_sent: 0  Rows_examined: 0",
            "Query_time: 1e400  Lock_time: 0  Rows_sent: 0  Rows_examined: 0",
            "Query_time: 1  Lock_time: 0  Rows_sent: 18446744073709551616  Rows_examined: 0",
            "Query_time: 1  Lock_time: 0  Rows_sent: 0  Rows_examined: -3",
            "Query_time: 1  Lock_time: x  Rows_sent: 0  Rows_examined: 0",
            "Query_time: 99999999999999999999  Lock_time: 0  Rows_sent: 0  Rows_examined: 0",
        ] {
            assert_eq!(parse(&entry(bad)), (vec![], 1), "{bad}");
        }
        assert_eq!(num_u(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(num_u(b"018446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time(b"241125 16:00:01"), Some(1_732_550_401));
        assert_eq!(parse_time(b"241125  6:00:01"), Some(1_732_514_401));
        assert_eq!(
            parse_time(b"2024-11-25T16:00:01.123456Z"),
            Some(1_732_550_401)
        );
    }

    #[test]
    fn restart_header_splits_entries() {
        let log = "# Time: 241125 16:00:01\n# User@Host: a[a] @ h []\n# Query_time: 1  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 1;\n/usr/sbin/mysqld, Version: 8.0.36 (MySQL). started with:\nTcp port: 3306  Unix socket: /tmp/s\nTime                 Id Command    Argument\n# Time: 241125 16:00:02\n# User@Host: a[a] @ h []\n# Query_time: 2  Lock_time: 0  Rows_sent: 0  Rows_examined: 0\nSELECT 2;\n";
        assert_eq!(parse(log), (vec!["SELECT 1".into(), "SELECT 2".into()], 0));
    }

    #[test]
    fn boundary_resync() {
        let log = b"# Q\nSELECT 1;\n# Time: x\nSELECT 2;\n# administrator command: Quit;\n";
        assert_eq!(next_boundary(log, 3), 14);
        assert_eq!(next_boundary(log, 14), 14);
        assert_eq!(next_boundary(log, 15), log.len());
        let (q, bad) = {
            let mut q = Vec::new();
            let mut bad = 0;
            for_each(
                b"# Query_time: 1\nSET timestamp=1;\n# administrator command: Quit;\n",
                true,
                |p| match p {
                    Parsed::Entry(e) => q.push(e.query.to_vec()),
                    Parsed::Malformed { .. } => bad += 1,
                },
            );
            (q, bad)
        };
        assert_eq!((q, bad), (vec![b"administrator command: Quit".to_vec()], 0));
    }
}
