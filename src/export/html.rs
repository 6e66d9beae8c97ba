//! HTML: one self-contained page from documents.
//!
//! PLACEHOLDER: the `report` branch replaces this file with the real
//! renderer (charts as SVG, stack tree, print styles). This one keeps the
//! same signature and renders every block as plain, escaped HTML (headings,
//! paragraphs, key–value lists, tables; series as tables; no charts), so
//! `innotune tune` can write report.html until then.

use super::doc::{Block, Document, Tone};

/// Escape text for HTML element content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn tone_class(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => " class=\"good\"",
        Tone::Bad => " class=\"bad\"",
        Tone::Warn => " class=\"warn\"",
        Tone::Dim => " class=\"dim\"",
        Tone::Strong => " class=\"strong\"",
    }
}

fn table(out: &mut String, t: &super::doc::Table) {
    out.push_str("<table>\n");
    if let Some(c) = &t.title {
        out.push_str(&format!("<caption>{}</caption>\n", esc(c)));
    }
    out.push_str("<thead><tr>");
    for c in &t.columns {
        out.push_str(&format!("<th>{}</th>", esc(&c.header())));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            out.push_str(&format!("<td{}>{}</td>", tone_class(c.tone), esc(&c.text)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, text } => {
            let l = (*level).clamp(2, 6);
            out.push_str(&format!("<h{l}>{}</h{l}>\n", esc(text)));
        }
        Block::Paragraph(p) => out.push_str(&format!("<p>{}</p>\n", esc(p))),
        Block::Note { tone, text } => {
            out.push_str(&format!("<p{}>{}</p>\n", tone_class(*tone), esc(text)))
        }
        Block::Preformatted(s) => out.push_str(&format!("<pre>{}</pre>\n", esc(s))),
        Block::KeyValues(kv) => {
            out.push_str("<dl>\n");
            for (k, v) in &kv.0 {
                out.push_str(&format!(
                    "<dt>{}</dt><dd{}>{}</dd>\n",
                    esc(k),
                    tone_class(v.tone),
                    esc(&v.text)
                ));
            }
            out.push_str("</dl>\n");
        }
        Block::Table(t) => table(out, t),
        Block::Findings(fs) => {
            let mut fs = fs.clone();
            crate::finding::sort(&mut fs);
            out.push_str("<table class=\"findings\">\n<thead><tr><th>severity</th><th>finding</th><th>subject</th><th>observed</th><th>recommended</th><th>reason</th></tr></thead>\n<tbody>\n");
            for f in &fs {
                out.push_str(&format!(
                    "<tr><td{}>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    tone_class(Tone::of_severity(f.severity)),
                    esc(f.severity.as_str()),
                    esc(&f.id),
                    esc(&f.subject.name),
                    esc(&f.observed),
                    esc(f.recommended.as_deref().unwrap_or("")),
                    esc(&f.reason)
                ));
            }
            out.push_str("</tbody></table>\n");
        }
        Block::Series(s) => {
            // No charts here (the report branch draws them): the points as a table.
            let mut t = super::doc::Table::new(vec![
                super::doc::Column::text(s.x_label.as_str()),
                super::doc::Column::text("line"),
                super::doc::Column::num(s.y_label.as_str(), s.y_unit.as_deref()),
            ])
            .titled(s.title.as_str());
            for l in &s.lines {
                for p in &l.points {
                    t.row(vec![
                        p.x.as_str().into(),
                        l.name.as_str().into(),
                        super::doc::Cell::num(p.y, crate::export::text::fmt_num(p.y)),
                    ]);
                }
            }
            table(out, &t);
        }
    }
}

/// A self-contained HTML page (no external script, font or stylesheet)
/// with every document in order.
pub fn render_page(title: &str, docs: &[Document]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!("<title>{}</title>\n", esc(title)));
    out.push_str("<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #999;padding:.2em .5em;text-align:left}caption{font-weight:bold;text-align:left}.good{color:#1a6}.bad{color:#c22}.warn{color:#a60}.dim{color:#777}.strong{font-weight:bold}pre{background:#f4f4f4;padding:.5em}</style>\n");
    out.push_str("</head>\n<body>\n");
    out.push_str(&format!("<h1>{}</h1>\n", esc(title)));
    for d in docs {
        if !d.title.is_empty() && d.title != title {
            out.push_str(&format!("<h2>{}</h2>\n", esc(&d.title)));
        }
        for b in &d.blocks {
            block(&mut out, b);
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_renders_tables() {
        let mut d = Document::new("t");
        d.heading("A <b>");
        let mut t = super::super::doc::Table::new(vec![super::super::doc::Column::text("x")]);
        t.row(vec!["1 & 2".into()]);
        d.table(t);
        let h = render_page("T & t", &[d]);
        assert!(h.contains("<h2>A &lt;b&gt;</h2>"));
        assert!(h.contains("<td>1 &amp; 2</td>"));
        assert!(h.contains("<title>T &amp; t</title>"));
    }
}
