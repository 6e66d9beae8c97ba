//! GitHub-flavoured markdown, for tickets and pull requests: every table a
//! pipe table (units in the header), verbatim blocks fenced.

use super::doc::{Align, Block, Cell, Document, KeyValues, Table, Tone};
use super::Exporter;
use crate::finding::Finding;
use std::io::{self, Write};

pub struct Markdown;

/// Escape text for a table cell: pipes would split the cell, newlines end
/// the row, and backslashes and HTML would be interpreted.
pub fn cell_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for a line that must stay one line (the title, headings, a
/// table's title): every control character shown as a visible escape
/// (`\n`, `\e`, `\x07`), so a newline in a hostname can never end the
/// heading and start another (`db1\n# x`); markup escaped as in prose, and
/// `#` too (a trailing run would close the heading).
fn one_line(s: &str) -> String {
    let mut shown = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => shown.push_str("\\n"),
            '\t' => shown.push_str("\\t"),
            '\r' => shown.push_str("\\r"),
            '\x1b' => shown.push_str("\\e"),
            c if c.is_control() => shown.push_str(&format!("\\x{:02x}", c as u32)),
            c => shown.push(c),
        }
    }
    inline(&shown).replace('#', "\\#")
}

/// Prose (a paragraph, a note): a newline stays a line break, but no line
/// can open a block of its own — a heading, quote, list item, fence,
/// thematic break or setext underline — whatever the text says; each line
/// after the first starts with `cont` (`> ` inside a note's quote).
fn prose(s: &str, cont: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(cont);
        }
        out.push_str(&block_safe(&inline(line)));
    }
    out
}

/// `line` (already [`inline`]-escaped) with a character that would make it
/// a block marker escaped: leading spaces dropped (four make code), then a
/// leading `#`, `-`, `+`, `=`, `~`, or the `.`/`)` of `1.` escaped.
fn block_safe(line: &str) -> String {
    let l = line.trim_start_matches([' ', '\t']);
    match l.chars().next() {
        Some('#' | '-' | '+' | '=' | '~') => format!("\\{l}"),
        Some(c) if c.is_ascii_digit() => {
            let digits = l.chars().take_while(|c| c.is_ascii_digit()).count();
            match l[digits..].chars().next() {
                Some(m @ ('.' | ')')) => format!("{}\\{m}{}", &l[..digits], &l[digits + 1..]),
                _ => l.to_string(),
            }
        }
        _ => l.to_string(),
    }
}

/// Escape inline prose (not in a table): only what would start markup.
fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' | '`' | '*' | '_' | '<' | '>' | '[' | ']' | '|' => {
                out.push('\\');
                out.push(ch);
            }
            c if c.is_control() && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn styled(c: &Cell) -> String {
    let t = cell_text(&c.text);
    if t.is_empty() {
        return t;
    }
    match c.tone {
        Tone::Strong | Tone::Bad => format!("**{t}**"),
        Tone::Dim => format!("*{t}*"),
        _ => t,
    }
}

impl Exporter for Markdown {
    fn export(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        if !doc.title.is_empty() {
            writeln!(out, "# {}\n", one_line(&doc.title))?;
        }
        for b in &doc.blocks {
            match b {
                Block::Heading { level, text } => {
                    let hashes = "#".repeat((*level).clamp(2, 6) as usize);
                    writeln!(out, "{hashes} {}\n", one_line(text))?
                }
                Block::Paragraph(p) => writeln!(out, "{}\n", prose(p, ""))?,
                Block::Note { tone, text } => {
                    let label = match tone {
                        Tone::Bad => "Error",
                        Tone::Warn => "Warning",
                        _ => "Note",
                    };
                    writeln!(out, "> **{label}:** {}\n", prose(text, "> "))?
                }
                Block::Preformatted(s) => fence(s, out)?,
                Block::KeyValues(kv) => key_values(kv, out)?,
                Block::Table(t) => table(t, out)?,
                Block::Findings(f) => findings(f, out)?,
                Block::Series(s) => {
                    if s.table_fallback {
                        table(&super::text::series_table(s), out)?
                    }
                }
                Block::Tree(nodes) => {
                    let lines: Vec<String> = nodes.iter().map(|n| n.line() + "\n").collect();
                    fence(&lines.concat(), out)?
                }
            }
        }
        Ok(())
    }
}

/// A fenced block whose fence is longer than any backtick run inside.
fn fence(s: &str, out: &mut dyn Write) -> io::Result<()> {
    let mut longest = 0;
    let mut run = 0;
    for ch in s.chars() {
        if ch == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let f = "`".repeat(longest.max(2) + 1);
    writeln!(out, "{f}text")?;
    out.write_all(s.as_bytes())?;
    if !s.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{f}\n")
}

fn key_values(kv: &KeyValues, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "| | |\n|---|---|")?;
    for (k, v) in &kv.0 {
        writeln!(out, "| {} | {} |", cell_text(k), styled(v))?;
    }
    writeln!(out)
}

fn table(t: &Table, out: &mut dyn Write) -> io::Result<()> {
    if t.columns.is_empty() {
        return Ok(());
    }
    if let Some(title) = &t.title {
        writeln!(out, "**{}**\n", one_line(title))?;
    }
    let head: Vec<String> = t.columns.iter().map(|c| cell_text(&c.header())).collect();
    writeln!(out, "| {} |", head.join(" | "))?;
    let rule: Vec<&str> = t
        .columns
        .iter()
        .map(|c| match c.align {
            Align::Left => "---",
            Align::Right => "---:",
        })
        .collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in &t.rows {
        let cells: Vec<String> = (0..t.columns.len())
            .map(|i| row.get(i).map(styled).unwrap_or_default())
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    writeln!(out)
}

fn findings(f: &[Finding], out: &mut dyn Write) -> io::Result<()> {
    if f.is_empty() {
        return writeln!(out, "No findings.\n");
    }
    let mut sorted = f.to_vec();
    crate::finding::sort(&mut sorted);
    writeln!(
        out,
        "| severity | layer | finding | subject | observed | recommended | why | evidence | fix |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|")?;
    for x in &sorted {
        let sev = x.severity.as_str();
        let sev = if x.severity >= crate::finding::Severity::Warning {
            format!("**{sev}**")
        } else {
            sev.to_string()
        };
        writeln!(
            out,
            "| {sev} | {} | `{}` | {} | {} | {} | {} | {} | {} |",
            x.layer.as_str(),
            x.id.replace('`', "'"),
            cell_text(&x.subject.name),
            cell_text(&x.observed),
            cell_text(x.recommended.as_deref().unwrap_or("")),
            cell_text(&x.reason),
            cell_text(&evidence_and_measured(x)),
            cell_text(&x.change.as_ref().map(|c| c.describe()).unwrap_or_default()),
        )?;
    }
    writeln!(out)
}

/// The evidence, then what was measured of the change (tune's
/// before/after), in the one evidence column.
fn evidence_and_measured(x: &crate::finding::Finding) -> String {
    let mut s = x.evidence.detail.clone();
    for m in &x.measured {
        s.push_str(&format!("; measured: {}", m.line()));
    }
    if let Some(n) = &x.not_measured {
        s.push_str(&format!("; not measured: {n}"));
    }
    s.trim_start_matches("; ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::doc::Column;

    #[test]
    fn cells_escape_pipes_and_newlines() {
        let mut t = Table::new(vec![Column::text("a"), Column::num("b", Some("ms"))]);
        t.row(vec!["x|y\nz".into(), Cell::num(1.0, "1")]);
        let mut d = Document::new("T");
        d.table(t);
        let mut out = Vec::new();
        Markdown.export(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("| a | b (ms) |"), "{s}");
        assert!(s.contains("|---|---:|"), "{s}");
        assert!(s.contains("x\\|y<br>z"), "{s}");
    }

    /// Issue 39: a newline in a hostname (in a title, a heading, a
    /// paragraph, a note, a cell) started a heading of its own.
    #[test]
    fn newlines_and_control_characters_never_start_a_block() {
        let evil = "db1\n# x\x1b[31m";
        let mut d = Document::new(format!("probe on {evil}"));
        d.heading(format!("check on {evil}"));
        d.paragraph(format!("host {evil}\n- item\n1. one\n    code\n==="));
        d.note(Tone::Warn, format!("seen on {evil}"));
        let mut kv = KeyValues::new();
        kv.add("host", evil.to_string());
        d.key_values(kv);
        let mut out = Vec::new();
        Markdown.export(&d, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(!s.contains('\x1b'), "{s}");
        let lines: Vec<&str> = s.lines().collect();
        // The only headings are the two the document has, each one line.
        let headings: Vec<&&str> = lines.iter().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            headings,
            [
                &r"# probe on db1\\n\# x\\e\[31m",
                &r"## check on db1\\n\# x\\e\[31m"
            ],
            "{s}"
        );
        for l in &lines {
            let t = l.trim_start_matches("> ");
            assert!(
                !t.starts_with("- ")
                    && !t.starts_with("1. ")
                    && !t.starts_with("    ")
                    && !t.starts_with("===")
                    && !t.starts_with('#')
                    || l.starts_with("# ")
                    || l.starts_with("## "),
                "{l:?} opens a block:\n{s}"
            );
        }
        assert!(s.contains("host db1\n\\# x"), "{s}");
        assert!(s.contains("> **Warning:** seen on db1\n> \\# x"), "{s}");
        assert!(s.contains("| host | db1<br># x"), "{s}");
    }

    #[test]
    fn fence_outlasts_backticks_inside() {
        let mut out = Vec::new();
        fence("a ```` b\n", &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("`````text\n"), "{s}");
    }
}
