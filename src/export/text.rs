//! Text for people: aligned tables in the style of `iostat`/`fio`
//! summaries, colour only when the style allows it.

use super::doc::{Align, Block, Cell, Document, KeyValues, Series, Table, Tone};
use super::Exporter;
use crate::finding::Finding;
use crate::output::Style;
use comfy_table::{presets, CellAlignment, ContentArrangement};
use std::io::{self, Write};

pub struct Text {
    style: Style,
}

/// Make text safe for a terminal: control characters (ESC starts a
/// terminal escape sequence that can rewrite what the user sees) and
/// bidirectional overrides become visible escapes. `keep_lines` keeps
/// newlines and tabs (verbatim blocks); elsewhere they are escaped too.
/// Exporter-wide safety net: host strings (paths, device models, server
/// messages) reach every command's output.
pub fn sanitize(s: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !(keep_lines && (c == '\n' || c == '\t')))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !bad(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x1b' => out.push_str("\\e"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Text {
    pub fn new(style: Style) -> Text {
        Text { style }
    }

    fn tone(&self, t: Tone, s: &str) -> String {
        let s = &*sanitize(s, false);
        match t {
            Tone::Plain => s.to_string(),
            Tone::Good => self.style.good(s),
            Tone::Bad => self.style.bad(s),
            Tone::Warn => self.style.warn(s),
            Tone::Dim => self.style.dim(s),
            Tone::Strong => self.style.bold(s),
        }
    }
}

impl Exporter for Text {
    fn export(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        if !doc.title.is_empty() {
            writeln!(out, "{}", self.style.bold(&doc.title))?;
        }
        let mut first = doc.title.is_empty();
        for b in &doc.blocks {
            // A series drawn only by chart formats shows nothing here, and
            // leaves no blank line behind.
            if matches!(b, Block::Series(s) if !s.table_fallback) {
                continue;
            }
            // One blank line between blocks, none before the first.
            if !first && !matches!(b, Block::Preformatted(_)) {
                writeln!(out)?;
            }
            first = false;
            match b {
                Block::Heading { text, .. } => {
                    writeln!(out, "{}", self.style.bold(&sanitize(text, false)))?
                }
                Block::Paragraph(p) => writeln!(out, "{}", sanitize(p, true))?,
                Block::Note { tone, text } => {
                    let label = match tone {
                        Tone::Bad => "error: ",
                        Tone::Warn => "warning: ",
                        _ => "note: ",
                    };
                    writeln!(out, "{}{}", self.tone(*tone, label), sanitize(text, true))?
                }
                Block::Preformatted(s) => {
                    let s = sanitize(s, true);
                    out.write_all(s.as_bytes())?;
                    if !s.is_empty() && !s.ends_with('\n') {
                        writeln!(out)?;
                    }
                }
                Block::KeyValues(kv) => self.key_values(kv, out)?,
                Block::Table(t) => self.table(t, out)?,
                Block::Findings(f) => self.findings(f, out)?,
                Block::Series(s) => {
                    if s.table_fallback {
                        self.table(&series_table(s), out)?
                    }
                }
                Block::Tree(nodes) => {
                    for n in nodes {
                        writeln!(out, "{}", sanitize(&n.line(), false))?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Text {
    fn key_values(&self, kv: &KeyValues, out: &mut dyn Write) -> io::Result<()> {
        let w =
            kv.0.iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
        for (k, v) in &kv.0 {
            let pad = w - k.chars().count();
            writeln!(
                out,
                "{}:{} {}",
                sanitize(k, false),
                " ".repeat(pad),
                self.tone(v.tone, &v.text)
            )?;
        }
        Ok(())
    }

    fn table(&self, t: &Table, out: &mut dyn Write) -> io::Result<()> {
        if let Some(title) = &t.title {
            writeln!(out, "{}", self.style.bold(&sanitize(title, false)))?;
        }
        let mut ct = comfy_table::Table::new();
        ct.load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(
                t.columns
                    .iter()
                    .map(|c| comfy_table::Cell::new(sanitize(&c.header(), false))),
            );
        if self.style.color {
            ct.enforce_styling();
        } else {
            ct.force_no_tty();
        }
        for row in &t.rows {
            ct.add_row(row.iter().map(|c| self.cell(c)));
        }
        for (i, c) in t.columns.iter().enumerate() {
            if c.align == Align::Right {
                if let Some(col) = ct.column_mut(i) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        // comfy-table pads the last column too; trailing spaces help nobody.
        for line in ct.to_string().lines() {
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }

    fn cell(&self, c: &Cell) -> comfy_table::Cell {
        use comfy_table::{Attribute, Color};
        let cell = comfy_table::Cell::new(sanitize(&c.text, false));
        match c.tone {
            Tone::Plain => cell,
            Tone::Good => cell.fg(Color::Green),
            Tone::Bad => cell.fg(Color::Red),
            Tone::Warn => cell.fg(Color::Yellow),
            Tone::Dim => cell.add_attribute(Attribute::Dim),
            Tone::Strong => cell.add_attribute(Attribute::Bold),
        }
    }

    /// Worst first, grouped by layer, each with its reason, evidence and fix.
    fn findings(&self, f: &[Finding], out: &mut dyn Write) -> io::Result<()> {
        if f.is_empty() {
            return writeln!(out, "{}", self.style.good("No findings."));
        }
        let mut sorted = f.to_vec();
        crate::finding::sort(&mut sorted);
        for x in &sorted {
            let sev = format!("{:<8}", x.severity.as_str().to_uppercase());
            let head = match &x.recommended {
                Some(r) => format!("{}: {} → {}", x.subject.name, x.observed, r),
                None => format!("{}: {}", x.subject.name, x.observed),
            };
            writeln!(
                out,
                "{} [{}] {} {}",
                self.tone(Tone::of_severity(x.severity), &sev),
                x.layer.as_str(),
                self.style.bold(&x.id),
                sanitize(&head, false)
            )?;
            writeln!(out, "    {}", sanitize(&x.reason, false))?;
            if !x.evidence.detail.is_empty() {
                writeln!(
                    out,
                    "    {} {}",
                    self.style.dim("evidence:"),
                    sanitize(&x.evidence.detail, false)
                )?;
            }
            if let Some(c) = &x.change {
                writeln!(
                    out,
                    "    {} {}",
                    self.style.dim("fix:"),
                    sanitize(&c.describe(), false)
                )?;
            }
            for m in &x.measured {
                let line = sanitize(&m.line(), false).into_owned();
                let line = match m.verdict.as_str() {
                    "faster" => self.style.good(&line),
                    "slower" => self.style.bad(&line),
                    _ => line,
                };
                writeln!(out, "    {} {line}", self.style.dim("measured:"))?;
            }
            if let Some(n) = &x.not_measured {
                writeln!(
                    out,
                    "    {} {}",
                    self.style.dim("not measured:"),
                    sanitize(n, false)
                )?;
            }
        }
        Ok(())
    }
}

/// A series as a table: x down the side, one column per line.
pub(super) fn series_table(s: &Series) -> Table {
    use super::doc::Column;
    let mut cols = vec![Column::text(s.x_label.clone())];
    for l in &s.lines {
        cols.push(Column::num(l.name.clone(), s.y_unit.as_deref()));
    }
    let mut xs: Vec<String> = Vec::new();
    for l in &s.lines {
        for p in &l.points {
            if !xs.contains(&p.x) {
                xs.push(p.x.clone());
            }
        }
    }
    let mut t = Table::new(cols).titled(s.title.clone());
    for x in xs {
        let mut row = vec![Cell::text(x.clone())];
        for l in &s.lines {
            row.push(match l.points.iter().find(|p| p.x == x) {
                Some(p) => Cell::num(p.y, fmt_num(p.y)),
                None => Cell::empty(),
            });
        }
        t.row(row);
    }
    t
}

/// A number with as many digits as it deserves (3 significant figures
/// below 1000, no decimals above).
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::doc::Column;

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let mut t = Table::new(vec![Column::text("path")]);
        t.row(vec!["/d/\x1b[2Jx\ny".into()]);
        let mut d = Document::new("");
        d.table(t);
        d.paragraph("a\x1b]0;title\x07b");
        d.preformatted("line1\n\x1b[31mred\n");
        let mut out = Vec::new();
        Text::new(Style::plain()).export(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(!s.contains('\x1b') && !s.contains('\x07'), "{s:?}");
        assert!(s.contains("/d/\\e[2Jx\\ny"), "{s}");
        assert!(s.contains("line1\n\\e[31mred"), "{s}");
    }

    #[test]
    fn table_has_units_in_headers_and_no_trailing_spaces() {
        let mut t = Table::new(vec![Column::text("device"), Column::num("p99", Some("µs"))]);
        t.row(vec!["vda".into(), Cell::num(1234.0, "1234")]);
        let mut d = Document::new("");
        d.table(t);
        let mut out = Vec::new();
        Text::new(Style::plain()).export(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("p99 (µs)"), "{s}");
        assert!(s.lines().all(|l| !l.ends_with(' ')), "{s:?}");
        assert!(s.contains("1234"));
    }
}
