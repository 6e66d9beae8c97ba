#!/usr/bin/env bash
# Two innotune binaries' `slowlog` on the same plain log in the page cache:
# CPU time per byte (the issue's "per core" rate), alternating, ROUNDS
# rounds, with the paired Hodges-Lehmann ratio and its exact 95 % interval
# (bench/paired.py); the same in instructions (valgrind --tool=callgrind,
# the log's first 16 MB, --threads 1: deterministic, whatever else the
# machine does); and the machine's limit on the same warm file (`cat`,
# `wc -l`, CPU time). Both digests must be equal but for their timings.
# Gzip: the new build on the log gzipped (`gzip -c`, made once) against
# `gzip -dc FILE.gz >/dev/null` (the system's decompressor alone), wall
# time, in the same rounds.
# Appended to bench/log/<UTC date>.md.
#
# Usage: OLD=path NEW=path LOG=file ROUNDS=15 bench/slowlog-ab.sh
#   LOG defaults to a 64 MB log from bench/slowlog-synth.py (made once,
#   in bench/out/).
# Needs: python3, perf (linux-perf), valgrind.
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-15}
NEW=${NEW:-target/release/innotune}
: "${OLD:?OLD=path of the binary to compare against}"
for t in perf valgrind python3; do
  command -v "$t" >/dev/null || { echo "missing $t (apt-get install linux-perf valgrind python3)" >&2; exit 2; }
done
mkdir -p bench/out
LOG=${LOG:-bench/out/slowlog-synth-64.log}
[ -s "$LOG" ] || python3 bench/slowlog-synth.py 64 "$LOG"
work=$(mktemp -d /var/tmp/itslowab.XXXXXX)
trap 'rm -rf "$work"' EXIT
head -c 16000000 "$LOG" >"$work/head.log"
[ -s "$LOG.gz" ] && [ "$LOG.gz" -nt "$LOG" ] || gzip -c "$LOG" >"$LOG.gz"
cat "$LOG" >/dev/null

wall() { # elapsed ms of one run
  local t0 t1
  t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))e-3
}
cpu() { # task-clock (ms) of one run
  perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
}
for b in OLD NEW; do
  bin=${!b}
  "$bin" --format json slowlog --top 0 "$LOG" >"$work/$b.json"
  valgrind --tool=callgrind --callgrind-out-file="$work/$b.cg" "$bin" --format json slowlog \
    --threads 1 --top 0 "$work/head.log" 2>"$work/$b.vg" >/dev/null
done
: >"$work/rounds"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="OLD NEW"; else order="NEW OLD"; fi
  for b in $order; do
    echo "$r $b $(cpu "${!b}" --format json slowlog --top 0 "$LOG")" >>"$work/rounds"
  done
  echo "$r cat $(cpu cat "$LOG")" >>"$work/rounds"
  if [ $((r % 2)) = 1 ]; then
    echo "$r gz $(wall "$NEW" --format json slowlog --top 0 "$LOG.gz")" >>"$work/rounds"
    echo "$r gzip $(wall gzip -dc "$LOG.gz")" >>"$work/rounds"
  else
    echo "$r gzip $(wall gzip -dc "$LOG.gz")" >>"$work/rounds"
    echo "$r gz $(wall "$NEW" --format json slowlog --top 0 "$LOG.gz")" >>"$work/rounds"
  fi
  echo "$r wc $(cpu wc -l "$LOG")" >>"$work/rounds"
done
WORK=$work LOG=$LOG OLD=$OLD NEW=$NEW ROUNDS=$ROUNDS python3 - <<'PY'
import datetime, json, os, re, statistics, sys
sys.path.insert(0, "bench")
from paired import hodges_lehmann, verdict
w = os.environ["WORK"]
size = os.path.getsize(os.environ["LOG"]) / 1e6
def digest(b):
    r = json.load(open(f"{w}/{b}.json"))["result"]
    for k in ("elapsed_s", "read_bytes_per_s"):
        r.pop(k, None)
    return r
same = digest("OLD") == digest("NEW")
ins = {b: int(re.search(r"refs:\s+([\d,]+)", open(f"{w}/{b}.vg").read()).group(1).replace(",", "")) for b in ("OLD", "NEW")}
t = {}
for line in open(f"{w}/rounds"):
    r, b, ms = line.split()
    t.setdefault(b, {})[int(r)] = float(ms) / 1e3
rounds = sorted(t["NEW"])
rate = {b: [size / t[b][r] for r in rounds] for b in t}
est, ci = hodges_lehmann([t["OLD"][r] / t["NEW"][r] for r in rounds])
gest, gci = hodges_lehmann([t["gzip"][r] / t["gz"][r] for r in rounds])
gci_s = "—" if gci is None else f"{gci[0]:.3f}–{gci[1]:.3f}"
ci_s = "—" if ci is None else f"{ci[0]:.3f}–{ci[1]:.3f}"
med = {b: statistics.median(v) for b, v in rate.items()}
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
out = f"""
## slowlog: two builds on one log, CPU time per byte ({now} UTC, `bench/slowlog-ab.sh`)

Log: `{os.environ['LOG']}`, {size:.1f} MB, page cache warm; {len(rounds)} rounds, the two builds in
alternating order, default threads (one per CPU); rate = MB over the process's CPU time
(`perf stat -e task-clock`: user + system of every thread), i.e. MB/s per core. Old:
`{os.environ['OLD']}`, new: `{os.environ['NEW']}`. Digests equal but for timings: **{same}**.

| run | median MB/s per core | per round |
|---|---:|---|
| innotune slowlog (old) | {med['OLD']:.0f} | {', '.join(f'{x:.0f}' for x in rate['OLD'])} |
| innotune slowlog (new) | {med['NEW']:.0f} | {', '.join(f'{x:.0f}' for x in rate['NEW'])} |
| `cat FILE` | {med['cat']:.0f} | {', '.join(f'{x:.0f}' for x in rate['cat'])} |
| `wc -l FILE` | {med['wc']:.0f} | {', '.join(f'{x:.0f}' for x in rate['wc'])} |
| innotune slowlog (new) on `FILE.gz`, MB of log per second of wall time | {med['gz']:.0f} | {', '.join(f'{x:.0f}' for x in rate['gz'])} |
| `gzip -dc FILE.gz`, the same | {med['gzip']:.0f} | {', '.join(f'{x:.0f}' for x in rate['gzip'])} |

New over old, CPU time per byte: **{est:.3f}×** (CI {ci_s}, {verdict(ci, 'new')}). New = {med['NEW']/med['cat']:.3f} of `cat`,
{med['NEW']/med['wc']:.3f} of `wc -l`. Instructions (callgrind, first 16 MB, `--threads 1`): old
{ins['OLD']/1e6:.1f} M, new {ins['NEW']/1e6:.1f} M ({ins['NEW']/ins['OLD']:.3f}). Gzip ({os.path.getsize(os.environ['LOG'] + '.gz')/1e6:.1f} MB
compressed): innotune's digest over `gzip -dc` alone, wall time, **{gest:.3f}×** (CI {gci_s}, {verdict(gci, 'innotune')}).

Reproduce: `OLD={os.environ['OLD']} NEW={os.environ['NEW']} LOG={os.environ['LOG']} ROUNDS={os.environ['ROUNDS']} bench/slowlog-ab.sh`
"""
print(out)
with open(os.environ["BENCH_LOG"], "a") as f:
    f.write(out)
if not same:
    sys.exit("the two digests differ")
PY
