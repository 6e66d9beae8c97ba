#!/usr/bin/env bash
# Two innotune binaries and fio, alternating, on one file of a RAM-backed loop
# device (direct I/O, tmpfs): 16 KiB random reads at depth 32 by default.
# A = the shipped engine, B = a throwaway build with getevents.patch applied
# (submit with GETEVENTS, reap from the ring without a system call when
# completions are there). Build B: git apply bench/engine-variants/getevents.patch
# && cargo build --release --bin innotune && cp target/release/innotune /tmp/B
# && git checkout src/bench/engine/uring.rs.
# Prints per round: A IOPS and CPU ns/IO, B IOPS and CPU ns/IO, fio IOPS.
# Usage (as root): bench/engine-variants/getevents-ab.sh A B   env: R=6 T=5 RW=randread QD=32 BS=16k
set -euo pipefail
A=$1; B=$2; R=${R:-6}; T=${T:-5}; RW=${RW:-randread}; QD=${QD:-32}; BS=${BS:-16k}
. "$(dirname "$0")/../lib.sh"
bench_workdir getevents-ab; W=$WORK
bench_ram_ext4
"$A" --format json bench --name sb --directory "$W/mnt" --rw write --bs 1m --iodepth 4 --direct=1 --size 1g > /dev/null
it() { "$1" --format json bench --name sb --directory "$W/mnt" --rw "$RW" --bs "$BS" --iodepth "$QD" --direct=1 --size 1g --runtime "${T}s" | python3 -c '
import json,sys; j=json.load(sys.stdin)["result"]["result"]["jobs"][0]; d=j.get("read") or j.get("write"); print(int(d["iops_per_s"]), int(j["cpu"]["cpu_per_io_ns"]))'; }
f() { fio --name=t --filename="$W/mnt/innotune-sb.0" --rw="$RW" --bs="$BS" --iodepth="$QD" --ioengine=io_uring --direct=1 --norandommap --time_based --runtime="$T" --size=1g --output-format=json | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(int(j["read"]["iops"]+j["write"]["iops"]))'; }
echo "uptime: $(uptime)"
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then a=$(it "$A"); b=$(it "$B"); c=$(f); else c=$(f); b=$(it "$B"); a=$(it "$A"); fi
  echo "round $r: A $a  B $b  fio $c"
done
