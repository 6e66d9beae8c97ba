//! JSON envelope v2: the typed report itself, with where and when it was
//! made. Documented in docs/json.md (with the migration note from v1).

use super::Report;
use crate::host::{Host, Known};
use serde::Serialize;
use std::io::Write;

/// The envelope's major version; `schema` is `"<command>/2"`.
pub const ENVELOPE_VERSION: u32 = 2;

/// The host a result describes, so results from many hosts can be merged.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct HostStamp {
    pub hostname: Known<String>,
    /// `uname -r`.
    pub kernel: Known<String>,
    /// Online CPUs.
    pub cpus: Known<u64>,
    /// MemTotal.
    pub memory_bytes: Known<u64>,
}

impl HostStamp {
    /// Read through `host`, so a replayed `--root` reports the replayed host.
    pub fn read(host: &Host) -> HostStamp {
        let cpus = match host.read_trim("/sys/devices/system/cpu/online") {
            Ok(s) => match crate::model::system::count_ranges(&s) {
                Some(n) => Known::Value(n),
                None => Known::unknown(format!("cannot parse cpu list {s:?}")),
            },
            Err(e) => Known::unknown(format!("/sys/devices/system/cpu/online: {e}")),
        };
        let memory_bytes = match crate::model::meminfo::read(host) {
            Known::Value(m) => Known::Value(m.total_bytes),
            Known::Unknown { unknown } => Known::Unknown { unknown },
        };
        HostStamp {
            hostname: Known::from_io(
                host.read_trim("/proc/sys/kernel/hostname"),
                "/proc/sys/kernel/hostname",
            ),
            kernel: Known::from_io(
                host.read_trim("/proc/sys/kernel/osrelease"),
                "/proc/sys/kernel/osrelease",
            ),
            cpus,
            memory_bytes,
        }
    }
}

/// The document every command writes with `--format json`.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize> {
    /// `"<command>/<version>"`, e.g. `"probe/2"`.
    pub schema: String,
    /// Always `"innotune"`.
    pub tool: &'static str,
    /// innotune's version (semver).
    pub version: &'static str,
    /// When the result was produced, RFC 3339 UTC.
    pub generated_at: String,
    pub host: HostStamp,
    /// Every warning the run printed on stderr, in order.
    pub warnings: Vec<String>,
    pub result: &'a T,
}

/// `report` in its envelope; `stamp` is the host as read before the
/// command ran (never read here: rendering reads nothing from the host).
pub fn envelope<'a, R: Report>(stamp: &HostStamp, report: &'a R) -> Envelope<'a, R> {
    Envelope {
        schema: format!("{}/{ENVELOPE_VERSION}", R::COMMAND),
        tool: "innotune",
        version: env!("CARGO_PKG_VERSION"),
        generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        host: stamp.clone(),
        warnings: crate::output::warnings(),
        result: report,
    }
}

pub fn write<R: Report>(stamp: &HostStamp, report: &R, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut w, &envelope(stamp, report))?;
    writeln!(w)?;
    w.flush()?;
    Ok(())
}

/// The largest result file innotune reads back (`report`, `check
/// --results`): the largest it writes (a long trace's or sweep's, with
/// every series) are a few MiB.
pub const MAX_RESULT: u64 = 256 << 20;

/// The command of a result file's envelope (`probe` for `"probe/2"`),
/// after checking it is one this innotune reads: `"tool": "innotune"`, a
/// `schema` of `"<command>/2"` (v1's `schema_version`, and any other
/// major, refused naming the innotune that wrote it) and a `result`
/// object. Every reader of result files (`report`, `check --results`)
/// checks here; `produce` is how to make a right file (the error's fix).
pub fn result_command<'v>(
    v: &'v serde_json::Value,
    path: &std::path::Path,
    produce: &str,
) -> anyhow::Result<&'v str> {
    use crate::error::Fix;
    use serde_json::Value;
    let schema = v.get("schema").and_then(Value::as_str);
    let tool = v.get("tool").and_then(Value::as_str);
    let (Some(schema), Some("innotune")) = (schema, tool) else {
        return Err(if v.get("schema_version").is_some() {
            Fix::new(
                format!(
                    "{} is an envelope v1 result (schema_version), which this innotune no longer reads",
                    path.display()
                ),
                "run the command again with this innotune and --format json",
            )
        } else {
            Fix::new(
                format!(
                    "{} is not an innotune result (no \"schema\" and \"tool\": \"innotune\")",
                    path.display()
                ),
                produce,
            )
        }
        .into());
    };
    let Some((command, major)) = schema.rsplit_once('/') else {
        return Err(Fix::new(
            format!(
                "{}: schema {schema:?} is not \"<command>/<version>\"",
                path.display()
            ),
            produce,
        )
        .into());
    };
    if major != ENVELOPE_VERSION.to_string() {
        return Err(Fix::new(
            format!(
                "{}: schema {schema} is version {major}; this innotune ({}) reads version {ENVELOPE_VERSION}",
                path.display(),
                env!("CARGO_PKG_VERSION"),
            ),
            format!(
                "read it with the innotune that wrote it ({})",
                v.get("version")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown version")
            ),
        )
        .into());
    }
    if !v.get("result").is_some_and(Value::is_object) {
        return Err(Fix::new(
            format!("{}: the envelope has no \"result\" object", path.display()),
            produce,
        )
        .into());
    }
    Ok(command)
}
