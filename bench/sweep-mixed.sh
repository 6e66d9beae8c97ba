#!/usr/bin/env bash
# innotune sweep on the `mixed` workload (16 KiB random reads at depth 1
# while a 1 MiB sequential writer runs at depth 32), none vs mq-deadline,
# on a loop device over a file on this machine's disk. The sweep switches
# every device in the stack (the loop device and the disk under its file)
# and restores them. Appends the medians, CIs, verdict and recommendation to
# bench/log/<UTC date>.md.
#
# LAYER=all (default) switches the whole stack; LAYER=loop or LAYER=disk
# switches only that device (`--device`), to tell which layer decides.
#
# Usage (as root): [LAYER=all|loop|disk] bench/sweep-mixed.sh [ROUNDS] [TRIAL]   (defaults 6, 8s)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
LAYER=${LAYER:-all}
ROUNDS=${1:-6}
TRIAL=${2:-8s}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
. "$HERE/lib.sh"
bench_workdir sweep-mixed
truncate -s 3G "$WORK/backing"
bench_loop "$WORK/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
DEVICE=()
case "$LAYER" in
  all) ;;
  loop) DEVICE=(--device "$(basename "$LOOP")") ;;
  disk) DEVICE=(--device "$(bench_disk_of "$WORK/backing")") ;;
  *) echo "sweep-mixed: LAYER must be all, loop or disk" >&2; exit 2 ;;
esac
# --choose: with the whole stack switched, the loop device (none) and the disk
# (mq-deadline here) hold a combination no candidate sets, so the sweep only
# recommends a candidate that beats the other when asked to choose.
CMD="innotune sweep MNT ${DEVICE[*]} --schedulers none,mq-deadline --workload mixed --objective latency --rounds $ROUNDS --trial $TRIAL --warmup 1s --choose"
"$INNOTUNE" --format json sweep "$WORK/mnt" "${DEVICE[@]}" --schedulers none,mq-deadline --workload mixed \
  --objective latency --rounds "$ROUNDS" --trial "$TRIAL" --warmup 1s --choose > "$WORK/out.json" || [ $? -eq 1 ]
python3 - "$WORK/out.json" "$BENCH_LOG" "$CMD" "$LAYER" <<'PY'
import json, sys, time, os
r = json.load(open(sys.argv[1]))["result"]
load = open("/proc/loadavg").read().split()[:3]
out = [f"\n## sweep, mixed workload, none vs mq-deadline ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n",
       f"Devices switched: {', '.join(d['name'] for d in r['devices'])}; {r['trials_run']} trials. Load average at the end: {' '.join(load)}.\n",
       "| candidate | read p99 median µs | 95% CI | IOPS median |", "|---|---:|---|---:|"]
for c in r["results"]:
    p = c["p99_ns"]
    out.append(f"| {c['candidate']} | {p['median']/1000:.0f} | {p['ci_low']/1000:.0f}–{p['ci_high']/1000:.0f} | {c['throughput']['median']:.0f} |")
for v in r["verdicts"]:
    c = v["p99"]
    out.append(f"\nVerdict for {v['candidate']} vs {v['baseline']} on {v['workload']} (p99): **{v['verdict']}**, ratio {c['ratio']:.2f} [{c['ci_low']:.2f}–{c['ci_high']:.2f}], p = {c['p_value']:.4f}.")
rec = r["recommendation"]
what = rec.get("setting", "the current setting")
out.append(f"Recommendation: **{rec['action']} {what}** — {rec['reason']}\n")
out.append(f"Reproduce (as root): `LAYER={sys.argv[4]} bench/sweep-mixed.sh {sys.argv[3].split('--rounds ')[1].split()[0]} {sys.argv[3].split('--trial ')[1].split()[0]}` (runs `{sys.argv[3]}` on a fresh loop device).\n")
open(sys.argv[2], "a").write("\n".join(out) + "\n")
print("\n".join(out))
PY
