#!/usr/bin/env bash
# What reaches the device: 1 MiB reads at depth 16 (O_DIRECT, io_uring) on a
# raw loop device (--direct-io=on, 128 segments per request at most) over a
# tmpfs file of random bytes, from fio (default 4 KiB-page buffers, and
# --mem=mmaphuge) and from innotune with --mem malloc and --mem auto (huge
# pages from 2 MiB of buffers). Per run: requests completed by the loop
# device (/sys/block/loopN/stat), their average size, and MiB/s.
# Usage (as root): bench/engine-variants/request-shape.sh [INNOTUNE]   env: T=3
set -euo pipefail
cd "$(dirname "$0")/../.."
INNOTUNE=${1:-target/release/innotune}; T=${T:-3}
. bench/lib.sh
bench_workdir request-shape; W=$WORK
bench_hugepages 16
bench_tmpfs "$W/ram" 600
dd if=/dev/urandom of="$W/ram/b" bs=1M count=512 status=none
bench_loop "$W/ram/b"; L=$LOOP; N=${L#/dev/}
st() { awk '{print $1, $3}' "/sys/block/$N/stat"; }
measure() { # label, command...
  local label=$1 r0 s0 r1 s1; shift
  read -r r0 s0 <<<"$(st)"
  "$@" > /dev/null
  read -r r1 s1 <<<"$(st)"
  printf '| %s | %d | %d | %d |\n' "$label" $((r1 - r0)) $(( (s1 - s0) / 2 / (r1 - r0) )) $(( (s1 - s0) / 2048 / T ))
}
echo "| tool | requests | avg KiB | MiB/s |"
echo "|---|---:|---:|---:|"
fio_() { fio --readonly --name=t --filename="$L" --rw=read --bs=1m --iodepth=16 --ioengine=io_uring --direct=1 --time_based --runtime="$T" --output-format=json "$@"; }
it_() { "$INNOTUNE" --format json bench --filename "$L" --allow-raw-device --rw read --bs 1m --iodepth 16 --direct=1 --runtime "${T}s" "$@"; }
measure "fio (default: malloc)" fio_
measure "fio --mem=mmaphuge" fio_ --mem=mmaphuge
measure "innotune --mem malloc" it_ --mem malloc
measure "innotune (default: auto = huge here)" it_
echo "max_segments $(cat /sys/block/$N/queue/max_segments), max_sectors_kb $(cat /sys/block/$N/queue/max_sectors_kb); $(uptime)"
