//! Text tables, one look across commands.

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

/// A borderless, aligned table in the style of `iostat`/`fio` summaries.
pub fn new(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().map(Cell::new));
    t
}

/// Right-align every column from `from` on (numbers).
pub fn align_numbers(t: &mut Table, from: usize) {
    let n = t.column_count();
    for i in from..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}
