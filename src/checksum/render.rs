//! Text rendering of a [`ChecksumReport`].

use super::report::ChecksumReport;
use crate::output::{table, Style};
use std::io::{self, Write};

pub fn text(r: &ChecksumReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    for b in &r.bad_pages {
        let what = match b.algorithm {
            Some(a) => format!("{} {}", b.check.name(), a.name()),
            None => b.check.name().to_string(),
        };
        writeln!(
            out,
            "{} {} page {} ({}): {} stored 0x{:08x} expected 0x{:08x}",
            style.bad("Fail:"),
            b.file,
            b.page,
            b.page_type,
            what,
            b.stored,
            b.computed
        )?;
    }
    if r.bad_pages_not_listed > 0 {
        writeln!(
            out,
            "… and {} more bad pages not listed",
            r.bad_pages_not_listed
        )?;
    }
    let mut t = table::new(&[
        "file", "format", "page", "pages", "checked", "valid", "empty", "skipped", "bad",
    ]);
    for f in &r.files {
        let valid: u64 = f.valid.values().sum();
        let algos: Vec<String> = f.valid.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let skipped = f.skipped.doublewrite
            + f.skipped.encrypted
            + f.skipped.page_compressed
            + f.skipped.free;
        let page = if f.physical_page_size != f.page_size {
            format!("{}K/{}K", f.physical_page_size / 1024, f.page_size / 1024)
        } else {
            format!("{}K", f.page_size / 1024)
        };
        let bad = if f.bad > 0 {
            style.bad(&f.bad.to_string())
        } else {
            f.bad.to_string()
        };
        t.add_row(vec![
            f.path.clone(),
            f.format.to_string(),
            page,
            f.pages_in_file.to_string(),
            f.pages_checked.to_string(),
            format!("{valid} ({})", algos.join(" ")),
            f.empty.to_string(),
            skipped.to_string(),
            bad,
        ]);
    }
    table::align_numbers(&mut t, 3);
    writeln!(out, "{t}")?;
    for f in &r.files {
        if f.live_server {
            writeln!(
                out,
                "{} {}: a server has this file open; mismatching pages were re-read before being reported ({} recovered)",
                style.warn("live:"),
                f.path,
                f.recovered_on_reread
            )?;
        }
        if f.skipped.encrypted > 0 {
            writeln!(
                out,
                "{}: {} encrypted pages not verifiable without the key",
                f.path, f.skipped.encrypted
            )?;
        }
        if f.skipped.page_compressed > 0 {
            writeln!(
                out,
                "{}: {} page_compressed pages carry no verifiable checksum",
                f.path, f.skipped.page_compressed
            )?;
        }
        if f.skipped.free > 0 {
            writeln!(
                out,
                "{}: {} pages fail but are marked free in their extent descriptor (not corruption)",
                f.path, f.skipped.free
            )?;
        }
        if let Some(e) = &f.error {
            writeln!(out, "{} {}", style.bad("error:"), e)?;
        }
    }
    if r.page_type_summary {
        for f in &r.files {
            if let Some(types) = &f.page_types {
                writeln!(out, "\npage types in {}:", f.path)?;
                let mut t = table::new(&["type", "pages"]);
                for (k, v) in types {
                    t.add_row(vec![k.to_string(), v.to_string()]);
                }
                table::align_numbers(&mut t, 1);
                writeln!(out, "{t}")?;
            }
        }
    }
    let tot = &r.totals;
    let verdict = if r.files.iter().any(|f| f.error.is_some()) {
        style.bad("INCOMPLETE")
    } else if r.exceeded {
        style.bad("CORRUPT")
    } else if tot.bad > 0 {
        style.warn("OK within --allow-mismatches")
    } else {
        style.good("OK")
    };
    writeln!(
        out,
        "{}: {} files, {} pages checked: {} valid, {} empty, {} skipped, {} bad (allowed {}); {:.1} MB in {:.2} s = {:.0} MB/s",
        verdict,
        tot.files,
        tot.pages_checked,
        tot.valid,
        tot.empty,
        tot.skipped,
        tot.bad,
        r.allow_mismatches,
        r.bytes_read as f64 / 1e6,
        r.seconds,
        r.mb_per_s
    )
}
