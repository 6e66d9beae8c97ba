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
    while let Some(o) = memchr::memchr(first, &hay[from..]) {
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
pub fn for_each<'a>(region: &'a [u8], at_eof: bool, mut f: impl FnMut(Parsed<'a>)) {
    let finder = memmem::Finder::new(SEP);
    let mut start = 0;
    for sep in finder.find_iter(region) {
        if !is_boundary(region, sep) {
            continue;
        }
        chunk(&region[start..sep], false, &mut f);
        start = sep + 2;
    }
    if start < region.len() {
        let mut last = &region[start..];
        // pt: `s/;\n#?\Z//` (a final `;` without a newline stays, as in pt).
        if let Some(s) = last.strip_suffix(b";\n") {
            last = s;
        }
        chunk(last, at_eof, &mut f);
    }
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
    while let Some(o) = memchr::memchr(b',', line.get(from..)?) {
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
            user_host(v, e);
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

/// The runs of bytes between spaces and tabs of `b`, in order: what
/// `split(' ' | '\t')` without its empty pieces gives, walked by hand so
/// that a token's end is found eight bytes at a time ([`blank_at`]; the
/// tokens went from 89 to 53 M instructions on 16 MB, callgrind,
/// bench/log/2026-11-29.md).
struct Tokens<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let b = self.b;
        let mut i = self.i;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i == b.len() {
            self.i = i;
            return None;
        }
        let start = i;
        i += blank_at(&b[i..]);
        self.i = i;
        Some(&b[start..i])
    }
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

/// `Key: value  Key: value …` pairs.
fn attributes<'a>(body: &'a [u8], e: &mut Entry<'a>) {
    let mut toks = Tokens { b: body, i: 0 };
    let mut next = toks.next();
    while let Some(t) = next {
        next = toks.next();
        let Some(key) = t.strip_suffix(b":") else {
            continue;
        };
        // `Schema:` is empty when no database is selected (MariaDB).
        let value = match next {
            Some(v) if !v.ends_with(b":") => {
                next = toks.next();
                v
            }
            _ => b"",
        };
        set_attribute(key, value, e);
    }
}

/// `1.000215` seconds → nanoseconds (at most 9 decimals are kept).
pub fn seconds_ns(v: &[u8]) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', v) {
        Some(i) => (&v[..i], &v[i + 1..]),
        None => (v, &b""[..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let whole = if int.is_empty() { 0 } else { num_u(int)? };
    let mut ns = 0u64;
    for k in 0..9 {
        let d = match frac.get(k) {
            Some(c) if c.is_ascii_digit() => u64::from(c - b'0'),
            Some(_) => return None,
            None => 0,
        };
        ns = ns * 10 + d;
    }
    if frac.len() > 9 && !frac[9..].iter().all(u8::is_ascii_digit) {
        return None;
    }
    whole.checked_mul(1_000_000_000)?.checked_add(ns)
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

fn set_attribute<'a>(key: &[u8], v: &'a [u8], e: &mut Entry<'a>) {
    match key {
        b"Query_time" => e.query_time = valid(seconds_ns(v), e),
        b"Lock_time" => e.lock_time = valid(seconds_ns(v), e).unwrap_or(0),
        b"Rows_sent" => e.rows_sent = valid(num_u(v), e).unwrap_or(0),
        b"Rows_examined" => e.rows_examined = valid(num_u(v), e).unwrap_or(0),
        b"Rows_affected" => e.rows_affected = valid(num_u(v), e),
        b"Bytes_sent" => e.bytes_sent = valid(num_u(v), e),
        b"Thread_id" => e.thread_id = num_u(v),
        b"Schema" if !v.is_empty() => e.schema = Some(v),
        b"QC_hit" | b"QC_Hit" => e.qc_hit = yes(v),
        b"Full_scan" => {
            e.plan = true;
            e.full_scan = yes(v)
        }
        b"Full_join" => e.full_join = yes(v),
        b"Tmp_table" => e.tmp_table = yes(v),
        b"Tmp_table_on_disk" => {
            e.plan = true;
            e.tmp_table_on_disk = yes(v)
        }
        b"Filesort" => e.filesort = yes(v),
        b"Filesort_on_disk" => e.filesort_on_disk = yes(v),
        // MySQL 8 log_slow_extra names.
        b"Created_tmp_disk_tables" => {
            e.plan = true;
            e.tmp_table_on_disk |= yes(v)
        }
        b"Created_tmp_tables" => e.tmp_table |= yes(v),
        b"Select_scan" => {
            e.plan = true;
            e.full_scan |= yes(v)
        }
        b"Sort_scan" | b"Sort_range" => e.filesort |= yes(v),
        _ => {}
    }
}

/// `# User@Host: user[user] @ host [ip]  Id: N` (pt's `$slow_log_uh_line`).
fn user_host<'a>(v: &'a [u8], e: &mut Entry<'a>) {
    let v = v.strip_prefix(b" ").unwrap_or(v);
    let user_end = if v.first() == Some(&b'[') {
        match memchr::memchr(b']', v) {
            Some(i) => i + 1,
            None => return,
        }
    } else {
        match memchr::memchr(b'[', v) {
            Some(i) if i > 0 => i,
            _ => return,
        }
    };
    let user = &v[..user_end];
    let Some(at) = find(&v[user_end..], b"@ ").map(|o| user_end + o + 2) else {
        return;
    };
    let host_end = v[at..]
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .map_or(v.len(), |o| at + o);
    let host = &v[at..host_end];
    if !v[host_end..].starts_with(b" [") {
        return;
    }
    let Some(close) = memchr::memrchr(b']', v).filter(|&c| c > host_end + 1) else {
        return;
    };
    let ip = &v[host_end + 2..close];
    e.user = Some(user);
    e.host = Some(if host.is_empty() { ip } else { host });
    if let Some(id) = find(&v[close..], b"Id:") {
        let t = v[close + id + 3..].trim_ascii_start();
        let n = t.iter().take_while(|b| b.is_ascii_digit()).count();
        e.thread_id = num_u(&t[..n]).or(e.thread_id);
    }
}

/// `SET timestamp=1732550401;` (the first SET line; pt reads only that one).
fn set_line(line: &[u8], e: &mut Entry<'_>) {
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
