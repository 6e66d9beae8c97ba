//! Text rendering of sandbox reports.

use super::SandboxReport;
use crate::output::{Report, Style};
use std::io::{self, Write};

impl Report for SandboxReport {
    const COMMAND: &'static str = "sandbox";

    fn render_text(&self, out: &mut dyn Write, style: Style) -> io::Result<()> {
        let state = match (self.action, self.running) {
            ("stop", _) if self.kept => format!("stopped (kept {})", self.dir),
            ("stop", _) => "stopped and removed".to_string(),
            (_, true) => style.good("running"),
            (_, false) => style.bad("not running"),
        };
        writeln!(out, "sandbox {}: {state}", self.dir)?;
        if let Some(pid) = self.pid {
            writeln!(out, "  pid:     {pid}")?;
        }
        writeln!(out, "  socket:  {}", self.socket)?;
        writeln!(out, "  port:    {} (127.0.0.1)", self.port)?;
        writeln!(out, "  version: {}", self.version)?;
        writeln!(out, "  profile: {}", self.profile)?;
        if self.running {
            // DIR/my.cnf carries a [client] group with the socket and user.
            let client = if self.version.to_ascii_lowercase().contains("mariadb") {
                "mariadb"
            } else {
                "mysql"
            };
            writeln!(
                out,
                "  connect: {client} --defaults-file={}/my.cnf   (or: innotune oltp … --socket {})",
                self.dir, self.socket
            )?;
        }
        Ok(())
    }
}
