#!/usr/bin/env bash
# What a live `innotune trace PATH` costs the workload: `innotune bench
# --preset mixed` on ext4 on a loop device over a file on this machine's
# disk, alternating runs without and with `innotune trace MNT` capturing
# (the loop device and the disk under its file) for the whole run. Reports
# each pair's IOPS ratio (traced / plain) and the median (the issue's
# target: a capture costs under 5% of the IOPS, i.e. ratio ≥ 0.95).
# Appends to bench/log/<UTC date>.md.
#
# Usage (as root): bench/trace-overhead.sh [ROUNDS] [RUNTIME]   (defaults 5, 10s)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
ROUNDS=${1:-5}
RUNTIME=${2:-10s}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
. "$HERE/lib.sh"
bench_workdir trace-overhead
truncate -s 3G "$WORK/backing"
bench_loop "$WORK/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
TRACER=""
bench_undo '[ -n "$TRACER" ] && kill -INT "$TRACER" 2>/dev/null && wait "$TRACER"'
iops() {
  "$INNOTUNE" bench --preset mixed --directory "$WORK/mnt" --size 512m --runtime "$RUNTIME" --format json |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]["result"]; print(sum(j.get(d,{}).get("iops_per_s",0) for j in r["jobs"] for d in ("read","write")))'
}
iops > /dev/null   # lay out the files, warm up
RATIOS=()
for r in $(seq "$ROUNDS"); do
  PLAIN=$(iops)
  "$INNOTUNE" trace "$WORK/mnt" --format json > "$WORK/trace.json" &
  TRACER=$!
  # The instance exists before the run starts.
  for _ in $(seq 200); do ls /sys/kernel/tracing/instances/innotune-$TRACER/trace_pipe >/dev/null 2>&1 && break; sleep 0.05; done
  TRACED=$(iops)
  kill -INT "$TRACER"; wait "$TRACER"; TRACER=""
  EV=$(python3 -c 'import json; print(json.load(open("'"$WORK/trace.json"'"))["result"]["events"])')
  RATIO=$(python3 -c "print(round($TRACED / $PLAIN, 3))")
  RATIOS+=("$RATIO")
  echo "round $r: plain $PLAIN IOPS, traced $TRACED IOPS ($EV events), ratio $RATIO"
done
MED=$(printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo
  echo "### trace-overhead ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "\`bench/trace-overhead.sh $ROUNDS $RUNTIME\`: bench --preset mixed on ext4 on a loop device, plain vs while \`innotune trace MNT\` captures (loop device + disk), alternating: IOPS ratios traced/plain ${RATIOS[*]}; median **$MED** (target ≥ 0.95); load average at the end $LOAD (2 cores, shared)."
} >> "$BENCH_LOG"
echo "median ratio $MED"
