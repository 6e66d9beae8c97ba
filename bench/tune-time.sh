#!/usr/bin/env bash
# Issue 45: tune in less time. How long `innotune tune` takes, phase by
# phase, and whether its verdicts are those of a long run, on a planted
# "live" sandbox (an 8 MiB buffer pool under ~30 MB of rows, so "after"
# differs from "before" in something an OLTP run shows) with its own
# sandbox on ext4 over a loop device backed by /dev/shm:
#   quick     `tune --quick MNT --socket …`          (target: under 60 s, OLTP included)
#   default   `tune MNT --socket …` (default budget)  (target: half of 276 s, the same verdicts)
#   long      `tune MNT --budget LONG --socket …`    (the verdicts to match)
# Per run: wall time, each phase's time and status, and the OLTP cells'
# verdicts (workload@threads: verdict, ratio and interval). Appends to
# bench/log/<UTC date>.md.
#
# Usage (as root): bench/tune-time.sh [RUNS] [LONG]   (defaults 2, 10m)
#   env: INNOTUNE=<binary> (default target/release/innotune)
#        BACKING=ram (default) or disk: the loop device's file on /var/tmp
#        (this machine's virtio disk), where a buffer pool miss is a real
#        read, not a copy from RAM
#        MODES="long quick default" (default): which runs to make (without
#        long, the verdict column compares with nothing)
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
RUNS=${1:-2}
LONG=${2:-10m}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
[ -x "$INNOTUNE" ] || { echo "build first: cargo build --release ($INNOTUNE)" >&2; exit 2; }
. "$HERE/lib.sh"
bench_workdir tune-time
BACKING=${BACKING:-ram}
MODES=${MODES:-long quick default}
case $BACKING in
  ram) bench_ram_ext4 1500 ;;
  disk)
    truncate -s 1500M "$WORK/backing"
    bench_loop "$WORK/backing"
    bench_ext4 "$LOOP" "$WORK/mnt"
    MNT=$WORK/mnt ;;
  *) echo "BACKING is ram or disk" >&2; exit 2 ;;
esac
LIVE=$WORK/live
printf 'innodb_buffer_pool_size = 8M\n' > "$WORK/planted.cnf"
"$INNOTUNE" sandbox start --dir "$LIVE" --profile "$WORK/planted.cnf" > /dev/null
bench_undo "'$INNOTUNE' sandbox stop --dir '$LIVE' > /dev/null 2>&1"
"$INNOTUNE" oltp oltp_read_write prepare --socket "$LIVE/mysql.sock" --user root --no-defaults \
  --tables 2 --table-size 60000 > /dev/null
# --device: the loop device only, never the disk under its backing file.
conn=(--socket "$LIVE/mysql.sock" --user root --device "${LOOP#/dev/}")
one() { # one NAME ARGS…: a tune run, its tune.json kept as $WORK/NAME.json
  local name=$1 t0 t1
  shift
  rm -rf "$WORK/out.$name"
  t0=$(date +%s.%N)
  "$INNOTUNE" tune "$MNT" "$@" "${conn[@]}" --out "$WORK/out.$name" > /dev/null 2> "$WORK/$name.err" \
    || { cat "$WORK/$name.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  cp "$WORK/out.$name/tune.json" "$WORK/$name.json"
  echo "$name $(python3 -c "print($t1 - $t0)")" >> "$WORK/wall"
  echo "$name done" >&2
}
: > "$WORK/wall"
case " $MODES " in *" long "*) one long --budget "$LONG" --seed 1 ;; esac
for r in $(seq 1 "$RUNS"); do
  case " $MODES " in *" quick "*) one "quick.$r" --quick --seed "$((r + 1))" ;; esac
  case " $MODES " in *" default "*) one "default.$r" --seed "$((r + 1))" ;; esac
done
cut -d' ' -f1-3 /proc/loadavg > "$WORK/load"
CMD="BACKING=$BACKING MODES=\"$MODES\" bench/tune-time.sh $RUNS $LONG"
python3 - "$WORK" "$BENCH_LOG" "$CMD" <<'PY'
import json, sys, time
work, log, cmd = sys.argv[1:4]
wall = dict(l.split() for l in open(f"{work}/wall"))
def cells(r):
    o = r.get("oltp") or {}
    return {f"{c['workload']}@{c['threads']}": c for c in o.get("cells", [])}
def describe(c):
    lo, hi = c.get("ci_low"), c.get("ci_high")
    iv = f" ({lo:.2f}–{hi:.2f})" if lo is not None and hi is not None else ""
    return f"{c['verdict']} ×{c.get('ratio') or float('nan'):.2f}{iv}, {c['rounds']} rounds"
runs = {n: json.load(open(f"{work}/{n}.json"))["result"] for n in wall}
long = cells(runs["long"]) if "long" in runs else {}
rows = []
for n, r in runs.items():
    ph = ", ".join(f"{p['name']} {p['elapsed_s']:.0f} s" + ("" if p["status"] == "done" else f" ({p['status']})")
                   for p in r["phases"])
    c = cells(r)
    same = [k for k in c if k in long and c[k]["verdict"] == long[k]["verdict"]]
    sw = (r.get("sweep") or {}).get("recommendation")
    sweep = "—" if not sw else f"{sw['action']} {sw.get('setting') or 'current'} ({len((r.get('sweep') or {}).get('workloads', []))} workloads, {(r.get('sweep') or {}).get('rounds')} rounds)"
    lsw = ((runs.get("long") or {}).get("sweep") or {}).get("recommendation")
    if lsw and sw and n != "long":
        sweep += ", as the long run's" if (sw["action"], sw.get("setting")) == (lsw["action"], lsw.get("setting")) else ", NOT the long run's"
    verdicts = "; ".join(f"{k}: {describe(v)}" for k, v in c.items()) or "no OLTP cells"
    match = "—" if n == "long" else f"{len(same)} of {len(long)}"
    rows.append(f"| {n} | {float(wall[n]):.0f} | {r['budget_s']:.0f} | {ph} | {sweep} | {verdicts} | {match} |")
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
load = open(f"{work}/load").read().strip()
text = (f"\n### tune-time ({stamp})\n\n`{cmd}`: a planted sandbox (8 MiB buffer pool, 2 × 60,000 rows) as the live "
        f"server, tune's own sandbox on ext4 over a loop device ({'on /var/tmp (disk)' if 'BACKING=disk' in cmd else 'backed by /dev/shm'}). Load average at the end {load} (2 CPUs).\n\n"
        "| run | wall s | budget s | phases | sweep's recommendation | OLTP cells | OLTP verdicts as the long run's |\n|---|---:|---:|---|---|---|---|\n"
        + "\n".join(rows) + "\n")
open(log, "a").write(text)
print(text)
PY
