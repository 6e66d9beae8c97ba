//! innodb_file_per_table: one tablespace per table, so dropping or
//! rebuilding a table gives its space back to the filesystem.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.file_per_table",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_file_per_table ON",
    run,
};

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    if s.var_on("innodb_file_per_table") != Some(false) {
        return Vec::new();
    }
    vec![server_advice(s, "server.file_per_table", Severity::Notice, "innodb_file_per_table", "ON",
        "innodb_file_per_table is OFF: new tables go into the shared system tablespace, which never shrinks (space freed by DROP or OPTIMIZE stays inside ibdata1), and every table shares one file's I/O. ON affects tables created or rebuilt from now on.".into(),
        Source::RuleOfThumb, "MySQL default ON since 5.6.6".into())]
}
