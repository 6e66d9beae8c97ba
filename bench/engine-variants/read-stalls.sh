#!/usr/bin/env bash
# The longest read of the `mixed` workload (16 KiB random reads at depth 1
# while a 1 MiB sequential writer runs) under each scheduler of the disk,
# next to the read p99 a sweep judges by. The reader has one read in
# flight, so its longest read is the longest time no read completed: a
# stall of seconds shows there even when it is one read of thousands and
# the p99 stays in milliseconds. Alternates schedulers on the disk under a
# loop device's backing file (as bench/sweep-sequential.sh), T per window,
# and puts the disk back on the scheduler it had.
# Prints one line per window; the reading goes into bench/RESULTS.md by hand.
# Usage (as root): bench/engine-variants/read-stalls.sh   env: R=8 T=8s SCHEDS="none mq-deadline" INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-8}; T=${T:-8s}; SCHEDS=${SCHEDS:-none mq-deadline}
INNOTUNE=${INNOTUNE:-target/release/innotune}
. bench/lib.sh
bench_workdir read-stalls
truncate -s 3G "$WORK/backing"
bench_loop "$WORK/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
DISK=$(bench_disk_of "$WORK/backing")
Q=/sys/block/$DISK/queue/scheduler
BEFORE=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$Q")
bench_undo "echo $BEFORE > $Q"
"$INNOTUNE" bench --preset mixed --size 1g --io_size 16k --directory "$WORK/mnt" > /dev/null
echo "uptime: $(uptime); $DISK was on $BEFORE; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for r in $(seq "$R"); do
  order=$SCHEDS; [ $((r % 2)) = 0 ] && order=$(echo "$SCHEDS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for s in $order; do
    echo "$s" > "$Q"
    "$INNOTUNE" --format json bench --preset mixed --size 1g --runtime "$T" --ramp_time 1s --directory "$WORK/mnt" > "$WORK/out.json"
    python3 - "$r" "$s" "$WORK/out.json" <<'PY'
import json, sys
r, s, p = sys.argv[1:]
jobs = json.load(open(p))["result"]["result"]["jobs"]
rd = next(j["read"] for j in jobs if j.get("read"))
wr = next(j["write"] for j in jobs if j.get("write"))
c = rd["clat"]
print("round %s %-11s reads %6d  read p99 %9.2f ms  read max %9.1f ms  writes MiB/s %6.0f" % (
    r, s, rd["total_ios"], c["p99_ns"] / 1e6, c["max_ns"] / 1e6, wr["bw_bytes_per_s"] / 2**20), flush=True)
PY
  done
done
