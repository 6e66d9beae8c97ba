//! In-memory temporary tables: tmp_table_size vs max_heap_table_size (the
//! smaller one is the limit for MEMORY temporary tables), and the share of
//! implicit temporary tables that went to disk during the sample.

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::{cnf_bytes, human_bytes, Facts};
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.tmp_tables",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "tmp_table_size vs max_heap_table_size; share of temporary tables on disk",
    run,
};

/// Cap for a recommended in-memory temporary table size (each connection
/// may create one).
const CAP: u64 = 256 << 20;

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let (Some(tmp), Some(heap)) = (
        s.var_u64("tmp_table_size"),
        s.var_u64("max_heap_table_size"),
    ) else {
        return Vec::new();
    };
    // MySQL 8's TempTable engine ignores max_heap_table_size.
    let temptable = s.is_mysql()
        && s.major >= 8
        && s.var("internal_tmp_mem_storage_engine")
            .map_or(true, |e| e.eq_ignore_ascii_case("TempTable"));
    let limit = if temptable { tmp } else { tmp.min(heap) };
    let mut want = limit;
    let mut reasons = Vec::new();
    let mut sev = Severity::Notice;
    let mut src = Source::Observed;
    let mut ev = vec![format!(
        "tmp_table_size {}, max_heap_table_size {}",
        human_bytes(tmp),
        human_bytes(heap)
    )];
    if let Some(w) = &s.window {
        let all = w.delta("created_tmp_tables").unwrap_or(0);
        let disk = w.delta("created_tmp_disk_tables").unwrap_or(0);
        if all >= 100 {
            let pct = disk as f64 / all as f64 * 100.0;
            ev.push(format!(
                "{disk} of {all} temporary tables on disk in {:.0} s ({pct:.0}%)",
                w.seconds
            ));
            if pct > 25.0 && limit < CAP {
                want = (limit * 2).min(CAP);
                sev = Severity::Warning;
                src = Source::Measured;
                reasons.push(format!("{pct:.0}% of the implicit temporary tables went to disk during the sample (above 25%): raising the in-memory limit to {} keeps more of them in memory. Tables with BLOB/TEXT columns go to disk whatever the limit.", human_bytes(want)));
            }
        }
    }
    let mut out = Vec::new();
    let ev = ev.join("; ");
    if !temptable && tmp != heap && want == limit {
        reasons.push(format!("tmp_table_size and max_heap_table_size differ ({} vs {}): an in-memory temporary table is limited by the smaller one, so the larger setting is misleading. Set both to {}.", cnf_bytes(tmp), cnf_bytes(heap), cnf_bytes(limit)));
    }
    if reasons.is_empty() {
        return out;
    }
    let reason = reasons.join(" ");
    if tmp != want {
        out.push(server_advice(
            s,
            "server.tmp_tables",
            sev,
            "tmp_table_size",
            want,
            reason.clone(),
            src,
            ev.clone(),
        ));
    }
    if !temptable && heap != want {
        out.push(server_advice(
            s,
            "server.tmp_tables",
            sev,
            "max_heap_table_size",
            want,
            reason,
            src,
            ev,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::*;

    #[test]
    fn mismatch_and_disk_share() {
        let mut s = with_vars(
            server("mariadb", 10, 11, 19),
            &[
                ("tmp_table_size", "67108864"),
                ("max_heap_table_size", "16777216"),
            ],
        );
        let a = run(&Facts {
            server: Some(s.clone()),
            ..Default::default()
        });
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.subject.name, "tmp_table_size");
        assert_eq!(a[0].finding.recommended.as_deref(), Some("16777216"));
        s.window = Some(window(
            60.0,
            &[
                ("Created_tmp_tables", 1000),
                ("Created_tmp_disk_tables", 500),
            ],
        ));
        let a = run(&Facts {
            server: Some(s),
            ..Default::default()
        });
        let vals: Vec<_> = a
            .iter()
            .map(|a| a.finding.recommended.clone().unwrap())
            .collect();
        assert_eq!(vals, vec!["33554432", "33554432"]);
    }
}
