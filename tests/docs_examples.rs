//! The docs cannot drift: every shell example in README.md and docs/**.md
//! (a line of a fenced block that runs `innotune`) and every example in a
//! subcommand's `--help` (read from the built binary) is either run here or
//! listed in [`TABLE`] with the reason it cannot be. An example in neither
//! fails the test, so a new example cannot go in untested; a table entry no
//! doc shows any more fails it too.
//!
//! Examples run as written, through `bash -c` with the binary first on
//! PATH, after the explicit substitutions of their table entry (`/data` →
//! a scratch loop filesystem; shorter runtimes, each with its reason), on:
//! the scratch directory with saved results ([`On::Here`]), a fixture host
//! tree (`--root`), a loop device with ext4 (direct I/O, its backing file on
//! /dev/shm so a sweep or trace touches only the loop device, never vda), or
//! a sandbox server. Each must exit with a code its docs promise. The
//! entries that need root, loop devices or MariaDB run only live
//! (`support::live()`); the coverage check and the rest always run.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use support::{Lab, LabOpts, RAM, RUN_LIMIT};

/// Where an example runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum On {
    /// The scratch directory (saved results, slow logs, a trace, a job
    /// file); reads this host, changes nothing.
    Here,
    /// A loop filesystem of this many MiB (`{lab}`, `{labdev}`, `{labname}`).
    Lab(u64),
    /// The scratch directory, with a sandbox directory `{sb}` (MariaDB
    /// installed); the entry's `before` starts what it needs, `after` stops it.
    Sandbox,
}

enum How {
    /// Not run here, and why.
    Listed(&'static str),
    Run(Run),
}

struct Run {
    on: On,
    /// Replacements applied in order, each present in the example.
    subs: &'static [(&'static str, &'static str)],
    /// Why the substitutions that change more than a path are there.
    why: &'static str,
    /// Shell run first (same PATH, placeholders expanded); must succeed.
    before: &'static str,
    /// Shell run afterwards, whatever happened (errors ignored).
    after: &'static str,
    /// The exit codes its docs promise.
    exits: &'static [i32],
}

const fn run(on: On, subs: &'static [(&'static str, &'static str)], exits: &'static [i32]) -> How {
    How::Run(Run {
        on,
        subs,
        why: "",
        before: "",
        after: "",
        exits,
    })
}

const fn run_with(
    on: On,
    subs: &'static [(&'static str, &'static str)],
    why: &'static str,
    before: &'static str,
    after: &'static str,
    exits: &'static [i32],
) -> How {
    How::Run(Run {
        on,
        subs,
        why,
        before,
        after,
        exits,
    })
}

/// A 200 MiB filesystem (about 180 MiB free): the README's bench sequence at
/// 1/16 scale (64 MiB files where the presets lay out 1 GiB), so keeping
/// every run's files (4 × 64 MiB) does not fit and --cleanup must.
const SMALL: On = On::Lab(200);
/// Room for a sweep's files and its OLTP sandbox, or tune's.
const BIG: On = On::Lab(1536);

/// Real tablespaces written by MySQL and MariaDB.
const TABLESPACES: &str = "/work/shared/fixtures/mysql-tablespaces";
const FIX_PLANTED: &str = "innotune --root {fix}/check-planted";
const SB_START: &str = "innotune sandbox start --dir {sb} >/dev/null";
const SB_STOP: &str = "innotune sandbox stop --dir {sb} >/dev/null 2>&1";
const SB_PREPARE: &str = "innotune sandbox start --dir {sb} >/dev/null && innotune oltp oltp_read_write prepare --socket {sb}/mysql.sock --user root --tables 4 --table-size 2000 >/dev/null";
/// Sweeps shortened to the fewest rounds a verdict can come from, 1 s
/// trials and 32 MiB files: the example's flags, workloads and schedulers
/// stay; only its length changes.
const SWEEP_WHY: &str = "5 rounds of 1 s trials on 32 MiB files instead of the defaults' minutes";
/// One arm, one workload: 4 rounds reach p = 0.029.
const PROVE_WHY: &str = "4 rounds of 1 s trials on 32 MiB files instead of the defaults' minutes";

/// Every example, by its text (comment removed, spaces collapsed).
const TABLE: &[(&str, How)] = &[
    // README: managed databases (a capture of RDS-like variables stands in for the endpoint)
    ("innotune check --host mydb.abc123.eu-west-1.rds.amazonaws.com --user admin -p --sample 60s", run_with(On::Here, &[("--host mydb.abc123.eu-west-1.rds.amazonaws.com --user admin -p --sample 60s", "--server-capture {servers}/rds-mysql80")], "no RDS endpoint here: its capture (tests/fixtures/servers/rds-mysql80, 60 s window) replaces the connection", "", "", &[1])),
    ("innotune check --host mydb.abc123.eu-west-1.rds.amazonaws.com --user admin -p --provider rds --emit ./rds-params", run_with(On::Here, &[("--host mydb.abc123.eu-west-1.rds.amazonaws.com --user admin -p", "--server-capture {servers}/rds-mysql80")], "no RDS endpoint here: its capture replaces the connection", "", "", &[1])),
    ("innotune check --client", run(On::Here, &[], &[0, 1])),
    ("innotune check --server-capture capture --emit ./rds-params", run_with(On::Here, &[("capture --emit", "{servers}/rds-mysql80 --emit")], "", "", "", &[1])),
    // README: tune
    ("innotune tune", How::Listed("tunes the running server's datadir: switches the scheduler of this VM's disk (vda) and reads the server on 3306, which tests never touch")),
    ("innotune tune --quick /srv/db --out /tmp/tune-db1", run(BIG, &[("/srv/db", "{lab}"), ("/tmp/tune-db1", "tune-db1")], &[0])),
    ("innotune tune /mnt/loopfs --device loop0", run_with(BIG, &[("/mnt/loopfs --device loop0", "--quick {lab} --device {labname}")], "--quick: the same run at about a minute's length", "", "", &[0, 1])),
    ("innotune tune --quick /srv/db", How::Listed("the run of `innotune tune --quick /srv/db --out /tmp/tune-db1` (README), which runs above: a second minute-long tune would test nothing more")),
    ("innotune tune /srv/db --budget 15m --out /tmp/tune-db1", How::Listed("runs for 15 minutes by design; the same run at --quick is the example above")),
    ("innotune tune /srv/db --search --budget 15m --socket /run/mysqld/mysqld.sock", How::Listed("searches for 15 minutes by design, reading the server on 3306 (tests never touch it); tests/search_live.rs runs --search against planted sandbox servers at 2m30s–3m30s")),
    // completions: written into the scratch directory, never /etc or $HOME
    ("innotune completions bash > /etc/bash_completion.d/innotune", run(On::Here, &[("/etc/bash_completion.d/innotune", "innotune.bash")], &[0])),
    ("innotune completions zsh > \"${fpath[1]}/_innotune\"", run(On::Here, &[("\"${fpath[1]}/_innotune\"", "_innotune")], &[0])),
    ("innotune completions fish > ~/.config/fish/completions/innotune.fish", run(On::Here, &[("~/.config/fish/completions/innotune.fish", "innotune.fish")], &[0])),
    // report
    ("innotune report innotune-db1-20261125-101500/*.json -o report.html", run(On::Here, &[], &[0])),
    ("innotune report before.json after.json -o compare.md", run(On::Here, &[], &[0])),
    ("innotune report probe.json check.json sweep.json -o report.html", run(On::Here, &[], &[0])),
    ("innotune report before.json after.json -o compare.html", run(On::Here, &[], &[0])),
    ("innotune report innotune-db1-20261125-101500/*.json -o summary.md", run(On::Here, &[], &[0])),
    ("innotune report sweep.json --format markdown", run(On::Here, &[], &[0])),
    // probe (read-only)
    ("innotune probe", run(On::Here, &[], &[0])),
    ("innotune probe /var/lib/mysql", run(On::Here, &[], &[0])),
    ("innotune probe /var/lib/mysql --format markdown", run(On::Here, &[], &[0])),
    ("innotune probe /srv/db --format json", run(On::Here, &[("/srv/db", "/var/tmp")], &[0])),
    ("innotune probe --format markdown /data", run(On::Here, &[("/data", "/var/tmp")], &[0])),
    ("innotune probe --format json --output probe.json /data", run(On::Here, &[("probe.json", "probe-new.json"), ("/data", "/var/tmp")], &[0])),
    // bench
    ("innotune bench --list-presets", run(On::Here, &[], &[0])),
    ("innotune bench --preset page-read --directory /data/innotune-bench --cleanup", run_with(SMALL, &[("/data/innotune-bench", "{lab}/innotune-bench --size 64m --runtime 1s")], "1/16 of the presets' 1 GiB on a 200 MiB filesystem (see SMALL), 1 s runs", "mkdir -p {lab}/innotune-bench", "", &[0])),
    ("innotune bench --preset fsync-4k --directory /data/innotune-bench --cleanup", run_with(SMALL, &[("/data/innotune-bench", "{lab}/innotune-bench --size 64m --runtime 1s")], "1/16 of the presets' 1 GiB on a 200 MiB filesystem (see SMALL), 1 s runs", "", "", &[0])),
    ("innotune bench --preset mixed --directory /data/innotune-bench --cleanup", run_with(SMALL, &[("/data/innotune-bench", "{lab}/innotune-bench --size 64m --runtime 1s")], "1/16 of the presets' 1 GiB on a 200 MiB filesystem (see SMALL), 1 s runs", "", "", &[0])),
    ("innotune bench --directory /data/innotune-bench --cleanup", run(SMALL, &[("/data", "{lab}")], &[0])),
    ("innotune bench --preset page-read --directory /var/lib/bench --runtime 30s", run_with(SMALL, &[("/var/lib/bench", "{lab}/bench --size 64m --cleanup"), ("30s", "1s")], "1 s, 64 MiB", "mkdir -p {lab}/bench", "", &[0])),
    ("innotune bench --rw randread --bs 16k --iodepth 32 --direct=1 --size 4g --runtime 60 --directory /data/x", run_with(SMALL, &[("4g", "64m"), ("--runtime 60", "--runtime 1"), ("/data/x", "{lab}/x")], "1 s, 64 MiB", "mkdir -p {lab}/x", "", &[0])),
    ("innotune bench --job-file jobs.toml", run(SMALL, &[], &[0])),
    ("innotune bench --cleanup --directory /data/x", run(SMALL, &[("/data/x", "{lab}/x")], &[0])),
    ("innotune bench --survey", How::Listed("reads every whole disk of this shared VM (vda too) for 20 s each; the survey of named devices runs below")),
    ("innotune bench --survey /dev/sdb /dev/sdc --runtime 10s", run_with(SMALL, &[("/dev/sdb /dev/sdc", "{labdev}"), ("10s", "1s")], "1 s a job", "", "", &[0])),
    ("innotune bench --survey /dev/nvme0n1 /dev/nvme1n1 --runtime 10s", run_with(SMALL, &[("/dev/nvme0n1 /dev/nvme1n1", "{labdev}"), ("10s", "1s")], "1 s a job", "", "", &[0])),
    ("innotune bench --survey --dry-run", run(On::Here, &[], &[0])),
    // sweep
    ("innotune sweep /data --workload oltp_read_write --workload page-read --objective latency", run_with(BIG, &[("/data", "{lab}"), ("latency", "latency --rounds 5 --trial 1s --size 32m --oltp-table-size 2000")], SWEEP_WHY, "", "", &[0, 1])),
    // prove: arms switched between rounds, on the scratch loop device only
    ("innotune prove /data --device sdb --change read_ahead_kb=1024 --workload page-read", run_with(BIG, &[("/data", "{lab}"), ("--device sdb", "--device {labname}"), ("page-read", "page-read --rounds 4 --trial 1s --size 32m")], PROVE_WHY, "", "", &[0, 1])),
    ("innotune prove /data --change mount=noatime --workload page-read", run_with(BIG, &[("/data", "{lab}"), ("page-read", "page-read --rounds 4 --trial 1s --size 32m")], PROVE_WHY, "", "", &[0, 1])),
    ("innotune prove /data --change read_ahead_kb=1024 --workload page-read", run_with(BIG, &[("/data", "{lab} --device {labname}"), ("page-read", "page-read --rounds 4 --trial 1s --size 32m")], PROVE_WHY, "", "", &[0, 1])),
    ("innotune prove /data --change scheduler=mq-deadline --change nr_requests=64 --workload mixed --rounds 6", run_with(BIG, &[("/data", "{lab} --device {labname}"), ("--rounds 6", "--rounds 6 --trial 1s --size 32m")], "1 s trials on 32 MiB files instead of the defaults' minutes", "", "", &[0, 1])),
    ("innotune prove /data --change vm.dirty_ratio=10 --workload page-write --sequential --trial 4s", How::Listed("switches vm.dirty_ratio, a host-wide setting of the shared VM, for minutes; prove's sysctl arms are tested in tests/prove_live.rs")),
    ("innotune prove /data --change innodb_io_capacity=2000 --workload oltp_read_write --threads 8", run_with(BIG, &[("/data", "{lab} --device {labname}"), ("--threads 8", "--threads 2 --rounds 4 --trial 1s --warmup 0 --oltp-tables 1 --oltp-table-size 2000")], "4 rounds of 1 s trials on one 2,000-row table instead of the defaults' minutes", "", "", &[0])),
    ("innotune prove /data --change innodb_io_capacity=2000 --workload oltp_read_write --live-server --socket /run/mysqld/mysqld.sock", How::Listed("needs a loop filesystem and a server with sbtest tables at once (never 3306's); the same run against a sandbox playing the live server is tests/prove_live.rs's prove_live_server_sets_a_variable_and_puts_it_back")),
    ("innotune prove /var/lib/mysql --change vm.swappiness=1 --workload oltp_read_write --threads 8,64 --budget 20m", How::Listed("runs for 20 minutes by design and switches vm.swappiness on the shared VM")),
    ("innotune sweep /data", run_with(BIG, &[("/data", "{lab} --rounds 5 --trial 1s --size 32m")], SWEEP_WHY, "", "", &[0, 1])),
    ("innotune sweep /data --schedulers none,mq-deadline --workload mixed --objective latency --choose", run_with(BIG, &[("/data", "{lab}"), ("--choose", "--choose --rounds 5 --trial 1s --size 32m")], SWEEP_WHY, "", "", &[0, 1])),
    ("innotune sweep /data --schedulers none,none --budget 7m", How::Listed("plans to its 7-minute budget by design; that the four default workloads' plan fits (6m35s) is sweep::plan's test a_small_budget_tests_fewer_candidates_not_shorter_trials")),
    ("innotune sweep /data --schedulers none,mq-deadline --workload mixed --sequential --trial 3s", run_with(BIG, &[("/data", "{lab}"), ("--trial 3s", "--trial 1s --size 32m")], SWEEP_WHY, "", "", &[0, 1])),
    ("innotune sweep /data --size 512m --workload page-read --workload oltp_read_write", run_with(BIG, &[("/data", "{lab}"), ("512m", "32m --rounds 5 --trial 1s --oltp-table-size 2000")], SWEEP_WHY, "", "", &[0, 1])),
    // sandbox and oltp (README's sequence, then help's alternatives)
    ("innotune sandbox start --dir /var/tmp/sb --profile after", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", "", "", &[0])),
    ("innotune oltp oltp_read_write prepare --socket /var/tmp/sb/mysql.sock --user root --tables 4 --table-size 100000", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}"), ("100000", "2000")], "2,000 rows a table, not 100,000", "", "", &[0])),
    ("innotune oltp oltp_read_write run --socket /var/tmp/sb/mysql.sock --user root --tables 4 --table-size 100000 --threads 8,32 --time 60", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}"), ("100000", "2000"), ("--time 60", "--time 2")], "2 s a thread count, 2,000 rows a table", "", "", &[0])),
    ("innotune sandbox stop --dir /var/tmp/sb", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", "test -S {sb}/mysql.sock || innotune sandbox start --dir {sb} >/dev/null", "", &[0])),
    ("innotune oltp oltp_read_write prepare --socket /var/tmp/sb/mysql.sock --user root --tables 4", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune sandbox status --dir /var/tmp/sb", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune sandbox stop --dir /var/tmp/sb --keep", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune sandbox start --dir /var/tmp/sb", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", "", SB_STOP, &[0])),
    ("innotune sandbox start --dir /data/sb --profile before --port 3307", run_with(On::Sandbox, &[("/data/sb", "{sb}"), ("3307", "{port}")], "a free port: 3307 may be taken here", "", SB_STOP, &[0])),
    ("innotune sandbox start --dir /data/sb --profile ./my-vars.cnf --keep", run_with(On::Sandbox, &[("/data/sb", "{sb}")], "", "", SB_STOP, &[0])),
    ("innotune --format json sandbox status --dir /var/tmp/sb", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune oltp oltp_read_write prepare --socket DIR/mysql.sock --tables 4 --table-size 100000", run_with(On::Sandbox, &[("DIR", "{sb}"), ("100000", "2000")], "2,000 rows a table", SB_START, SB_STOP, &[0])),
    ("innotune oltp oltp_read_write run --socket DIR/mysql.sock --tables 4 --table-size 100000 --threads 8,16,32,64 --time 60", run_with(On::Sandbox, &[("DIR", "{sb}"), ("100000", "2000"), ("--time 60", "--time 1")], "1 s a thread count, 2,000 rows a table", SB_PREPARE, SB_STOP, &[0])),
    ("innotune oltp oltp_read_write run --host db1 --port 3306 -u bench -p --threads 64 --time 300", How::Listed("a remote server (db1) and a password prompt")),
    ("innotune oltp oltp_read_write cleanup --socket DIR/mysql.sock --tables 4", run_with(On::Sandbox, &[("DIR", "{sb}")], "", SB_PREPARE, SB_STOP, &[0])),
    // check and apply
    ("innotune check", How::Listed("the running server's datadir and the server on 3306 (tests never touch it), for 60 s")),
    ("innotune check /srv/db --no-server --only storage,os", run(On::Here, &[("innotune check /srv/db", "{planted} check /var/lib/mysql")], &[0, 1])),
    ("innotune check --socket /var/tmp/sb/mysql.sock --user root --sample 10s", run_with(On::Sandbox, &[("/var/tmp/sb", "{sb}"), ("10s", "1s")], "a 1 s status window", SB_START, SB_STOP, &[0, 1])),
    ("innotune check /srv/db --emit /tmp/innotune-files", run_with(On::Here, &[("innotune check /srv/db", "{planted} check /var/lib/mysql --no-server"), ("/tmp/innotune-files", "emitted")], "a fixture host tree: no server to reach", "", "", &[0, 1])),
    ("innotune check --format prometheus --output /var/lib/prometheus/node-exporter/innotune.prom", run_with(On::Here, &[("innotune check", "{planted} check /var/lib/mysql --no-server"), ("/var/lib/prometheus/node-exporter/", "")], "a fixture host tree: no server to reach", "", "", &[0, 1])),
    ("innotune apply", run_with(On::Here, &[("innotune apply", "{planted} apply /var/lib/mysql --no-server")], "a fixture host tree: no server to reach", "", "", &[1])),
    ("innotune apply --yes", How::Listed("changes the host; apply --yes on a copied fixture tree, then restore, is tests/check_fixtures.rs")),
    ("innotune apply /srv/db --check", run_with(On::Here, &[("innotune apply /srv/db", "{planted} apply /var/lib/mysql --no-server")], "a fixture host tree: no server to reach", "", "", &[1])),
    // trace
    ("innotune trace /var/lib/mysql --duration 10s", run_with(BIG, &[("/var/lib/mysql", "{lab}"), ("10s", "1s")], "a 1 s capture", "", "", &[0])),
    ("innotune trace --device vda --format json > trace.json", run_with(BIG, &[("--device vda", "--device {labname} --duration 1s")], "a loop device rather than this VM's disk, and 1 s rather than until Ctrl-C", "", "", &[0])),
    ("innotune trace --input saved.trace", run(On::Here, &[], &[0])),
    ("innotune trace --device vda --device loop0 --duration 30s --format json", run_with(BIG, &[("--device vda --device loop0", "--device {labname}"), ("30s", "1s")], "a 1 s capture", "", "", &[0])),
    // replay (README and --help); tests/replay_live.rs runs --from-live and the before/after on a sandbox "live" server
    ("innotune sandbox start --dir /var/tmp/copy --from-live", How::Listed("copies the server the option files name: the system server on 3306, which tests never touch (tests/replay_live.rs copies a sandbox \"live\" server)")),
    ("innotune sandbox start --dir /data/copy --from-live --socket /run/mysqld/mysqld.sock", How::Listed("copies the system server on 3306, which tests never touch (tests/replay_live.rs copies a sandbox \"live\" server)")),
    ("innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --speed max", run_with(On::Sandbox, &[("/var/tmp/copy", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune replay slow.log.gz --socket /var/tmp/copy/mysql.sock --user root --concurrency 8 --read-only", run_with(On::Sandbox, &[("/var/tmp/copy", "{sb}")], "", SB_START, SB_STOP, &[0])),
    ("innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --rounds 5 --format json -o before.json", run_with(On::Sandbox, &[("/var/tmp/copy", "{sb}"), ("--rounds 5", "--rounds 2"), ("-o before.json", "-o replay-before.json")], "2 rounds; written beside the saved before.json other examples read, not over it", SB_START, SB_STOP, &[0])),
    ("innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --rounds 5 --compare before.json", How::Listed("needs the before.json of the example before it on the same copy; tests/replay_live.rs (a_dropped_index_makes_its_class_slower) runs that before/after")),
    // slowlog
    ("innotune slowlog /var/log/mysql/mysql-slow.log", run(On::Here, &[("/var/log/mysql/mysql-slow.log", "slow.log")], &[0])),
    ("innotune slowlog slow.log.gz --top 10 -s at", run(On::Here, &[], &[0])),
    ("innotune slowlog slow.log --order-by Rows_examined:max --since '2024-11-25 00:00:00'", run(On::Here, &[], &[0])),
    ("zcat slow.log.gz | innotune slowlog - --filter db=shop --format json", run(On::Here, &[], &[0])),
    ("innotune slowlog --capture 60s --socket /run/mysqld/mysqld.sock --user root", run_with(On::Sandbox, &[("60s", "1s"), ("/run/mysqld/mysqld.sock", "{sb}/mysql.sock")], "a 1 s window, on a sandbox rather than the server on 3306", SB_START, SB_STOP, &[0])),
    // restore (a private state directory: nothing pending)
    ("innotune restore --dry-run", run(On::Here, &[], &[0])),
    ("innotune restore", run(On::Here, &[], &[0])),
    ("INNOTUNE_STATE_DIR=DIR innotune restore", run(On::Here, &[("=DIR", "={state}")], &[0])),
    // checksum: real tablespaces (MySQL 8.0's sakila datadir) for the datadir
    ("innotune checksum /var/lib/mysql", run(On::Here, &[("/var/lib/mysql", "{ts}/sakila/8.0")], &[0])),
    ("innotune checksum /var/lib/mysql/shop/orders.ibd -S", run(On::Here, &[("/var/lib/mysql/shop/orders.ibd", "{ts}/t_10k_rows.ibd")], &[0])),
    ("innotune checksum --direct --record /var/lib/mysql", run(On::Here, &[("/var/lib/mysql", "{ts}/sakila/8.0")], &[0])),
    // merge
    ("innotune merge client1.json client2.json", run(On::Here, &[], &[0])),
];

/// One example and where it was shown.
#[derive(Debug, Clone)]
struct Example {
    cmd: String,
    source: String,
}

/// `line` without a leading `$ ` and a trailing `# comment` (a `#` after
/// a space, outside quotes), spaces collapsed; None unless it runs innotune.
fn example(line: &str) -> Option<String> {
    let l = line.trim();
    let l = l.strip_prefix("$ ").unwrap_or(l);
    let mut q: Option<char> = None;
    let mut end = l.len();
    let mut prev = ' ';
    for (i, c) in l.char_indices() {
        match (q, c) {
            (None, '\'' | '"') => q = Some(c),
            (Some(o), c) if c == o => q = None,
            (None, '#') if prev == ' ' => {
                end = i;
                break;
            }
            _ => {}
        }
        prev = c;
    }
    let cmd = l[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    // innotune as the command: first word (after VAR=value words), or after a pipe.
    let words: Vec<&str> = cmd.split(' ').collect();
    let first = words
        .iter()
        .find(|w| !w.contains('=') || w.starts_with('-'));
    let runs = first == Some(&"innotune") || cmd.contains("| innotune ");
    runs.then_some(cmd)
}

/// Fenced examples of README.md and docs/**.md.
fn doc_examples() -> Vec<Example> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if let Some(cmd) = fenced.then(|| example(line)).flatten() {
                out.push(Example {
                    cmd,
                    source: format!("{rel}:{}", n + 1),
                });
            }
        }
    }
    out
}

/// `innotune ARGS --help`, unwrapped.
fn help(args: &[&str]) -> String {
    let out = support::innotune()
        .args(args)
        .arg("--help")
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// Subcommand names listed under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect()
}

/// Examples in every subcommand's --help (after `Options:`: the
/// after_help text), recursing into nested subcommands; and the commands
/// (without subcommands of their own) whose help shows none.
fn help_examples() -> (Vec<Example>, Vec<String>) {
    let mut out = vec![];
    let mut bare = vec![];
    let mut todo: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let h = help(&args);
        let before = out.len();
        let subs = subcommands(&h);
        for s in &subs {
            let mut p = path.clone();
            p.push(s.clone());
            todo.push(p);
        }
        // Only the after_help text: flag descriptions mention commands too.
        let tail = h.split("\nOptions:\n").nth(1).unwrap_or("");
        let tail = tail
            .lines()
            .skip_while(|l| l.is_empty() || l.starts_with(' '))
            .collect::<Vec<_>>();
        for line in tail {
            if let Some(cmd) = example(line) {
                out.push(Example {
                    cmd,
                    source: format!("innotune {} --help", path.join(" ")),
                });
            }
        }
        if subs.is_empty() && out.len() == before {
            bare.push(path.join(" "));
        }
    }
    (out, bare)
}

fn all_examples() -> Vec<Example> {
    let mut v = doc_examples();
    v.extend(help_examples().0);
    v
}

/// A newcomer reads `innotune CMD --help` first: each command shows how
/// it is run (issue 46: check's had no example).
#[test]
fn every_command_help_has_an_example() {
    let (_, bare) = help_examples();
    assert!(bare.is_empty(), "--help without an example: {bare:?}");
}

#[test]
fn every_example_is_run_or_listed_with_a_reason() {
    let examples = all_examples();
    assert!(
        examples.len() > 40,
        "found only {} examples: is the extraction broken?",
        examples.len()
    );
    let table: BTreeMap<&str, &How> = TABLE.iter().map(|(k, h)| (*k, h)).collect();
    assert_eq!(table.len(), TABLE.len(), "a table entry is listed twice");
    let missing: Vec<String> = examples
        .iter()
        .filter(|e| !table.contains_key(e.cmd.as_str()))
        .map(|e| format!("  {}  ({})", e.cmd, e.source))
        .collect();
    assert!(
        missing.is_empty(),
        "examples neither run nor listed in tests/docs_examples.rs TABLE:\n{}",
        missing.join("\n")
    );
    let shown: BTreeSet<&str> = examples.iter().map(|e| e.cmd.as_str()).collect();
    let stale: Vec<&str> = table
        .keys()
        .filter(|k| !shown.contains(*k))
        .copied()
        .collect();
    assert!(
        stale.is_empty(),
        "TABLE entries no doc shows any more: {stale:#?}"
    );
    for (k, h) in TABLE {
        match h {
            How::Listed(why) => assert!(why.len() > 10, "{k}: say why it is not run"),
            How::Run(r) => {
                for (from, _) in r.subs {
                    assert!(k.contains(from), "{k}: substitution {from:?} is not in it");
                }
                assert!(
                    !r.subs.iter().any(shortens) || !r.why.is_empty(),
                    "{k}: say in `why` why it runs shorter or smaller than written"
                );
            }
        }
    }
}

/// Whether a substitution changes how long or how big a run is (a flag
/// added, or a number replaced) rather than where it runs.
fn shortens((from, to): &(&str, &str)) -> bool {
    let adds_flag = to
        .split(' ')
        .any(|w| w.starts_with("--") && !from.contains(w));
    let number = from
        .split(' ')
        .any(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    adds_flag || (number && !to.starts_with('{'))
}

/// What the examples run on: a scratch directory with inputs, a private
/// state directory, loop filesystems by size and a sandbox directory,
/// each made when first needed and undone on drop.
struct World {
    scratch: tempfile::TempDir,
    state: PathBuf,
    labs: BTreeMap<u64, Lab>,
    sb_parent: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let scratch = tempfile::Builder::new()
            .prefix("innotune-docs-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let d = scratch.path();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let res = root.join("tests/fixtures/results");
        for f in ["probe.json", "check.json", "sweep.json"] {
            std::fs::copy(res.join(f), d.join(f)).unwrap();
        }
        for (to, from) in [
            ("before.json", "oltp.json"),
            ("after.json", "oltp.json"),
            ("client1.json", "oltp.json"),
            ("client2.json", "oltp.json"),
        ] {
            std::fs::copy(res.join(from), d.join(to)).unwrap();
        }
        // A second client is another run: merge refuses a copy of one
        // result (the same generated_at and result) as counting it twice.
        let mut second: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("client2.json")).unwrap()).unwrap();
        second["generated_at"] = serde_json::Value::from("2026-11-25T10:15:01Z");
        std::fs::write(d.join("client2.json"), second.to_string()).unwrap();
        let tune = d.join("innotune-db1-20261125-101500");
        std::fs::create_dir(&tune).unwrap();
        for e in std::fs::read_dir(res.join("tune")).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), tune.join(e.file_name())).unwrap();
        }
        let log = root.join("tests/fixtures/slowlog/mysql80.log");
        std::fs::copy(&log, d.join("slow.log")).unwrap();
        support::sh(
            "sh",
            &[
                "-c",
                &format!(
                    "gzip -c '{}' > '{}'",
                    log.display(),
                    d.join("slow.log.gz").display()
                ),
            ],
        );
        std::fs::copy(
            root.join("tests/fixtures/trace/loop-mq-deadline-randrw.trace"),
            d.join("saved.trace"),
        )
        .unwrap();
        std::fs::write(d.join("my-vars.cnf"), "innodb_buffer_pool_size = 64M\n").unwrap();
        let state = d.join("state");
        std::fs::create_dir(&state).unwrap();
        let sb_parent = tempfile::Builder::new()
            .prefix("itdoc")
            .tempdir_in("/tmp")
            .unwrap();
        World {
            scratch,
            state,
            labs: BTreeMap::new(),
            sb_parent,
        }
    }

    fn sb(&self) -> PathBuf {
        self.sb_parent.path().join("sb")
    }

    fn lab(&mut self, mib: u64) -> &Lab {
        self.labs.entry(mib).or_insert_with(|| {
            Lab::new(LabOpts {
                tag: "docs",
                base: RAM,
                size: mib << 20,
                ..LabOpts::default()
            })
        })
    }

    /// `s` with `{placeholders}` filled for an example that runs `on`.
    fn expand(&mut self, s: &str, on: On) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let fix = root.join("tests/fixtures/hosts");
        let mut s = s
            .replace("{planted}", FIX_PLANTED)
            .replace("{fix}", &fix.display().to_string())
            .replace("{ts}", TABLESPACES)
            .replace(
                "{servers}",
                &root.join("tests/fixtures/servers").display().to_string(),
            )
            .replace("{sb}", &self.sb().display().to_string())
            .replace("{state}", &self.state.display().to_string());
        if s.contains("{port}") {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            s = s.replace("{port}", &port.to_string());
        }
        if let On::Lab(mib) = on {
            let lab = self.lab(mib);
            s = s
                .replace("{labdev}", &lab.dev)
                .replace("{labname}", &lab.loopdev)
                .replace("{lab}", &lab.mnt.display().to_string());
        }
        s
    }

    /// `bash -c script` in the scratch directory with innotune first on
    /// PATH; (exit code, stdout, stderr).
    fn sh(&self, script: &str) -> (i32, String, String) {
        let bin = Path::new(support::bin::INNOTUNE).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = support::spawn(
            support::sys("bash")
                .args(["-c", script])
                .current_dir(self.scratch.path())
                .env("PATH", path)
                .env("INNOTUNE_STATE_DIR", &self.state)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .output_within(RUN_LIMIT);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // A sandbox a failed example left running.
        if self.sb().exists() {
            let _ = self.sh(&format!(
                "innotune sandbox stop --dir {}",
                self.sb().display()
            ));
        }
    }
}

/// Run every example the table says to run (in the order the docs show
/// them: the README's sequences build on each other), live ones only live.
#[test]
fn examples_run_as_documented() {
    let live = support::live();
    let mariadb = support::sh("sh", &["-c", "command -v mariadbd mysqld || true"]);
    let table: BTreeMap<&str, &How> = TABLE.iter().map(|(k, h)| (*k, h)).collect();
    let mut w = World::new();
    let jobs = w.scratch.path().join("jobs.toml");
    let mut seen = BTreeSet::new();
    let mut failed = vec![];
    let mut ran = 0;
    for e in all_examples() {
        let Some(How::Run(r)) = table.get(e.cmd.as_str()) else {
            continue;
        };
        if !seen.insert(e.cmd.clone()) {
            continue;
        }
        let needs_live = r.on != On::Here;
        if needs_live && !live {
            continue;
        }
        if r.on == On::Sandbox && mariadb.is_empty() {
            eprintln!("skipped (no mariadbd/mysqld installed): {}", e.cmd);
            continue;
        }
        if let On::Lab(_) = r.on {
            // The job file's directory is on the lab (kept small and short).
            let body = w.expand(
                "[global]\ndirectory = \"{lab}/x\"\nsize = \"16m\"\nruntime = 1\n\n[[job]]\nname = \"reads\"\nrw = \"randread\"\nbs = \"16k\"\n",
                r.on,
            );
            std::fs::write(&jobs, body).unwrap();
        }
        let mut cmd = e.cmd.clone();
        for (from, to) in r.subs {
            cmd = cmd.replacen(from, to, 1);
        }
        let cmd = w.expand(&cmd, r.on);
        if !r.before.is_empty() {
            let before = w.expand(r.before, r.on);
            let (code, _, err) = w.sh(&before);
            assert_eq!(code, 0, "{}: before ({before}): {err}", e.cmd);
        }
        eprintln!("running: {cmd}");
        let t0 = std::time::Instant::now();
        let (code, out, err) = w.sh(&cmd);
        eprintln!("  exit {code} after {:.1} s", t0.elapsed().as_secs_f64());
        ran += 1;
        if !r.after.is_empty() {
            let after = w.expand(r.after, r.on);
            w.sh(&after);
        }
        if !r.exits.contains(&code) {
            failed.push(format!(
                "{} ({})\n  ran: {cmd}\n  exit {code}, the docs promise {:?}{}\n  stderr: {}\n  stdout: {}",
                e.cmd,
                e.source,
                r.exits,
                if r.why.is_empty() { String::new() } else { format!(" (shortened: {})", r.why) },
                err.trim(),
                out.lines().take(5).collect::<Vec<_>>().join(" | ")
            ));
        }
    }
    eprintln!("ran {ran} examples");
    assert!(ran > 0, "nothing ran");
    assert!(
        failed.is_empty(),
        "examples that did not work as documented:\n{}",
        failed.join("\n\n")
    );
}
