#!/usr/bin/env bash
# fio and innotune alternating on one file of a RAM-backed loop device
# (direct I/O, tmpfs; random 16 KiB writes at depth 16 by default), with
# where the host's CPU time went during each run: /proc/stat before and
# after (user, system, softirq, iowait, idle and steal, as % of all CPUs'
# time, and busy CPU per I/O over the whole host, the loop device's kernel
# worker included), plus context switches and migrations per I/O from
# `perf stat -a` (software events: this VM exposes no PMU).
# It asks what a tool's own CPU per I/O cannot: is a gap the tools' or the
# host's (steal, the loop worker's scheduling)?
# Prints one line per run.
# Usage (as root): bench/engine-variants/host-cpu.sh   env: R=4 T=8 RW=randwrite QD=16 BS=16k INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-4}; T=${T:-8}; RW=${RW:-randwrite}; QD=${QD:-16}; BS=${BS:-16k}
INNOTUNE=${INNOTUNE:-target/release/innotune}
command -v perf >/dev/null || { echo "host-cpu: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
. bench/lib.sh
bench_workdir host-cpu
bench_ram_ext4 2560
bench_job_file "$RW" "$BS" "$QD"
echo "uptime: $(uptime)"
for r in $(seq "$R"); do
  order="fio innotune"; [ $((r % 2)) = 0 ] && order="innotune fio"
  for tool in $order; do
    bench_tool_cmd "$tool" "$T"
    head -1 /proc/stat > "$WORK/cpu0"
    perf stat -a -x, -e context-switches,cpu-migrations -o "$WORK/stat" -- "${CMD[@]}" > "$WORK/out.json"
    head -1 /proc/stat > "$WORK/cpu1"
    python3 - "$r" "$tool" "$WORK" <<'PY'
import json, os, sys
r, tool, w = sys.argv[1:]
d = json.load(open(w + "/out.json"))
if tool == "fio":
    x = d["jobs"][0]; x = x["write"] if x["write"]["total_ios"] else x["read"]; iops = x["iops"]
else:
    x = d["result"]["result"]["jobs"][0]; x = x.get("write") or x["read"]; iops = x["iops_per_s"]
n = max(x["total_ios"], 1)
a = [int(v) for v in open(w + "/cpu0").read().split()[1:9]]
b = [int(v) for v in open(w + "/cpu1").read().split()[1:9]]
dd = [y - z for z, y in zip(a, b)]
tot = sum(dd); hz = os.sysconf("SC_CLK_TCK")
share = lambda i: 100.0 * dd[i] / tot
busy = dd[0] + dd[1] + dd[2] + dd[5] + dd[6]
ev = {}
for l in open(w + "/stat"):
    p = l.strip().split(",")
    if len(p) > 3 and p[0] and not l.startswith("#"):
        try: ev[p[2]] = float(p[0])
        except ValueError: pass
print("round %s %-8s IOPS %7.0f  host busy %5.0f ns/IO  usr %4.1f%% sys %4.1f%% soft %3.1f%% iowait %4.1f%% idle %4.1f%% steal %4.1f%%  cs %.3f/IO  migr %.4f/IO" % (
    r, tool, iops, busy / hz * 1e9 / n, share(0), share(2), share(6), share(4), share(3), share(7),
    ev.get("context-switches", 0) / n, ev.get("cpu-migrations", 0) / n), flush=True)
PY
  done
done
