//! `cargo xtask …`: what turns the crate into something a DBA installs.
//!
//! - `cargo xtask dist`: everything below, then the `.deb` (cargo-deb) and
//!   the `.rpm` (cargo-generate-rpm), all into `target/dist/`.
//! - `cargo xtask fleet`: the binary for old fleets (glibc 2.17, built by
//!   cargo-zigbuild), checked with `objdump -T`.
//! - `cargo xtask man DIR`, `cargo xtask completions DIR`: man pages and
//!   shell completions, generated from innotune's own clap definition
//!   (`innotune::cli::command()`), so they cannot drift from `--help`.
//!
//! Why a program and not a Makefile: the man pages and completions need
//! the clap definition, which only Rust code can read; the rest is a
//! handful of commands run in order, each failing loudly.

use anyhow::{bail, Context, Result};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fleet binary's target: cargo-zigbuild reads the glibc version from
/// the triple's suffix.
const FLEET_TARGET: &str = "x86_64-unknown-linux-gnu";
const FLEET_GLIBC: &str = "2.17";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("dist") => dist(&root),
        Some("fleet") => fleet(&root).map(|_| ()),
        Some("man") => man(&root, &dir_arg(&args)?),
        Some("completions") => completions(&dir_arg(&args)?),
        _ => bail!("usage: cargo xtask dist | fleet | man DIR | completions DIR"),
    }
}

fn dir_arg(args: &[String]) -> Result<PathBuf> {
    args.get(1)
        .map(PathBuf::from)
        .context("give the directory to write into")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn version() -> String {
    innotune::cli::command()
        .get_version()
        .expect("innotune has a version")
        .to_string()
}

/// Build everything into `target/dist/`.
fn dist(root: &Path) -> Result<()> {
    let dist = root.join("target/dist");
    if dist.exists() {
        fs::remove_dir_all(&dist).with_context(|| format!("clearing {}", dist.display()))?;
    }
    let stage = dist.join("stage");
    man(root, &stage.join("man"))?;
    completions(&stage.join("completions"))?;
    units(root, &stage.join("systemd"))?;
    let fleet = fleet(root)?;
    let fleet_dir = dist.join(format!(
        "innotune-{}-x86_64-linux-glibc{FLEET_GLIBC}",
        version()
    ));
    fs::create_dir_all(&fleet_dir)?;
    fs::copy(&fleet, fleet_dir.join("innotune"))?;

    // Both packages take the fleet binary (cargo-deb rewrites
    // target/release/ to target/<triple>/release/ under --target) and the
    // staged man pages and completions (Cargo.toml's package.metadata).
    run(Command::new("cargo")
        .current_dir(root)
        .args(["deb", "--no-build", "--strip", "--target", FLEET_TARGET])
        .arg("--output")
        .arg(&dist))?;
    run(Command::new("cargo")
        .current_dir(root)
        .args(["generate-rpm", "--target", FLEET_TARGET])
        .arg("--output")
        .arg(&dist))?;
    for e in fs::read_dir(&dist)? {
        let e = e?;
        println!("{}", e.path().display());
    }
    Ok(())
}

/// The glibc-2.17 binary: `cargo zigbuild --release --target
/// x86_64-unknown-linux-gnu.2.17`, refused when `objdump -T` shows a newer
/// GLIBC symbol.
fn fleet(root: &Path) -> Result<PathBuf> {
    run(Command::new("cargo")
        .current_dir(root)
        .args([
            "zigbuild",
            "--release",
            "--package",
            "innotune",
            "--bin",
            "innotune",
            "--target",
        ])
        .arg(format!("{FLEET_TARGET}.{FLEET_GLIBC}")))?;
    let bin = target_dir(root).join(FLEET_TARGET).join("release/innotune");
    let newest = newest_glibc(&bin)?;
    if version_gt(&newest, FLEET_GLIBC) {
        bail!(
            "{} needs GLIBC_{newest}, newer than the fleet's {FLEET_GLIBC}",
            bin.display()
        );
    }
    eprintln!("xtask: {} needs at most GLIBC_{newest}", bin.display());
    Ok(bin)
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// The highest `GLIBC_x.y[.z]` version `objdump -T` lists for `bin`.
fn newest_glibc(bin: &Path) -> Result<String> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(bin)
        .output()
        .context("running objdump -T (binutils)")?;
    if !out.status.success() {
        bail!("objdump -T {} failed", bin.display());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut newest = String::from("0");
    for word in text.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
        if let Some(v) = word.strip_prefix("GLIBC_") {
            if v.chars().all(|c| c.is_ascii_digit() || c == '.') && version_gt(v, &newest) {
                newest = v.to_string();
            }
        }
    }
    Ok(newest)
}

fn version_gt(a: &str, b: &str) -> bool {
    let parse = |s: &str| -> Vec<u32> { s.split('.').filter_map(|p| p.parse().ok()).collect() };
    parse(a) > parse(b)
}

/// contrib/systemd's units with the packaged binary's path: by hand they
/// run /usr/local/bin/innotune (contrib/README.md), from a package
/// /usr/bin/innotune.
fn units(root: &Path, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    for e in fs::read_dir(root.join("contrib/systemd"))? {
        let e = e?;
        let text = fs::read_to_string(e.path())?;
        let text = text
            .replace("/usr/local/bin/innotune", "/usr/bin/innotune")
            .replace(
                "# Install: copy",
                "# Installed by the innotune package. By hand: copy",
            );
        fs::write(dir.join(e.file_name()), text)?;
    }
    Ok(())
}

/// bash, zsh and fish completions, named as the distributions install them.
fn completions(dir: &Path) -> Result<()> {
    use clap_complete::Shell;
    fs::create_dir_all(dir)?;
    for (shell, name) in [
        (Shell::Bash, "innotune"),
        (Shell::Zsh, "_innotune"),
        (Shell::Fish, "innotune.fish"),
    ] {
        let mut out = Vec::new();
        innotune::cli::completions(shell, &mut out);
        fs::write(dir.join(name), out)?;
    }
    Ok(())
}

/// `innotune.1` and one `innotune-<command>.1` per subcommand, gzipped at
/// the best level (Debian policy 12.1), with EXIT STATUS and EXAMPLES.
fn man(root: &Path, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    let readme = fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let examples = readme_examples(&readme);
    let top = innotune::cli::command();
    let subs: Vec<clap::Command> = top
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .cloned()
        .collect();
    let mut see_also: Vec<String> = subs
        .iter()
        .map(|s| format!("innotune-{}(1)", s.get_name()))
        .collect();
    see_also.sort();

    let top_examples: Vec<&String> = examples
        .iter()
        .filter(|e| e.split_whitespace().count() >= 2)
        .take(12)
        .collect();
    write_page(
        dir,
        "innotune",
        top.clone(),
        &top_examples,
        &see_also.join(", "),
    )?;
    for sub in subs {
        let name = sub.get_name().to_string();
        let page = format!("innotune-{name}");
        let prefix = format!("innotune {name}");
        let mine: Vec<&String> = examples
            .iter()
            .filter(|e| e.as_str() == prefix || e.starts_with(&format!("{prefix} ")))
            .collect();
        let sub = sub.name(page.clone()).bin_name(prefix).version(version());
        write_page(dir, &page, sub, &mine, "innotune(1)")?;
    }
    Ok(())
}

fn write_page(
    dir: &Path,
    page: &str,
    cmd: clap::Command,
    examples: &[&String],
    see_also: &str,
) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone())
        .title(page.to_uppercase())
        .section("1")
        .source(format!("innotune {}", version()))
        .manual("innotune manual");
    let mut roff = Vec::new();
    man.render_title(&mut roff)?;
    man.render_name_section(&mut roff)?;
    man.render_synopsis_section(&mut roff)?;
    man.render_description_section(&mut roff)?;
    man.render_options_section(&mut roff)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut roff)?;
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        man.render_extra_section(&mut roff)?;
    }
    writeln!(roff, ".SH \"EXIT STATUS\"")?;
    for (code, what) in [
        ("0", "Success."),
        (
            "1",
            "The command found what it looks for: corrupt pages (checksum), findings at or above the threshold (check), a difference (sweep, prove); see the command's help.",
        ),
        ("2", "Usage or environment error: one line on stderr names the fix."),
        ("130, 143", "Stopped by SIGINT or SIGTERM after putting the host back."),
    ] {
        writeln!(roff, ".TP\n{}\n{}", roff_text(code), roff_text(what))?;
    }
    if !examples.is_empty() {
        writeln!(roff, ".SH EXAMPLES")?;
        for e in examples {
            writeln!(roff, ".PP\n.nf\n{}\n.fi", roff_text(e))?;
        }
    }
    writeln!(roff, ".SH \"SEE ALSO\"\n{}", roff_text(see_also))?;
    writeln!(
        roff,
        ".PP\nThe README and docs/ (installed under /usr/share/doc/innotune)."
    )?;
    man.render_version_section(&mut roff)?;

    let path = dir.join(format!("{page}.1.gz"));
    // mtime 0 and no file name in the header: the same input gives the
    // same bytes (reproducible packages).
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(fs::File::create(&path)?, flate2::Compression::best());
    gz.write_all(&roff)?;
    gz.finish()?;
    Ok(())
}

/// Text for a roff line: backslashes escaped, a leading `.` or `'` kept
/// from being read as a request.
fn roff_text(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// Every command line in the README's fenced blocks that runs innotune
/// (`$ ` and `sudo ` prefixes dropped; continuation lines joined).
fn readme_examples(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for line in readme.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            pending.clear();
            continue;
        }
        if !fenced {
            continue;
        }
        let joined = if pending.is_empty() {
            t.to_string()
        } else {
            format!("{pending} {t}")
        };
        if let Some(rest) = joined.strip_suffix('\\') {
            pending = rest.trim_end().to_string();
            continue;
        }
        pending.clear();
        let cmd = joined
            .trim_start_matches("$ ")
            .trim_start_matches("sudo ")
            .trim();
        if cmd.starts_with("innotune ") && !out.iter().any(|o| o == cmd) {
            out.push(cmd.to_string());
        }
    }
    out
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: {:?}", cmd);
    let status = cmd
        .status()
        .with_context(|| format!("running {:?}", cmd.get_program()))?;
    if !status.success() {
        bail!("{:?} failed: {status}", cmd.get_program());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_examples_join_continuations_and_drop_prompts() {
        let r = "text\n```sh\n$ sudo innotune probe /data\ninnotune sweep /data \\\n  --rounds 6\necho no\n```\ninnotune outside\n";
        assert_eq!(
            readme_examples(r),
            vec!["innotune probe /data", "innotune sweep /data --rounds 6"]
        );
    }

    #[test]
    fn glibc_versions_compare_numerically() {
        assert!(version_gt("2.34", "2.17"));
        assert!(!version_gt("2.9", "2.17"));
        assert!(version_gt("2.17.1", "2.17"));
    }

    #[test]
    fn roff_lines_never_start_a_request() {
        assert_eq!(roff_text(".hidden"), "\\&.hidden");
        assert_eq!(roff_text("a\\b --x"), "a\\eb \\-\\-x");
    }
}
