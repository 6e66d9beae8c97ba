#!/usr/bin/env bash
# `innotune tune --search` against the hand-set configuration: how long to a
# confirmed answer, and how much of the hand-set configuration's gain the
# search's configuration reaches. Each run plants the issue's storage
# mistakes on a "live" sandbox (8 MiB buffer pool under ~30 MB of rows,
# innodb_io_capacity 100, a 4 MiB redo log, flush_neighbors on; a 4 MiB
# log buffer so the 4 MiB redo can be set again), runs
# `tune --search --budget B` (its own sandbox on ext4 over a loop device
# backed by /dev/shm), then measures on the planted server itself, in
# interleaved rounds (each round the three configurations in a random
# order, a 2 s warm-up discarded before each 4 s window of oltp_read_write
# at 8 threads): P (as planted), S (P plus the search's proved changes) and
# H (P plus the hand-set values of tests/search_live.rs). The search's OS
# changes (queue/…, vm.…; it searches those too) are left out of S: they
# were proved on the search's loop device, and the comparison is of the
# server's settings (the run's table lists them with the rest). So are
# restart knobs (innodb_flush_method: `at_restart`), which the planted
# server cannot switch with SET GLOBAL; S then understates the search. The gains are the
# per-round ratios S/P and H/P (Hodges-Lehmann with the exact 95 % interval,
# bench/paired.py); the share is (S/P - 1) / (H/P - 1) of the medians.
# Appends every run, the summary, the load average and the commands to
# bench/log/<UTC date>.md.
#
# Usage (as root): bench/search-gain.sh [RUNS] [BUDGET] [ROUNDS]   (defaults 3, 4m, 5)
#   env: INNOTUNE=<binary> (default: the debug build; the OLTP client is
#   innotune's own, the same for every configuration), KEEP_JSON=FILE
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
RUNS=${1:-3}
BUDGET=${2:-4m}
ROUNDS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/debug/innotune}
. "$HERE/lib.sh"
bench_workdir search-gain
SHM=$(mktemp -d /dev/shm/innotune-search-gain.XXXXXX)
bench_undo "rm -rf '$SHM'"
truncate -s 1G "$SHM/backing"
bench_loop "$SHM/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
PLANTED="innodb_buffer_pool_size=8M innodb_io_capacity=100 innodb_io_capacity_max=200 innodb_log_file_size=4M innodb_flush_neighbors=1"
HAND="innodb_buffer_pool_size=128M innodb_io_capacity=2000 innodb_io_capacity_max=4000 innodb_log_file_size=256M innodb_flush_neighbors=0"
# innodb_log_buffer_size 4M (read-only on MariaDB, so set at start): the
# server refuses SET GLOBAL innodb_log_file_size below the log buffer, and
# P must be set again between rounds.
{ for kv in $PLANTED; do echo "${kv%%=*} = ${kv#*=}"; done; echo "innodb_log_buffer_size = 4M"; } > "$WORK/planted.cnf"
bytes() { python3 -c "import sys;s=sys.argv[1];m={'K':1<<10,'M':1<<20,'G':1<<30};print(int(s[:-1])*m[s[-1]] if s[-1] in m else s)" "$1"; }
put() { # put "k=v k=v ...": io_capacity_max raised first so any capacity is taken
  local sql="SET GLOBAL innodb_io_capacity_max = 100000;" kv max=""
  for kv in $1; do
    if [ "${kv%%=*}" = innodb_io_capacity_max ]; then max=${kv#*=}; continue; fi
    sql="$sql SET GLOBAL ${kv%%=*} = $(bytes "${kv#*=}");"
  done
  [ -n "$max" ] && sql="$sql SET GLOBAL innodb_io_capacity_max = $max;"
  mariadb -S "$LIVE/mysql.sock" -uroot -e "$sql"
}
tps() {
  "$INNOTUNE" oltp oltp_read_write run --socket "$LIVE/mysql.sock" --user root \
    --tables 2 --table-size 60000 --threads 8 --time "$1" --format json |
    python3 -c 'import json,sys;print(json.load(sys.stdin)["result"]["runs"][0]["transactions_per_s"])'
}
for run in $(seq 1 "$RUNS"); do
  # A fresh planted server each run (its own directory: a stopped sandbox
  # keeps its datadir).
  LIVE=$WORK/live.$run
  "$INNOTUNE" sandbox start --dir "$LIVE" --profile "$WORK/planted.cnf" --keep > /dev/null
  bench_undo "'$INNOTUNE' sandbox stop --dir '$LIVE' > /dev/null 2>&1"
  "$INNOTUNE" oltp oltp_read_only prepare --socket "$LIVE/mysql.sock" --user root --tables 2 --table-size 60000 > /dev/null
  mariadb -S "$LIVE/mysql.sock" -uroot -e "ANALYZE TABLE sbtest.sbtest1, sbtest.sbtest2" > /dev/null
  "$INNOTUNE" tune "$WORK/mnt" --search --budget "$BUDGET" --threads 8 --seed "$run" \
    --socket "$LIVE/mysql.sock" --user root --format json > "$WORK/search.$run.json" 2> "$WORK/search.$run.err" \
    || { tail -5 "$WORK/search.$run.err" >&2; exit 1; }
  S=$(python3 -c 'import json,sys;r=json.load(open(sys.argv[1]))["result"]["recommendation"];print(" ".join(c["name"]+"="+c["to"] for c in r.get("changes",[]) if "/" not in c["name"] and "." not in c["name"] and c["name"] not in r.get("at_restart",[])))' "$WORK/search.$run.json")
  : > "$WORK/rounds.$run"
  for round in $(seq 1 "$ROUNDS"); do
    for side in $(printf 'P\nS\nH\n' | shuf); do
      case $side in P) put "$PLANTED" ;; S) put "$PLANTED $S" ;; H) put "$PLANTED $HAND" ;; esac
      tps 2 > /dev/null
      echo "$round $side $(tps 4)" >> "$WORK/rounds.$run"
    done
  done
  cut -d' ' -f1-3 /proc/loadavg > "$WORK/load.$run"
  "$INNOTUNE" sandbox stop --dir "$LIVE" > /dev/null
  echo "run $run/$RUNS done" >&2
done
# KEEP_JSON=FILE keeps the first run's search result (tests/fixtures/results/search.json).
if [ -n "${KEEP_JSON:-}" ]; then cp "$WORK/search.1.json" "$KEEP_JSON"; fi
CMD="bench/search-gain.sh $RUNS $BUDGET $ROUNDS"
python3 - "$WORK" "$BENCH_LOG" "$RUNS" "$CMD" "$HERE" <<'PY'
import json, statistics, sys, time
work, log, runs, cmd, here = sys.argv[1:6]
sys.path.insert(0, here)
from paired import hodges_lehmann
def iv(x):
    est, ci = x
    return f"{est:.2f}" + ("" if ci is None else f" ({ci[0]:.2f}–{ci[1]:.2f})")
lines, shares, times = [], [], []
for i in range(1, int(runs) + 1):
    r = json.load(open(f"{work}/search.{i}.json"))["result"]
    rec, conf = r["recommendation"], r.get("confirmation") or {}
    cell = (conf.get("cell") or {}).get("throughput") or {}
    by = {}
    for l in open(f"{work}/rounds.{i}"):
        rd, side, t = l.split()
        by.setdefault(int(rd), {})[side] = float(t)
    sp = [v["S"] / v["P"] for v in by.values()]
    hp = [v["H"] / v["P"] for v in by.values()]
    s, h = statistics.median(sp), statistics.median(hp)
    share = (s - 1) / (h - 1) if h != 1 else float("nan")
    shares.append(share)
    times.append(r["elapsed_s"])
    load = open(f"{work}/load.{i}").read().strip()
    changes = " ".join(c["name"] + "=" + c["to"] for c in rec.get("changes", [])) or "keep"
    lines.append(
        f"| {i} | {r['elapsed_s']:.0f} | {r['setup_s']:.0f} | {len(r['candidates'])} | "
        f"{cell.get('ratio', float('nan')):.2f} ({cell.get('ci_low', float('nan')):.2f}–{cell.get('ci_high', float('nan')):.2f}) | "
        f"{changes} | {iv(hodges_lehmann(sp))} | {iv(hodges_lehmann(hp))} | {share:.2f} | {load} |"
    )
out = [
    f"\n## tune --search: time to a confirmed answer, share of the hand-set gain ({time.strftime('%H:%M UTC', time.gmtime())})\n",
    f"`{cmd}`; planted: 8M pool, io_capacity 100, 4M redo, flush_neighbors 1; hand-set: 128M, 2000/4000, 256M, 0. "
    "S/P and H/P: the planted server's tps under the search's changes and under the hand-set ones over its tps as planted, per round (HL, 95 %).\n",
    "| run | s to answer | setup s | candidates | proof ratio (interval) | proved changes | S/P | H/P | share of hand-set gain | load |",
    "|---|---|---|---|---|---|---|---|---|---|",
    *lines,
    f"\nmedian time to a confirmed answer {statistics.median(times):.0f} s; median share of the hand-set gain {statistics.median(shares):.2f}\n",
]
open(log, "a").write("\n".join(out) + "\n")
print("\n".join(out))
PY
