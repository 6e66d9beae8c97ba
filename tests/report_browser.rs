//! `innotune report`'s page opened in headless Chromium (Debian's
//! `chromium` package) over the DevTools protocol: every chart has SVG
//! content with a real size, no console error, no exception, no failed
//! request; a screenshot is kept (target/report-screenshot.png, and
//! docs/report-screenshot.png for the README when INNOTUNE_UPDATE_SCREENSHOT
//! is set).
//!
//! Live (a loop device for the sweep, a sandbox server for OLTP), and
//! skipped with a reason when /usr/bin/chromium is absent.

mod support;
use support::Start as _;

use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::innotune_in;
use support::report::{check_json, probe_json, LoopLab};
use tungstenite::{Message, WebSocket};

const CHROMIUM: &str = "/usr/bin/chromium";
const TIMEOUT: Duration = Duration::from_secs(60);

/// Headless chromium, killed (and waited for) on every path.
struct Browser {
    child: support::Spawned,
    _profile: tempfile::TempDir,
    ws_url: String,
}

impl Browser {
    fn launch() -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless=new",
                "--remote-debugging-port=0",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: the renderer, GPU and zygote processes
            // it forks are ended with it.
            .process_group(0)
            .start();
        // Readiness: the "DevTools listening on ws://…" line on stderr. A
        // thread reads it so the wait has a deadline; it keeps draining
        // stderr afterwards so chromium never blocks on a full pipe.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut seen = Vec::new();
        let deadline = Instant::now() + TIMEOUT;
        let ws_url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) => {
                    if let Some(u) = l.strip_prefix("DevTools listening on ") {
                        break u.trim().to_string();
                    }
                    seen.push(l);
                }
                Err(_) => {
                    kill_group(&mut child);
                    panic!("chromium never said where DevTools listens: {seen:#?}");
                }
            }
        };
        Browser {
            child,
            _profile: profile,
            ws_url,
        }
    }
}

/// SIGKILL chromium's process group (its pid: it leads the group), then reap it.
fn kill_group(child: &mut support::Spawned) {
    // SAFETY: kill has no memory preconditions; the group is the one this
    // test started (process_group(0) made chromium its leader).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Browser {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

/// A DevTools connection in flat session mode, collecting events.
struct Cdp {
    ws: WebSocket<TcpStream>,
    next: u64,
    session: Option<String>,
    events: Vec<Value>,
}

impl Cdp {
    fn connect(url: &str) -> Cdp {
        let hostport = url
            .strip_prefix("ws://")
            .and_then(|r| r.split('/').next())
            .unwrap();
        let tcp = TcpStream::connect(hostport).unwrap();
        tcp.set_read_timeout(Some(TIMEOUT)).unwrap();
        let (ws, _) = tungstenite::client(url, tcp).expect("websocket handshake");
        Cdp {
            ws,
            next: 0,
            session: None,
            events: Vec::new(),
        }
    }

    /// Send a command and wait for its answer, keeping events met meanwhile.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let v = self.read();
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.ws.read().expect("DevTools message (timed out?)") {
                Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
                Message::Close(_) => panic!("DevTools closed the connection"),
                _ => continue,
            }
        }
    }

    /// Wait for an event named `method` (already seen or still to come).
    fn wait_event(&mut self, method: &str) -> Value {
        if let Some(e) = self.events.iter().find(|e| e["method"] == method) {
            return e.clone();
        }
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            let v = self.read();
            self.events.push(v.clone());
            if v["method"] == method {
                return v;
            }
        }
        panic!("no {method} within {TIMEOUT:?}");
    }
}

/// Two OLTP runs on a sandbox (thread ladders 1, 2, 4) as before.json and
/// after.json, for the TPS-against-threads charts.
fn oltp_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let s = support::server();
    let sock = s.sock_args();
    let o = support::innotune()
        .args(["oltp", "oltp_read_only", "prepare"])
        .args(&sock)
        .args(["--tables", "2", "--table-size", "2000"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = |name: &str| {
        let p = dir.join(name);
        let o = support::innotune()
            .args(["--format", "json", "--output"])
            .arg(&p)
            .args(["oltp", "oltp_read_only", "run"])
            .args(&sock)
            .args(["--tables", "2", "--table-size", "2000"])
            .args(["--threads", "1,2,4", "--time", "1"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        p
    };
    (run("oltp-before.json"), run("oltp-after.json"))
}

#[test]
fn report_page_renders_cleanly_in_headless_chromium() {
    if !support::live() {
        return;
    }
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} is absent (apt-get install chromium)");
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let probe = probe_json(state.path(), dir.path());
    let check = check_json(state.path(), dir.path(), "check-planted", "check.json");
    let sweep = {
        let lab = LoopLab::new("browser");
        lab.sweep_json(state.path(), &dir.path().join("sweep.json"))
    };
    let (before, after) = oltp_pair(dir.path());
    let page = dir.path().join("report.html");
    let o = innotune_in(state.path())
        .arg("report")
        .args([&before, &after, &sweep, &check, &probe])
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let charts_in_file = html.matches("<svg xmlns").count();
    // Side by side: TPS, QPS and p95 against threads for the two OLTP runs.
    assert!(html.contains("oltp_read_only TPS by threads, per run"));

    let browser = Browser::launch();
    let mut cdp = Cdp::connect(&browser.ws_url);
    let targets = cdp.call("Target.getTargets", json!({}));
    let page_target = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .expect("a page target")["targetId"]
        .clone();
    let attached = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": page_target, "flatten": true}),
    );
    cdp.session = Some(attached["sessionId"].as_str().unwrap().to_string());
    for domain in ["Page", "Runtime", "Log", "Network"] {
        cdp.call(&format!("{domain}.enable"), json!({}));
    }
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1100, "height": 1500, "deviceScaleFactor": 1, "mobile": false}),
    );
    let url = format!("file://{}", page.display());
    let nav = cdp.call("Page.navigate", json!({"url": url}));
    assert!(nav.get("errorText").is_none(), "navigate: {nav}");
    cdp.wait_event("Page.loadEventFired");

    // Every SVG has child elements and a real size (legend keys included).
    let r = cdp.call(
        "Runtime.evaluate",
        json!({
            "expression": "JSON.stringify([...document.querySelectorAll('svg')].map(s => { const b = s.getBoundingClientRect(); return {cls: s.getAttribute('class'), children: s.childElementCount, marks: s.querySelectorAll('rect,path,circle').length, w: b.width, h: b.height}; }))",
            "returnByValue": true
        }),
    );
    let svgs: Vec<Value> = serde_json::from_str(r["result"]["value"].as_str().unwrap()).unwrap();
    let charts: Vec<&Value> = svgs.iter().filter(|s| s["cls"] == "chart").collect();
    assert_eq!(
        charts.len(),
        charts_in_file,
        "every chart in the file is in the DOM"
    );
    assert!(charts.len() >= 6, "sweep and OLTP charts: {}", charts.len());
    for s in &svgs {
        assert!(s["children"].as_u64().unwrap() > 0, "empty svg: {s}");
        assert!(s["marks"].as_u64().unwrap() > 0, "svg without marks: {s}");
        assert!(
            s["w"].as_f64().unwrap() > 0.0 && s["h"].as_f64().unwrap() > 0.0,
            "svg without size: {s}"
        );
    }
    // Text is real text: the page's words can be selected and found.
    let r = cdp.call(
        "Runtime.evaluate",
        json!({"expression": "document.body.innerText.includes('Side by side') && getSelection().selectAllChildren(document.body) === undefined && getSelection().toString().length > 1000", "returnByValue": true}),
    );
    assert_eq!(r["result"]["value"], true, "page text not selectable");
    cdp.call(
        "Runtime.evaluate",
        json!({"expression": "getSelection().removeAllRanges()"}),
    );

    let shot = cdp.call(
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": false}),
    );
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("report-screenshot.png"), &png).unwrap();
    // The README's copy is refreshed only on request: a test run must not
    // dirty the checkout.
    if std::env::var_os("INNOTUNE_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(root.join("docs/report-screenshot.png"), &png).unwrap();
    }

    // It prints on A4 (the page's @media print and @page rules).
    let pdf = cdp.call(
        "Page.printToPDF",
        json!({"paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": true}),
    );
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(pdf["data"].as_str().unwrap())
        .unwrap();
    assert!(pdf.starts_with(b"%PDF"), "not a PDF");
    let text = String::from_utf8_lossy(&pdf);
    let media: Vec<f64> = text
        .split("/MediaBox [")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .expect("a MediaBox")
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    // A4 is 595.3 × 841.9 pt.
    assert!(
        (media[2] - 595.3).abs() < 1.5 && (media[3] - 841.9).abs() < 1.5,
        "not A4: {media:?}"
    );

    // Let late events arrive: a no-op round trip after the screenshot.
    cdp.call("Runtime.evaluate", json!({"expression": "1"}));
    let errors: Vec<&Value> = cdp
        .events
        .iter()
        .filter(|e| match e["method"].as_str().unwrap_or("") {
            "Runtime.consoleAPICalled" => e["params"]["type"] == "error",
            "Runtime.exceptionThrown" => true,
            "Log.entryAdded" => e["params"]["entry"]["level"] == "error",
            "Network.loadingFailed" => true,
            _ => false,
        })
        .collect();
    assert!(
        errors.is_empty(),
        "console errors or failed requests: {errors:#?}"
    );
    drop(cdp);
    drop(browser);
}
