#!/usr/bin/env bash
# Where an I/O's time goes, fio against innotune, on a RAM-backed loop device
# (direct I/O, tmpfs, ext4; 16 KiB random writes at depth 16 by default):
# 1 s of tracefs events in the middle of each 4 s run (io_uring submit and
# completion, the ring's deferred-work runs, and the loop device's request
# issue and completion), parsed by write-trace.py. It asks what the
# whole-process numbers cannot: does the tool react later to a completion,
# or do its requests spend longer below it? Tracing costs CPU, so the rates
# here are lower than untraced runs; compare the tools with each other.
# WAKE=1 also traces every wakeup and prints, per I/O, how many wakeups each
# kind of thread needed (the tool, the loop's unbound kworkers, the per-CPU
# kworkers that run ext4's dio completion, ksoftirqd): a chain whose stages
# find their queues empty pays a wakeup (and on a VM an exit from halt) per
# stage per I/O. From the scheduler's runtime accounting it also gives each
# CPU's time by kind of thread (softirqs run on an interrupt's exit count to
# whatever thread they interrupted; the rest of the capture is idle).
# (Context switches and cpu_idle events are no base for that: here the
# events a CPU records on its way out of idle are often missing.)
# These events cost more CPU still; compare within a mode.
# Usage (as root): bench/engine-variants/write-trace.sh   env: R=2 RW=randwrite QD=16 BS=16k WAKE=0 INNOTUNE=target/release/innotune
set -euo pipefail
cd "$(dirname "$0")/../.."
R=${R:-2}; RW=${RW:-randwrite}; QD=${QD:-16}; BS=${BS:-16k}; WAKE=${WAKE:-0}
INNOTUNE=${INNOTUNE:-target/release/innotune}
. bench/lib.sh
bench_workdir write-trace
bench_ram_ext4
M=$MNT
bench_job_file "$RW" "$BS" "$QD"
# A tracefs instance of our own: the global buffer and its settings stay as
# they were, and the instance is removed on exit.
I=/sys/kernel/tracing/instances/innotune-write-trace
# A fresh boot here has tracefs unmounted: mount it for the run (as
# `innotune trace` does) and unmount it on exit.
if [ ! -d /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing || { echo "write-trace: tracefs is not mounted on /sys/kernel/tracing and mounting it failed" >&2; exit 2; }
  bench_undo "umount /sys/kernel/tracing"
fi
[ ! -e "$I" ] || { echo "write-trace: $I exists (another run, or one killed with SIGKILL): rmdir it and run again" >&2; exit 2; }
mkdir "$I"
bench_undo "rmdir '$I'"
# Per CPU; WAKE=1 writes several times as many events.
echo $([ "$WAKE" = 1 ] && echo 262144 || echo 65536) > "$I/buffer_size_kb"
echo 0 > "$I/tracing_on"
for e in io_uring_submit_req io_uring_complete io_uring_local_work_run; do echo 1 > "$I/events/io_uring/$e/enable"; done
dev=$(( (16#$(stat -c %t "$LOOP") << 20) | 16#$(stat -c %T "$LOOP") ))
for e in block_rq_issue block_rq_complete; do
  echo "dev == $dev" > "$I/events/block/$e/filter"
  echo 1 > "$I/events/block/$e/enable"
done
if [ "$WAKE" = 1 ]; then
  echo 1 > "$I/events/sched/sched_wakeup/enable"
  echo 1 > "$I/events/sched/sched_stat_runtime/enable"
fi
echo "uptime: $(uptime); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "tool       IOPS(tr) | submit->CQE us mean/med/p90 | CQE->resubmit us | at the device us | CQEs per deferred run"
[ "$WAKE" = 1 ] && echo "           wakeups per I/O: tool, unbound kworkers (loop), per-CPU kworkers (dio, events), ksoftirqd, other
           CPU N: % of the capture run by tool, kworker/u, kworker/N, ksoftirqd, other, idle"
for r in $(seq "$R"); do
  order="fio innotune"; [ $((r % 2)) = 0 ] && order="innotune fio"
  for tool in $order; do
    if [ "$tool" = fio ]; then
      fio --name=j --filename="$M/innotune-j.0" --rw="$RW" --bs="$BS" --iodepth="$QD" --ioengine=io_uring --direct=1 --size=1024m --time_based --runtime=4 --norandommap --output-format=json > /dev/null &
    else
      "$INNOTUNE" --format json bench --name j --rw "$RW" --bs "$BS" --iodepth "$QD" --ioengine io_uring --direct=1 --size 1024m --runtime 4 --directory "$M" > /dev/null &
    fi
    pid=$!
    # The capture window by the clock, not as synchronisation: it only has
    # to lie inside the 4 s run, away from its start and end.
    sleep 2; echo > "$I/trace"; echo 1 > "$I/tracing_on"; sleep 1; echo 0 > "$I/tracing_on"
    cat "$I/trace" > "$WORK/trace"
    # An overrun buffer drops events and the figures below would be wrong.
    lost=$(awk '/^# entries-in-buffer/ {e=$0} END {print e}' "$WORK/trace")
    case "$(cat "$I"/per_cpu/cpu*/stats 2>/dev/null | awk '/^overrun:/ {s+=$2} END {print s+0}')" in
      0) ;; *) echo "write-trace: the trace buffer overran ($lost); these figures are missing events" >&2 ;;
    esac
    wait "$pid"
    python3 bench/engine-variants/write-trace.py "$WORK/trace" "$tool"
  done
done
