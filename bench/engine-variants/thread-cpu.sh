#!/usr/bin/env bash
# Where the CPU goes, per thread, while fio and innotune run the same job on a
# RAM-backed loop device (direct I/O, tmpfs, ext4; 16 KiB random writes at
# depth 16 by default): every thread of the host is sampled from
# /proc/*/task/*/stat at 2 s and 5 s into a 7 s run, and the busiest ones are
# printed as % of one CPU over those 3 s (the tool's own threads, the loop
# device's kworkers, ext4's dio completion workqueue, ksoftirqd, io_uring's
# workers), with the host's total busy share. It asks what fio-compare's
# whole-process CPU cannot: which threads do the work of one tool's I/Os,
# and is the host's CPU used up?
# Usage (as root): bench/engine-variants/thread-cpu.sh   env: R=2 RW=randwrite QD=16 BS=16k INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-2}; RW=${RW:-randwrite}; QD=${QD:-16}; BS=${BS:-16k}
INNOTUNE=${INNOTUNE:-target/release/innotune}
. bench/lib.sh
bench_workdir thread-cpu
bench_ram_ext4
M=$MNT
bench_job_file "$RW" "$BS" "$QD"
snap() { python3 bench/threadstat.py; }
echo "uptime: $(uptime); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for r in $(seq "$R"); do
  order="fio innotune"; [ $((r % 2)) = 0 ] && order="innotune fio"
  for tool in $order; do
    if [ "$tool" = fio ]; then
      fio --name=j --filename="$M/innotune-j.0" --rw="$RW" --bs="$BS" --iodepth="$QD" --ioengine=io_uring --direct=1 --size=1024m --time_based --runtime=7 --norandommap --output-format=json > "$WORK/o.json" &
    else
      "$INNOTUNE" --format json bench --name j --rw "$RW" --bs "$BS" --iodepth "$QD" --ioengine io_uring --direct=1 --size 1024m --runtime 7 --directory "$M" > "$WORK/o.json" &
    fi
    pid=$!
    # Sampling by the clock, not as synchronisation: the window only has to
    # lie inside the 7 s run, away from its start and end.
    sleep 2; snap > "$WORK/a"; sleep 3; snap > "$WORK/b"
    wait "$pid"
    python3 - "$WORK" "$tool" "$r" <<'PY'
import json, os, sys
sys.path.insert(0, "bench")
from threadstat import HZ as hz, load
w, tool, r = sys.argv[1:]
ca, a = load(w + "/a")
cb, b = load(w + "/b")
d = [y - x for x, y in zip(ca, cb)]
busy = 100.0 * (sum(d) - d[3] - d[4] - d[7]) / max(sum(d), 1)
secs = sum(d) / hz / os.cpu_count()
rows = sorted(((t - a[tid][1], comm) for tid, (comm, t) in b.items() if tid in a and t > a[tid][1]), reverse=True)
o = json.load(open(w + "/o.json"))
iops = o["jobs"][0]["write" if o["jobs"][0]["write"]["total_ios"] else "read"]["iops"] if tool == "fio" else \
    (lambda j: (j.get("write") or j["read"])["iops_per_s"])(o["result"]["result"]["jobs"][0])
print("round %s %-8s IOPS %7.0f  host busy %4.1f %% of %d CPUs  " % (r, tool, iops, busy, os.cpu_count()) +
      "  ".join("%s %.0f%%" % (c, 100.0 * t / hz / secs) for t, c in rows[:8]), flush=True)
PY
  done
done
