//! HTML: one self-contained page from documents.
//!
//! The page works offline and from a ticket attachment: one file, the
//! stylesheet inline, charts as inline SVG (see [`super::chart`]), no
//! script, font, image or stylesheet fetched from anywhere. Text stays text
//! (selectable, searchable, copyable into a ticket), the palette is
//! Okabe–Ito (distinguishable with the common colour-vision deficiencies)
//! and every colour is doubled by a word or a shape, and `@media print`
//! lays it out for A4 with charts and findings kept whole on a page.

use super::chart;
use super::doc::{Align, Block, Cell, Document, Table, Tone, TreeNode};
use super::Exporter;
use crate::finding::Finding;
use std::fmt::Write as _;
use std::io::{self, Write};

pub use chart::esc;

/// The `--format html` exporter: one page with one document.
pub struct Html;

impl Exporter for Html {
    fn export(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        let title = if doc.title.is_empty() {
            "innotune"
        } else {
            doc.title.as_str()
        };
        out.write_all(render_page(title, std::slice::from_ref(doc)).as_bytes())
    }
}

/// Okabe–Ito: blue, orange, bluish green, vermillion, reddish purple, sky
/// blue, yellow (last: weakest on white). Tones use the darker shades of
/// the same hues so text keeps a 4.5:1 contrast.
const CSS: &str = r#"
:root{--fg:#1b1b1b;--muted:#5a5a5a;--line:#c8c8c8;--bg:#fff;--soft:#f3f4f6;
--good:#00704f;--bad:#b34000;--warn:#8a5a00;--note:#005a8c}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);max-width:62rem;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.6rem;margin:.4rem 0 .2rem}
h2{font-size:1.3rem;margin:1.8rem 0 .5rem;padding-bottom:.2rem;border-bottom:2px solid var(--fg)}
h3{font-size:1.1rem;margin:1.3rem 0 .4rem}
h4,h5,h6{font-size:1rem;margin:1rem 0 .3rem}
.meta{color:var(--muted);margin:0 0 1rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.92rem;max-width:100%}
caption{font-weight:600;text-align:left;padding:.2rem 0}
th,td{border:1px solid var(--line);padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.good{color:var(--good);font-weight:600}
.bad{color:var(--bad);font-weight:700}
.warn{color:var(--warn);font-weight:600}
.dim{color:var(--muted)}
.strong{font-weight:700}
pre{background:var(--soft);padding:.6rem .8rem;overflow-x:auto;font-size:.85rem;white-space:pre-wrap}
code{font-size:.9em}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.5rem 0 1rem}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0}
p.note{border-left:4px solid var(--note);padding:.3rem .7rem;background:var(--soft)}
p.note.bad{border-color:var(--bad)}p.note.warn{border-color:var(--warn)}p.note.good{border-color:var(--good)}
figure{margin:1rem 0;page-break-inside:avoid;break-inside:avoid}
figcaption{font-weight:600;margin-bottom:.2rem}
svg.chart{width:100%;max-width:40rem;height:auto;display:block;font-family:inherit}
svg.chart .grid{stroke:#e3e3e3;stroke-width:1}
svg.chart .axis{stroke:#333;stroke-width:1}
svg.chart .tick{font-size:11px;fill:#333}
svg.chart .label{font-size:12px;fill:#1b1b1b;font-weight:600}
svg.chart .val{font-size:10px;fill:#1b1b1b}
svg.chart .ci{stroke:#1b1b1b;stroke-width:1.4;fill:none}
svg .bar{stroke:#1b1b1b;stroke-width:.6}
svg .line{fill:none;stroke-width:2.2}
svg .mark{stroke:#1b1b1b;stroke-width:.7}
svg .d1{stroke-dasharray:7 4}svg .d2{stroke-dasharray:2 3}svg .d3{stroke-dasharray:10 3 2 3}
.s0{fill:#0072B2;stroke:#0072B2}.s1{fill:#E69F00;stroke:#E69F00}.s2{fill:#009E73;stroke:#009E73}
.s3{fill:#D55E00;stroke:#D55E00}.s4{fill:#CC79A7;stroke:#CC79A7}.s5{fill:#56B4E9;stroke:#56B4E9}.s6{fill:#F0E442;stroke:#F0E442}
svg .bar.s0,svg .bar.s1,svg .bar.s2,svg .bar.s3,svg .bar.s4,svg .bar.s5,svg .bar.s6,svg .mark{stroke:#1b1b1b}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;padding:0;margin:.2rem 0 0;font-size:.9rem}
ul.legend li{display:flex;align-items:center;gap:.35rem}
svg.key{width:28px;height:14px}
.findings{display:flex;flex-direction:column;gap:.6rem;margin:.6rem 0 1rem}
article.finding{border:1px solid var(--line);border-left:6px solid var(--muted);padding:.45rem .8rem;page-break-inside:avoid;break-inside:avoid}
article.finding.critical{border-left-color:var(--bad)}
article.finding.warning{border-left-color:#E69F00}
article.finding.notice{border-left-color:#0072B2}
article.finding header{display:flex;flex-wrap:wrap;gap:.2rem .7rem;align-items:baseline}
.sev{font-size:.78rem;font-weight:700;text-transform:uppercase;letter-spacing:.04em;padding:.05rem .4rem;border:1.5px solid currentColor;border-radius:3px}
.sev.critical{color:var(--bad)}.sev.warning{color:var(--warn)}.sev.notice{color:var(--note)}.sev.info{color:var(--muted)}
article.finding dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.35rem 0 0}
article.finding dt{color:var(--muted)}article.finding dd{margin:0}
ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:1.3rem}
ul.tree{padding-left:0;margin:.5rem 0 1rem}
ul.tree li{position:relative;padding:.12rem 0 .12rem .3rem}
ul.tree ul li::before{content:"";position:absolute;left:-.9rem;top:0;height:.85rem;width:.8rem;border-left:1.5px solid #777;border-bottom:1.5px solid #777}
ul.tree ul li:not(:last-child)::after{content:"";position:absolute;left:-.9rem;top:.85rem;bottom:0;border-left:1.5px solid #777}
.node{font-weight:700;font-family:ui-monospace,"DejaVu Sans Mono",monospace}
.node-detail{color:var(--muted);margin-left:.5rem}
footer{margin-top:2rem;color:var(--muted);font-size:.85rem}
@page{size:A4;margin:14mm 12mm}
@media print{
body{max-width:none;padding:0;font-size:10pt}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
h2{page-break-after:avoid;break-after:avoid}
h3,caption,figcaption{page-break-after:avoid;break-after:avoid}
table,tr,pre{page-break-inside:avoid;break-inside:avoid}
svg.chart{max-width:170mm}
a{color:inherit}
}
"#;

/// Class attribute for a tone (empty for plain, so plain cells stay `<td>`).
fn tone_class(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => "good",
        Tone::Bad => "bad",
        Tone::Warn => "warn",
        Tone::Dim => "dim",
        Tone::Strong => "strong",
    }
}

fn attr_class(classes: &[&str]) -> String {
    let c: Vec<&str> = classes.iter().copied().filter(|c| !c.is_empty()).collect();
    if c.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", c.join(" "))
    }
}

fn cell(out: &mut String, c: &Cell, align: Align) {
    let num = if align == Align::Right { "num" } else { "" };
    let _ = write!(
        out,
        "<td{}>{}</td>",
        attr_class(&[num, tone_class(c.tone)]),
        esc(&c.text)
    );
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<table>\n");
    if let Some(c) = &t.title {
        let _ = writeln!(out, "<caption>{}</caption>", esc(c));
    }
    out.push_str("<thead><tr>");
    for c in &t.columns {
        let num = if c.align == Align::Right { "num" } else { "" };
        let _ = write!(out, "<th{}>{}</th>", attr_class(&[num]), esc(&c.header()));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let align = t.columns.get(i).map(|c| c.align).unwrap_or_default();
            cell(out, c, align);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// Text with `http(s)://` references turned into links (never fetched:
/// only followed when the reader clicks).
fn linked(s: &str) -> String {
    if s.starts_with("http://") || s.starts_with("https://") {
        format!("<a href=\"{0}\">{0}</a>", esc(s))
    } else {
        esc(s)
    }
}

/// Findings worst first, each a card: what, observed → recommended, why,
/// the evidence and the change that fixes it.
fn findings(out: &mut String, fs: &[Finding]) {
    if fs.is_empty() {
        out.push_str("<p>No findings.</p>\n");
        return;
    }
    let mut fs = fs.to_vec();
    crate::finding::sort(&mut fs);
    out.push_str("<div class=\"findings\">\n");
    for f in &fs {
        let sev = f.severity.as_str();
        let _ = write!(
            out,
            "<article class=\"finding {sev}\"><header><span class=\"sev {sev}\">{sev}</span>\
             <strong>{}</strong><span class=\"dim\">{} · {}</span></header><dl>",
            esc(&f.id),
            esc(f.layer.as_str()),
            esc(&f.subject.name)
        );
        let _ = write!(out, "<dt>observed</dt><dd>{}</dd>", esc(&f.observed));
        if let Some(r) = &f.recommended {
            let _ = write!(
                out,
                "<dt>recommended</dt><dd class=\"strong\">{}</dd>",
                esc(r)
            );
        }
        let _ = write!(out, "<dt>why</dt><dd>{}</dd>", esc(&f.reason));
        let source = serde_json::to_value(f.evidence.source)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<dt>evidence</dt><dd><em>{}</em>{}{}</dd>",
            esc(&source),
            if f.evidence.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", esc(&f.evidence.detail))
            },
            f.evidence
                .reference
                .as_deref()
                .map(|r| format!(" ({})", linked(r)))
                .unwrap_or_default()
        );
        if let Some(c) = &f.change {
            let _ = write!(
                out,
                "<dt>fix</dt><dd><code>{}</code></dd>",
                esc(&c.describe())
            );
        }
        for m in &f.measured {
            let class = match m.verdict.as_str() {
                "faster" => " class=\"good\"",
                "slower" => " class=\"bad\"",
                _ => "",
            };
            let _ = write!(out, "<dt>measured</dt><dd{class}>{}</dd>", esc(&m.line()));
        }
        if let Some(n) = &f.not_measured {
            let _ = write!(
                out,
                "<dt>measured</dt><dd class=\"dim\">not measured: {}</dd>",
                esc(n)
            );
        }
        out.push_str("</dl></article>\n");
    }
    out.push_str("</div>\n");
}

/// Nested lists, one per level, drawn as a tree by the stylesheet.
fn tree(out: &mut String, nodes: &[TreeNode]) {
    out.push_str("<ul class=\"tree\">");
    let mut depth = 0usize;
    let mut open_li = false;
    for (i, n) in nodes.iter().enumerate() {
        // A node deeper than one level below its predecessor hangs under it.
        let d = if i == 0 { 0 } else { n.depth.min(depth + 1) };
        if i > 0 {
            if d > depth {
                out.push_str("<ul>");
            } else {
                out.push_str("</li>");
                for _ in d..depth {
                    out.push_str("</ul></li>");
                }
            }
        }
        let _ = write!(out, "<li><span class=\"node\">{}</span>", esc(&n.label));
        if !n.detail.is_empty() {
            let _ = write!(out, "<span class=\"node-detail\">{}</span>", esc(&n.detail));
        }
        depth = d;
        open_li = true;
    }
    if open_li {
        out.push_str("</li>");
        for _ in 0..depth {
            out.push_str("</ul></li>");
        }
    }
    out.push_str("</ul>\n");
}

/// Renders blocks, numbering charts so their ids are unique in the page.
struct Page {
    out: String,
    charts: usize,
}

impl Page {
    fn block(&mut self, b: &Block) {
        let out = &mut self.out;
        match b {
            Block::Heading { level, text } => {
                let l = (*level).clamp(2, 6);
                let _ = writeln!(out, "<h{l}>{}</h{l}>", esc(text));
            }
            Block::Paragraph(p) => {
                let _ = writeln!(out, "<p>{}</p>", esc(p));
            }
            Block::Note { tone, text } => {
                let label = match tone {
                    Tone::Bad => "Error: ",
                    Tone::Warn => "Warning: ",
                    _ => "",
                };
                let _ = writeln!(
                    out,
                    "<p{}><strong>{label}</strong>{}</p>",
                    attr_class(&["note", tone_class(*tone)]),
                    esc(text)
                );
            }
            Block::Preformatted(s) => {
                let _ = writeln!(out, "<pre>{}</pre>", esc(s));
            }
            Block::KeyValues(kv) => {
                out.push_str("<dl class=\"kv\">\n");
                for (k, v) in &kv.0 {
                    let _ = writeln!(
                        out,
                        "<dt>{}</dt><dd{}>{}</dd>",
                        esc(k),
                        attr_class(&[tone_class(v.tone)]),
                        esc(&v.text)
                    );
                }
                out.push_str("</dl>\n");
            }
            Block::Table(t) => table(out, t),
            Block::Findings(fs) => findings(out, fs),
            Block::Series(s) => {
                if chart::drawable(s) {
                    self.charts += 1;
                    let id = format!("chart{}", self.charts);
                    let _ = writeln!(
                        out,
                        "<figure><figcaption>{}</figcaption>{}{}</figure>",
                        esc(&s.title),
                        chart::svg(s, &id),
                        chart::legend(s)
                    );
                } else {
                    let _ = writeln!(out, "<p class=\"dim\">{}: no data.</p>", esc(&s.title));
                }
            }
            Block::Tree(nodes) => tree(out, nodes),
        }
    }
}

/// A self-contained HTML page (no external script, font or stylesheet)
/// with every document in order.
pub fn render_page(title: &str, docs: &[Document]) -> String {
    let mut p = Page {
        out: String::new(),
        charts: 0,
    };
    p.out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    );
    let _ = writeln!(p.out, "<title>{}</title>", esc(title));
    let _ = writeln!(p.out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(p.out, "<h1>{}</h1>", esc(title));
    let _ = writeln!(
        p.out,
        "<p class=\"meta\">innotune {} · generated {}</p>",
        env!("CARGO_PKG_VERSION"),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    );
    for d in docs {
        if !d.title.is_empty() && d.title != title {
            let _ = writeln!(p.out, "<h2>{}</h2>", esc(&d.title));
        }
        for b in &d.blocks {
            p.block(b);
        }
    }
    p.out.push_str("<footer>Made by innotune; self-contained (no external resources).</footer>\n</body>\n</html>\n");
    p.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::doc::{ChartKind, Column, Line, Point, Series};

    #[test]
    fn escapes_and_renders_tables() {
        let mut d = Document::new("t");
        d.heading("A <b>");
        let mut t = Table::new(vec![Column::text("x"), Column::num("n", Some("ms"))]);
        t.row(vec!["1 & 2".into(), Cell::num(3.0, "3")]);
        d.table(t);
        let h = render_page("T & t", &[d]);
        assert!(h.contains("<h2>A &lt;b&gt;</h2>"));
        assert!(h.contains("<td>1 &amp; 2</td>"));
        assert!(h.contains("<td class=\"num\">3</td>"));
        assert!(h.contains("<title>T &amp; t</title>"));
    }

    #[test]
    fn self_contained_and_charts_unique() {
        let mut d = Document::new("t");
        for _ in 0..2 {
            d.series(Series {
                title: "s".into(),
                kind: ChartKind::Bar,
                x_label: "x".into(),
                y_label: "y".into(),
                y_unit: None,
                lines: vec![Line {
                    name: "a".into(),
                    points: vec![Point {
                        x: "k".into(),
                        y: 1.0,
                        ci: Some((0.5, 1.5)),
                    }],
                }],
                table_fallback: false,
            });
        }
        let h = render_page("t", &[d]);
        assert!(h.contains("id=\"chart1\"") && h.contains("id=\"chart2\""));
        for bad in ["<script", "<link", "@import", "src=\"http", "url(http"] {
            assert!(!h.contains(bad), "{bad}");
        }
        assert!(h.contains("@media print") && h.contains("size:A4"));
    }

    #[test]
    fn tree_nests_by_depth() {
        let n = |depth, label: &str| TreeNode {
            depth,
            label: label.into(),
            detail: String::new(),
        };
        let mut s = String::new();
        tree(
            &mut s,
            &[n(0, "dm-0"), n(1, "sda1"), n(2, "sda"), n(1, "sdb1")],
        );
        assert_eq!(
            s,
            "<ul class=\"tree\"><li><span class=\"node\">dm-0</span><ul><li><span class=\"node\">sda1</span><ul><li><span class=\"node\">sda</span></li></ul></li><li><span class=\"node\">sdb1</span></li></ul></li></ul>\n"
        );
    }
}
