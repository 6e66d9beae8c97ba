#!/usr/bin/env bash
# innotune replay --speed max against the run it replays (`innotune oltp`)
# and against mysqlslap --query=FILE on the same statements.
#
# A "live" `innotune sandbox` (MariaDB) is loaded with sysbench's tables and
# its slow log is turned on at long_query_time = 0 for one `innotune oltp
# oltp_read_only run --db-ps-mode disable` (plain-text statements, as a slow
# log and mysqlslap hold them) at THREADS threads for TIME seconds. The data
# is copied to a second sandbox (`sandbox start --from-live`, logical copy);
# every measured run is on that copy, ROUNDS rounds, the three tools in an
# order that alternates (A B C, C B A, …):
#   oltp     `innotune oltp oltp_read_only run` again, THREADS threads, TIME s
#   replay   `innotune replay LOG --speed max --concurrency THREADS`
#   slap     `mysqlslap --query=FILE --concurrency=THREADS --number-of-queries=S`
#            (FILE: the log's statements in its order, S of them; MariaDB's
#            mysqlslap counts S over all clients, each running the first
#            S/THREADS: the same statement mix and about the same total,
#            not the same per-session streams)
# Each run's statements are the copy's `Questions` delta (SHOW GLOBAL
# STATUS before and after, our two status reads taken off); its QPS is
# statements over the tool's own timed window (oltp's queries_per_s,
# replay's totals.elapsed_s, mysqlslap's "seconds to run all queries");
# its client CPU is the tool process's user + system time (getrusage of
# the child) over those statements, and its server CPU the copy server's
# (/proc/PID/stat) over the same run. Ratios per round, innotune replay over
# each other tool, with the paired Hodges-Lehmann estimate and its exact
# 95 % interval (bench/paired.py). Also replay's rate while all its
# connections were busy (totals.all_busy_queries_per_s; the rest of a round
# is a tail on fewer connections, which neither the original nor its
# concurrency had) over the original's. Appended to bench/log/<UTC date>.md.
#
# Usage: ROUNDS=5 THREADS=4 TIME=10 bench/replay-compare.sh
#   BIN=path   the innotune binary (default target/release/innotune)
# Needs: mariadb-server (mariadb, mysqlslap), python3. The sandboxes and the
# work directory go away on every exit path.
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."
. bench/lib.sh

ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-4}
TIME=${TIME:-10}
ROWS=${ROWS:-10000}
BIN=${BIN:-target/release/innotune}
for t in mariadb mysqlslap python3; do
  command -v "$t" >/dev/null || { echo "missing $t (apt-get install mariadb-server mariadb-client python3)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release" >&2; exit 2; }
BIN=$(realpath "$BIN")

bench_workdir replay
live=$WORK/live
copy=$WORK/copy
"$BIN" sandbox start --dir "$live" >/dev/null
bench_undo "'$BIN' sandbox stop --dir '$live' >/dev/null 2>&1"
lconn=(--socket "$live/mysql.sock" --user root --no-defaults)
"$BIN" oltp oltp_read_only prepare "${lconn[@]}" --tables 4 --table-size "$ROWS" >/dev/null
mariadb --no-defaults -S "$live/mysql.sock" -uroot -e \
  "SET GLOBAL long_query_time = 0, GLOBAL slow_query_log_file = '$WORK/slow.log', GLOBAL slow_query_log = 1"
"$BIN" --format json oltp oltp_read_only run "${lconn[@]}" --tables 4 --table-size "$ROWS" \
  --threads "$THREADS" --time "$TIME" --db-ps-mode disable >"$WORK/captured.json"
mariadb --no-defaults -S "$live/mysql.sock" -uroot -e "SET GLOBAL slow_query_log = 0"
"$BIN" sandbox start --dir "$copy" --from-live --copy-method logical --max-size 1GiB "${lconn[@]}" >/dev/null
bench_undo "'$BIN' sandbox stop --dir '$copy' >/dev/null 2>&1"
"$BIN" --format json slowlog --top 0 "$WORK/slow.log" >"$WORK/digest.json"

WORK=$WORK BIN=$BIN ROUNDS=$ROUNDS THREADS=$THREADS TIME=$TIME ROWS=$ROWS python3 - <<'PY'
import datetime, json, os, resource, subprocess, sys, time
sys.path.insert(0, "bench")
from paired import hodges_lehmann, verdict

work, bin_ = os.environ["WORK"], os.environ["BIN"]
rounds, threads, secs = int(os.environ["ROUNDS"]), int(os.environ["THREADS"]), int(os.environ["TIME"])
rows = int(os.environ["ROWS"])
sock = f"{work}/copy/mysql.sock"
conn = ["--socket", sock, "--user", "root", "--no-defaults"]
log = f"{work}/slow.log"

# The log's statements in its order, for mysqlslap (one a line, `;` ended).
stmts = []
with open(log, errors="replace") as f:
    for line in f:
        if line.startswith(("#", "SET timestamp=", "use ", "/usr/", "Tcp port:")) or line.split()[:3] == ["Time", "Id", "Command"] or not line.strip():
            continue
        stmts.append(line.rstrip("\n"))
bad = [s for s in stmts if not s.endswith(";")]
assert not bad, bad[:5]
with open(f"{work}/queries.sql", "w") as f:
    f.write("\n".join(stmts) + "\n")
digest = json.load(open(f"{work}/digest.json"))["result"]
assert digest["totals"]["entries"] == len(stmts), (digest["totals"]["entries"], len(stmts))
captured = json.load(open(f"{work}/captured.json"))["result"]["runs"][0]

def questions():
    out = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot", "-N", "-e",
                          "SHOW GLOBAL STATUS LIKE 'Questions'"], check=True, capture_output=True, text=True).stdout
    return int(out.split()[1])

# The copy's server process, for its CPU time per statement: which side
# (client or server) does more work per statement.
server_pid = int(subprocess.run(["pgrep", "-f", f"{work}/copy/my.cnf"], check=True, capture_output=True,
                                text=True).stdout.split()[0])
tick = os.sysconf("SC_CLK_TCK")
def server_cpu():
    f = open(f"/proc/{server_pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick

last_server = {}
def timed(cmd):
    q0 = questions()
    s0 = server_cpu()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s1 = server_cpu()
    q1 = questions()
    last_server["cpu"] = s1 - s0
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {p.stderr}")
    # Our own status read after q0 is counted in q1.
    n = q1 - q0 - 1
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.stdout, n, cpu

def oltp():
    out, n, cpu = timed([bin_, "--format", "json", "oltp", "oltp_read_only", "run", *conn, "--tables", "4",
                         "--table-size", str(rows), "--threads", str(threads), "--time", str(secs), "--db-ps-mode", "disable"])
    r = json.loads(out)["result"]["runs"][0]
    return r["queries_per_s"], n, cpu, 0

def replay():
    out, n, cpu = timed([bin_, "--format", "json", "replay", log, "--speed", "max", "--concurrency", str(threads), *conn])
    t = json.loads(out)["result"]["totals"]
    busy.append((t["all_busy_queries_per_s"], t["all_busy_s"] / t["elapsed_s"]))
    return t["statements"] / t["elapsed_s"], n, cpu, t["errors"]

# MariaDB's mysqlslap takes --number-of-queries as the total over its
# clients: each runs the first S/THREADS statements of FILE.
per_client = max(1, len(stmts) // threads)
def slap():
    out, n, cpu = timed(["mysqlslap", "--no-defaults", "-S", sock, "-uroot", "--create-schema=sbtest", "--no-drop",
                         f"--query={work}/queries.sql", "--delimiter=;", f"--concurrency={threads}", "--iterations=1",
                         f"--number-of-queries={len(stmts)}"])
    s = float([l for l in out.splitlines() if "Average number of seconds to run all queries" in l][0].split(":")[1].split()[0])
    return n / s, n, cpu, 0

# replay's rate while all its connections were busy (totals.all_busy_*),
# and that part's share of the round, per round.
busy = []
tools = [("oltp", oltp), ("replay", replay), ("slap", slap)]
res = {k: [] for k, _ in tools}
for r in range(rounds):
    order = tools if r % 2 == 0 else tools[::-1]
    for name, f in order:
        qps, n, cpu, errors = f()
        res[name].append((qps, n, cpu, errors, last_server["cpu"]))
        print(f"round {r + 1} {name}: {qps:.0f} q/s, {n} statements, {cpu:.2f} s CPU ({cpu / n * 1e6:.1f} µs/statement), server {last_server['cpu'] / n * 1e6:.1f} µs/statement, {errors} errors", file=sys.stderr)

def med(xs):
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2

def row(name, label):
    v = res[name]
    q = [x[0] for x in v]
    c = [x[2] / x[1] * 1e6 for x in v]
    sv = [x[4] / x[1] * 1e6 for x in v]
    return f"| {label} | {med(q):.0f} | {med([x[1] for x in v]):.0f} | {med(c):.1f} | {med(sv):.1f} | {sum(x[3] for x in v)} | {', '.join(f'{x:.0f}' for x in q)} | {', '.join(f'{x:.1f}' for x in c)} |"

def ratio(other):
    q = [a[0] / b[0] for a, b in zip(res["replay"], res[other])]
    c = [(a[2] / a[1]) / (b[2] / b[1]) for a, b in zip(res["replay"], res[other])]
    (qe, qci), (ce, cci) = hodges_lehmann(q), hodges_lehmann(c)
    fmt = lambda ci: "—" if ci is None else f"{ci[0]:.3f}–{ci[1]:.3f}"
    return qe, fmt(qci), verdict(qci, "replay"), ce, fmt(cci)

now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
load = " ".join(open("/proc/loadavg").read().split()[:3])
cpus = os.cpu_count()
version = subprocess.run(["mariadb", "--no-defaults", "-S", sock, "-uroot", "-N", "-e", "SELECT VERSION()"],
                         capture_output=True, text=True).stdout.strip()
ro, rs = ratio("oltp"), ratio("slap")
bq = [b[0] / o[0] for b, o in zip(busy, res["oltp"])]
be, bci = hodges_lehmann(bq)
bci_s = "—" if bci is None else f"{bci[0]:.3f}–{bci[1]:.3f}"
sec = f"""
## replay vs the oltp run it replays vs mysqlslap ({now}, `bench/replay-compare.sh`)

Log: `innotune oltp oltp_read_only run --db-ps-mode disable`, {threads} threads, {secs} s, 4 tables × {rows} rows, on a MariaDB {version} sandbox at long_query_time = 0: {len(stmts)} statements ({captured['queries_per_s']:.0f} q/s while logging), {digest['classes_total']} classes. Every measured run on a `sandbox start --from-live` (logical) copy, {rounds} rounds, order alternating; {cpus} CPUs shared with other work (load average {load} at the end). Statements: the copy's `Questions` delta per run; QPS over each tool's own timed window; client CPU: the tool process's user + system time per statement; server CPU: the copy's mariadbd user + system time (/proc/PID/stat) over the same run, per statement.

| tool | median q/s | median statements | median client CPU µs/statement | median server CPU µs/statement | errors (all rounds) | q/s per round | client µs/statement per round |
|---|---:|---:|---:|---:|---:|---|---|
{row("oltp", f"innotune oltp oltp_read_only run, {threads} threads, {secs} s (the original)")}
{row("replay", f"innotune replay LOG --speed max --concurrency {threads}")}
{row("slap", f"mysqlslap --query=FILE --concurrency={threads} --number-of-queries={len(stmts)}")}

Replay over the original run: QPS **{ro[0]:.3f}** (CI {ro[1]}, {ro[2]}); client CPU per statement {ro[3]:.3f} (CI {ro[4]}).
Replay while all {threads} connections were busy (`totals.all_busy_queries_per_s`: from the round's start until the first connection ran out of statements, {med([b[1] for b in busy]) * 100:.0f} % of the round in the median; q/s per round {', '.join(f'{b[0]:.0f}' for b in busy)}) over the original run, which had its {threads} threads busy throughout: QPS **{be:.3f}** (CI {bci_s}, {verdict(bci, "replay")}).
Replay over mysqlslap: QPS **{rs[0]:.3f}** (CI {rs[1]}, {rs[2]}); client CPU per statement {rs[3]:.3f} (CI {rs[4]}).
mysqlslap's clients each run the first {per_client} statements of the log's order (the same statement mix, not the sessions' own streams); the replay runs each session's statements on its connection, {threads} connections.

Reproduce: `ROUNDS={rounds} THREADS={threads} TIME={secs} ROWS={rows} bench/replay-compare.sh`
"""
open(os.environ["BENCH_LOG"], "a").write(sec)
print(sec)
PY
