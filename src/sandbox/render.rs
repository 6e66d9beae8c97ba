//! The sandbox report as a document: a state line and key–values.

use super::SandboxReport;
use crate::export::doc::{Cell, KeyValues, Tone};
use crate::export::Document;

impl crate::export::Report for SandboxReport {
    const COMMAND: &'static str = "sandbox";

    fn document(&self) -> Document {
        if self.gone {
            let mut doc = Document::new(format!("sandbox {}", self.dir));
            let mut kv = KeyValues::new();
            kv.add(
                "state",
                Cell::text(format!(
                    "gone: {} does not exist (a plain stop removes it; or it was never started)",
                    self.dir
                ))
                .tone(Tone::Bad),
            );
            doc.key_values(kv);
            return doc;
        }
        let state = match (self.action.as_ref(), self.running) {
            ("stop", _) if self.kept => Cell::text(format!("stopped (kept {})", self.dir)),
            ("stop", _) => Cell::text("stopped and removed"),
            (_, true) => Cell::text("running").tone(Tone::Good),
            (_, false) => Cell::text("not running").tone(Tone::Bad),
        };
        let mut doc = Document::new(format!("sandbox {}", self.dir));
        let mut kv = KeyValues::new();
        kv.add("state", state);
        if let Some(pid) = self.pid {
            kv.add("pid", pid.to_string());
        }
        kv.add("socket", self.socket.as_str())
            .add("port", format!("{} (127.0.0.1)", self.port))
            .add("version", self.version.as_str())
            .add("profile", self.profile.as_str());
        match &self.advised {
            Some(a) if a.is_empty() => {
                kv.add(
                    "check's advice",
                    "none for a `before` server on this host: `after` is `before`",
                );
            }
            Some(a) => {
                kv.add(
                    "check's advice",
                    format!(
                        "`after` is `before` with {}",
                        a.iter()
                            .map(|x| format!("{} = {} ({})", x.name, x.value, x.finding))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
            None => {}
        }
        if let Some(c) = &self.copied {
            kv.add(
                "copied from",
                format!(
                    "{} by {} ({}: {})",
                    c.from,
                    match c.method {
                        super::live::CopyMethod::Backup => "mariadb-backup",
                        _ => "mysqldump",
                    },
                    crate::units::fmt_size(c.bytes),
                    if c.schemas.is_empty() {
                        "no schemas but the system ones".to_string()
                    } else {
                        c.schemas.join(", ")
                    }
                ),
            );
        }
        if self.running {
            // DIR/my.cnf carries a [client] group with the socket and user.
            let client = if self.version.to_ascii_lowercase().contains("mariadb") {
                "mariadb"
            } else {
                "mysql"
            };
            kv.add(
                "connect",
                format!(
                    "{client} --defaults-file={}/my.cnf   (or: innotune oltp … --socket {})",
                    self.dir, self.socket
                ),
            );
        }
        doc.key_values(kv);
        doc
    }

    fn exit_code(&self) -> i32 {
        self.code()
    }
}
