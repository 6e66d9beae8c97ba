#!/usr/bin/env bash
# Fixed versus sequential sweep on the `mixed` workload (16 KiB random reads
# at depth 1 while a 1 MiB sequential writer runs), none vs mq-deadline,
# switching only the disk under a loop device's backing file (LAYER=disk of
# bench/sweep-mixed.sh: `--device <disk>`). Each of N runs does, in
# alternating order, a fixed 5-round sweep of 8 s trials and a sequential
# sweep (`--sequential`, at most 8 rounds of SEQ_TRIAL trials: with 8 the first look is round 4), and records
# the wall time of each, the time of its rounds, the round at which the
# sequential verdict arrived, the answer of each, and the load average.
# Appends the table, the medians and the exact commands to bench/log/<UTC date>.md.
# Every run checks that the disk is back on the scheduler it had.
#
# Usage (as root): bench/sweep-sequential.sh [N] [SEQ_TRIAL]   (defaults 10, 4s: the mixed workload's measured minimum)
#   env: WORKLOAD=mixed SCHEDS=none,mq-deadline OBJECTIVE=latency (the
#   verdict column shows p99 for latency, throughput otherwise)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
N=${1:-10}
SEQ_TRIAL=${2:-4s}
WORKLOAD=${WORKLOAD:-mixed}
SCHEDS=${SCHEDS:-none,mq-deadline}
OBJECTIVE=${OBJECTIVE:-latency}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
. "$HERE/lib.sh"
bench_workdir sweep-seq
truncate -s 3G "$WORK/backing"
bench_loop "$WORK/backing"
bench_ext4 "$LOOP" "$WORK/mnt"
DISK=$(bench_disk_of "$WORK/backing")
active() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$DISK/queue/scheduler"; }
BEFORE=$(active)
COMMON=(--device "$DISK" --schedulers "$SCHEDS" --workload "$WORKLOAD" --objective "$OBJECTIVE" --warmup 1s --choose)
FIXED=(--rounds 5 --trial 8s)
SEQ=(--sequential --rounds 8 --trial "$SEQ_TRIAL")
run() { # name, args...
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$INNOTUNE" --format json sweep "$WORK/mnt" "${COMMON[@]}" "$@" > "$WORK/$name.json" || [ $? -eq 1 ]
  t1=$(date +%s.%N)
  echo "$t0 $t1 $(cut -d' ' -f1-3 /proc/loadavg) $(active)" > "$WORK/$name.meta"
  if [ "$(active)" != "$BEFORE" ]; then
    echo "sweep-sequential: $DISK is on $(active) after $name, was $BEFORE" >&2
    exit 1
  fi
}
for i in $(seq 1 "$N"); do
  if [ $((i % 2)) -eq 1 ]; then
    run "fixed.$i" "${FIXED[@]}"; run "seq.$i" "${SEQ[@]}"
  else
    run "seq.$i" "${SEQ[@]}"; run "fixed.$i" "${FIXED[@]}"
  fi
  echo "run $i/$N done" >&2
done
CMD_FIXED="innotune sweep MNT ${COMMON[*]} ${FIXED[*]}"
CMD_SEQ="innotune sweep MNT ${COMMON[*]} ${SEQ[*]}"
python3 - "$WORK" "$BENCH_LOG" "$N" "$CMD_FIXED" "$CMD_SEQ" "$DISK" "$BEFORE" "$SEQ_TRIAL" "$WORKLOAD" "$SCHEDS" "$OBJECTIVE" <<'PY'
import json, sys, time, statistics as st
work, results, n, cmd_fixed, cmd_seq, disk, before, seq_trial, workload, scheds, objective = sys.argv[1:12]
metric = "p99" if objective == "latency" else "throughput"
env = "" if (workload, scheds, objective) == ("mixed", "none,mq-deadline", "latency") else f"WORKLOAD={workload} SCHEDS={scheds} OBJECTIVE={objective} "
n = int(n)
def load(name):
    r = json.load(open(f"{work}/{name}.json"))["result"]
    t0, t1, l1, l5, l15, after = open(f"{work}/{name}.meta").read().split()
    return r, float(t1) - float(t0), f"{l1} {l5} {l15}", after
# The answer is the recommendation (what a user acts on); the verdict it
# rests on is shown beside it and counted separately.
def answer(r):
    rec = r["recommendation"]
    return f"{rec['action']} {rec.get('setting', 'current')}"
def verdict(r):
    return r["verdicts"][0][metric]["verdict"]
# Windows in which a direction stalled, per candidate: one I/O waited past
# the stall limit (a read 500 ms) or none completed ("none 3/5,
# mq-deadline 0/5"; older JSON has only `starved`, nothing completed), and
# the longest read of any window of each candidate; a "*" marks a sweep
# whose recommendation the veto decided (its reason names the stalls).
def stalled(r):
    cands = sorted({t["candidate"] for t in r["trials"]})
    def cell(c):
        ts = [t for t in r["trials"] if t["candidate"] == c]
        k = sum(1 for t in ts if t.get("starved") or t.get("stalled"))
        longest = max((t.get("read_max_ns") or 0 for t in ts), default=0)
        return f"{c} {k}/{len(ts)}" + (f" ({longest / 1e6:.0f} ms)" if longest else "")
    vetoed = "starved" in r["recommendation"]["reason"] or "stalled" in r["recommendation"]["reason"]
    return ", ".join(cell(c) for c in cands) + (" *" if vetoed else "")
# The host's CPU steal over the trials' windows (the sweep's noise line):
# "median/max %", to tell a host that stole CPU time from one that did not.
def steal(r):
    n = r["noise"]
    if "steal_median_pct" not in n:
        return "–"
    return f"{n['steal_median_pct']:.1f}/{n['steal_max_pct']:.0f}"
rows, ratios, rratios, same, same_v, rounds, vetoes, settled = [], [], [], 0, 0, [], 0, 0
for i in range(1, n + 1):
    f, fw, fl, fa = load(f"fixed.{i}")
    s, sw, sl, sa = load(f"seq.{i}")
    sq = s["sequential"]
    v = s["verdicts"][0]
    reached = v["sequential"]
    if reached["crossed"]:
        at = f"round {reached['round']}"
    elif sq.get("settled"):
        at = f"settled at round {sq['rounds_run']} (veto)" if "vetoed" in sq["settled"] else f"settled at round {sq['rounds_run']}"
        settled += 1
    else:
        at = f"none (ran {sq['rounds_run']} rounds)"
    rounds.append(sq["rounds_run"])
    ratios.append(fw / sw)
    rratios.append(f["rounds_s"] / s["rounds_s"])
    same += answer(f) == answer(s)
    same_v += verdict(f) == verdict(s)
    fp = f["verdicts"][0][metric]; sp = v[metric]
    vetoes += sum(("starved" in x["recommendation"]["reason"]) or ("stalled" in x["recommendation"]["reason"]) for x in (f, s))
    rows.append(f"| {i} | {'fixed first' if i % 2 else 'sequential first'} | {fw:.0f} | {f['rounds_s']:.0f} | {answer(f)} ({metric} {verdict(f)}), ratio {fp['ratio']:.2f}, p {fp['p_value']:.4f} | {sw:.0f} | {s['rounds_s']:.0f} | {at} | {answer(s)} ({metric} {verdict(s)}), ratio {sp['ratio']:.2f}, p {sp['p_value']:.4f} ≤ {reached['level']:.4f} | {stalled(f)} / {stalled(s)} | {steal(f)} / {steal(s)} | {fw/sw:.2f}× | {fl} / {sl} | {fa}, {sa} |")
out = [f"\n## sweep, fixed vs sequential, {workload} workload, {scheds.replace(',', ' vs ')} on {disk} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n",
       f"{n} runs, each a fixed 5-round sweep of 8 s trials and a sequential sweep (at most 8 rounds of {seq_trial} trials), in alternating order, on a fresh loop device whose backing file is on {disk}; only {disk} is switched (was {before}). "
       "Wall = the whole command (layout of the 2 GiB of work files included); rounds = `rounds_s`, first trial to last.\n",
       "| run | order | fixed wall s | fixed rounds s | fixed answer | sequential wall s | sequential rounds s | verdict reached at | sequential answer | stalled windows, longest read (fixed / seq; * = vetoed) | steal % median/max (fixed / seq) | wall ratio | load avg (fixed / seq) | scheduler after |",
       "|---:|---|---:|---:|---|---:|---:|---|---|---|---|---:|---|---|"] + rows
out.append(f"\nSame answer (the recommendation) in **{same} of {n}** runs; the same {metric} verdict in {same_v} of {n}. Sequential sweeps stopped on a settled answer: {settled} of {n}. Wall time fixed/sequential: median **{st.median(ratios):.2f}×** (min {min(ratios):.2f}×, max {max(ratios):.2f}×); rounds only: median **{st.median(rratios):.2f}×** (min {min(rratios):.2f}×). Sequential rounds run: {', '.join(map(str, rounds))}. The stall veto decided {vetoes} of {2 * n} sweeps.\n")
out.append(f"Reproduce (as root): `{env}bench/sweep-sequential.sh {n} {seq_trial}`, which runs `{cmd_fixed}` and `{cmd_seq}` on a fresh loop device.\n")
open(results, "a").write("\n".join(out) + "\n")
print("\n".join(out))
PY
