#!/usr/bin/env bash
# Is a RAM-backed loop device's own kernel worker the limit? fio and innotune
# alternating on one file of a loop device over tmpfs (direct I/O, ext4), and
# for each run the CPU time of the loop device's kernel worker, as a share of
# one CPU over the run. The loop driver queues requests to work items that
# copy to and from the backing file; if they used a whole CPU, the device
# would be saturated and no tool could go faster by spending less of its own
# CPU. A kworker is named after the workqueue it ran last
# ("kworker/u8:3-loop0", "+loop0" while running it), so one that ran the
# loop's work between the two snapshots and something else before each is
# missed: the threads so named give a lower bound, and all kworkers of the
# unbound pools (where the loop's work runs, with other unbound work) an
# upper bound, printed as "low..high". The tools' CPU per I/O and the host's
# idle share are printed too.
# Prints one line per run; the reading goes into bench/RESULTS.md by hand.
# Usage (as root): bench/engine-variants/loop-worker.sh
#   env: R=4 T=8 RW=randread QD=32 BS=16k JOBS=1 ENGINE=io_uring INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-4}; T=${T:-8}; RW=${RW:-randread}; QD=${QD:-32}; BS=${BS:-16k}
JOBS=${JOBS:-1}; ENGINE=${ENGINE:-io_uring}
INNOTUNE=${INNOTUNE:-target/release/innotune}
. bench/lib.sh
bench_workdir loop-worker
bench_ram_ext4 2560
LNAME=${LOOP#/dev/}
bench_job_file "$RW" "$BS" "$QD" "$ENGINE"

# snap FILE: every thread's CPU ticks and /proc/stat's cpu line.
snap() { python3 bench/threadstat.py > "$1"; }

echo "uptime: $(uptime)"
echo "kernel: $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for r in $(seq "$R"); do
  order="fio innotune"; [ $((r % 2)) = 0 ] && order="innotune fio"
  for tool in $order; do
    bench_tool_cmd "$tool" "$T" "$JOBS" "$ENGINE"
    snap "$WORK/s0"
    t0=$(date +%s.%N)
    # The tool's CPU: user+sys of its whole process tree, as fio-compare.sh.
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], check=True, stdout=open(sys.argv[1], "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$WORK/out.json" "${CMD[@]}" > "$WORK/cpu"
    t1=$(date +%s.%N)
    snap "$WORK/s1"
    python3 - "$r" "$tool" "$WORK" "$t0" "$t1" "$LNAME" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from threadstat import HZ as hz, load, unbound_kworker
r, tool, w, t0, t1, lname = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
d = json.load(open(w + "/out.json"))
if tool == "fio":
    x = d["jobs"][0]
    x = x["write"] if x["write"]["total_ios"] else x["read"]
    iops = x["iops"]
else:
    j = d["result"]["result"]["jobs"][0]
    x = j.get("write") or j["read"]
    iops = x["iops_per_s"]
cpu_ns = float(open(w + "/cpu").read()) * 1e9 / max(x["total_ios"], 1)
# "-loop0" after its last work item, "+loop0" while running one.
named = lambda comm: comm.startswith("kworker") and comm[-len(lname) - 1:] in ("-" + lname, "+" + lname)
c0, a = load(w + "/s0")
c1, b = load(w + "/s1")
# A kworker's name changes with the workqueue it last ran: count a thread
# as the loop's worker if its name said so at either end.
ticks = 0
unbound = 0
names = set()
for tid, (comm, t) in b.items():
    comm0, t0_ = a.get(tid, (comm, 0))
    if named(comm) or named(comm0):
        ticks += t - t0_
        names.add(comm if named(comm) else comm0)
    if unbound_kworker(comm):
        unbound += t - t0_
el = t1 - t0
dd = [y - z for z, y in zip(c0, c1)]
tot = sum(dd)
print("round %s %-8s IOPS %7.0f  tool CPU %5.0f ns/IO (process tree)  loop worker %5.1f..%5.1f %% of one CPU (%d named)  host idle %4.1f %% iowait %4.1f %% steal %4.1f %%" % (
    r, tool, iops, cpu_ns, 100.0 * ticks / hz / el, 100.0 * unbound / hz / el, len(names), 100.0 * dd[3] / tot, 100.0 * dd[4] / tot, 100.0 * dd[7] / tot), flush=True)
PY
  done
done
