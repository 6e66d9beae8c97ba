//! The small document model every report turns itself into.
//!
//! Why a model instead of each report writing each format: with R reports
//! and F formats, hand-written renderers grow as R×F. A report describes
//! *what* it has to say once (sections of key–value pairs, tables whose
//! columns carry units, findings, series for charts, verbatim blocks where a
//! peer tool's layout must be kept); each exporter decides *how* a format
//! shows it. Adding a format is one file in `export/`; adding a report is
//! one `document()` method.
//!
//! JSON is not produced from this model: it serialises the typed report
//! itself (see [`super::json`]), because scripts want every field, not a
//! presentation of them.

use crate::finding::{Finding, Severity};

/// A rendered report: a title and blocks in reading order.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Document {
    pub fn new(title: impl Into<String>) -> Self {
        Document {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    pub fn push(&mut self, b: Block) -> &mut Self {
        self.blocks.push(b);
        self
    }

    pub fn heading(&mut self, text: impl Into<String>) -> &mut Self {
        self.push(Block::Heading {
            level: 2,
            text: text.into(),
        })
    }

    pub fn subheading(&mut self, text: impl Into<String>) -> &mut Self {
        self.push(Block::Heading {
            level: 3,
            text: text.into(),
        })
    }

    pub fn paragraph(&mut self, text: impl Into<String>) -> &mut Self {
        self.push(Block::Paragraph(text.into()))
    }

    pub fn note(&mut self, tone: Tone, text: impl Into<String>) -> &mut Self {
        self.push(Block::Note {
            tone,
            text: text.into(),
        })
    }

    pub fn preformatted(&mut self, text: impl Into<String>) -> &mut Self {
        self.push(Block::Preformatted(text.into()))
    }

    pub fn key_values(&mut self, kv: KeyValues) -> &mut Self {
        if !kv.0.is_empty() {
            self.push(Block::KeyValues(kv));
        }
        self
    }

    pub fn table(&mut self, t: Table) -> &mut Self {
        self.push(Block::Table(t))
    }

    pub fn findings(&mut self, f: &[Finding]) -> &mut Self {
        self.push(Block::Findings(f.to_vec()))
    }

    pub fn series(&mut self, s: Series) -> &mut Self {
        self.push(Block::Series(s))
    }

    pub fn tree(&mut self, nodes: Vec<TreeNode>) -> &mut Self {
        if !nodes.is_empty() {
            self.push(Block::Tree(nodes));
        }
        self
    }
}

/// One piece of a document.
#[derive(Debug, Clone)]
pub enum Block {
    /// Level 2 = section, 3 = subsection (the title is level 1).
    Heading {
        level: u8,
        text: String,
    },
    /// Prose, wrapped by the reader.
    Paragraph(String),
    /// A remark with a tone (a warning, a verdict).
    Note {
        tone: Tone,
        text: String,
    },
    /// Verbatim text kept as is: a peer tool's report layout (sysbench's,
    /// fio's) that users diff against, or an ASCII histogram.
    Preformatted(String),
    KeyValues(KeyValues),
    Table(Table),
    /// Findings, rendered worst first, grouped by layer.
    Findings(Vec<Finding>),
    /// Data for a chart (HTML draws it; text and markdown show it as a table
    /// only when `table_fallback` is set, since the numbers are usually in a
    /// table already).
    Series(Series),
    /// A hierarchy such as the device stack (mount → dm → partitions →
    /// disks): HTML draws it as a tree, text and markdown indent it.
    Tree(Vec<TreeNode>),
}

/// One node of a [`Block::Tree`], in depth-first order.
#[derive(Debug, Clone)]
pub struct TreeNode {
    /// 0 for a root, +1 per level below it.
    pub depth: usize,
    /// The node's name (`dm-0`).
    pub label: String,
    /// What it is (`lvm vg0-mysql, scheduler none`).
    pub detail: String,
}

impl TreeNode {
    /// The node as one indented text line: `   └─ sda (sata-scsi)`.
    pub fn line(&self) -> String {
        let name = match self.depth {
            0 => self.label.clone(),
            n => format!("{}└─ {}", "   ".repeat(n - 1), self.label),
        };
        if self.detail.is_empty() {
            name
        } else {
            format!("{name} ({})", self.detail)
        }
    }
}

/// How a value should read: exporters map it to colour, emphasis or words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Plain,
    Good,
    Bad,
    Warn,
    Dim,
    Strong,
}

impl Tone {
    pub fn of_severity(s: Severity) -> Tone {
        match s {
            Severity::Critical => Tone::Bad,
            Severity::Warning => Tone::Warn,
            Severity::Notice => Tone::Strong,
            Severity::Info => Tone::Plain,
        }
    }
}

/// A value in a table or a key–value section.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    /// The text shown (already formatted, units in the column header).
    pub text: String,
    /// The number behind it, for exporters that sort or chart.
    pub value: Option<f64>,
    pub tone: Tone,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            value: None,
            tone: Tone::Plain,
        }
    }

    /// A number shown as `text`.
    pub fn num(value: f64, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: Some(value),
            tone: Tone::Plain,
        }
    }

    pub fn empty() -> Cell {
        Cell::default()
    }

    pub fn tone(mut self, t: Tone) -> Cell {
        self.tone = t;
        self
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::text(s)
    }
}

impl From<std::borrow::Cow<'_, str>> for Cell {
    fn from(s: std::borrow::Cow<'_, str>) -> Cell {
        Cell::text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::text(s)
    }
}

impl<T: std::fmt::Display> From<&crate::host::Known<T>> for Cell {
    fn from(k: &crate::host::Known<T>) -> Cell {
        match k {
            crate::host::Known::Value(v) => Cell::text(v.to_string()),
            crate::host::Known::Unknown { unknown } => {
                Cell::text(format!("unknown ({unknown})")).tone(Tone::Dim)
            }
        }
    }
}

/// An ordered key–value section (`Mount: /data (xfs)`).
#[derive(Debug, Clone, Default)]
pub struct KeyValues(pub Vec<(String, Cell)>);

impl KeyValues {
    pub fn new() -> Self {
        KeyValues(Vec::new())
    }

    pub fn add(&mut self, key: impl Into<String>, value: impl Into<Cell>) -> &mut Self {
        self.0.push((key.into(), value.into()));
        self
    }
}

/// Column alignment; numbers are right-aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

/// A table column: its name and the unit every value in it is in.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    /// `µs`, `IOPS`, `MiB/s`, `%`…; shown in the header as `name (unit)`.
    pub unit: Option<String>,
    pub align: Align,
}

impl Column {
    pub fn text(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            unit: None,
            align: Align::Left,
        }
    }

    /// A right-aligned numeric column, with its unit when it has one.
    pub fn num(name: impl Into<String>, unit: Option<&str>) -> Column {
        Column {
            name: name.into(),
            unit: unit.map(str::to_string),
            align: Align::Right,
        }
    }

    /// The header as shown: `p99 (µs)`.
    pub fn header(&self) -> String {
        match &self.unit {
            Some(u) => format!("{} ({u})", self.name),
            None => self.name.clone(),
        }
    }
}

/// Rows of cells under typed columns.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            title: None,
            columns,
            rows: Vec::new(),
        }
    }

    pub fn titled(mut self, t: impl Into<String>) -> Table {
        self.title = Some(t.into());
        self
    }

    /// Add a row; short rows are padded with empty cells.
    pub fn row(&mut self, mut cells: Vec<Cell>) -> &mut Self {
        cells.resize(self.columns.len().max(cells.len()), Cell::empty());
        self.rows.push(cells);
        self
    }
}

/// How a series is best drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// One bar per point (categories on x), e.g. IOPS per scheduler.
    Bar,
    /// Lines through points, e.g. TPS against threads.
    Line,
}

/// Data for one chart: named lines (or bar groups) of points.
#[derive(Debug, Clone)]
pub struct Series {
    pub title: String,
    pub kind: ChartKind,
    pub x_label: String,
    pub y_label: String,
    /// Unit of y (`IOPS`, `µs`, `tps`).
    pub y_unit: Option<String>,
    pub lines: Vec<Line>,
    /// Show the points as a table in text and markdown (when no table
    /// elsewhere in the document already has these numbers).
    pub table_fallback: bool,
}

/// One named set of points.
#[derive(Debug, Clone)]
pub struct Line {
    pub name: String,
    pub points: Vec<Point>,
}

/// A point: a category or number on x, a value on y, and an optional
/// confidence interval around it.
#[derive(Debug, Clone)]
pub struct Point {
    pub x: String,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
}
