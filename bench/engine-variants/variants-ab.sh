#!/usr/bin/env bash
# compare.py on a RAM-backed loop device (direct I/O, tmpfs, ext4) made for the run and removed
# after it: the engine variants of a throwaway build against fio, steal recorded per run.
# BACKING=disk puts the loop device's file in the work directory under /var/tmp instead (the
# disk, as fio-compare.sh BACKING=disk does).
# Usage (as root): INNOTUNE=/tmp/innotuneB bench/engine-variants/variants-ab.sh RUNTIME_S VARIANTS ROUNDS
#   e.g. RW=randwrite QD=16 INNOTUNE=/tmp/innotuneB bench/engine-variants/variants-ab.sh 5 fio,default,nobufs 20
#   env: RW=randread QD=32 BS=16k NJ=1 BACKING=ram|disk (see compare.py for the variants and the build).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${INNOTUNE:?give INNOTUNE=the throwaway build (see compare.py)}"
. bench/lib.sh
bench_workdir variants-ab
case "${BACKING:-ram}" in
  ram) bench_ram_ext4 ;;
  disk)
    truncate -s 1700M "$WORK/backing"
    bench_loop "$WORK/backing"
    bench_ext4 "$LOOP" "$WORK/mnt"
    MNT=$WORK/mnt ;;
  *) echo "variants-ab: BACKING must be ram or disk, not ${BACKING}" >&2; exit 2 ;;
esac
"$INNOTUNE" --format json bench --name rr --directory "$WORK/mnt" --rw write --bs 1m --iodepth 4 --direct=1 --size 1g > /dev/null
MNT="$MNT" python3 bench/engine-variants/compare.py "$@"
