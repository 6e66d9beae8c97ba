//! The kernel's binary trace pages (`per_cpu/cpuN/trace_pipe_raw`) decoded
//! into the same [`Event`]s the text parser makes, so a live capture costs
//! the traced workload no text formatting.
//!
//! Why raw pages: through `trace_pipe` the kernel formats every event as
//! text (`trace_print_context` + the event's `TP_printk`), about 7 µs of
//! kernel time per event on this machine, on the CPUs the workload runs
//! on; that was most of a live capture's cost (12% of the mixed preset's
//! IOPS). `trace_pipe_raw` hands over the ring buffer's pages as they are:
//! one `read()` of a page copies (or swaps out) a page, whatever its number
//! of events.
//!
//! Why hand-written: no Rust crate decodes ftrace pages in a maintained
//! way (crates.io has none for `trace_pipe_raw`; libtraceevent's `kbuffer`
//! is C and would add a system library and bindings for ~150 lines), and
//! the decoder needs only the block events' four fields.
//!
//! Nothing about the layout is assumed that the kernel publishes:
//! - `events/header_page` gives the page header (the timestamp's and the
//!   commit word's offsets and sizes, where the data starts, its size);
//! - `events/header_event` gives the event header's bit widths
//!   (`type_len`, `time_delta`) and which `type_len` values mean padding,
//!   a time extend, an absolute timestamp, and the largest inline length;
//! - each event's `format` gives its `ID:` (the `common_type` of its
//!   records) and the offsets and sizes of `dev`, `sector`, `nr_sector`
//!   and `rwbs` (whose size changed from 8 to 10 bytes in 6.x).
//!
//! What the kernel does not publish, and is therefore taken from
//! `kernel/trace/ring_buffer.c` (and libtraceevent's `kbuffer-parse.c`,
//! which does the same): the commit word's flag bits (bit 31: events were
//! lost before this page; bit 30: their number is stored after the data)
//! and that the length of an event with `type_len` 0 is in the next 32-bit
//! word (counting that word); a padding record with a zero delta ends the
//! page, one with a delta is a discarded event whose length follows in the
//! same way;
//! padding deltas do not move the clock (`rb_update_read_stamp`); an
//! absolute timestamp holds the low 59 bits. Records are in the machine's
//! byte order.

use super::event::{action_of, Action, Dev, Event, Rwbs};
use anyhow::{bail, Context, Result};

/// `commit` flag: events were lost (overwritten or dropped) before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// `commit` flag: and their number is stored after the page's data.
const MISSED_STORED: u64 = 1 << 30;
/// The commit word's low bits are the data length.
const COMMIT_MASK: u64 = (1 << 27) - 1;
/// An absolute timestamp's bits (`TS_MSB` above them is kept from the clock).
const ABS_TS_BITS: u32 = 59;

/// Where something is in a record or page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

impl Field {
    /// An unsigned integer of 1, 2, 4 or 8 bytes, in native byte order.
    fn uint(&self, b: &[u8]) -> Option<u64> {
        let s = b.get(self.offset..self.offset + self.size)?;
        Some(match self.size {
            1 => s[0] as u64,
            2 => u16::from_ne_bytes(s.try_into().ok()?) as u64,
            4 => u32::from_ne_bytes(s.try_into().ok()?) as u64,
            8 => u64::from_ne_bytes(s.try_into().ok()?),
            _ => return None,
        })
    }

    /// A NUL-terminated `char[N]`.
    fn cstr<'a>(&self, b: &'a [u8]) -> Option<&'a str> {
        let s = b.get(self.offset..self.offset + self.size)?;
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..end]).ok()
    }
}

/// The fields of a `format` file (`field:TYPE NAME; offset:N; size:N; …`)
/// and its `ID:`.
fn parse_format(text: &str) -> Result<(u16, Vec<(String, Field)>)> {
    let mut id = None;
    let mut fields = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = Some(v.trim().parse().context("format: bad ID")?);
            continue;
        }
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl
            .split_whitespace()
            .last()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("")
            .to_string();
        let (mut offset, mut size) = (None, None);
        for p in parts {
            if let Some(v) = p.strip_prefix("offset:") {
                offset = v.parse().ok();
            } else if let Some(v) = p.strip_prefix("size:") {
                size = v.parse().ok();
            }
        }
        if let (Some(offset), Some(size)) = (offset, size) {
            fields.push((name, Field { offset, size }));
        }
    }
    Ok((id.context("format: no ID: line")?, fields))
}

fn field(fields: &[(String, Field)], name: &str, what: &str) -> Result<Field> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, f)| *f)
        .with_context(|| format!("{what}: no field {name}"))
}

/// The page header, from `events/header_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub timestamp: Field,
    pub commit: Field,
    pub data: Field,
}

impl PageLayout {
    pub fn parse(header_page: &str) -> Result<PageLayout> {
        let (_, f) = parse_format(&format!("ID: 0\n{header_page}"))?;
        let w = "events/header_page";
        Ok(PageLayout {
            timestamp: field(&f, "timestamp", w)?,
            commit: field(&f, "commit", w)?,
            data: field(&f, "data", w)?,
        })
    }

    /// Bytes of one page: header and data.
    pub fn page_size(&self) -> usize {
        self.data.offset + self.data.size
    }
}

/// The event header, from `events/header_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderLayout {
    pub type_len_bits: u32,
    pub time_delta_bits: u32,
    pub padding: u32,
    pub time_extend: u32,
    pub time_stamp: u32,
    pub data_max: u32,
}

impl HeaderLayout {
    pub fn parse(header_event: &str) -> Result<HeaderLayout> {
        let v = |key: &str| -> Result<u32> {
            header_event
                .lines()
                .find_map(|l| {
                    let (k, val) = l.split_once(':')?;
                    (k.trim() == key).then_some(val)
                })
                .and_then(|val| {
                    val.split(|c: char| !c.is_ascii_digit())
                        .find(|w| !w.is_empty())?
                        .parse()
                        .ok()
                })
                .with_context(|| format!("events/header_event: no {key}"))
        };
        let type_len_bits = v("type_len")?;
        let time_delta_bits = v("time_delta")?;
        let padding = v("padding")?;
        let time_extend = v("time_extend")?;
        let time_stamp = v("time_stamp")?;
        let data_max = header_event
            .lines()
            .find(|l| l.contains("data max type_len"))
            .and_then(|l| l.split("==").nth(1)?.trim().parse().ok())
            .context("events/header_event: no data max type_len")?;
        if type_len_bits + time_delta_bits != 32 {
            bail!("events/header_event: the header is not one 32-bit word");
        }
        Ok(HeaderLayout {
            type_len_bits,
            time_delta_bits,
            padding,
            time_extend,
            time_stamp,
            data_max,
        })
    }
}

/// One block event's record layout, from its `format` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventLayout {
    pub id: u16,
    pub action: Action,
    pub dev: Field,
    pub sector: Field,
    pub nr_sector: Field,
    pub rwbs: Field,
}

impl EventLayout {
    /// `name` is the tracepoint (`block_rq_issue`), `format` its file.
    pub fn parse(name: &str, format: &str) -> Result<EventLayout> {
        let action =
            action_of(name).with_context(|| format!("{name}: not a block event btt uses"))?;
        let (id, f) =
            parse_format(format).with_context(|| format!("events/block/{name}/format"))?;
        let w = format!("events/block/{name}/format");
        Ok(EventLayout {
            id,
            action,
            dev: field(&f, "dev", &w)?,
            sector: field(&f, "sector", &w)?,
            nr_sector: field(&f, "nr_sector", &w)?,
            rwbs: field(&f, "rwbs", &w)?,
        })
    }

    fn event(&self, time_ns: u64, rec: &[u8]) -> Option<Event> {
        let dev = self.dev.uint(rec)?;
        Some(Event {
            time_ns,
            // MKDEV: the tracepoints print `dev >> 20, dev & ((1 << 20) - 1)`.
            dev: Dev {
                major: (dev >> 20) as u32,
                minor: (dev & ((1 << 20) - 1)) as u32,
            },
            action: self.action,
            rwbs: Rwbs::parse(self.rwbs.cstr(rec)?),
            sector: self.sector.uint(rec)?,
            nr_sectors: self.nr_sector.uint(rec)? as u32,
        })
    }
}

/// A tracefs text file, read with large reads. Why not
/// `read_to_string`: it starts with a 32-byte probe read when the size is
/// 0 (as tracefs reports), and `events/header_page` answers any read after
/// the first with end of file (6.18), which would cut it after the
/// timestamp field.
pub(super) fn read_tracefs(p: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(p)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// What one page held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageStats {
    /// Data records (events of any type).
    pub records: u64,
    /// Block events decoded.
    pub events: u64,
    /// Records of other events, or too short for their layout.
    pub ignored: u64,
    /// Events the kernel lost before this page (its stored count; 1 when
    /// it only flagged the loss).
    pub lost: u64,
}

/// Decodes pages of one kernel's ring buffer into [`Event`]s.
#[derive(Debug, Clone)]
pub struct Decoder {
    pub page: PageLayout,
    pub header: HeaderLayout,
    common_type: Field,
    events: Vec<EventLayout>,
}

impl Decoder {
    /// From the texts of `header_page`, `header_event` and the events'
    /// `format` files (`(tracepoint name, text)`).
    pub fn new(header_page: &str, header_event: &str, formats: &[(&str, &str)]) -> Result<Decoder> {
        let page = PageLayout::parse(header_page)?;
        let header = HeaderLayout::parse(header_event)?;
        let mut events = Vec::new();
        let mut common_type = None;
        for (name, text) in formats {
            events.push(EventLayout::parse(name, text)?);
            let (_, f) = parse_format(text)?;
            let ct = field(&f, "common_type", name)?;
            if common_type.is_some_and(|c| c != ct) {
                bail!("{name}: common_type differs between events");
            }
            common_type = Some(ct);
        }
        Ok(Decoder {
            page,
            header,
            common_type: common_type.context("no event formats")?,
            events,
        })
    }

    /// Read the layouts from a tracefs instance directory (host path)
    /// for the `block/…` events given.
    pub fn from_instance(dir: &std::path::Path, events: &[&str]) -> Result<Decoder> {
        let read = |p: std::path::PathBuf| {
            read_tracefs(&p).with_context(|| format!("reading {}", p.display()))
        };
        let hp = read(dir.join("events/header_page"))?;
        let he = read(dir.join("events/header_event"))?;
        let mut texts = Vec::new();
        for e in events {
            let name = e.rsplit('/').next().unwrap_or(e);
            texts.push((
                name.to_string(),
                read(dir.join("events").join(e).join("format"))?,
            ));
        }
        let refs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        Decoder::new(&hp, &he, &refs)
    }

    /// Decode one page (as one `read()` of `trace_pipe_raw` returns it)
    /// and append its block events, in the order recorded, to `out`.
    pub fn decode_page(&self, page: &[u8], out: &mut Vec<Event>) -> PageStats {
        let mut st = PageStats::default();
        let (Some(mut ts), Some(commit)) =
            (self.page.timestamp.uint(page), self.page.commit.uint(page))
        else {
            return st;
        };
        let start = self.page.data.offset;
        let len = (commit & COMMIT_MASK) as usize;
        let end = (start + len)
            .min(page.len())
            .min(start + self.page.data.size);
        if commit & MISSED_EVENTS != 0 {
            st.lost = 1;
            if commit & MISSED_STORED != 0 {
                let n = Field {
                    offset: end,
                    size: self.page.commit.size,
                };
                if let Some(n) = n.uint(page).filter(|&n| n > 0) {
                    st.lost = n;
                }
            }
        }
        let h = &self.header;
        let type_mask = (1u32 << h.type_len_bits) - 1;
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(page.get(at..at + 4)?.try_into().ok()?))
        };
        let mut at = start;
        while at + 4 <= end {
            let Some(hdr) = word(at) else { break };
            let type_len = hdr & type_mask;
            let delta = (hdr >> h.type_len_bits) as u64;
            at += 4;
            if type_len == h.padding {
                if delta == 0 {
                    break; // the rest of the page is unused
                }
                // A discarded event: the next word holds its length from
                // there on (that word included); its delta does not move
                // the clock.
                let Some(n) = word(at) else { break };
                at += (n as usize).max(4);
                continue;
            }
            if type_len == h.time_extend {
                let Some(hi) = word(at) else { break };
                ts += ((hi as u64) << h.time_delta_bits) + delta;
                at += 4;
                continue;
            }
            if type_len == h.time_stamp {
                let Some(hi) = word(at) else { break };
                let abs = ((hi as u64) << h.time_delta_bits) | delta;
                let high = ts & !((1u64 << ABS_TS_BITS) - 1);
                let mut t = abs | high;
                if t < ts && high != 0 {
                    t += 1 << ABS_TS_BITS;
                }
                ts = t;
                at += 4;
                continue;
            }
            let (data, size) = if type_len == 0 {
                let Some(n) = word(at) else { break };
                // The length counts its own word.
                (at + 4, (n as usize).saturating_sub(4))
            } else if type_len <= h.data_max {
                (at, type_len as usize * 4)
            } else {
                break; // not a record this decoder knows: stop, do not guess
            };
            ts += delta;
            let Some(rec) = page.get(data..(data + size).min(end)) else {
                break;
            };
            at = data + size;
            st.records += 1;
            let decoded = self
                .common_type
                .uint(rec)
                .and_then(|id| self.events.iter().find(|e| e.id as u64 == id))
                .and_then(|l| l.event(ts, rec));
            match decoded {
                Some(e) => {
                    st.events += 1;
                    out.push(e);
                }
                None => st.ignored += 1,
            }
        }
        st
    }
}
