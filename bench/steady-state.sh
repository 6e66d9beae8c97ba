#!/usr/bin/env bash
# How long does each sweep workload need to reach a steady state, and how
# long must a trial be for the scheduler effect to show? Measured with fio
# (the peer tool) running each sweep preset's job shape for 21 s with a
# per-I/O completion-latency log, under `none` and under `mq-deadline` on the
# disk under /var/tmp, then cut into windows in Python:
#   - per second: IOPS and the decisive p99 (reads if the job reads, else writes);
#   - per window length T (1..10 s, after a 1 s warm-up): the CV across
#     windows of the windowed p99 and IOPS, and, for each pair of schedulers,
#     the share of (none window, mq-deadline window) pairs in which none's p99
#     is higher (0.5 = indistinguishable, 0 or 1 = always separated).
# The shortest trial a workload needs (src/sweep/plan.rs MIN_TRIALS) comes
# from this table; the result is appended to bench/log/<UTC date>.md.
#
# Usage (as root): bench/steady-state.sh [WORKLOAD...]   (default: page-read page-write fsync-4k mixed)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /var/tmp/innotune-steady.XXXXXX)
SRC=$(findmnt -no SOURCE -T "$WORK")
PARENT=$(lsblk -no PKNAME "$SRC" | head -1)
DISK=${PARENT:-$(basename "$SRC")}
SCHED_FILE=/sys/block/$DISK/queue/scheduler
ORIG=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$SCHED_FILE")
cleanup() {
  set +e
  echo "$ORIG" > "$SCHED_FILE"
  rm -rf "$WORK"
}
trap cleanup EXIT
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -eq 0 ] && WORKLOADS=(page-read page-write fsync-4k mixed)
RUNTIME=21
job() {
  case "$1" in
    # 24 threads on one shared 4 GiB file (the preset's 1 GiB per thread
    # would be 24 GiB to lay out; O_DIRECT random I/O only sees the span).
    page-read)  echo "--name=page-read --filename=pages --rw=randread --bs=16k --numjobs=24 --iodepth=1 --size=4g" ;;
    page-write) echo "--name=page-write --filename=pages --rw=randwrite --bs=16k --numjobs=24 --iodepth=1 --size=4g" ;;
    fsync-4k)   echo "--name=fsync-4k --rw=randwrite --bs=4k --iodepth=1 --fsync=1 --size=1g" ;;
    mixed)      echo "--name=mixed-read --rw=randread --bs=16k --iodepth=1 --size=1g --name=mixed-write --rw=write --bs=1m --iodepth=32 --size=1g" ;;
  esac
}
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for w in "${WORKLOADS[@]}"; do
  mkdir -p "$WORK/$w"
  # Lay the files out once (fio's own layout), outside the logged runs.
  # shellcheck disable=SC2046
  fio --directory="$WORK/$w" --direct=1 --ioengine=io_uring --group_reporting=0 \
      --runtime=1 --time_based $(job "$w") --output=/dev/null
  for round in 1 2; do
    for s in none mq-deadline; do
      echo "$s" > "$SCHED_FILE"
      # shellcheck disable=SC2046
      fio --directory="$WORK/$w" --direct=1 --ioengine=io_uring --time_based --runtime=$RUNTIME \
          --write_lat_log="$WORK/$w/$s.$round" --log_avg_msec=0 --per_job_logs=1 \
          $(job "$w") --output=/dev/null
    done
  done
done
echo "$ORIG" > "$SCHED_FILE"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$WORK" "$BENCH_LOG" "$DISK" "$LOAD_START" "$LOAD_END" "${WORKLOADS[@]}" <<'PY'
import glob, os, sys, time
work, results, disk, load0, load1 = sys.argv[1:6]
workloads = sys.argv[6:]

def p99(xs):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))]

def cv(xs):
    xs = [x for x in xs if x == x]
    if len(xs) < 2:
        return float("nan")
    m = sum(xs) / len(xs)
    v = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return (v ** 0.5) / m if m else float("nan")

def load(w, s, r):
    """(time_ms, lat_ns, ddir) of every I/O of every job of one run."""
    out = []
    for f in glob.glob(f"{work}/{w}/{s}.{r}_clat.*.log"):
        job = os.path.basename(f)
        for line in open(f):
            p = line.split(",")
            if len(p) < 3:
                continue
            out.append((int(p[0]), int(p[1]), int(p[2]), job))
    return out

def decisive(ios):
    reads = [x for x in ios if x[2] == 0]
    return reads if reads else [x for x in ios if x[2] == 1]

lines = [f"\n## Steady state of the sweep workloads ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n",
         f"fio 21 s per run, per-I/O clat log, disk {disk} switched between none and mq-deadline, 2 alternating runs each. "
         f"Load average {load0} at start, {load1} at end. p99 is the reads' if the workload reads, else the writes'. "
         "Windows start after a 1 s warm-up; 'CV' is across the non-overlapping windows of both runs; "
         "'P(none > mq-deadline)' is the share of (none window, mq-deadline window) pairs where none's p99 is higher.\n"]
for w in workloads:
    per_sched = {}
    lines.append(f"### {w}\n")
    lines.append("| scheduler | run | per-second p99 µs (s1..s20) | per-second IOPS (s1..s20) |")
    lines.append("|---|---|---|---|")
    for s in ["none", "mq-deadline"]:
        per_sched[s] = []
        for r in (1, 2):
            ios = load(w, s, r)
            dec = decisive(ios)
            per_sched[s].append((ios, dec))
            ps = [p99([x[1] for x in dec if sec * 1000 <= x[0] < (sec + 1) * 1000]) / 1000 for sec in range(0, 21)]
            io = [sum(1 for x in ios if sec * 1000 <= x[0] < (sec + 1) * 1000) for sec in range(0, 21)]
            lines.append(f"| {s} | {r} | {' '.join(f'{v:.0f}' for v in ps[1:])} | {' '.join(str(v) for v in io[1:])} |")
    lines.append("")
    lines.append("| window T | none p99 CV | mq-deadline p99 CV | none IOPS CV | mq-deadline IOPS CV | P(none > mq-deadline) p99 | none p99 median µs | mq-deadline p99 median µs |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for T in (1, 2, 3, 4, 5, 6, 8, 10):
        stats = {}
        for s in ["none", "mq-deadline"]:
            ps, iops = [], []
            for ios, dec in per_sched[s]:
                t0 = 1000
                while t0 + T * 1000 <= 21000:
                    ps.append(p99([x[1] for x in dec if t0 <= x[0] < t0 + T * 1000]) / 1000)
                    iops.append(sum(1 for x in ios if t0 <= x[0] < t0 + T * 1000) / T)
                    t0 += T * 1000
            stats[s] = (ps, iops)
        a, b = stats["none"][0], stats["mq-deadline"][0]
        gt = sum((x > y) + 0.5 * (x == y) for x in a for y in b) / (len(a) * len(b))
        med = lambda v: sorted(v)[len(v) // 2]
        lines.append(f"| {T} s | {cv(a)*100:.0f}% | {cv(b)*100:.0f}% | {cv(stats['none'][1])*100:.0f}% | {cv(stats['mq-deadline'][1])*100:.0f}% | {gt:.2f} | {med(a):.0f} | {med(b):.0f} |")
    lines.append("")
lines.append(f"Reproduce (as root): `bench/steady-state.sh {' '.join(workloads)}`\n")
open(results, "a").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
