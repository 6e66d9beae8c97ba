#!/usr/bin/env bash
# What the mixed workload's writer sends to the disk: 1 MiB sequential
# writes at depth 32 (O_DIRECT, io_uring) for T seconds on ext4 on a loop
# device (--direct-io=on) whose backing file is on vda, from fio (default
# 4 KiB-page buffers), innotune --mem malloc (4 KiB pages) and innotune's
# default (huge pages). Per run: write requests completed by the loop device
# and by vda (/sys/block/*/stat), their average size, and MB/s.
# Usage (as root): bench/engine-variants/write-shape.sh [INNOTUNE...]   env: T=4
# Each further INNOTUNE binary is measured with --mem malloc as well (A/B of builds).
set -euo pipefail
cd "$(dirname "$0")/../.."
INNOTUNE=${1:-target/release/innotune}; shift || true; T=${T:-4}
. bench/lib.sh
bench_workdir write-shape; W=$WORK
truncate -s 4G "$W/backing"
bench_loop "$W/backing"; L=$LOOP; N=${L#/dev/}
bench_ext4 "$L" "$W/mnt"
fio --name=lay --directory="$W/mnt" --filename=w --size=1g --rw=write --bs=1m --direct=1 --output-format=terse > /dev/null
st() { awk '{print $5, $7}' "/sys/block/$1/stat"; }
measure() { # label, command...
  local label=$1 a0 b0 a1 b1 v0 u0 v1 u1; shift
  read -r a0 b0 <<<"$(st "$N")"; read -r v0 u0 <<<"$(st vda)"
  "$@" > /dev/null
  read -r a1 b1 <<<"$(st "$N")"; read -r v1 u1 <<<"$(st vda)"
  local n=$((a1 - a0)) m=$((v1 - v0))
  # KiB per request, rounded; a run that completed nothing prints 0.
  printf '| %s | %d | %d | %d | %d | %d |\n' "$label" "$n" $(( n ? ((b1 - b0) + n) / 2 / n : 0 )) \
    "$m" $(( m ? ((u1 - u0) + m) / 2 / m : 0 )) $(( (b1 - b0) * 512 / 1000000 / T ))
}
fio_() { fio --name=wr --directory="$W/mnt" --filename=w --rw=write --bs=1m --iodepth=32 --ioengine=io_uring --direct=1 --size=1g --time_based --runtime="$T" --output-format=json "$@"; }
it_() { local b=$1; shift; "$b" --format json bench --name wr --directory "$W/mnt/it" --rw write --bs 1m --iodepth 32 --direct=1 --size 1g --runtime "${R:-$T}s" "$@"; }
mkdir -p "$W/mnt/it"; R=1 it_ "$INNOTUNE" > /dev/null
echo "| tool | loop writes | loop avg KiB | vda writes | vda avg KiB | MB/s |"
echo "|---|---:|---:|---:|---:|---:|"
for round in 1 2; do
  measure "fio (default: malloc)" fio_
  measure "innotune --mem malloc" it_ "$INNOTUNE" --mem malloc
  for b in "$@"; do measure "$b --mem malloc" it_ "$b" --mem malloc; done
  measure "innotune (default: huge)" it_ "$INNOTUNE"
done
echo "loop max_segments $(cat /sys/block/$N/queue/max_segments); vda max_segments $(cat /sys/block/vda/queue/max_segments), scheduler $(cat /sys/block/vda/queue/scheduler); $(uptime)"
