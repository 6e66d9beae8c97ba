//! `innotune restore`'s report as a document (text rendering).

use super::restore::{Outcome, RestoreReport};
use crate::error::exit;
use crate::output::{table, Style};
use std::io::{self, Write};

impl crate::export::Report for RestoreReport {
    const COMMAND: &'static str = "restore";
    fn document(&self) -> crate::export::Document {
        crate::export::Document::legacy(|out, style| restore_text(self, out, style))
    }
    /// 0: nothing pending, or everything put back (or listed, with
    /// `--dry-run`); 2: something could not be restored (journal kept).
    fn exit_code(&self) -> i32 {
        if self.failed() > 0 {
            exit::ERROR
        } else {
            exit::OK
        }
    }
}

fn restore_text(r: &RestoreReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if !r.found {
        return writeln!(
            out,
            "Nothing to restore: no journal at {}",
            r.journal.display()
        );
    }
    if let Some(o) = &r.owner {
        writeln!(
            out,
            "Journal {} from pid {} (`{}`), started {}",
            r.journal.display(),
            o.pid,
            o.command,
            o.started
        )?;
    }
    let mut t = table::new(&["kind", "path", "original", "found", "outcome"]);
    for e in &r.entries {
        let outcome = e.outcome.to_string();
        let outcome = match e.outcome {
            Outcome::Failed { .. } => style.bad(&outcome),
            Outcome::Restored | Outcome::Removed | Outcome::Stopped { .. } => style.good(&outcome),
            _ => outcome,
        };
        t.add_row(vec![
            e.kind.to_string(),
            e.path.display().to_string(),
            e.original.clone().unwrap_or_else(|| "-".into()),
            e.found
                .clone()
                .or_else(|| e.pid.map(|p| format!("pid {p}")))
                .unwrap_or_else(|| "-".into()),
            outcome,
        ]);
    }
    writeln!(out, "{t}")?;
    let failed = r.failed();
    if r.dry_run {
        writeln!(
            out,
            "Dry run: nothing changed; run `innotune restore` to apply."
        )
    } else if failed > 0 {
        writeln!(
            out,
            "{}",
            style.bad(&format!(
                "{failed} entr{} could not be restored; the journal is kept at {}",
                if failed == 1 { "y" } else { "ies" },
                r.journal.display()
            ))
        )
    } else {
        writeln!(out, "Everything is back; journal removed.")
    }
}
