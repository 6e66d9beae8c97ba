//! The Ansible role end to end, over real SSH: three "hosts" are network
//! namespaces (a veth pair each, an sshd listening on the namespace's own
//! address), each with its own innotune state directory, its own host
//! tree (a generated check-planted tree, replayed with --root, so applying
//! changes the tree and never this machine) and its own sandbox MariaDB
//! started inside the namespace (check's server rules ask it).
//! `ansible-playbook` (Debian's ansible) runs the role twice: the first run
//! applies on every host, the second reports nothing changed; check mode
//! changes nothing; the fleet report on the controller names the three
//! hosts. Then the three hosts load db1's server together (the role's OLTP
//! tasks, one agreed --start-at) and the controller merges their results.
//! ansible-lint accepts the role and playbook.
//!
//! Live-gated (root, namespaces). Every namespace, veth and sshd is removed
//! on every path (Drop).

mod support;
use innotune::oltp::hist::percentile;
use innotune::oltp::result::{ms_to_ns, HistogramJson};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::Start as _;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sh(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// One fake host: a namespace with an sshd.
struct NsHost {
    ns: String,
    veth: String,
    addr: String,
    sshd: Option<support::Spawned>,
}

impl Drop for NsHost {
    fn drop(&mut self) {
        if let Some(mut c) = self.sshd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Every process left in the namespace (sshd's session children).
        if let Ok(o) = Command::new("ip")
            .args(["netns", "pids", &self.ns])
            .output()
        {
            for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).output();
            }
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.veth])
            .output();
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
    }
}

/// A sandbox MariaDB started inside a host's namespace; stopped (and its
/// directory removed) on every path.
struct NsSandbox {
    dir: PathBuf,
    state: PathBuf,
}

impl NsSandbox {
    fn socket(&self) -> PathBuf {
        self.dir.join("mysql.sock")
    }
}

impl Drop for NsSandbox {
    fn drop(&mut self) {
        let _ = support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", &self.state)
            .args(["sandbox", "stop", "--dir"])
            .arg(&self.dir)
            .output();
    }
}

/// Start one sandbox per namespace, all at once (each `sandbox start`
/// returns when its server accepts connections).
fn ns_sandboxes(hosts: &[NsHost], tmp: &Path) -> Vec<NsSandbox> {
    let mut started = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        let sb = NsSandbox {
            dir: tmp.join(format!("sb{}", i + 1)),
            state: tmp.join(format!("sbstate{}", i + 1)),
        };
        let child = Command::new("ip")
            .args(["netns", "exec", &h.ns])
            .arg(support::bin::INNOTUNE)
            .env("INNOTUNE_STATE_DIR", &sb.state)
            .args(["sandbox", "start", "--dir"])
            .arg(&sb.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .start();
        started.push((sb, child));
    }
    started
        .into_iter()
        .map(|(sb, child)| {
            let o = child.output_within(support::WAIT);
            assert!(
                o.status.success(),
                "sandbox start in a namespace: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            sb
        })
        .collect()
}

fn ns_host(i: u32, tmp: &Path, pubkey: &Path) -> NsHost {
    let tag = format!("{}{}", std::process::id() % 10000, i);
    let mut h = NsHost {
        ns: format!("innotune-t{tag}"),
        veth: format!("itv{tag}"),
        addr: format!("10.231.{i}.2"),
        sshd: None,
    };
    let peer = format!("itp{tag}");
    sh(Command::new("ip").args(["netns", "add", &h.ns]));
    sh(Command::new("ip").args([
        "link", "add", &h.veth, "type", "veth", "peer", "name", &peer,
    ]));
    sh(Command::new("ip").args(["link", "set", &peer, "netns", &h.ns]));
    sh(Command::new("ip").args(["addr", "add", &format!("10.231.{i}.1/24"), "dev", &h.veth]));
    sh(Command::new("ip").args(["link", "set", &h.veth, "up"]));
    let inns = |args: &[&str]| {
        sh(Command::new("ip").args(["netns", "exec", &h.ns]).args(args));
    };
    inns(&["ip", "addr", "add", &format!("{}/24", h.addr), "dev", &peer]);
    inns(&["ip", "link", "set", &peer, "up"]);
    inns(&["ip", "link", "set", "lo", "up"]);

    let dir = tmp.join(format!("sshd{i}"));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("host_ed25519");
    sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key));
    let cfg = dir.join("sshd_config");
    std::fs::write(
        &cfg,
        format!(
            "Port 22\nListenAddress {}\nHostKey {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile {}\nSubsystem sftp internal-sftp\n",
            h.addr,
            key.display(),
            pubkey.display(),
            dir.join("sshd.pid").display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all("/run/sshd").unwrap();
    h.sshd = Some(
        Command::new("ip")
            .args(["netns", "exec", &h.ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .start(),
    );
    // Ready when it accepts a connection.
    let sa: SocketAddr = format!("{}:22", h.addr).parse().unwrap();
    let t0 = Instant::now();
    while TcpStream::connect_timeout(&sa, Duration::from_millis(200)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "sshd in {} not up",
            h.ns
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    h
}

/// `changed=N` of every host in the play recap.
fn changed(recap: &str) -> Vec<(String, u32)> {
    recap
        .lines()
        .filter(|l| l.contains(" : ok="))
        .map(|l| {
            let host = l.split_whitespace().next().unwrap().to_string();
            let n = l
                .split_whitespace()
                .find_map(|w| w.strip_prefix("changed="))
                .unwrap()
                .parse()
                .unwrap();
            (host, n)
        })
        .collect()
}

/// Run the playbook with `inventory`, results fetched to `results`; its
/// output (the recap), after asserting it succeeded.
fn playbook(inventory: &Path, results: &Path, tmp: &Path, extra: &[&str]) -> String {
    let o = Command::new("ansible-playbook")
        .arg("-i")
        .arg(inventory)
        .arg(manifest().join("contrib/ansible/playbook.yml"))
        .arg("-e")
        .arg(format!(
            "innotune_results_dir={} innotune_local_bin={}",
            results.display(),
            support::bin::INNOTUNE
        ))
        .args(extra)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        // No persistent ssh master connections outliving the test.
        .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=no")
        .env("ANSIBLE_LOCAL_TEMP", tmp.join("ansible-local"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "ansible-playbook {extra:?} failed:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[test]
fn role_applies_once_over_ssh_to_three_hosts_and_reports_the_fleet() {
    if !support::live() {
        return;
    }
    assert!(
        Path::new("/usr/bin/ansible-playbook").exists() && Path::new("/usr/sbin/sshd").exists(),
        "needs ansible and openssh-server (bash .ci/run installs them)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let key = t.join("id_ed25519");
    sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key));
    let pubkey = t.join("id_ed25519.pub");
    std::fs::set_permissions(t, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    // Host trees: the planted fixture, one per host, with its own hostname.
    sh(Command::new("python3")
        .arg(manifest().join("tests/fixtures/hosts/make-check-fixtures.py"))
        .arg(t.join("gen")));
    let mut inv = String::from("[dbservers]\n");
    let mut hosts = Vec::new();
    for i in 1..=3u32 {
        let root = t.join(format!("host{i}"));
        sh(Command::new("cp")
            .arg("-a")
            .arg(t.join("gen/check-planted"))
            .arg(&root));
        std::fs::write(root.join("proc/sys/kernel/hostname"), format!("db{i}\n")).unwrap();
        let state = t.join(format!("state{i}"));
        let h = ns_host(i, t, &pubkey);
        // check asks the host's own sandbox (no status window: rate rules
        // need minutes; the variable rules are what the fleet compares).
        inv.push_str(&format!(
            "db{i} ansible_host={} innotune_root={} innotune_path=/var/lib/mysql innotune_bin={} innotune_remote_dir={} innotune_environment='{{\"INNOTUNE_STATE_DIR\": \"{}\"}}' innotune_check_args='[\"--socket\", \"{}\", \"--user\", \"root\", \"--no-defaults\", \"--sample\", \"0\"]'\n",
            h.addr,
            root.display(),
            t.join(format!("bin{i}/innotune")).display(),
            t.join(format!("remote{i}")).display(),
            state.display(),
            t.join(format!("sb{i}/mysql.sock")).display(),
        ));
        hosts.push(h);
    }
    // Declared after the hosts: stopped before their namespaces go.
    let sandboxes = ns_sandboxes(&hosts, t);
    inv.push_str(&format!(
        "\n[dbservers:vars]\nansible_user=root\nansible_ssh_private_key_file={}\nansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\ninnotune_apply=true\ninnotune_binary_src={}\n",
        key.display(),
        support::bin::INNOTUNE
    ));
    for i in 1..=3 {
        std::fs::create_dir_all(t.join(format!("bin{i}"))).unwrap();
    }
    let inventory = t.join("inventory.ini");
    std::fs::write(&inventory, inv).unwrap();
    let results = t.join("results");

    let play = |extra: &[&str]| playbook(&inventory, &results, t, extra);

    // innotune's own view of a host: 1 while something is pending.
    let pending = |i: u32| {
        support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", t.join(format!("state{i}")))
            .arg("--root")
            .arg(t.join(format!("host{i}")))
            .args(["apply", "--check", "/var/lib/mysql"])
            .output()
            .unwrap()
            .status
            .code()
    };
    let db_changed = |out: &str| -> Vec<(String, u32)> {
        changed(out)
            .into_iter()
            .filter(|(h, _)| h.starts_with("db"))
            .collect()
    };

    // Check mode on fresh hosts: the install shows as the change, nothing
    // is installed or applied.
    let out = play(&["--check"]);
    let c = db_changed(&out);
    assert_eq!(c.len(), 3, "{out}");
    assert!(c.iter().all(|(_, n)| *n >= 1), "{out}");
    for i in 1..=3 {
        assert!(
            !t.join(format!("bin{i}/innotune")).exists(),
            "check mode installed"
        );
        assert_eq!(pending(i), Some(1), "check mode applied on host {i}");
    }

    // First run: every host changes.
    let out = play(&[]);
    for (h, n) in changed(&out).iter().filter(|(h, _)| h.starts_with("db")) {
        assert!(*n >= 1, "{h} unchanged on the first run:\n{out}");
    }
    for i in 1..=3 {
        assert!(
            t.join(format!("state{i}/applied.json")).exists(),
            "host {i} has no applied.json:\n{out}"
        );
    }
    // Second run: nothing changed anywhere.
    let out = play(&[]);
    let c = changed(&out);
    assert_eq!(
        c.iter().filter(|(h, _)| h.starts_with("db")).count(),
        3,
        "{out}"
    );
    assert!(
        c.iter().all(|(_, n)| *n == 0),
        "second run changed something:\n{out}"
    );

    // Results fetched per host, and one fleet report naming all three.
    for i in 1..=3 {
        let j: serde_json::Value = serde_json::from_slice(
            &std::fs::read(results.join(format!("db{i}/check.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(j["schema"], "check/2");
        assert_eq!(j["host"]["hostname"], format!("db{i}"));
        // The server rules asked the host's own sandbox.
        assert_eq!(
            j["result"]["server"]["reached"], true,
            "db{i}: {}",
            j["result"]["server"]
        );
        assert!(
            j["result"]["server"]["version"]
                .as_str()
                .is_some_and(|v| v.contains("MariaDB")),
            "db{i}: {}",
            j["result"]["server"]
        );
    }
    let html = std::fs::read_to_string(results.join("fleet.html")).unwrap();
    for i in 1..=3 {
        assert!(html.contains(&format!("db{i}")), "fleet report lacks db{i}");
    }
    // The same planted findings on every host are grouped: "3 of 3".
    assert!(html.contains("Fleet: 3 hosts"), "no fleet section");
    assert!(html.contains("3 of 3"), "findings not grouped across hosts");

    // Put the trees back (restore through each host's state dir).
    for i in 1..=3 {
        assert_eq!(pending(i), Some(0), "host {i} still pending after apply");
        let o = support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", t.join(format!("state{i}")))
            .arg("--root")
            .arg(t.join(format!("host{i}")))
            .arg("restore")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(pending(i), Some(1), "restore did not put host {i} back");
    }

    // Check mode with innotune installed is its dry run: every host shows
    // the pending plan as changed, and nothing is applied.
    let out = play(&["--check"]);
    let c = db_changed(&out);
    assert_eq!(c.len(), 3, "{out}");
    assert!(c.iter().all(|(_, n)| *n >= 1), "{out}");
    for i in 1..=3 {
        assert_eq!(pending(i), Some(1), "check mode applied on host {i}");
    }

    // Load from several clients: all three hosts drive db1's server at one
    // agreed start time; the controller merges the three results. (The
    // namespaces share this machine's filesystem, so the clients reach the
    // server through its socket; on real hosts innotune_oltp_conn names
    // --host/--port and an option file with the password.)
    let mut oinv = String::from("[oltp_clients]\n");
    for (i, h) in hosts.iter().enumerate() {
        let i = i + 1;
        oinv.push_str(&format!(
            "db{i} ansible_host={} innotune_bin={} innotune_remote_dir={} innotune_environment='{{\"INNOTUNE_STATE_DIR\": \"{}\"}}'\n",
            h.addr,
            t.join(format!("bin{i}/innotune")).display(),
            t.join(format!("remote{i}")).display(),
            t.join(format!("state{i}")).display(),
        ));
    }
    oinv.push_str(&format!(
        "\n[oltp_clients:vars]\nansible_user=root\nansible_ssh_private_key_file={}\nansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\ninnotune_binary_src={}\ninnotune_oltp_conn='[\"--socket\", \"{}\", \"--user\", \"root\", \"--no-defaults\"]'\ninnotune_oltp_prepare=true\ninnotune_oltp_table_args='[\"--tables\", \"1\", \"--table-size\", \"2000\"]'\ninnotune_oltp_args='[\"--threads\", \"2\", \"--time\", \"4\"]'\ninnotune_oltp_delay=15\n",
        key.display(),
        support::bin::INNOTUNE,
        sandboxes[0].socket().display(),
    ));
    let oinventory = t.join("oltp.ini");
    std::fs::write(&oinventory, oinv).unwrap();
    let oresults = t.join("results-oltp");
    playbook(&oinventory, &oresults, t, &[]);
    let client = |i: u32| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(oresults.join(format!("db{i}/oltp.json"))).unwrap())
            .unwrap()
    };
    let clients: Vec<serde_json::Value> = (1..=3).map(client).collect();
    let runs: Vec<&serde_json::Value> = clients.iter().map(|c| &c["result"]["runs"][0]).collect();
    let merged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(oresults.join("oltp-merged.json")).unwrap()).unwrap();
    assert_eq!(merged["schema"], "merge/2");
    assert_eq!(merged["result"]["clients"].as_array().unwrap().len(), 3);
    let m = &merged["result"]["runs"][0];
    let sum = |k: &str| runs.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert!(sum("transactions") > 0);
    assert_eq!(m["transactions"].as_u64().unwrap(), sum("transactions"));
    assert_eq!(m["threads"].as_u64().unwrap(), 6);
    // One agreed start: the three runs began within half a second.
    let spread = m["start_spread_s"].as_f64().unwrap();
    assert!(spread < 0.5, "clients started {spread} s apart");
    // p95 of the merged histogram, recomputed from the clients' own.
    let mut total: Vec<u64> = Vec::new();
    for r in &runs {
        let h = serde_json::from_value::<HistogramJson>(r["histogram"].clone())
            .unwrap()
            .dense()
            .unwrap();
        if total.is_empty() {
            total = vec![0; h.len()];
        }
        for (a, b) in total.iter_mut().zip(&h) {
            *a += b;
        }
    }
    assert_eq!(
        m["latency"]["p95_ns"].as_u64().unwrap(),
        ms_to_ns(percentile(&total, 95.0))
    );
    drop(sandboxes);
    drop(hosts);
}

#[test]
fn role_and_playbook_pass_ansible_lint() {
    if !Path::new("/usr/bin/ansible-lint").exists() {
        panic!("ansible-lint is missing (bash .ci/run installs it)");
    }
    let home = tempfile::tempdir().unwrap();
    let o = Command::new("ansible-lint")
        .args(["--offline", "-p", "playbook.yml", "roles/innotune"])
        .current_dir(manifest().join("contrib/ansible"))
        .env("HOME", home.path())
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
