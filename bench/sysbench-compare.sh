#!/usr/bin/env bash
# innotune oltp vs sysbench 1.0.20 on one throwaway sandbox, same tables,
# threads and time, alternating runs (the order flips every round).
# Targets (issue 5): identical read/write/other per transaction; QPS ratio
# innotune/sysbench >= 1 at 8 and 32 threads; client CPU time per query
# <= sysbench's (user+sys of each client process, from wait4 rusage).
#
# Issue 45: the seeds' thread counts (THREADS=8,32,64,128,256,512; the
# sandbox makes room for 1024 clients). Per count: the paired
# Hodges-Lehmann ratio of QPS with its exact 95 % interval over the rounds
# (bench/paired.py; 5 rounds or more give one), and the CPU each side used
# per query: the client's (wait4 rusage) and the server's (mariadbd's
# utime + stime from /proc over the same run) — where the server's CPU per
# query is the same for both and the machine is saturated, the count is
# server-bound for both tools (level).
#
# Usage: bench/sysbench-compare.sh [ROUNDS] [SECONDS] [TABLES] [TABLE_SIZE]
# Env: INNOTUNE (default target/release/innotune), WORKLOAD (oltp_read_write),
#      THREADS (comma list, default 8,32).
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
ROUNDS=${1:-3}
SECS=${2:-10}
TABLES=${3:-4}
SIZE=${4:-50000}
WORKLOAD=${WORKLOAD:-oltp_read_write}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
command -v sysbench >/dev/null || { echo "sysbench not installed" >&2; exit 2; }
[ -x "$INNOTUNE" ] || { echo "build first: cargo build --release ($INNOTUNE)" >&2; exit 2; }

PARENT=$(mktemp -d /tmp/itbench.XXXXXX)
DIR=$PARENT/sb
cleanup() { "$INNOTUNE" sandbox stop --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$PARENT"; }
trap cleanup EXIT INT TERM
"$INNOTUNE" sandbox start --dir "$DIR" >/dev/null
SOCK=$DIR/mysql.sock
"$INNOTUNE" oltp "$WORKLOAD" prepare --socket "$SOCK" -u root --no-defaults \
  --tables "$TABLES" --table-size "$SIZE" --threads 2 >/dev/null

SERVER_PID=$(cat "$DIR/mysqld.pid" 2>/dev/null || pgrep -f -- "--datadir=$DIR" | head -1)
THREADS=${THREADS:-8,32} SERVER_PID=$SERVER_PID HERE=$HERE \
python3 - "$INNOTUNE" "$SOCK" "$ROUNDS" "$SECS" "$TABLES" "$SIZE" "$WORKLOAD" "$BENCH_LOG" <<'PY'
import json, os, re, statistics, subprocess, sys, time
sys.path.insert(0, os.environ["HERE"])
from paired import hodges_lehmann, verdict
inno, sock, rounds, secs, tables, size, wl, results = sys.argv[1:]
threads_list = [int(t) for t in os.environ["THREADS"].split(",")]
server_pid = os.environ.get("SERVER_PID", "")
tick = os.sysconf("SC_CLK_TCK")

def server_cpu():
    """mariadbd's user + system CPU seconds so far (0 if unknown)."""
    try:
        f = open(f"/proc/{server_pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick
    except (OSError, IndexError, ValueError):
        return 0.0
rounds, secs = int(rounds), int(secs)
common = [f"--tables={tables}", f"--table-size={size}"]

def run(cmd):
    """Run a client, return (stdout, cpu seconds of that process)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read().decode()
    err = p.stderr.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return out, ru.ru_utime + ru.ru_stime

def field(text, label):
    for l in text.splitlines():
        s = l.strip()
        if s.startswith(label):
            return s[len(label):].split()[0]
    raise SystemExit(f"no {label} in output")

def parse(text):
    r, w, o = (int(field(text, k)) for k in ("read:", "write:", "other:"))
    trx = int(field(text, "transactions:"))
    t = float(field(text, "total time:").rstrip("s"))
    return dict(read=r, write=w, other=o, trx=trx, qps=(r + w + o) / t, queries=r + w + o)

def innotune(threads, extra):
    return run([inno, "oltp", wl, "run", "--socket", sock, "-u", "root", "--no-defaults",
                f"--threads={threads}"] + common + extra)

def sysbench(threads, extra):
    return run(["sysbench", wl, f"--mysql-socket={sock}", "--mysql-user=root",
                f"--threads={threads}"] + common + extra + ["run"])

# 1. Per-transaction counts with a fixed event count, one thread (no deadlocks).
ev = ["--events=2000", "--time=0"]
a, _ = innotune(1, ev); b, _ = sysbench(1, ev)
ca, cb = parse(a), parse(b)
same = all(ca[k] == cb[k] for k in ("read", "write", "other", "trx"))
per_trx = f"{ca['read']/ca['trx']:.0f}/{ca['write']/ca['trx']:.0f}/{ca['other']/ca['trx']:.0f}"

# 2. Timed runs, alternating.
rows = []
for threads in threads_list:
    q = {"innotune": [], "sysbench": []}
    cpu = {"innotune": [], "sysbench": []}
    srv = {"innotune": [], "sysbench": []}
    busy = {"innotune": [], "sysbench": []}
    for rnd in range(rounds):
        order = [("innotune", innotune), ("sysbench", sysbench)]
        if rnd % 2:
            order.reverse()
        for name, fn in order:
            s0, w0 = server_cpu(), time.monotonic()
            out, c = fn(threads, [f"--time={secs}"])
            s1, w1 = server_cpu(), time.monotonic()
            p = parse(out)
            q[name].append(p["qps"])
            cpu[name].append(c / p["queries"] * 1e6)
            srv[name].append((s1 - s0) / p["queries"] * 1e6)
            # Share of the machine's CPUs the server and the client used.
            busy[name].append(((s1 - s0) + c) / ((w1 - w0) * os.cpu_count()))
            print(f"threads {threads} round {rnd+1} {name:8s} qps {p['qps']:9.1f} cpu/query {cpu[name][-1]:6.2f} us server {srv[name][-1]:6.1f} us busy {busy[name][-1]:.2f}", file=sys.stderr)
    m = {k: statistics.median(v) for k, v in q.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    sv = {k: statistics.median(v) for k, v in srv.items()}
    bz = {k: statistics.median(v) for k, v in busy.items()}
    est, ci = hodges_lehmann([a / b for a, b in zip(q["innotune"], q["sysbench"])])
    rows.append((threads, m["innotune"], m["sysbench"], est, ci, verdict(ci),
                 c["innotune"], c["sysbench"], c["innotune"] / c["sysbench"],
                 sv["innotune"], sv["sysbench"], bz["innotune"], bz["sysbench"]))

load = open("/proc/loadavg").read().split()[0]
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
lines = [f"\n## innotune oltp vs sysbench 1.0.20 — {wl} ({stamp})\n",
         f"Command: `THREADS={','.join(map(str, threads_list))} WORKLOAD={wl} bench/sysbench-compare.sh {rounds} {secs} {tables} {size}`; "
         f"one sandbox ({sock.rsplit('/',2)[0]}), {tables}×{size} rows, {rounds} alternating rounds of {secs}s, medians. "
         f"Load average at the end: {load} ({os.cpu_count()} CPUs).\n",
         f"- Per transaction (2000 events, 1 thread): innotune r/w/o {per_trx}; "
         f"identical totals to sysbench: **{'yes' if same else 'NO'}** "
         f"(innotune {ca['read']}/{ca['write']}/{ca['other']}, sysbench {cb['read']}/{cb['write']}/{cb['other']})\n",
         "\n| threads | innotune QPS | sysbench QPS | QPS ratio, paired HL (target ≥ 1) | 95 % CI | verdict | innotune client CPU µs/query | sysbench client CPU µs/query | client CPU ratio (target ≤ 1) | server CPU µs/query (innotune / sysbench) | machine busy (innotune / sysbench) |\n",
         "|---:|---:|---:|---:|---|---|---:|---:|---:|---|---|\n"]
for t, qi, qs, est, ci, vd, cli, cls, cr, svi, svs, bi, bs in rows:
    cis = f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "—"
    lines.append(f"| {t} | {qi:.0f} | {qs:.0f} | {est:.3f} | {cis} | {vd} | {cli:.2f} | {cls:.2f} | {cr:.3f} | {svi:.1f} / {svs:.1f} | {bi:.2f} / {bs:.2f} |\n")
text = "".join(lines)
with open(results, "a") as f:
    f.write(text)
print(text)
PY
