#!/usr/bin/env bash
# innotune trace --input on a saved capture: events parsed and analysed per
# second (the issue's target: at least 1 million). The capture is made here,
# live: a private tracefs instance on a loop device under fio randrw for
# SECONDS, read from trace_pipe into a file; COPIES copies of it, each
# shifted in time past the previous one, make a trace of several million
# lines. Appends the result to bench/log/<UTC date>.md.
#
# Usage (as root): bench/trace-parse.sh [SECONDS] [COPIES] [ROUNDS]   (defaults 40, 4, 3)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
SECONDS_=${1:-40}
COPIES=${2:-4}
ROUNDS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
. "$HERE/lib.sh"
if [ ! -d /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing
  bench_undo "umount /sys/kernel/tracing"
fi
bench_workdir trace-parse
truncate -s 256M "$WORK/img"
bench_loop "$WORK/img"
N=${LOOP#/dev/}
echo mq-deadline > "/sys/block/$N/queue/scheduler"
INST=/sys/kernel/tracing/instances/innotune-bench-$$
mkdir "$INST"
bench_undo "rmdir '$INST'"
DEV=$(cat "/sys/block/$N/dev")
F="dev == $(( (${DEV%:*} << 20) | ${DEV#*:} ))"
for e in block_bio_queue block_getrq block_rq_insert block_rq_issue block_rq_complete block_bio_backmerge block_bio_frontmerge; do
  echo "$F" > "$INST/events/block/$e/filter"; echo 1 > "$INST/events/block/$e/enable"
done
echo 8192 > "$INST/buffer_size_kb"
timeout $((SECONDS_ + 3)) cat "$INST/trace_pipe" > "$WORK/one.trace" &
CAT=$!
fio --name=parse --filename="$LOOP" --rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=16 \
    --size=128M --time_based --runtime="$SECONDS_" --output=/dev/null
wait $CAT || true
python3 - "$WORK/one.trace" "$WORK/big.trace" "$COPIES" <<'PY'
import re, sys
src = open(sys.argv[1]).read().splitlines(True)
pat = re.compile(r'(\s)(\d+)\.(\d{6}): block_')
with open(sys.argv[2], 'w') as out:
    for k in range(int(sys.argv[3])):
        for l in src:
            if k:
                l = pat.sub(lambda m: "%s%d.%s: block_" % (m.group(1), int(m.group(2)) + 1000 * k, m.group(3)), l, count=1)
            out.write(l)
PY
LINES=$(wc -l < "$WORK/big.trace")
cat "$WORK/big.trace" > /dev/null   # warm the page cache
read -r WALL CPU <<<"$(python3 - "$INNOTUNE" "$WORK/big.trace" "$ROUNDS" <<'PY'
import json, resource, subprocess, sys, time
exe, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
walls, cpus = [], []
for r in range(rounds):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([exe, "trace", "--input", path, "--format", "json"], capture_output=True, check=True).stdout
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ev = json.loads(out)["result"]["events"]
    walls.append(ev / wall); cpus.append(ev / cpu)
    print("round %d: %d events, %.2f s wall, %.2f s CPU" % (r + 1, ev, wall, cpu), file=sys.stderr)
walls.sort(); cpus.sort()
print("%d %d" % (walls[len(walls) // 2], cpus[len(cpus) // 2]))
PY
)"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo
  echo "### trace-parse ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "\`bench/trace-parse.sh $SECONDS_ $COPIES $ROUNDS\`: $LINES lines ($COPIES time-shifted copies of a ${SECONDS_} s live capture on a loop device under fio randrw), \`innotune trace --input\`: median **$WALL events/s wall-clock**, $CPU events/s of CPU time (target ≥ 1,000,000); load average at the end $LOAD (2 cores, shared)."
} >> "$BENCH_LOG"
echo "median $WALL events/s wall, $CPU events/s CPU"
