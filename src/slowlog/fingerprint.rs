//! Query fingerprints the way pt-query-digest makes them.
//!
//! pt-query-digest's `QueryRewriter::fingerprint` is a chain of Perl
//! regular expressions applied in a fixed order (see `perldoc
//! pt-query-digest`, section FINGERPRINTS, and the `fingerprint` sub of
//! its `QueryRewriter` package). Classes only agree with pt's if every step
//! keeps its exact quirks: `[0-9+-][0-9a-f.xb+-]*` runs *before* lower
//! casing (so `0xFF` becomes `?ff`), `--` starts a comment even without a
//! space, `ASC` is dropped after `ORDER BY`, only the first `LIMIT` is
//! rewritten, and `IN (…)`/`VALUES (…)` lists collapse to `(?+)`.
//!
//! Why hand-written rather than the `regex` crate: two steps need
//! look-ahead and a back-reference (the UNION collapse), which `regex` does
//! not support, and a dozen regex passes per statement would cost most of
//! the speed this command exists for. Each step below is one linear pass
//! over a reused buffer and names the Perl expression it reproduces; the
//! tests compare the result with pt-query-digest itself.

use super::parse::find;

/// Perl's `\s` (ASCII): space, \t, \n, \r, \f, \v.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c | 0x0b)
}

/// Perl's `\w` on byte strings: [A-Za-z0-9_].
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `\b` before index `i` of `s`.
fn boundary(s: &[u8], i: usize) -> bool {
    let before = i > 0 && is_word(s[i - 1]);
    let after = i < s.len() && is_word(s[i]);
    before != after
}

fn starts_with_ci(s: &[u8], at: usize, pat: &[u8]) -> bool {
    s.len() >= at + pat.len() && s[at..at + pat.len()].eq_ignore_ascii_case(pat)
}

/// Reusable buffers: fingerprinting millions of statements allocates nothing
/// after the first.
#[derive(Default)]
pub struct Fingerprinter {
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Fingerprinter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The fingerprint of one statement (the slow log's query text, without
    /// its final `;`).
    pub fn fingerprint(&mut self, q: &[u8]) -> &[u8] {
        let a = &mut self.a;
        let b = &mut self.b;
        a.clear();
        // mysqldump's and percona-toolkit's own queries are one class each.
        if q.starts_with(b"SELECT /*!40001 SQL_NO_CACHE */ * FROM `") {
            a.extend_from_slice(b"mysqldump");
            return a;
        }
        if has_pt_marker(q) {
            a.extend_from_slice(b"percona-toolkit");
            return a;
        }
        if q.starts_with(b"administrator command: ") {
            a.extend_from_slice(q);
            return a;
        }
        if let Some(call) = call_prefix(q) {
            a.extend(call.iter().map(u8::to_ascii_lowercase));
            return a;
        }
        let q = &q[..shorten_insert(q)];
        strip_multiline_comments(q, a);
        strip_line_comments(a, b);
        if is_use(b) {
            // `s/\Ause \S+\Z/use ?/i`: the database is abstracted, a final
            // newline kept.
            let nl = b.ends_with(b"\n");
            a.clear();
            a.extend_from_slice(b"use ?");
            if nl {
                a.push(b'\n');
            }
            return a;
        }
        // s/\\["']//g
        a.clear();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 1 < b.len() && matches!(b[i + 1], b'"' | b'\'') {
                i += 2;
                continue;
            }
            a.push(b[i]);
            i += 1;
        }
        replace_quoted(a, b, b'"');
        replace_quoted(b, a, b'\'');
        replace_booleans(a, b);
        replace_numbers(b, a);
        collapse_number_prefixes(a, b);
        squeeze_and_lower(b, a);
        replace_null(a, b);
        collapse_lists(b, a);
        if find(a, b"union").is_some() {
            collapse_union(a, b);
            std::mem::swap(a, b);
        }
        limit(a, b);
        order_by_asc(b, a);
        a
    }
}

/// `/\*\w+\.\w+:[0-9]/[0-9]\*/` anywhere: a percona-toolkit tool's query.
fn has_pt_marker(q: &[u8]) -> bool {
    let mut from = 0;
    while let Some(o) = find(&q[from..], b"/*") {
        let start = from + o;
        from = start + 1;
        let mut i = start + 2;
        let w1 = i;
        while i < q.len() && is_word(q[i]) {
            i += 1;
        }
        if i == w1 || i >= q.len() || q[i] != b'.' {
            continue;
        }
        i += 1;
        let w2 = i;
        while i < q.len() && is_word(q[i]) {
            i += 1;
        }
        // `\w+:` backtracks over digits only if `:` follows, which needs the
        // whole run: a run of \w then ':'.
        if i == w2 || !q[i..].starts_with(b":") {
            continue;
        }
        let r = &q[i + 1..];
        if r.len() >= 5
            && r[0].is_ascii_digit()
            && r[1] == b'/'
            && r[2].is_ascii_digit()
            && r[3] == b'*'
            && r[4] == b'/'
        {
            return true;
        }
    }
    false
}

/// `\A\s*(call\s+\S+)\(`i: the `call name` of a stored-procedure call.
fn call_prefix(q: &[u8]) -> Option<&[u8]> {
    let mut i = 0;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    let start = i;
    if !starts_with_ci(q, i, b"call") {
        return None;
    }
    i += 4;
    let ws = i;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    if i == ws {
        return None;
    }
    let name = i;
    let mut end = i;
    while end < q.len() && !is_space(q[end]) {
        end += 1;
    }
    // Greedy \S+ backs off to the last '(' of the run that has a name before it.
    let paren = q[name + 1..end].iter().rposition(|&c| c == b'(')? + name + 1;
    Some(&q[start..paren])
}

/// `\A((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(`is:
/// the length of the query kept (a multi-row INSERT is cut after its first row).
fn shorten_insert(q: &[u8]) -> usize {
    let mut i = if starts_with_ci(q, 0, b"insert") {
        6
    } else if starts_with_ci(q, 0, b"replace") {
        7
    } else {
        return q.len();
    };
    if starts_with_ci(q, i, b" ignore") {
        i += 7;
    }
    let ws = i;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    if i == ws || !starts_with_ci(q, i, b"into") {
        return q.len();
    }
    i += 4 + 1; // `.+?` takes at least one character
    let mut v = i;
    while v + 6 <= q.len() {
        if !starts_with_ci(q, v, b"values") {
            v += 1;
            continue;
        }
        let mut j = v + 6;
        while j < q.len() && is_space(q[j]) {
            j += 1;
        }
        if j >= q.len() || q[j] != b'(' {
            v += 1;
            continue;
        }
        // The first ')' followed by `\s*,\s*\(`; later VALUES could only find
        // the same or none.
        let mut k = j + 1;
        while let Some(off) = memchr::memchr(b')', &q[k..]) {
            let close = k + off;
            let mut m = close + 1;
            while m < q.len() && is_space(q[m]) {
                m += 1;
            }
            if m < q.len() && q[m] == b',' {
                m += 1;
                while m < q.len() && is_space(q[m]) {
                    m += 1;
                }
                if m < q.len() && q[m] == b'(' {
                    return close + 1;
                }
            }
            k = close + 1;
        }
        return q.len();
    }
    q.len()
}

/// `s#/\*[^!].*?\*/##sm`: block comments, but not `/*!version */` hints.
fn strip_multiline_comments(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let (mut i, mut copied) = (0, 0);
    while let Some(o) = find(&q[i..], b"/*") {
        let at = i + o;
        if at + 2 < q.len() && q[at + 2] != b'!' {
            if let Some(end) = find(&q[at + 3..], b"*/") {
                out.extend_from_slice(&q[copied..at]);
                copied = at + 3 + end + 2;
                i = copied;
                continue;
            }
        }
        i = at + 1;
    }
    out.extend_from_slice(&q[copied..]);
}

/// `s/(?:--|#)[^'"\r\n]*(?=[\r\n]|\Z)//g`: a one-line comment that contains
/// no quote, up to the end of its line.
fn strip_line_comments(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if memchr::memchr2(b'#', b'-', q).is_none() {
        out.extend_from_slice(q);
        return;
    }
    let mut i = 0;
    while i < q.len() {
        let start = if q[i] == b'#' {
            Some(i + 1)
        } else if q[i] == b'-' && i + 1 < q.len() && q[i + 1] == b'-' {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = start {
            while j < q.len() && !matches!(q[j], b'\'' | b'"' | b'\r' | b'\n') {
                j += 1;
            }
            if j == q.len() || matches!(q[j], b'\r' | b'\n') {
                i = j;
                continue;
            }
        }
        out.push(q[i]);
        i += 1;
    }
}

/// `\Ause \S+\Z`i
fn is_use(q: &[u8]) -> bool {
    if !starts_with_ci(q, 0, b"use ") {
        return false;
    }
    let rest = q[4..].strip_suffix(b"\n").unwrap_or(&q[4..]);
    !rest.is_empty() && !rest.iter().any(|&c| is_space(c))
}

/// `s/Q.*?Q/?/sg` for the quote Q.
fn replace_quoted(q: &[u8], out: &mut Vec<u8>, quote: u8) {
    out.clear();
    let mut i = 0;
    while let Some(off) = memchr::memchr(quote, &q[i..]) {
        let open = i + off;
        match memchr::memchr(quote, &q[open + 1..]) {
            Some(len) => {
                out.extend_from_slice(&q[i..open]);
                out.push(b'?');
                i = open + 1 + len + 1;
            }
            None => break,
        }
    }
    out.extend_from_slice(&q[i..]);
}

/// `s/\bfalse\b|\btrue\b/?/isg`
fn replace_booleans(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() {
        if matches!(q[i], b'f' | b'F' | b't' | b'T') && boundary(q, i) {
            let hit = [&b"false"[..], b"true"]
                .into_iter()
                .find(|w| starts_with_ci(q, i, w) && boundary(q, i + w.len()));
            if let Some(w) = hit {
                out.push(b'?');
                i += w.len();
                continue;
            }
        }
        out.push(q[i]);
        i += 1;
    }
}

/// `s/[0-9+-][0-9a-f.xb+-]*/?/g` (before lower casing: `A-F` are not digits
/// here, exactly as in pt).
fn replace_numbers(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() {
        let c = q[i];
        if c.is_ascii_digit() || c == b'+' || c == b'-' {
            i += 1;
            while i < q.len()
                && matches!(q[i], b'0'..=b'9' | b'a'..=b'f' | b'.' | b'x' | b'+' | b'-')
            {
                i += 1;
            }
            out.push(b'?');
            continue;
        }
        out.push(c);
        i += 1;
    }
}

/// `s/[xb.+-]\?/?/g`
fn collapse_number_prefixes(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() {
        if matches!(q[i], b'x' | b'b' | b'.' | b'+' | b'-') && q.get(i + 1) == Some(&b'?') {
            out.push(b'?');
            i += 2;
            continue;
        }
        out.push(q[i]);
        i += 1;
    }
}

/// `s/\A\s+//`, `chomp`, `tr[ \n\t\r\f][ ]s`, `lc`.
fn squeeze_and_lower(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    let end = if q.len() > i && q[q.len() - 1] == b'\n' {
        q.len() - 1
    } else {
        q.len()
    };
    let mut last_space = false;
    for &c in &q[i..end] {
        if matches!(c, b' ' | b'\n' | b'\t' | b'\r' | 0x0c) {
            if !last_space {
                out.push(b' ');
            }
            last_space = true;
        } else {
            out.push(c.to_ascii_lowercase());
            last_space = false;
        }
    }
}

/// `s/\bnull\b/?/g` (already lower case).
fn replace_null(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() {
        if q[i] == b'n' && q[i..].starts_with(b"null") && boundary(q, i) && boundary(q, i + 4) {
            out.push(b'?');
            i += 4;
            continue;
        }
        out.push(q[i]);
        i += 1;
    }
}

/// `s/\b(in|values?)(?:[\s,]*\([\s?,]*\))+/$1(?+)/gx`
fn collapse_lists(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < q.len() {
        if matches!(q[i], b'i' | b'v') && boundary(q, i) {
            let word: &[u8] = if q[i..].starts_with(b"values") {
                b"values"
            } else if q[i..].starts_with(b"value") {
                b"value"
            } else if q[i..].starts_with(b"in") {
                b"in"
            } else {
                b""
            };
            if !word.is_empty() {
                let mut j = i + word.len();
                let mut groups = 0;
                loop {
                    let mut k = j;
                    while k < q.len() && (is_space(q[k]) || q[k] == b',') {
                        k += 1;
                    }
                    if k >= q.len() || q[k] != b'(' {
                        break;
                    }
                    k += 1;
                    while k < q.len() && (is_space(q[k]) || q[k] == b'?' || q[k] == b',') {
                        k += 1;
                    }
                    if k >= q.len() || q[k] != b')' {
                        break;
                    }
                    j = k + 1;
                    groups += 1;
                }
                if groups > 0 {
                    out.extend_from_slice(word);
                    out.extend_from_slice(b"(?+)");
                    i = j;
                    continue;
                }
            }
        }
        out.push(q[i]);
        i += 1;
    }
}

/// `s/\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+/$1 \/*repeat$2*\//xg`:
/// the same SELECT repeated with UNION is shown once.
fn collapse_union(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    'scan: while i < q.len() {
        if q[i] == b's'
            && q[i..].starts_with(b"select")
            && boundary(q, i)
            && i + 6 < q.len()
            && is_space(q[i + 6])
        {
            // Lazy `.*?`: the shortest $1 that is repeated.
            for end in i + 7..=q.len() {
                let first = &q[i..end];
                let mut pos = end;
                let mut sep: &[u8] = b"";
                while let Some((s, next)) = union_repeat(q, pos, first) {
                    sep = s;
                    pos = next;
                }
                if pos > end {
                    out.extend_from_slice(first);
                    out.extend_from_slice(b" /*repeat");
                    out.extend_from_slice(sep);
                    out.extend_from_slice(b"*/");
                    i = pos;
                    continue 'scan;
                }
                if end < q.len() && q[end] == b'\n' {
                    break; // `.` does not match a newline
                }
            }
        }
        out.push(q[i]);
        i += 1;
    }
}

/// One `(\sunion(?:\sall)?)\s\1` at `pos`: the separator and where it ends.
fn union_repeat<'q>(q: &'q [u8], pos: usize, first: &[u8]) -> Option<(&'q [u8], usize)> {
    if pos >= q.len() || !is_space(q[pos]) || !q[pos + 1..].starts_with(b"union") {
        return None;
    }
    let u_end = pos + 6;
    let mut tries = Vec::with_capacity(2);
    if u_end < q.len() && is_space(q[u_end]) && q[u_end + 1..].starts_with(b"all") {
        tries.push(u_end + 4);
    }
    tries.push(u_end);
    for sep_end in tries {
        if sep_end < q.len() && is_space(q[sep_end]) && q[sep_end + 1..].starts_with(first) {
            return Some((&q[pos..sep_end], sep_end + 1 + first.len()));
        }
    }
    None
}

/// `s/\blimit \?(?:, ?\?| offset \?)?/limit ?/` (the first LIMIT only).
fn limit(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut from = 0;
    while let Some(o) = find(&q[from..], b"limit ?") {
        let at = from + o;
        from = at + 1;
        if !boundary(q, at) {
            continue;
        }
        let mut end = at + 7;
        let rest = &q[end..];
        if rest.starts_with(b", ?") {
            end += 3;
        } else if rest.starts_with(b",?") {
            end += 2;
        } else if rest.starts_with(b" offset ?") {
            end += 9;
        }
        out.extend_from_slice(&q[..at]);
        out.extend_from_slice(b"limit ?");
        out.extend_from_slice(&q[end..]);
        return;
    }
    out.extend_from_slice(q);
}

/// After the first `ORDER BY `, `\s+ASC` is dropped (pt's `\G(.+?)\s+ASC`
/// loop; the statement is lower case and single-spaced by now).
fn order_by_asc(q: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let Some(ob) = find(q, b"order by ").filter(|&p| boundary(q, p)) else {
        out.extend_from_slice(q);
        return;
    };
    let mut pos = ob + 9;
    out.extend_from_slice(&q[..pos]);
    loop {
        // `(.+?)` takes at least one character.
        let from = pos + 1;
        if from > q.len() {
            break;
        }
        match find(&q[from..], b" asc") {
            Some(off) => {
                let at = from + off;
                out.extend_from_slice(&q[pos..at]);
                pos = at + 4;
            }
            None => break,
        }
    }
    out.extend_from_slice(&q[pos..]);
}

/// A key with every run of digits replaced by one 0 byte: statements with
/// the same key have the same fingerprint, so a small cache keyed by it
/// skips fingerprinting for statements that differ only in numbers (the
/// bulk of a busy log). `false` (no key) for the statements where a digit
/// run is kept or counted by pt: `CALL name(`, administrator commands,
/// `/*` comments (mysqldump's and percona-toolkit's markers), and text
/// holding a 0 byte itself.
pub fn shape_key(q: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let lead = q.iter().position(|c| !is_space(*c)).unwrap_or(q.len());
    if starts_with_ci(q, lead, b"call") || q.starts_with(b"administrator") {
        return false;
    }
    // One pass: digits, `/` and 0 are the only bytes that need a look
    // (one table load and branch for the rest); the bytes between digit
    // runs are copied a run at a time; 0 and `/*` are found in the same
    // pass instead of a memchr pass each before it.
    out.reserve(q.len());
    let (mut i, mut from) = (0, 0);
    while i < q.len() {
        i = next_look(q, i);
        let Some(&c) = q.get(i) else {
            break;
        };
        if c.is_ascii_digit() {
            out.extend_from_slice(&q[from..i]);
            out.push(0);
            while i < q.len() && q[i].is_ascii_digit() {
                i += 1;
            }
            from = i;
            continue;
        }
        if c == 0 || q.get(i + 1) == Some(&b'*') {
            out.clear();
            return false;
        }
        i += 1;
    }
    out.extend_from_slice(&q[from..]);
    true
}

/// The first byte at or after `i` that [`shape_key`] stops at, or
/// `q.len()`. Sixteen bytes at a time (SSE2, in every x86-64 CPU): the byte
/// loop it replaces cost ~5 instructions a byte, a third of the key's cost
/// (callgrind, bench/log/2026-11-29.md); no crate searches for a byte range
/// and two bytes at once.
#[inline(always)]
fn next_look(q: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8, _mm_setzero_si128, _mm_sub_epi8,
        };
        // SAFETY: SSE2 is in the x86-64 baseline; each load reads
        // q[i..i + 16], inside `q` by the loop's condition.
        unsafe {
            let zero = _mm_setzero_si128();
            let d0 = _mm_set1_epi8(b'0' as i8);
            let nine = _mm_set1_epi8(9);
            let slash = _mm_set1_epi8(b'/' as i8);
            let mask = |at: usize| {
                let v = _mm_loadu_si128(q.as_ptr().add(at).cast::<__m128i>());
                let d = _mm_sub_epi8(v, d0);
                let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);
                let hit = _mm_or_si128(
                    digit,
                    _mm_or_si128(_mm_cmpeq_epi8(v, slash), _mm_cmpeq_epi8(v, zero)),
                );
                _mm_movemask_epi8(hit) as u32
            };
            while i + 16 <= q.len() {
                let m = mask(i);
                if m != 0 {
                    return i + m.trailing_zeros() as usize;
                }
                i += 16;
            }
            // The last 1–15 bytes: the 16 ending with `q`, the ones
            // already looked at shifted out.
            if i < q.len() && q.len() >= 16 {
                let at = q.len() - 16;
                let m = mask(at) >> (i - at);
                return if m != 0 {
                    i + m.trailing_zeros() as usize
                } else {
                    q.len()
                };
            }
        }
    }
    while i < q.len() && !LOOK[q[i] as usize] {
        i += 1;
    }
    i
}

/// The bytes [`shape_key`] stops at: digits, `/` and 0.
static LOOK: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = true;
        c += 1;
    }
    t[b'/' as usize] = true;
    t[0] = true;
    t
};

/// pt-query-digest's class id: the upper-case MD5 of the fingerprint
/// (32 hex digits since percona-toolkit 3.0.11).
pub fn checksum(fingerprint: &[u8]) -> String {
    use md5::{Digest, Md5};
    let d = Md5::digest(fingerprint);
    let mut s = String::with_capacity(32);
    for b in d {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(q: &str) -> String {
        String::from_utf8(Fingerprinter::new().fingerprint(q.as_bytes()).to_vec()).unwrap()
    }

    #[test]
    fn same_shape_same_fingerprint() {
        let corpus = include_str!("../../tests/fixtures/slowlog/queries.sql");
        let mut f = Fingerprinter::new();
        let mut k1 = Vec::new();
        let mut k2 = Vec::new();
        for q in corpus.split(";\n") {
            // The same statement with every digit changed (and runs lengthened).
            let other: String = q
                .chars()
                .map(|c| {
                    if c.is_ascii_digit() {
                        "97".to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            if shape_key(q.as_bytes(), &mut k1) {
                assert!(shape_key(other.as_bytes(), &mut k2));
                assert_eq!(k1, k2);
                let a = f.fingerprint(q.as_bytes()).to_vec();
                assert_eq!(a, f.fingerprint(other.as_bytes()), "{q}");
            }
        }
    }

    #[test]
    fn next_look_finds_what_a_byte_loop_finds() {
        let slow = |q: &[u8], i: usize| {
            (i..q.len())
                .find(|&k| LOOK[q[k] as usize])
                .unwrap_or(q.len())
        };
        let mut seed = 7u64;
        for len in 0..70 {
            for _ in 0..20 {
                let q: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        // Mostly letters, sometimes a byte it stops at or
                        // one next to them in value.
                        match (seed >> 33) % 12 {
                            0 => b"0123456789"[(seed >> 40) as usize % 10],
                            1 => {
                                [b'/', 0, b'.', b':', 0xb0, 0x2f + 0x80][(seed >> 40) as usize % 6]
                            }
                            _ => b'a' + (seed >> 40) as u8 % 26,
                        }
                    })
                    .collect();
                for i in 0..=len {
                    assert_eq!(next_look(&q, i), slow(&q, i), "{q:?} from {i}");
                }
            }
        }
    }

    #[test]
    fn shape_key_declines_comments_and_zero_bytes_anywhere() {
        let mut k = Vec::new();
        assert!(shape_key(b"SELECT 12 FROM t WHERE a/2=1", &mut k));
        assert_eq!(k, b"SELECT \0 FROM t WHERE a/\0=\0");
        for q in [
            &b"SELECT 1 /* x */"[..],
            b"/*!40101 SET x=1*/",
            b"SELECT 12 FROM t WHERE a=3 /*",
            b"SELECT 12\0",
            b"\0SELECT 1",
            b"  CALL p(1)",
            b"administrator command: Quit",
        ] {
            assert!(!shape_key(q, &mut k), "{q:?}");
            assert!(k.is_empty());
        }
    }

    #[test]
    fn documented_examples() {
        assert_eq!(
            fp("SELECT name, password FROM user WHERE id='12823'"),
            "select name, password from user where id=?"
        );
        assert_eq!(
            fp("select name, password from user\n  where id=5"),
            "select name, password from user where id=?"
        );
        assert_eq!(
            fp("SELECT * FROM t WHERE a IN (1, 2, 3)"),
            "select * from t where a in(?+)"
        );
        assert_eq!(
            fp("INSERT INTO t VALUES (1,'a'),(2,'b')"),
            "insert into t values(?+)"
        );
        assert_eq!(fp("use mydb"), "use ?");
        assert_eq!(fp("CALL foo(1, 2)"), "call foo");
        assert_eq!(
            fp("select * from t order by a asc, b ASC limit 10, 20"),
            "select * from t order by a, b limit ?"
        );
        assert_eq!(
            fp("SELECT a FROM t UNION ALL SELECT a FROM t"),
            "select a from t /*repeat union all*/"
        );
        assert_eq!(fp("SELECT 0xFF /* c */ -- x"), "select ?ff ");
        assert_eq!(checksum(b"select ?").len(), 32);
    }
}
