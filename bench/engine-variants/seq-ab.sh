#!/usr/bin/env bash
# Survey's sequential job, A/B: two innotune binaries and fio, alternating
# (ABC / CBA), on a raw loop device (--direct-io=on) over a tmpfs file of
# random bytes, read-only: 1 MiB reads at depth 16 by default, the survey's
# `seq-read-1m-qd16`. A = the shipped engine, B = a variant build (or the
# same binary with different flags: set BFLAGS). Many short rounds, because
# single 5 s runs of either tool on this VM swing by 30%.
# Prints per round: A MiB/s, B MiB/s, fio MiB/s; then medians and ratios.
# Usage (as root): bench/engine-variants/seq-ab.sh A B
#   env: R=10 T=5 RW=read QD=16 BS=1m SIZE_MB=512 AFLAGS= BFLAGS= FIOFLAGS=
#   (with FIOFLAGS=--mem=mmaphuge the script reserves 16 hugetlb pages,
#   vm.nr_hugepages, and puts the old value back on exit)
set -euo pipefail
A=$1; B=$2; R=${R:-10}; T=${T:-5}; RW=${RW:-read}; QD=${QD:-16}; BS=${BS:-1m}
SIZE_MB=${SIZE_MB:-512}; AFLAGS=${AFLAGS:-}; BFLAGS=${BFLAGS:-}; FIOFLAGS=${FIOFLAGS:-}
. "$(dirname "$0")/../lib.sh"
bench_workdir seq-ab; W=$WORK
case "$FIOFLAGS" in *huge*) bench_hugepages 16 ;; esac
bench_tmpfs "$W/ram" $((SIZE_MB + 64))
dd if=/dev/urandom of="$W/ram/backing" bs=1M count="$SIZE_MB" status=none
bench_loop "$W/ram/backing"; L=$LOOP
it() { # binary flags
  # shellcheck disable=SC2086
  "$1" --format json bench --filename "$L" --allow-raw-device --rw "$RW" --bs "$BS" --iodepth "$QD" \
    --direct=1 --runtime "${T}s" $2 | python3 -c '
import json,sys; j=json.load(sys.stdin)["result"]["result"]["jobs"][0]; d=j.get("read") or j.get("write"); print(round(d["bw_bytes_per_s"]/1048576))'; }
f() { fio --readonly --name=t --filename="$L" --rw="$RW" --bs="$BS" --iodepth="$QD" --ioengine=io_uring --direct=1 \
  --time_based --runtime="$T" --output-format=json $FIOFLAGS | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["bw_bytes"]/1048576))'; }
echo "uptime: $(uptime)"
as=(); bs=(); cs=()
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then a=$(it "$A" "$AFLAGS"); b=$(it "$B" "$BFLAGS"); c=$(f); else c=$(f); b=$(it "$B" "$BFLAGS"); a=$(it "$A" "$AFLAGS"); fi
  echo "round $r: A $a  B $b  fio $c"; as+=("$a"); bs+=("$b"); cs+=("$c")
done
python3 - "${as[*]}" "${bs[*]}" "${cs[*]}" <<'PY'
import statistics, sys
a, b, c = ([float(x) for x in s.split()] for s in sys.argv[1:4])
ma, mb, mc = (statistics.median(x) for x in (a, b, c))
print(f"median MiB/s: A {ma:.0f}  B {mb:.0f}  fio {mc:.0f}   A/fio {ma/mc:.3f}  B/fio {mb/mc:.3f}  B/A {mb/ma:.3f}")
PY
echo "uptime: $(uptime)"
