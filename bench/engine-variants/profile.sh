#!/usr/bin/env bash
# Where the host's CPU goes per I/O under each tool: fio and innotune
# alternating on one file of a RAM-backed loop device (direct I/O, tmpfs;
# 16 KiB random reads at depth 32 by default), each run under a system-wide
# sampling profile, `perf record -a -e cpu-clock`. cpu-clock is a software
# event (an hrtimer per CPU), so it works on this VM, which exposes no PMU
# (cycles read 0). Samples are taken on every CPU whether it runs the tool,
# the loop device's kernel worker, ksoftirqd or nothing (the idle task), so
# the profile answers the issue's question "where does innotune spend time
# per I/O that fio does not", the kernel's share of each I/O included.
#
# bench/engine-variants/profile.py turns the profiles into microseconds of
# CPU per I/O: per kind of thread (the tool's own, the kworkers, ksoftirqd,
# idle, the rest) and per function, with the functions whose cost differs
# most between the tools first. A sample stands for 1/F s of one CPU.
# The profile covers the whole command (start-up included) and the I/Os are
# those the tool reports for its measured window, so short runs overstate
# each I/O's cost a little, the same way for both tools.
#
# Usage (as root): bench/engine-variants/profile.sh
#   env: R=2 (rounds, the order reversed every other one) T=8 (seconds per
#        run) RW=randread QD=32 BS=16k F=4999 (samples per second per CPU)
#        INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-2}; T=${T:-8}; RW=${RW:-randread}; QD=${QD:-32}; BS=${BS:-16k}; F=${F:-4999}
INNOTUNE=${INNOTUNE:-target/release/innotune}
command -v perf >/dev/null || { echo "profile: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
command -v fio >/dev/null || { echo "profile: fio is not installed (apt-get install fio)" >&2; exit 2; }
. bench/lib.sh
bench_workdir profile
bench_ram_ext4 2560
bench_job_file "$RW" "$BS" "$QD"
echo "uptime: $(uptime)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
runs=()
for r in $(seq "$R"); do
  order="fio innotune"; [ $((r % 2)) = 0 ] && order="innotune fio"
  for tool in $order; do
    bench_tool_cmd "$tool" "$T"
    base="$WORK/$tool.$r"
    perf record -q -a -e cpu-clock -F "$F" -o "$base.data" -- "${CMD[@]}" > "$base.json" 2> "$base.err"
    # comm, symbol and sample count per line; the idle task is "swapper".
    perf report -i "$base.data" --stdio -q --no-children --sort comm,sym \
      -F sample,comm,sym -t $'\t' > "$base.txt" 2>/dev/null
    # the same samples by CPU and thread: which threads shared a CPU
    perf report -i "$base.data" --stdio -q --no-children --sort cpu,comm \
      -F sample,cpu,comm -t $'\t' > "$base.cpu" 2>/dev/null
    runs+=("$tool:$r:$base")
  done
done
python3 bench/engine-variants/profile.py "$F" "${runs[@]}"
