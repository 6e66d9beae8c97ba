#!/usr/bin/env bash
# innotune slowlog against pt-query-digest on the same slow query log.
#
# The log is real: an `innotune sandbox` (MariaDB) with slow_query_log=ON and
# long_query_time=0 under `innotune oltp oltp_read_write --db-ps-mode disable`
# (statement-mode queries), grown until it reaches SIZE_MB. Then ROUNDS
# alternating runs of pt-query-digest --output json and innotune slowlog
# --format json on the file (page cache warm for both: the file is read once
# before the first round). The script checks that the top 20 classes of
# both tools have the same fingerprints and counts and that the totals
# (entries, classes) agree, and appends the median times and their ratio to
# bench/log/<UTC date>.md.
#
# The machine's limit is measured in the same rounds on the same warm file:
# `cat FILE >/dev/null` (read(2) into the page cache's copy, nothing
# parsed) and `wc -l FILE` (one memchr pass for '\n' over every byte);
# innotune runs with its default threads (one per CPU) and with
# `--threads 1`, so the per-core rate and its fraction of the limit are
# both reported.
#
# Usage (root): SIZE_MB=1024 ROUNDS=3 bench/slowlog-compare.sh
#   KEEP_LOG=path  keep the generated log there (and reuse it when it exists)
#   PT_ROUNDS=N    run pt-query-digest in the first N rounds only (default
#                  ROUNDS; it takes ~0.6 s per MB here, innotune milliseconds)
# Needs: mariadb-server, percona-toolkit. The sandbox and its directory go
# away on every exit path.
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."

SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
BIN=${BIN:-target/release/innotune}
OUT=bench/out/slowlog-compare
for t in pt-query-digest mariadb python3; do
  command -v "$t" >/dev/null || { echo "missing $t (apt-get install percona-toolkit mariadb-server)" >&2; exit 2; }
done
[ -x "$BIN" ] || cargo build --release
mkdir -p "$OUT"

work=$(mktemp -d /var/tmp/itslow.XXXXXX)
export INNOTUNE_STATE_DIR=$work/state
sb=$work/sb
load=""
cleanup() {
  [ -n "$load" ] && kill "$load" 2>/dev/null || true
  [ -d "$sb" ] && "$BIN" sandbox stop --dir "$sb" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

log=${KEEP_LOG:-$work/slow.log}
if [ ! -s "$log" ]; then
  "$BIN" sandbox start --dir "$sb" >/dev/null
  sock=$sb/mysql.sock
  conn=(--socket "$sock" --user root --no-defaults)
  "$BIN" oltp oltp_read_write prepare "${conn[@]}" --tables 4 --table-size 10000 >/dev/null
  mariadb --no-defaults -S "$sock" -uroot -e \
    "SET GLOBAL slow_query_log_file='$log'; SET GLOBAL long_query_time=0; SET GLOBAL slow_query_log=ON;"
  want=$((SIZE_MB * 1048576))
  while [ "$(stat -c %s "$log")" -lt "$want" ]; do
    "$BIN" oltp oltp_read_write run "${conn[@]}" --tables 4 --table-size 10000 \
      --threads 2 --time 20 --db-ps-mode disable >/dev/null
    echo "slow log: $(( $(stat -c %s "$log") / 1048576 )) MiB of $SIZE_MB" >&2
  done
  mariadb --no-defaults -S "$sock" -uroot -e "SET GLOBAL slow_query_log=OFF;"
  "$BIN" sandbox stop --dir "$sb" >/dev/null
fi
size=$(stat -c %s "$log")
cat "$log" >/dev/null   # warm the page cache for both tools

PT_ROUNDS=${PT_ROUNDS:-$ROUNDS}
pt_t=(); in_t=(); in1_t=(); cat_t=(); wc_t=()
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
for r in $(seq "$ROUNDS"); do
  if [ "$r" -le "$PT_ROUNDS" ]; then
    t0=$(now)
    pt-query-digest --output json --limit 1000000 "$log" >"$OUT/pt.json" 2>"$OUT/pt.err"
    pt_t+=("$(since "$t0")")
  fi
  t0=$(now); "$BIN" --format json slowlog "$log" --top 0 >"$OUT/innotune.json"; in_t+=("$(since "$t0")")
  t0=$(now); "$BIN" --format json slowlog "$log" --top 0 --threads 1 >"$OUT/innotune-1.json"; in1_t+=("$(since "$t0")")
  t0=$(now); cat "$log" >/dev/null; cat_t+=("$(since "$t0")")
  t0=$(now); wc -l "$log" >/dev/null; wc_t+=("$(since "$t0")")
  pt_now=skipped; [ "$r" -le "$PT_ROUNDS" ] && pt_now="${pt_t[-1]} s"
  echo "round $r: pt-query-digest $pt_now, innotune ${in_t[-1]} s, --threads 1 ${in1_t[-1]} s, cat ${cat_t[-1]} s, wc -l ${wc_t[-1]} s" >&2
done
cmp <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(json.dumps([r["totals"], r["classes"]], sort_keys=True))' "$OUT/innotune.json") \
    <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(json.dumps([r["totals"], r["classes"]], sort_keys=True))' "$OUT/innotune-1.json") \
  || { echo "innotune: one thread and $(nproc) threads disagree" >&2; exit 1; }

python3 - "$OUT" "$size" "$log" "${pt_t[*]}" "${in_t[*]}" "$(nproc)" "${in1_t[*]}" "${cat_t[*]}" "${wc_t[*]}" "$PT_ROUNDS" <<'PY'
import json, statistics, sys, datetime, os
out, size, log, pt_t, in_t, cpus, in1_t, cat_t, wc_t, pt_rounds = sys.argv[1:]
size = int(size)
pt_t = [float(x) for x in pt_t.split()]
in_t = [float(x) for x in in_t.split()]
in1_t = [float(x) for x in in1_t.split()]
cat_t = [float(x) for x in cat_t.split()]
wc_t = [float(x) for x in wc_t.split()]
text = open(f"{out}/pt.json").read()
pt = json.loads(text[text.index("{"):])
inn = json.load(open(f"{out}/innotune.json"))["result"]
pt_classes = sorted(pt["classes"], key=lambda c: -c["query_count"])
in_classes = sorted(inn["classes"], key=lambda c: -c["count"])
pt_top = [(c["fingerprint"], c["query_count"]) for c in pt_classes[:20]]
in_top = [(c["fingerprint"], c["count"]) for c in in_classes[:20]]
agree_top = sorted(pt_top) == sorted(in_top)
pt_entries = pt["global"]["query_count"]
in_entries = inn["totals"]["entries"]
pt_n = pt["global"]["unique_query_count"]
in_n = inn["classes_total"]
if not agree_top:
    for a, b in zip(sorted(pt_top), sorted(in_top)):
        if a != b:
            print("differs:", a, b, file=sys.stderr)
pm, im = statistics.median(pt_t), statistics.median(in_t)
i1, cm, wm = statistics.median(in1_t), statistics.median(cat_t), statistics.median(wc_t)
ratio = pm / im
mb = size / 1e6
header = open(log, "rb").read(200).split(b"\n")[0].decode(errors="replace")
load = " ".join(open("/proc/loadavg").read().split()[:3])
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
sec = f"""
## slowlog vs pt-query-digest ({now}, `bench/slowlog-compare.sh`)

Log: {mb:.0f} MB ({size} bytes) at `{log}` (its first line: `{header}`; the script's own logs are written by an `innotune sandbox` (MariaDB) at long_query_time=0 under `innotune oltp oltp_read_write --db-ps-mode disable`); {cpus} CPUs; medians of alternating rounds ({len(pt_t)} of pt-query-digest, {len(in_t)} of the others), page cache warm; load average {load} at the end.

| tool | median s | MB/s | runs (s) |
|---|---:|---:|---|
| pt-query-digest --output json | {pm:.2f} | {mb/pm:.1f} | {', '.join(f'{t:.2f}' for t in pt_t)} |
| innotune slowlog --format json ({cpus} threads) | {im:.3f} | {mb/im:.1f} | {', '.join(f'{t:.3f}' for t in in_t)} |
| innotune slowlog --format json --threads 1 | {i1:.3f} | {mb/i1:.1f} | {', '.join(f'{t:.3f}' for t in in1_t)} |
| limit: cat FILE >/dev/null | {cm:.3f} | {mb/cm:.1f} | {', '.join(f'{t:.3f}' for t in cat_t)} |
| limit: wc -l FILE (a memchr pass) | {wm:.3f} | {mb/wm:.1f} | {', '.join(f'{t:.3f}' for t in wc_t)} |

Speed ratio: **{ratio:.1f}×**. Fraction of the limit: one thread {cm/i1:.3f} of cat, {wm/i1:.3f} of wc -l; {cpus} threads {cm/im:.3f} of cat, {wm/im:.3f} of wc -l. Entries: pt {pt_entries}, innotune {in_entries}; classes: pt {pt_n}, innotune {in_n}; top-20 classes by count (fingerprint and count) {'agree' if agree_top else 'DIFFER'}; one thread and {cpus} give the same digest.

Reproduce: `KEEP_LOG={log} ROUNDS={len(in_t)} PT_ROUNDS={pt_rounds} bench/slowlog-compare.sh`
"""
open(__import__("os").environ["BENCH_LOG"], "a").write(sec)
print(sec)
ok = agree_top and pt_entries == in_entries and pt_n == in_n
sys.exit(0 if ok else 1)
PY
