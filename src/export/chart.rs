//! SVG charts for the HTML exporter, drawn from a [`Series`].
//!
//! Hand-built rather than `plotters`' SVG backend, because what the report
//! needs is narrow and specific: bars with two-sided 95% CI whiskers,
//! grouped bars, lines with markers, all as plain `<rect>`, `<path>` and
//! `<text>` elements styled by CSS classes of the page. That keeps the
//! text real and selectable, lets the page's colour-blind-safe palette and
//! its print stylesheet apply, gives every mark a `<title>` with its exact
//! number and interval, and costs no dependency (no font metrics, nothing
//! to compile on a 2-core build host). The whole drawing is ~300 lines.
//!
//! Colour is never the only cue: bar groups carry their category under the
//! axis, lines differ in dash pattern and marker shape too, and the legend
//! names every series.

use super::doc::{ChartKind, Series};
use super::text::fmt_num;
use std::fmt::Write as _;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 58.0;

/// Escape text for SVG/HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// Number of distinct series styles (palette colours, dashes, markers).
pub const STYLES: usize = 7;

/// Does the series have anything to draw?
pub fn drawable(s: &Series) -> bool {
    s.lines
        .iter()
        .flat_map(|l| &l.points)
        .any(|p| p.y.is_finite())
}

/// "Nice" axis: a step of 1, 2, 2.5 or 5 × 10ⁿ giving about five ticks,
/// and the top tick at or above `max`.
fn nice_axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    } * mag;
    let top = (max / step).ceil() * step;
    (step, top.max(step))
}

fn y_max(s: &Series) -> f64 {
    s.lines
        .iter()
        .flat_map(|l| &l.points)
        .map(|p| match p.ci {
            Some((_, hi)) if hi.is_finite() => hi.max(p.y),
            _ => p.y,
        })
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

fn y_label(s: &Series) -> String {
    match &s.y_unit {
        Some(u) if !u.is_empty() => format!("{} ({u})", s.y_label),
        _ => s.y_label.clone(),
    }
}

/// Categories on x in first-seen order over all lines.
fn categories(s: &Series) -> Vec<String> {
    let mut xs: Vec<String> = Vec::new();
    for l in &s.lines {
        for p in &l.points {
            if !xs.contains(&p.x) {
                xs.push(p.x.clone());
            }
        }
    }
    xs
}

/// A tick label: whole numbers without decimals when the step is whole.
fn tick(v: f64, step: f64) -> String {
    if step.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

/// The y axis, grid and axis titles; returns the y → pixel mapping's top.
fn frame(out: &mut String, s: &Series, top: f64, step: f64) {
    let plot_h = H - TOP - BOTTOM;
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        let y = TOP + plot_h - v / top * plot_h;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            esc(&tick(v, step))
        );
        v += step;
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{:.1}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
         <text class=\"label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        TOP + plot_h,
        W - RIGHT,
        TOP + plot_h,
        TOP + plot_h,
        TOP + plot_h / 2.0,
        esc(&y_label(s)),
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 6.0,
        esc(&s.x_label),
    );
}

/// An x label, one `<tspan>` per line of `text`.
fn x_label(out: &mut String, x: f64, text: &str, rotate: bool) {
    let y = H - BOTTOM + 16.0;
    if rotate {
        let _ = write!(
            out,
            "<text class=\"tick\" transform=\"translate({x:.1} {y:.1}) rotate(-20)\" text-anchor=\"end\">{}</text>",
            esc(&text.replace('\n', " "))
        );
        return;
    }
    let _ = write!(
        out,
        "<text class=\"tick\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"middle\">"
    );
    for (i, part) in text.split('\n').enumerate() {
        let dy = if i == 0 { 0.0 } else { 13.0 };
        let _ = write!(out, "<tspan x=\"{x:.1}\" dy=\"{dy}\">{}</tspan>", esc(part));
    }
    out.push_str("</text>");
}

fn ci_text(ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!(" (95% CI {}–{})", fmt_num(lo), fmt_num(hi)),
        None => String::new(),
    }
}

fn open(out: &mut String, id: &str, s: &Series) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {W} {H}\" \
         role=\"img\" aria-labelledby=\"{id}\"><title id=\"{id}\">{}</title>",
        esc(&s.title)
    );
}

/// Grouped bars: one group per category on x, one bar per line, each with
/// its 95% confidence interval as a whisker and its value above.
fn bars(out: &mut String, id: &str, s: &Series) {
    let cats = categories(s);
    // Headroom above the highest whisker for its value label.
    let (step, top) = nice_axis(y_max(s) * 1.08);
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let y_of = |v: f64| TOP + plot_h - (v.max(0.0) / top).min(1.0) * plot_h;
    open(out, id, s);
    frame(out, s, top, step);
    let group_w = plot_w / cats.len().max(1) as f64;
    let n = s.lines.len().max(1);
    let bar_w = (group_w * 0.72 / n as f64).min(72.0);
    let longest = cats
        .iter()
        .flat_map(|c| c.split('\n'))
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    let rotate = longest as f64 * 6.6 > group_w;
    for (ci, cat) in cats.iter().enumerate() {
        let gx = LEFT + group_w * ci as f64;
        let first = gx + (group_w - bar_w * n as f64) / 2.0;
        for (li, line) in s.lines.iter().enumerate() {
            let Some(p) = line.points.iter().find(|p| &p.x == cat) else {
                continue;
            };
            if !p.y.is_finite() {
                continue;
            }
            let x = first + bar_w * li as f64;
            let y = y_of(p.y);
            let _ = write!(
                out,
                "<rect class=\"bar s{}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\">\
                 <title>{}: {} {}{}</title></rect>",
                li % STYLES,
                x + 1.0,
                (bar_w - 2.0).max(1.0),
                (TOP + plot_h - y).max(0.5),
                esc(&format!("{} {}", line.name, cat.replace('\n', " "))),
                esc(&fmt_num(p.y)),
                esc(s.y_unit.as_deref().unwrap_or("")),
                esc(&ci_text(p.ci))
            );
            let cx = x + bar_w / 2.0;
            let mut label_y = y - 4.0;
            if let Some((lo, hi)) = p.ci {
                if lo.is_finite() && hi.is_finite() {
                    let (yl, yh) = (y_of(lo), y_of(hi));
                    let half = (bar_w / 4.0).clamp(2.0, 7.0);
                    let _ = write!(
                        out,
                        "<path class=\"ci\" d=\"M{cx:.1} {yl:.1}V{yh:.1}M{:.1} {yl:.1}H{:.1}M{:.1} {yh:.1}H{:.1}\"/>",
                        cx - half,
                        cx + half,
                        cx - half,
                        cx + half
                    );
                    label_y = label_y.min(yh - 4.0);
                }
            }
            if bar_w >= 26.0 {
                let _ = write!(
                    out,
                    "<text class=\"val\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    label_y.max(TOP + 8.0),
                    esc(&fmt_num(p.y))
                );
            }
        }
        x_label(out, gx + group_w / 2.0, cat, rotate);
    }
    out.push_str("</svg>");
}

/// How x maps to pixels on a line chart.
enum XScale {
    /// Evenly spaced categories.
    Cat(Vec<String>),
    /// Numbers; log₂ when they span a factor of 8 or more (thread ladders
    /// 1, 2, 4 … 64 read evenly).
    Num { lo: f64, hi: f64, log: bool },
}

impl XScale {
    fn of(s: &Series) -> XScale {
        let cats = categories(s);
        let nums: Option<Vec<f64>> = cats.iter().map(|c| c.trim().parse::<f64>().ok()).collect();
        match nums {
            Some(v) if !v.is_empty() && v.iter().all(|x| x.is_finite()) => {
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let log = lo > 0.0 && hi / lo >= 8.0;
                XScale::Num { lo, hi, log }
            }
            _ => XScale::Cat(cats),
        }
    }

    /// Pixel x of a point, or None when it cannot be placed.
    fn px(&self, x: &str) -> Option<f64> {
        let plot_w = W - LEFT - RIGHT;
        let pad = 24.0;
        let span = plot_w - 2.0 * pad;
        match self {
            XScale::Cat(c) => {
                let i = c.iter().position(|v| v == x)?;
                Some(if c.len() == 1 {
                    LEFT + plot_w / 2.0
                } else {
                    LEFT + pad + span * i as f64 / (c.len() - 1) as f64
                })
            }
            XScale::Num { lo, hi, log } => {
                let v: f64 = x.trim().parse().ok()?;
                if hi <= lo {
                    return Some(LEFT + plot_w / 2.0);
                }
                let f = if *log {
                    (v.log2() - lo.log2()) / (hi.log2() - lo.log2())
                } else {
                    (v - lo) / (hi - lo)
                };
                Some(LEFT + pad + span * f)
            }
        }
    }
}

/// A marker of shape `i` (circle, square, triangle, diamond, …) at (x, y).
fn marker(out: &mut String, i: usize, x: f64, y: f64, title: &str) {
    let class = format!("mark s{}", i % STYLES);
    let shape = match i % 4 {
        0 => format!("<circle class=\"{class}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\">"),
        1 => format!(
            "<rect class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\">",
            x - 4.0,
            y - 4.0
        ),
        2 => format!(
            "<path class=\"{class}\" d=\"M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z\">",
            y - 5.0,
            x + 5.0,
            y + 4.0,
            x - 5.0,
            y + 4.0
        ),
        _ => format!(
            "<path class=\"{class}\" d=\"M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z\">",
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        ),
    };
    let close = if shape.starts_with("<circle") {
        "</circle>"
    } else if shape.starts_with("<rect") {
        "</rect>"
    } else {
        "</path>"
    };
    let _ = write!(out, "{shape}<title>{}</title>{close}", esc(title));
}

/// Lines with markers (and CI whiskers where given), e.g. TPS by threads
/// before and after.
fn lines(out: &mut String, id: &str, s: &Series) {
    let scale = XScale::of(s);
    // Headroom above the highest whisker for its value label.
    let (step, top) = nice_axis(y_max(s) * 1.08);
    let plot_h = H - TOP - BOTTOM;
    let y_of = |v: f64| TOP + plot_h - (v.max(0.0) / top).min(1.0) * plot_h;
    open(out, id, s);
    frame(out, s, top, step);
    for cat in categories(s) {
        if let Some(x) = scale.px(&cat) {
            x_label(out, x, &cat, false);
        }
    }
    for (li, line) in s.lines.iter().enumerate() {
        let pts: Vec<(f64, f64, &super::doc::Point)> = line
            .points
            .iter()
            .filter(|p| p.y.is_finite())
            .filter_map(|p| Some((scale.px(&p.x)?, y_of(p.y), p)))
            .collect();
        if pts.len() > 1 {
            let mut d = String::new();
            for (i, (x, y, _)) in pts.iter().enumerate() {
                let _ = write!(d, "{}{x:.1} {y:.1}", if i == 0 { "M" } else { "L" });
            }
            let _ = write!(
                out,
                "<path class=\"line s{} d{}\" d=\"{d}\"/>",
                li % STYLES,
                li % 4
            );
        }
        for (x, y, p) in &pts {
            if let Some((lo, hi)) = p.ci {
                if lo.is_finite() && hi.is_finite() {
                    let _ = write!(
                        out,
                        "<path class=\"ci\" d=\"M{x:.1} {:.1}V{:.1}M{:.1} {:.1}H{:.1}M{:.1} {:.1}H{:.1}\"/>",
                        y_of(lo),
                        y_of(hi),
                        x - 4.0,
                        y_of(lo),
                        x + 4.0,
                        x - 4.0,
                        y_of(hi),
                        x + 4.0
                    );
                }
            }
            let title = format!(
                "{} at {} {}: {} {}{}",
                line.name,
                s.x_label,
                p.x,
                fmt_num(p.y),
                s.y_unit.as_deref().unwrap_or(""),
                ci_text(p.ci)
            );
            marker(out, li, *x, *y, &title);
        }
    }
    out.push_str("</svg>");
}

/// A legend as HTML (selectable, wraps), with each series' swatch or
/// marker style; empty for a single unnamed series.
pub fn legend(s: &Series) -> String {
    if s.lines.len() < 2 {
        return String::new();
    }
    let mut out = String::from("<ul class=\"legend\">");
    for (i, l) in s.lines.iter().enumerate() {
        let key = match s.kind {
            ChartKind::Bar => format!(
                "<svg class=\"key\" viewBox=\"0 0 14 14\" aria-hidden=\"true\"><rect class=\"bar s{}\" x=\"1\" y=\"1\" width=\"12\" height=\"12\"/></svg>",
                i % STYLES
            ),
            ChartKind::Line => {
                let mut m = String::new();
                marker(&mut m, i, 14.0, 7.0, &l.name);
                format!(
                    "<svg class=\"key\" viewBox=\"0 0 28 14\" aria-hidden=\"true\"><path class=\"line s{} d{}\" d=\"M1 7H27\"/>{m}</svg>",
                    i % STYLES,
                    i % 4
                )
            }
        };
        let _ = write!(out, "<li>{key}{}</li>", esc(&l.name));
    }
    out.push_str("</ul>");
    out
}

/// The chart as one `<svg>` element; `id` must be unique in the page.
pub fn svg(s: &Series, id: &str) -> String {
    let mut out = String::new();
    match s.kind {
        ChartKind::Bar => bars(&mut out, id, s),
        ChartKind::Line => lines(&mut out, id, s),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::doc::{Line, Point};

    fn series(kind: ChartKind) -> Series {
        Series {
            title: "t <x>".into(),
            kind,
            x_label: "threads".into(),
            y_label: "TPS".into(),
            y_unit: Some("tps".into()),
            lines: vec![
                Line {
                    name: "before".into(),
                    points: vec![
                        Point {
                            x: "1".into(),
                            y: 100.0,
                            ci: Some((90.0, 110.0)),
                        },
                        Point {
                            x: "8".into(),
                            y: 400.0,
                            ci: None,
                        },
                    ],
                },
                Line {
                    name: "after".into(),
                    points: vec![Point {
                        x: "1".into(),
                        y: 120.0,
                        ci: None,
                    }],
                },
            ],
            table_fallback: false,
        }
    }

    #[test]
    fn nice_axis_covers_max() {
        for m in [0.3, 1.0, 7.0, 99.0, 101.0, 12345.0] {
            let (step, top) = nice_axis(m);
            assert!(top >= m, "{m}: top {top}");
            assert!(top / step <= 10.0 + 1e-9, "{m}: {step} {top}");
        }
    }

    #[test]
    fn bars_have_whiskers_and_escaped_titles() {
        let s = svg(&series(ChartKind::Bar), "c1");
        assert_eq!(s.matches("<rect class=\"bar").count(), 3);
        assert_eq!(s.matches("class=\"ci\"").count(), 1);
        assert!(s.contains("<title id=\"c1\">t &lt;x&gt;</title>"));
        assert!(s.contains("95% CI 90.00–110.0"), "{s}");
    }

    #[test]
    fn lines_use_log_scale_for_thread_ladders() {
        let s = svg(&series(ChartKind::Line), "c2");
        assert_eq!(
            s.matches("class=\"line").count(),
            1,
            "one line has two points"
        );
        assert!(matches!(
            XScale::of(&series(ChartKind::Line)),
            XScale::Num { log: true, .. }
        ));
        assert!(legend(&series(ChartKind::Line)).contains("after"));
    }
}
