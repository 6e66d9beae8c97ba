//! `innotune restore`'s report as a document: the journal's owner, one row
//! per entry with its outcome, and what became of the journal.

use super::restore::{Outcome, RestoreReport};
use crate::error::exit;
use crate::export::doc::{Cell, Column, Table, Tone};
use crate::export::Document;

impl crate::export::Report for RestoreReport {
    const COMMAND: &'static str = "restore";
    fn document(&self) -> Document {
        document(self)
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

fn document(r: &RestoreReport) -> Document {
    // No title: the first line says which journal, or that there is none.
    let mut d = Document::new("");
    if !r.found {
        d.paragraph(format!(
            "Nothing to restore: no journal at {}",
            r.journal.display()
        ));
        return d;
    }
    if let Some(o) = &r.owner {
        d.paragraph(format!(
            "Journal {} from pid {} (`{}`), started {}",
            r.journal.display(),
            o.pid,
            o.command,
            o.started
        ));
    }
    let mut t = Table::new(
        ["kind", "path", "original", "found", "outcome"]
            .map(Column::text)
            .to_vec(),
    );
    for e in &r.entries {
        let tone = match e.outcome {
            Outcome::Failed { .. } => Tone::Bad,
            Outcome::Restored | Outcome::Removed | Outcome::Stopped { .. } => Tone::Good,
            _ => Tone::Plain,
        };
        t.row(vec![
            e.kind.to_string().into(),
            e.path.display().to_string().into(),
            e.original.clone().unwrap_or_else(|| "-".into()).into(),
            e.found
                .clone()
                .or_else(|| e.pid.map(|p| format!("pid {p}")))
                .unwrap_or_else(|| "-".into())
                .into(),
            Cell::text(e.outcome.to_string()).tone(tone),
        ]);
    }
    d.table(t);
    let failed = r.failed();
    if r.dry_run {
        d.paragraph("Dry run: nothing changed; run `innotune restore` to apply.");
    } else if failed > 0 {
        d.note(
            Tone::Bad,
            format!(
                "{failed} entr{} could not be restored; the journal is kept at {}",
                if failed == 1 { "y" } else { "ies" },
                r.journal.display()
            ),
        );
    } else {
        d.paragraph("Everything is back; journal removed.");
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::doc::Block;
    use crate::export::markdown::Markdown;
    use crate::export::{Exporter, Report};
    use crate::journal::{Owner, Restored};
    use std::path::PathBuf;

    fn entry(kind: &'static str, path: &str, outcome: Outcome) -> Restored {
        Restored {
            kind: kind.into(),
            path: PathBuf::from(path),
            original: Some("mq-deadline".into()),
            found: Some("kyber".into()),
            pid: None,
            outcome,
        }
    }

    fn report(dry_run: bool, entries: Vec<Restored>) -> RestoreReport {
        RestoreReport {
            journal: PathBuf::from("/state/journal.json"),
            found: true,
            dry_run,
            owner: Some(Owner {
                pid: 42,
                command: "innotune sweep /data".into(),
                started: "2026-01-01T00:00:00Z".into(),
                start_ticks: None,
            }),
            entries,
            journal_removed: !dry_run,
            hooks: vec![],
            pending_hooks: vec![],
        }
    }

    /// The report is blocks (a real table every format can show), not one
    /// verbatim text block.
    #[test]
    fn restore_is_a_table_of_entries_with_their_outcomes() {
        let r = report(
            false,
            vec![
                entry("sysfs", "/sys/block/sda/queue/scheduler", Outcome::Restored),
                entry(
                    "sysfs",
                    "/sys/block/sdb/queue/scheduler",
                    Outcome::Failed {
                        reason: "read-only".into(),
                    },
                ),
            ],
        );
        let d = r.document();
        assert!(
            !d.blocks.iter().any(|b| matches!(b, Block::Preformatted(_))),
            "{d:?}"
        );
        let t = d
            .blocks
            .iter()
            .find_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .expect("a table");
        let names: Vec<_> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kind", "path", "original", "found", "outcome"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][4].text, "restored");
        assert_eq!(t.rows[0][4].tone, Tone::Good);
        assert_eq!(t.rows[1][4].text, "failed: read-only");
        assert_eq!(t.rows[1][4].tone, Tone::Bad);
        assert!(d.blocks.iter().any(|b| matches!(b,
            Block::Note { tone: Tone::Bad, text } if text == "1 entry could not be restored; the journal is kept at /state/journal.json")));
        let mut md = Vec::new();
        Markdown.export(&d, &mut md).unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains("| sysfs | /sys/block/sdb/queue/scheduler | mq-deadline | kyber | **failed: read-only** |"),
            "{md}"
        );
    }

    #[test]
    fn dry_run_and_nothing_found_say_so() {
        let d = report(true, vec![entry("dir", "/x", Outcome::WouldRestore)]).document();
        assert!(matches!(d.blocks.first(), Some(Block::Paragraph(p))
            if p == "Journal /state/journal.json from pid 42 (`innotune sweep /data`), started 2026-01-01T00:00:00Z"));
        assert!(matches!(d.blocks.last(), Some(Block::Paragraph(p))
            if p == "Dry run: nothing changed; run `innotune restore` to apply."));
        let mut none = report(false, vec![]);
        none.found = false;
        none.owner = None;
        let d = none.document();
        assert_eq!(d.blocks.len(), 1);
        assert!(matches!(&d.blocks[0], Block::Paragraph(p)
            if p == "Nothing to restore: no journal at /state/journal.json"));
    }
}
