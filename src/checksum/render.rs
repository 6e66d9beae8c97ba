//! The document of a [`ChecksumReport`]: one `Fail:` line per bad page
//! (kept verbatim: scripts grep them, as they grep innochecksum's), the
//! per-file table with units in its headers, notes, errors and the verdict.
//! Depends on [`super::report`], never the other way round.

use super::report::ChecksumReport;
use crate::error::exit;
use crate::export::doc::{Cell, Column, Document, Table, Tone};

fn fail_lines(r: &ChecksumReport) -> String {
    let mut s = String::new();
    for b in &r.bad_pages {
        let what = match b.algorithm {
            Some(a) => format!("{} {}", b.check.name(), a.name()),
            None => b.check.name().to_string(),
        };
        s += &format!(
            "Fail: {} page {} ({}): {} stored 0x{:08x} expected 0x{:08x}\n",
            b.file, b.page, b.page_type, what, b.stored, b.computed
        );
    }
    if r.bad_pages_not_listed > 0 {
        s += &format!(
            "… and {} more bad pages not listed\n",
            r.bad_pages_not_listed
        );
    }
    s
}

fn files_table(r: &ChecksumReport) -> Table {
    let mut t = Table::new(vec![
        Column::text("file"),
        Column::text("format"),
        Column::num("page", Some("KiB")),
        Column::num("pages", None),
        Column::num("checked", None),
        Column::text("valid (by algorithm)"),
        Column::num("empty", None),
        Column::num("skipped", None),
        Column::num("bad", None),
    ]);
    for f in &r.files {
        let Some(g) = &f.geometry else {
            t.row(vec![
                Cell::text(f.path.clone()),
                Cell::text("error").tone(Tone::Bad),
            ]);
            continue;
        };
        let valid: u64 = f.valid.values().sum();
        let algos: Vec<String> = f.valid.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let skipped = f.skipped.doublewrite
            + f.skipped.encrypted
            + f.skipped.page_compressed
            + f.skipped.free;
        let page = if g.physical_page_size_bytes != g.page_size_bytes {
            format!(
                "{}/{}",
                g.physical_page_size_bytes / 1024,
                g.page_size_bytes / 1024
            )
        } else {
            format!("{}", g.page_size_bytes / 1024)
        };
        let n = |v: u64| Cell::num(v as f64, v.to_string());
        t.row(vec![
            Cell::text(f.path.clone()),
            Cell::text(g.format.as_ref()),
            Cell::num(g.page_size_bytes as f64 / 1024.0, page),
            n(g.pages_in_file),
            n(f.pages_checked),
            // The algorithms only when there is something to break down.
            Cell::num(
                valid as f64,
                if algos.is_empty() {
                    valid.to_string()
                } else {
                    format!("{valid} ({})", algos.join(" "))
                },
            ),
            n(f.empty),
            n(skipped),
            n(f.bad).tone(if f.bad > 0 { Tone::Bad } else { Tone::Plain }),
        ]);
    }
    t
}

impl crate::export::Report for ChecksumReport {
    const COMMAND: &'static str = "checksum";

    fn document(&self) -> Document {
        let mut d = Document::new("");
        let fails = fail_lines(self);
        if !fails.is_empty() {
            d.preformatted(fails);
        }
        d.table(files_table(self));
        for f in &self.files {
            if let Some(h) = &f.held_by {
                d.note(
                    Tone::Warn,
                    format!(
                    "{}: {} while it was checked; mismatching pages were re-read before being reported ({} recovered)",
                    f.path, h.sentence(), f.recovered_on_reread
                ),
                );
            }
            if f.skipped.encrypted > 0 {
                d.note(
                    Tone::Plain,
                    format!(
                        "{}: {} encrypted pages not verifiable without the key",
                        f.path, f.skipped.encrypted
                    ),
                );
            }
            if f.skipped.page_compressed > 0 {
                d.note(
                    Tone::Plain,
                    format!(
                        "{}: {} page_compressed pages carry no verifiable checksum",
                        f.path, f.skipped.page_compressed
                    ),
                );
            }
            if f.skipped.free > 0 {
                d.note(Tone::Plain, format!(
                    "{}: {} pages fail but are marked free in their extent descriptor (not corruption)",
                    f.path, f.skipped.free
                ));
            }
            if let Some(e) = &f.error {
                d.note(Tone::Bad, e.clone());
            }
        }
        // Page types are counted only with --page-type-summary.
        for f in &self.files {
            if let Some(types) = &f.page_types {
                let mut t = Table::new(vec![Column::text("type"), Column::num("pages", None)])
                    .titled(format!("page types in {}", f.path));
                for (k, v) in types {
                    t.row(vec![
                        Cell::text(k.as_ref()),
                        Cell::num(*v as f64, v.to_string()),
                    ]);
                }
                d.table(t);
            }
        }
        let tot = &self.totals;
        let (verdict, tone) = if tot.files_with_errors > 0 {
            ("INCOMPLETE", Tone::Bad)
        } else if self.exceeded {
            ("CORRUPT", Tone::Bad)
        } else if tot.bad > 0 {
            ("OK within --allow-mismatches", Tone::Warn)
        } else {
            ("OK", Tone::Good)
        };
        let errors = if tot.files_with_errors > 0 {
            format!(" ({} could not be checked)", tot.files_with_errors)
        } else {
            String::new()
        };
        d.key_values({
            let mut kv = crate::export::doc::KeyValues::new();
            kv.add(
                "verdict",
                Cell::text(format!(
                    "{verdict}: {} files{errors}, {} pages checked: {} valid, {} empty, {} skipped, {} bad (allowed {})",
                    tot.files, tot.pages_checked, tot.valid, tot.empty, tot.skipped, tot.bad, self.allow_mismatches
                ))
                .tone(tone),
            );
            kv.add(
                "read",
                format!(
                    "{:.1} MB in {:.2} s = {:.0} MB/s",
                    self.read_bytes as f64 / 1e6,
                    self.elapsed_s,
                    self.read_bytes_per_s / 1e6
                ),
            );
            kv
        });
        d
    }

    /// innochecksum-compatible: 0 clean (mismatches within the allowance are
    /// still reported), 1 beyond the allowance, 2 a file could not be checked.
    fn exit_code(&self) -> i32 {
        if self.totals.files_with_errors > 0 {
            exit::ERROR
        } else if self.exceeded {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}
