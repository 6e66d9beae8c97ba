//! `check --provider X --emit DIR` for a managed server: the provider's
//! own files instead of a host tree.
//!
//! - rds, aurora: `DIR/rds-parameters.json`, the `--parameters
//!   file://…` input of `aws rds modify-db-parameter-group` (a list of
//!   `{ParameterName, ParameterValue, ApplyMethod}`), and
//!   `DIR/rds-parameter-group.tf`, a Terraform `aws_db_parameter_group`
//!   block in `terraform fmt`'s canonical layout;
//! - azure: `DIR/azure-parameters.sh`, `az mysql flexible-server parameter
//!   set` lines;
//! - cloudsql: `DIR/cloudsql-flags.sh`, one `gcloud sql instances patch
//!   --database-flags` line.
//!
//! Only the advice's `managed` entries with status `emit` are written (a
//! parameter the provider fixes or does not list never is). The files
//! carry no endpoint, user or password: the scripts take the server's
//! name from the environment. DIR may hold only what an earlier `--emit`
//! wrote (listed in `DIR/.innotune-emitted`); anything else is refused
//! before a byte is written.

use super::emit::Emitted;
use super::provider::{Managed, Provider};
use super::report::{emit_write_error, CheckReport, EmittedFile};
use super::validate::Validation;
use crate::error::Fix;
use anyhow::Result;
use std::borrow::Cow;
use std::path::Path;

/// The list of files innotune wrote in DIR.
pub const MANIFEST: &str = ".innotune-emitted";

/// Every parameter to write, in name order, once.
fn params(r: &CheckReport) -> Vec<&Managed> {
    let mut v: Vec<&Managed> = r
        .findings
        .iter()
        .flat_map(|a| &a.managed)
        .filter(|m| m.emitted())
        .collect();
    v.sort_by(|a, b| a.parameter.cmp(&b.parameter));
    v.dedup_by(|a, b| a.parameter == b.parameter);
    v
}

/// A value as a shell word: only what MySQL values and RDS formulas use
/// (digits, letters, `_ . { } * / -`), single-quoted; anything else is
/// not innotune's to write.
fn shell_word(v: &str) -> Option<String> {
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.{}*/-".contains(c))
        .then(|| format!("'{v}'"))
}

fn header(r: &CheckReport, p: Provider) -> String {
    format!(
        "written by innotune check for {} ({}); review before applying",
        p.label(),
        r.server
            .version
            .as_deref()
            .unwrap_or("server version unknown")
    )
}

/// The AWS CLI input: `aws rds modify-db-parameter-group
/// --db-parameter-group-name NAME --parameters file://rds-parameters.json`.
pub fn rds_json(ps: &[&Managed]) -> String {
    let list: Vec<serde_json::Value> = ps
        .iter()
        .map(|m| {
            serde_json::json!({
                "ParameterName": m.parameter,
                "ParameterValue": m.value.as_deref().unwrap_or_default(),
                "ApplyMethod": m.apply.as_deref().unwrap_or("pending-reboot"),
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&list).expect("JSON of strings");
    s.push('\n');
    s
}

/// A Terraform `aws_db_parameter_group`, laid out as `terraform fmt` does.
pub fn rds_tf(r: &CheckReport, p: Provider, ps: &[&Managed]) -> String {
    let family = if p == Provider::Aurora {
        "aurora-mysql8.0"
    } else {
        "mysql8.0"
    };
    let mut s = format!(
        "# {}\n# terraform: set name to your parameter group's, then plan and apply.\nresource \"aws_db_parameter_group\" \"innotune\" {{\n  name   = \"innotune-{}\"\n  family = \"{family}\"\n",
        header(r, p),
        family.replace('.', "-")
    );
    for m in ps {
        // HCL strings: the values are checked words (no quote, no ${).
        let v = m.value.as_deref().unwrap_or_default().replace('$', "$$");
        s.push_str(&format!(
            "\n  parameter {{\n    name         = \"{}\"\n    value        = \"{}\"\n    apply_method = \"{}\"\n  }}\n",
            m.parameter,
            v,
            m.apply.as_deref().unwrap_or("pending-reboot")
        ));
    }
    s.push_str("}\n");
    s
}

pub fn azure_sh(r: &CheckReport, ps: &[&Managed]) -> String {
    let mut s = format!(
        "#!/bin/sh\n# {}\n# Run with RESOURCE_GROUP and SERVER_NAME set (az login first).\nset -eu\n: \"${{RESOURCE_GROUP:?set RESOURCE_GROUP}}\"\n: \"${{SERVER_NAME:?set SERVER_NAME}}\"\n",
        header(r, Provider::Azure)
    );
    let mut restart = false;
    for m in ps {
        let Some(v) = m.value.as_deref().and_then(shell_word) else {
            continue;
        };
        s.push_str(&format!(
            "az mysql flexible-server parameter set --resource-group \"$RESOURCE_GROUP\" --server-name \"$SERVER_NAME\" --name {} --value {v}\n",
            m.parameter
        ));
        restart |= m.apply.as_deref() == Some("pending-reboot");
    }
    if restart {
        s.push_str("# a static parameter above takes effect after a restart:\n# az mysql flexible-server restart --resource-group \"$RESOURCE_GROUP\" --name \"$SERVER_NAME\"\n");
    }
    s
}

pub fn cloudsql_sh(r: &CheckReport, ps: &[&Managed]) -> String {
    let flags: Vec<String> = ps
        .iter()
        .filter_map(|m| {
            let v = m.value.as_deref()?;
            // Cloud SQL spells booleans on/off.
            let v = match v {
                "ON" => "on",
                "OFF" => "off",
                x => x,
            };
            shell_word(v).map(|_| format!("{}={v}", m.parameter))
        })
        .collect();
    format!(
        "#!/bin/sh\n# {}\n# Run with INSTANCE set (gcloud auth login first).\n# --database-flags REPLACES every flag of the instance: add the ones it has\n# now (gcloud sql instances describe \"$INSTANCE\" --format='value(settings.databaseFlags)').\nset -eu\n: \"${{INSTANCE:?set INSTANCE}}\"\ngcloud sql instances patch \"$INSTANCE\" --database-flags='{}'\n",
        header(r, Provider::Cloudsql),
        flags.join(",")
    )
}

/// The files for provider `p`.
pub fn files(r: &CheckReport, p: Provider) -> Vec<Emitted> {
    let ps = params(r);
    let mk = |kind: &'static str, path: &str, content: String, note: &str| Emitted {
        kind: Cow::Borrowed(kind),
        path: path.into(),
        content,
        symlink: None,
        install: false,
        note: Some(note.into()),
    };
    match p {
        Provider::Rds | Provider::Aurora => vec![
            mk("rds_parameters_json", "rds-parameters.json", rds_json(&ps), "aws rds modify-db-parameter-group --db-parameter-group-name NAME --parameters file://rds-parameters.json"),
            mk("rds_parameter_group_tf", "rds-parameter-group.tf", rds_tf(r, p, &ps), "a Terraform aws_db_parameter_group; terraform plan shows the change"),
        ],
        Provider::Azure => vec![mk("azure_parameters_sh", "azure-parameters.sh", azure_sh(r, &ps), "RESOURCE_GROUP=… SERVER_NAME=… sh azure-parameters.sh")],
        Provider::Cloudsql => vec![mk("cloudsql_flags_sh", "cloudsql-flags.sh", cloudsql_sh(r, &ps), "INSTANCE=… sh cloudsql-flags.sh (replaces every flag: read its comment)")],
        Provider::SelfManaged => Vec::new(),
    }
}

/// The offline check of one file: its own parser for JSON, `terraform
/// fmt -check` when terraform is installed, `bash -n` for the scripts.
pub fn validate(e: &Emitted, written: &Path) -> Option<Validation> {
    let run = |tool: &str, cmd: &mut std::process::Command| -> Option<Validation> {
        let out = cmd.output().ok()?;
        let detail: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("rror"))
            .collect::<Vec<_>>()
            .join(" | ");
        Some(Validation {
            tool: tool.into(),
            ok: out.status.success(),
            detail,
        })
    };
    match e.kind.as_ref() {
        "rds_parameters_json" => {
            let r = serde_json::from_str::<Vec<serde_json::Value>>(&e.content);
            Some(Validation {
                tool: "serde_json (a list of Parameter objects)".into(),
                ok: r.is_ok(),
                detail: r.err().map(|x| x.to_string()).unwrap_or_default(),
            })
        }
        "rds_parameter_group_tf" => {
            let tf = which::which("terraform").ok()?;
            run(
                "terraform fmt -check",
                std::process::Command::new(tf)
                    .args(["fmt", "-check", "-no-color"])
                    .arg(written)
                    .env("TF_CLI_CONFIG_FILE", "/dev/null"),
            )
        }
        "azure_parameters_sh" | "cloudsql_flags_sh" => {
            let bash = which::which("bash").ok()?;
            run(
                "bash -n",
                std::process::Command::new(bash).arg("-n").arg(written),
            )
        }
        _ => None,
    }
}

/// Refuse DIR when it holds anything innotune did not write there.
fn refuse_foreign(dir: &Path) -> Result<Vec<String>> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let listed: Vec<String> = std::fs::read_to_string(dir.join(MANIFEST))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let mut foreign = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let regular = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if !(regular && (name == MANIFEST || listed.contains(&name))) {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        return Err(Fix::new(
            format!(
                "--emit {} holds files innotune did not write ({})",
                dir.display(),
                foreign.join(", ")
            ),
            "give --emit an empty or new directory",
        )
        .into());
    }
    Ok(listed)
}

/// Write the provider's files under DIR, each checked offline.
pub fn emit_to(dir: &Path, p: Provider, r: &CheckReport) -> Result<Vec<EmittedFile>> {
    let mut listed = refuse_foreign(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| {
        Fix::new(
            format!("--emit {} cannot be created: {e}", dir.display()),
            "give --emit a directory you can write",
        )
    })?;
    let files = files(r, p);
    for f in &files {
        if !listed.contains(&f.path) {
            listed.push(f.path.clone());
        }
    }
    // The manifest first: a file written after it is always one innotune
    // may replace next time.
    let mut m = listed.join("\n");
    m.push('\n');
    let mpath = dir.join(MANIFEST);
    crate::durable::write(&mpath, m.as_bytes(), &crate::durable::Options::SHARED)
        .map_err(|e| emit_write_error(&mpath, e))?;
    let mut out = Vec::new();
    for f in files {
        let target = dir.join(&f.path);
        crate::durable::write(
            &target,
            f.content.as_bytes(),
            &crate::durable::Options::SHARED,
        )
        .map_err(|e| emit_write_error(&target, e))?;
        let validation = validate(&f, &target);
        out.push(EmittedFile {
            written: target.display().to_string(),
            file: f,
            validation,
        });
    }
    Ok(out)
}
