//! `innotune sandbox`'s command, and sandboxes started with the `after`
//! profile: `before` plus every server variable check recommends for a
//! server of `before` on this host, under the sandbox's own directory (its
//! RAM, and the device and filesystem under DIR).
//!
//! It lives here rather than in `src/sandbox` because deriving `after`
//! runs check's rules ([`super::execute`]), which sit above the sandbox
//! layer: the server is started with `before`, checked over its socket
//! (no status window), stopped, and started again with `after`, on the
//! same port. The derived variables are recorded in the sandbox's manifest
//! like any profile's, so a kept sandbox started again without `--profile`
//! gets the same server without asking check again.

use super::cli::CheckOpts;
use crate::command::{Command, Env};
use crate::db::{ConnArgs, ConnSpec};
use crate::error::Fix;
use crate::host::Host;
use crate::sandbox::{
    absolute, cli, read_state, recorded_profile, socket_path, Advised, Copied, Profile, Sandbox,
    SandboxOpts, SandboxReport,
};
use anyhow::Result;
use std::time::Duration;

/// Start the sandbox `opts` describe through `start` (plain
/// [`Sandbox::start`], or a journaled start). For `after`
/// ([`Profile::After`], also a kept sandbox's `after` recorded without its
/// variables) it starts `before` first, derives `after` from check's advice
/// ([`advise`]) and starts again with it; the advice is returned too.
pub fn start(
    host: &Host,
    mut opts: SandboxOpts,
    start: &mut dyn FnMut(SandboxOpts) -> Result<Sandbox>,
) -> Result<(Sandbox, Option<Vec<Advised>>)> {
    if opts.recorded_profile {
        if let Some(p) = recorded_profile(&opts.dir) {
            opts.profile = p;
            opts.recorded_profile = false;
        }
    }
    if !opts.profile.needs_advice() {
        return Ok((start(opts)?, None));
    }
    let after = opts.profile.clone();
    let keep = opts.keep;
    let mut first = opts.clone();
    first.profile = after.derived(&[]);
    let mut sb = start(first)?;
    // A failed check drops `sb`: stopped, and DIR removed unless kept.
    let advised = advise(host, &sb)?;
    sb.set_keep(true);
    sb.stop()?;
    let pairs: Vec<(String, String)> = advised
        .iter()
        .map(|a| (a.name.clone(), a.value.clone()))
        .collect();
    let second = SandboxOpts {
        profile: after.derived(&pairs),
        keep,
        recorded_profile: false,
        // The port it had a moment ago, unless --port says otherwise.
        recorded_port: opts.port.is_none(),
        from_live: None,
        ..opts
    };
    Ok((start(second)?, Some(advised)))
}

/// Check's advice for the server of `sb`: the server variables of every
/// finding, as `innotune check DIR --socket DIR/mysql.sock --sample 0`
/// gives them (the host's RAM, the device and filesystem under DIR, the
/// server's own variables). A check that cannot reach the server is an
/// error: `after` would silently be `before`.
pub fn advise(host: &Host, sb: &Sandbox) -> Result<Vec<Advised>> {
    let opts = CheckOpts {
        path: Some(sb.dir().to_path_buf()),
        conn: ConnArgs {
            socket: Some(sb.socket().to_path_buf()),
            user: Some("root".into()),
            no_defaults: true,
            ..Default::default()
        },
        sample: Duration::ZERO,
        no_server: false,
        results: Vec::new(),
        measure: false,
        scratch: None,
        slowlog: None,
        slowlog_max_entry_size: crate::slowlog::input::DEFAULT_MAX_ENTRY,
        no_host_facts: false,
        provider: None,
        server_capture: None,
        client: false,
        only: Vec::new(),
    };
    let checked = super::execute(host, &opts)?;
    let server = &checked.report.server;
    if !server.reached {
        return Err(Fix::new(
            format!(
                "check could not reach the sandbox's server to derive `after`: {}",
                server.note.as_deref().unwrap_or("no reason given")
            ),
            "start it with --profile before, or a file of your own values",
        )
        .into());
    }
    let mut out: Vec<Advised> = Vec::new();
    for a in checked.advice() {
        for s in &a.settings {
            if let super::rules::Setting::ServerVariable { name, value, .. } = s {
                match out.iter_mut().find(|x| &x.name == name) {
                    Some(x) => x.value = value.clone(),
                    None => out.push(Advised {
                        name: name.clone(),
                        value: value.clone(),
                        finding: a.finding.id.to_string(),
                    }),
                }
            }
        }
    }
    Ok(out)
}

/// `innotune sandbox`: start, stop or inspect the sandbox the arguments name.
impl Command for cli::SandboxArgs {
    type Report = SandboxReport;

    fn execute(env: &Env, args: Self) -> Result<SandboxReport> {
        act(env, args)
    }
}

fn act(env: &Env, args: cli::SandboxArgs) -> Result<SandboxReport> {
    use cli::SandboxAction::*;
    match args.action {
        Start(a) => {
            let from_live = if a.from_live {
                let conn = ConnArgs {
                    socket: a.socket.clone(),
                    user: a.user.clone(),
                    defaults_file: a.defaults_file.clone(),
                    no_defaults: a.no_defaults,
                    ..Default::default()
                };
                let spec = conn.resolve(&env.host)?;
                Some(crate::sandbox::live::survey(
                    spec,
                    &a.dir.dir,
                    a.copy_method,
                    a.max_size,
                )?)
            } else {
                None
            };
            let copied = from_live.as_ref().map(|l| Copied {
                method: l.method,
                schemas: l.schemas.clone(),
                bytes: l.bytes,
                from: l.spec.describe(),
            });
            let opts = SandboxOpts {
                dir: a.dir.dir.clone(),
                profile: Profile::parse(a.profile.as_deref().unwrap_or("default"))?,
                port: a.port,
                keep: a.keep,
                timeout: Duration::from_secs(a.timeout),
                recorded_profile: a.profile.is_none(),
                recorded_port: a.port.is_none(),
                from_live,
            };
            let (sb, advised) = start(&env.host, opts, &mut Sandbox::start)?;
            let dir = sb.dir().to_path_buf();
            let st = sb.detach();
            let mut r = SandboxReport::new("start", &dir, &st, true);
            r.copied = copied;
            r.advised = advised;
            Ok(r)
        }
        Stop(a) => {
            let dir = absolute(&a.dir.dir)?;
            let mut sb = Sandbox::attach(&dir)?;
            let running = sb.is_running();
            // `--keep` on this stop, or `start --keep` for the server that
            // is running now. A sandbox already stopped and kept is removed
            // by a plain `stop`: keeping is what a stop does to a running
            // server, not a property that sticks to DIR.
            let keep = a.keep || (running && sb.state().keep);
            sb.set_keep(keep);
            let st = sb.state().clone();
            sb.stop()?;
            let mut r = SandboxReport::new("stop", &dir, &st, false);
            r.kept = keep;
            Ok(r)
        }
        Status(a) => {
            let dir = absolute(&a.dir)?;
            if dir.symlink_metadata().is_err() {
                // Not running, as documented (exit 1), and why: nothing
                // is there, which is not a usage error.
                return Ok(SandboxReport {
                    action: "status".into(),
                    dir: dir.display().to_string(),
                    running: false,
                    pid: None,
                    port: 0,
                    socket: socket_path(&dir).display().to_string(),
                    version: String::new(),
                    profile: String::new(),
                    kept: false,
                    gone: true,
                    copied: None,
                    advised: None,
                });
            }
            let mut st = read_state(&dir)?;
            let running = st.server_running(&dir);
            if running {
                // DIR's own socket, never one the manifest names.
                if let Ok(mut c) = ConnSpec::socket(socket_path(&dir), "root").connect() {
                    if let Ok(v) = crate::db::server_version(&mut c) {
                        st.version = v.raw;
                    }
                }
            }
            Ok(SandboxReport::new("status", &dir, &st, running))
        }
    }
}
