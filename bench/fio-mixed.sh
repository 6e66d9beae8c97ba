#!/usr/bin/env bash
# The `mixed` workload on vda, fio and innotune side by side: 16 KiB random
# reads at depth 1 while a 1 MiB sequential writer runs at depth 32
# (O_DIRECT, io_uring), on ext4 on a loop device (--direct-io=on) whose
# backing file is on vda, switching vda between none and mq-deadline for
# ROUNDS rounds of 8 s (1 s ramp). In each round and under each scheduler fio
# and `innotune bench --preset mixed` (on its own files) run, in alternating order. Prints, per
# run, the reads completed, the read p99 and max, and the write bandwidth:
# whether fio and innotune's engine see the same thing. vda goes back
# to the scheduler it had, the loop device is detached. Appends the output to
# bench/log/<UTC date>.md.
#
# MEM=malloc (the default): both writers on 4 KiB pages (fio's default, and
# the mixed preset's since 2026-11-26 evening; before, its `mem=auto` put them
# on huge pages). MEM=mmaphuge: fio's buffers on 2 MiB
# hugetlb pages (the script reserves 24 with vm.nr_hugepages and puts the
# old value back) and innotune's on transparent huge pages (`--mem mmaphuge`).
#
# Usage (as root): bench/fio-mixed.sh [ROUNDS=4]   env: MEM=malloc|mmaphuge
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."
ROUNDS=${1:-4}
MEM=${MEM:-malloc}
case "$MEM" in malloc|mmaphuge) ;; *) echo "fio-mixed: MEM must be malloc or mmaphuge" >&2; exit 2 ;; esac
command -v fio >/dev/null || { echo "fio-mixed: fio is not installed (apt-get install fio)" >&2; exit 2; }
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-target}/release/innotune}
[ -x "$INNOTUNE" ] || { echo "fio-mixed: build first: cargo build --release ($INNOTUNE missing)" >&2; exit 2; }
. bench/lib.sh
BEFORE=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/block/vda/queue/scheduler)
bench_undo "echo $BEFORE > /sys/block/vda/queue/scheduler"
if [ "$MEM" = mmaphuge ]; then bench_hugepages 24; fi
bench_workdir fio-mixed; W=$WORK
truncate -s 6G "$W/backing"
bench_loop "$W/backing"; L=$LOOP
bench_ext4 "$L" "$W/mnt"
mkdir "$W/mnt/innotune"
for f in r w; do
  fio --name=lay --directory="$W/mnt" --filename=$f --size=1g --rw=write --bs=1m --direct=1 --output-format=terse > /dev/null
done
# innotune lays its files out once (a 1 s run), outside the timed rounds.
"$INNOTUNE" --format json bench --preset mixed --mem "$MEM" --directory "$W/mnt/innotune" --size 1g --runtime 1s > /dev/null
OUT=$W/table.md
echo "| round | vda scheduler | tool | reads completed | read p99 ms | read max ms | write MB/s |" > "$OUT"
echo "|---:|---|---|---:|---:|---:|---:|" >> "$OUT"
run_fio() { # round scheduler
    fio --directory="$W/mnt" --direct=1 --ioengine=io_uring --time_based --runtime=8 --ramp_time=1 --size=1g --output-format=json --mem="$MEM" \
      --name=rd --filename=r --rw=randread --bs=16k --iodepth=1 \
      --name=wr --filename=w --rw=write --bs=1m --iodepth=32 | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"]; r = j[0]["read"]; w = j[1]["write"]
p99 = r["clat_ns"]["percentile"].get("99.000000", 0) / 1e6 if r["total_ios"] else float("nan")
print("| %s | %s | fio | %d | %.1f | %.1f | %d |" % (sys.argv[1], sys.argv[2], r["total_ios"], p99, r["clat_ns"]["max"] / 1e6, w["bw_bytes"] / 1e6))' "$1" "$2" >> "$OUT"
}
run_innotune() { # round scheduler
    "$INNOTUNE" --format json bench --preset mixed --mem "$MEM" --directory "$W/mnt/innotune" --size 1g --runtime 8s --ramp_time 1s | python3 -c '
import json, sys
j = json.load(sys.stdin)["result"]["result"]["jobs"]; r = j[0]["read"]; w = j[1]["write"]
print("| %s | %s | innotune | %d | %.1f | %.1f | %d |" % (sys.argv[1], sys.argv[2], r["total_ios"], r["clat"]["p99_ns"] / 1e6, r["clat"]["max_ns"] / 1e6, w["bw_bytes_per_s"] / 1e6))' "$1" "$2" >> "$OUT"
}
# The tools alternate which runs first (odd rounds fio, even rounds innotune),
# so neither always meets the disk right after the other's writes.
for r in $(seq "$ROUNDS"); do
  for s in none mq-deadline; do
    echo "$s" > /sys/block/vda/queue/scheduler
    if [ $((r % 2)) -eq 1 ]; then run_fio "$r" "$s"; run_innotune "$r" "$s"
    else run_innotune "$r" "$s"; run_fio "$r" "$s"; fi
  done
done
{
  echo
  echo "## fio and innotune, mixed workload on vda, none vs mq-deadline ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "fio-$(fio --version | sed 's/fio-//') --mem=$MEM and \`innotune bench --preset mixed --mem $MEM\`, each on its own 2 GiB of files, alternating which runs first; $ROUNDS rounds of 8 s (1 s ramp) per scheduler and tool; load average $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  cat "$OUT"
  echo
  echo "Reproduce (as root): \`MEM=$MEM bench/fio-mixed.sh $ROUNDS\`."
} | tee -a "$BENCH_LOG"
