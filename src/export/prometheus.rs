//! `--format prometheus`: the Prometheus text exposition format, for
//! node_exporter's textfile collector (`--output
//! /var/lib/prometheus/node-exporter/innotune.prom`, written atomically).
//!
//! Unlike text, markdown and HTML this format does not render the
//! [`super::Document`]: metrics are numbers with labels, so a report that
//! supports it says what its metrics are ([`super::Report::metrics`]). Metric
//! names, HELP and TYPE lines are documented in docs/metrics.md.
//!
//! Why hand-written rather than the `prometheus` or `prometheus-client`
//! crates: those build a live registry for a scrape endpoint; innotune writes
//! one file per run, and the whole format it needs is `# HELP`, `# TYPE` and
//! `name{label="value"} number` lines with three escapes. Tests run the output
//! through `promtool check metrics`, the format's reference checker.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Gauge or counter; innotune only reports states and totals of one run, so
/// gauges are the norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
}

/// One metric family: a name, its HELP text, and its samples.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub help: String,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

#[derive(Debug, Clone)]
pub struct Sample {
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Metric {
    pub fn gauge(name: &str, help: &str) -> Metric {
        Metric {
            name: name.to_string(),
            help: help.to_string(),
            kind: Kind::Gauge,
            samples: Vec::new(),
        }
    }

    /// Add a sample; `labels` are (name, value) pairs.
    pub fn sample(&mut self, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.samples.push(Sample {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            value,
        });
        self
    }

    pub fn with(mut self, labels: &[(&str, &str)], value: f64) -> Self {
        self.sample(labels, value);
        self
    }
}

/// Label values escape backslash, double quote and newline; HELP text
/// escapes backslash and newline (the exposition format's rules).
fn escape(s: &str, quote: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The exposition text of `metrics`, families in the order given; a family
/// with no samples is left out (promtool rejects HELP without samples only
/// as a lint, but an empty family tells a reader nothing).
pub fn render(metrics: &[Metric]) -> String {
    let mut out = String::new();
    for m in metrics.iter().filter(|m| !m.samples.is_empty()) {
        let _ = writeln!(out, "# HELP {} {}", m.name, escape(&m.help, false));
        let kind = match m.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let _ = writeln!(out, "# TYPE {} {kind}", m.name);
        for s in &m.samples {
            out.push_str(&m.name);
            if !s.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in s.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape(v, true));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(s.value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values_and_help() {
        let m = Metric::gauge("innotune_x", "a \\ b\nc").with(&[("p", "a\"b\\c\nd")], 1.5);
        let s = render(&[m]);
        assert_eq!(
            s,
            "# HELP innotune_x a \\\\ b\\nc\n# TYPE innotune_x gauge\ninnotune_x{p=\"a\\\"b\\\\c\\nd\"} 1.5\n"
        );
    }

    #[test]
    fn integers_print_without_a_fraction_and_empty_families_are_dropped() {
        let a = Metric::gauge("innotune_a", "a").with(&[], 3.0);
        let b = Metric::gauge("innotune_b", "b");
        assert_eq!(
            render(&[a, b]),
            "# HELP innotune_a a\n# TYPE innotune_a gauge\ninnotune_a 3\n"
        );
    }
}
