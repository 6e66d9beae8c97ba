#!/usr/bin/env bash
# The real-machine A/A false-claim rate of `innotune prove`: a do-nothing
# change (read_ahead_kb set to the value it already has, so the arm equals
# `current`) proved N times with different seeds on a scratch loop device
# whose backing file is on /dev/shm (no disk under it; `--device` names the
# loop, so nothing else is switched). Counts the cells whose verdict claims a
# difference (`faster` or `slower`); the target is at most 1 in 20. Appends
# the rate, the per-run verdicts, the commands, the load average and the date
# to bench/log/<UTC date>.md. Every run checks the loop is put back.
#
# Usage (as root): bench/prove-aa.sh [N] [ROUNDS] [TRIAL]   (defaults 20, 5, 1s)
#   env: WORKLOAD=page-read INNOTUNE=<binary>
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
N=${1:-20}
ROUNDS=${2:-5}
TRIAL=${3:-1s}
WORKLOAD=${WORKLOAD:-page-read}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
. "$HERE/lib.sh"
bench_workdir prove-aa
# RAM backing: a file on /dev/shm, removed on exit (registered before the
# loop device, so it is removed after the loop lets go of it).
SHM=$(mktemp -d /dev/shm/innotune-prove-aa.XXXXXX)
bench_undo "rm -rf '$SHM'"
truncate -s 512M "$SHM/backing"
bench_loop "$SHM/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
DEV=${LOOP#/dev/}
RA=$(cat "/sys/block/$DEV/queue/read_ahead_kb")
snapshot() { for a in scheduler read_ahead_kb nr_requests rq_affinity nomerges; do cat "/sys/block/$DEV/queue/$a"; done; }
BEFORE=$(snapshot)
ARGS=(--change "read_ahead_kb=$RA" --workload "$WORKLOAD" --size 64m --rounds "$ROUNDS" --trial "$TRIAL" --warmup 0s --device "$DEV" --format json)
T0=$(date +%s)
for i in $(seq 1 "$N"); do
  "$INNOTUNE" prove "$WORK/mnt" "${ARGS[@]}" --seed "$i" > "$WORK/run.$i.json" || [ $? -eq 1 ]
  cut -d' ' -f1-3 /proc/loadavg > "$WORK/run.$i.load"
  if [ "$(snapshot)" != "$BEFORE" ]; then
    echo "prove-aa: $LOOP not put back after run $i" >&2
    exit 1
  fi
  echo "run $i/$N done" >&2
done
ELAPSED=$(( $(date +%s) - T0 ))
CMD="innotune prove MNT ${ARGS[*]} --seed {1..$N}"
python3 - "$WORK" "$BENCH_LOG" "$N" "$CMD" "$ELAPSED" "$ROUNDS $TRIAL $WORKLOAD" <<'PY'
import json, sys, time
work, log, n, cmd, elapsed, args = sys.argv[1:7]
n = int(n)
rows, cells, claims = [], 0, 0
def f(x, fmt=".3f"):
    return "—" if x is None else format(x, fmt)
for i in range(1, n + 1):
    r = json.load(open(f"{work}/run.{i}.json"))["result"]
    load = open(f"{work}/run.{i}.load").read().strip()
    for c in r["cells"]:
        t = c["throughput"]
        cells += 1
        claim = c["verdict"] in ("faster", "slower")
        claims += claim
        rows.append(f"| {i} | {c['workload']} | {c['arm']} | {f(t.get('ratio'))} | {f(t.get('ci_low'))}–{f(t.get('ci_high'))} | {f(t.get('p'), '.3g')} | {c['verdict']}{' **claim**' if claim else ''} | {r['rounds_run']} | {load} |")
now = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
with open("/proc/loadavg") as f:
    la = " ".join(f.read().split()[:3])
out = [f"\n## prove A/A false-claim rate ({now} UTC)\n",
       f"`bench/prove-aa.sh {n} {args.split()[0]} {args.split()[1]}` (WORKLOAD={args.split()[2]}), as root: a do-nothing change (read_ahead_kb set to its own value) on a loop device backed by /dev/shm, ext4, direct I/O; {n} runs, seeds 1..{n}, {elapsed} s in all. Load average at the end: {la}.\n",
       f"Command of each run: `{cmd}`\n",
       f"**Cells claiming a difference: {claims} of {cells}** (target: at most 1 in 20).\n",
       "| run | workload | arm | ratio | CI | p | verdict | rounds | load (1 5 15) |",
       "|---|---|---|---|---|---|---|---|---|", *rows, ""]
open(log, "a").write("\n".join(out))
print(f"prove A/A: {claims} of {cells} cells claim a difference")
PY
