#!/usr/bin/env bash
# innotune checksum vs its peers, same files, same machine, alternating rounds.
#
#   warm page cache : innotune checksum   vs MariaDB innochecksum   (full_crc32 and crc32 files)
#   cold (--direct) : innotune --direct   vs fio --rw=read --bs=4m --direct=1 (same file; psync, the
#                     recorded baseline, and io_uring at depth 4 as an informative row). The
#                     target compares each tool's own read rate (innotune's read_bytes_per_s,
#                     fio's bw: neither counts its start-up); before the 2026-11-26 13:30 run innotune's
#                     side was its wall time, which counts start-up fio's side did not. Both
#                     tools' wall rates are shown in a row of their own.
#   threads         : innotune --threads 1 vs 2 on a legacy-innodb-checksum file
#
# Data is made at run time under $WORK (never committed) by a bootstrap-only
# MariaDB (no socket, no port; the 3306 server is never touched), and removed
# on exit unless KEEP=1. The innodb-format file is a copy of the crc32 file
# whose checksums a 30-line C helper (compiled here) rewrites with the legacy
# fold: MariaDB 10.6+ can no longer write that format.
#
# Usage: bench/checksum-compare.sh            (SIZE_MB=1024 ROUNDS=3 by default)
#        SIZE_MB=256 ROUNDS=2 bench/checksum-compare.sh
# Appends the measured ratios and this command line to bench/log/<UTC date>.md.
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SIZE_MB=${SIZE_MB:-1024}
ROUNDS=${ROUNDS:-3}
WORK=${WORK:-/var/tmp/innotune-bench-checksum}
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$ROOT/target}/release/innotune}
RESULTS=${RESULTS:-$BENCH_LOG}

for t in mariadb-install-db innochecksum fio gcc python3; do
    command -v "$t" >/dev/null || { echo "checksum-compare: $t not found" >&2; exit 2; }
done
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[ -x "$INNOTUNE" ] || { echo "checksum-compare: build first: cargo build --release ($INNOTUNE missing)" >&2; exit 2; }

BOOT_PID=
cleanup() {
    if [ -n "$BOOT_PID" ] && kill -0 "$BOOT_PID" 2>/dev/null; then kill "$BOOT_PID"; wait "$BOOT_PID" || true; fi
    if [ "${KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
mkdir -p "$WORK"

# --- data ---------------------------------------------------------------
make_datadir() { # algo dir
    local algo=$1 d=$2 rows=$((SIZE_MB * 1000)) batch=100000 sql
    [ -f "$d/t/big.ibd" ] && return 0
    rm -rf "$d"
    local common=(--no-defaults --datadir="$d" --user=root --innodb-checksum-algorithm="$algo"
                  --innodb-log-file-size=256M --innodb-buffer-pool-size=1G --tmpdir="$WORK")
    mariadb-install-db "${common[@]}" --auth-root-authentication-method=normal --skip-test-db >"$WORK/install-$algo.log" 2>&1
    # --bootstrap reads one statement per line.
    sql="CREATE DATABASE t;
USE t;
CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(1000), n INT) ENGINE=InnoDB;"
    local i=0
    while [ $i -lt $rows ]; do
        local end=$((i + batch < rows ? i + batch : rows))
        sql+="
INSERT INTO big SELECT seq, REPEAT(CHAR(65 + seq % 26), 900 + seq % 100), seq FROM seq_$((i + 1))_to_$end;"
        i=$end
    done
    echo "$sql" | "$MARIADBD" "${common[@]}" --bootstrap --skip-networking --log-error="$WORK/boot-$algo.err" &
    BOOT_PID=$!
    wait "$BOOT_PID" || { grep -v Note "$WORK/boot-$algo.err" >&2; exit 2; }
    BOOT_PID=
}

echo "== generating ~${SIZE_MB} MB tablespaces (full_crc32, crc32) under $WORK" >&2
make_datadir full_crc32 "$WORK/fcrc32"
make_datadir crc32 "$WORK/crc32"
F_FULL=$WORK/fcrc32/t/big.ibd
F_CRC=$WORK/crc32/t/big.ibd
F_INNODB=$WORK/innodb-big.ibd

cat >"$WORK/rewrite_innodb.c" <<'EOF'
/* Rewrite every non-empty 16K page of a copy with the legacy innodb checksum
   (ut_fold_binary; new at 0, old at n-8), an independent implementation used
   only to make benchmark input. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#define N 16384
static uint32_t fold(const unsigned char *p, size_t len) {
    uint32_t f = 0;
    for (size_t i = 0; i < len; i++)
        f = ((((f ^ p[i] ^ 1653893711u) << 8) + f) ^ 1463735687u) + p[i];
    return f;
}
static void put(unsigned char *p, uint32_t v) { p[0]=v>>24; p[1]=v>>16; p[2]=v>>8; p[3]=v; }
int main(int argc, char **argv) {
    static unsigned char pg[N], zero[N];
    FILE *f = fopen(argv[1], "r+b"); long n = 0, w = 0;
    if (!f) return 1;
    while (fread(pg, 1, N, f) == N) {
        if (memcmp(pg, zero, N)) {
            put(pg, fold(pg + 4, 22) + fold(pg + 38, N - 46));
            put(pg + N - 8, fold(pg, 26));
            fseek(f, n * N, SEEK_SET); fwrite(pg, 1, N, f); fseek(f, (n + 1) * N, SEEK_SET); w++;
        }
        n++;
    }
    fclose(f); printf("%ld\n", w); return 0;
}
EOF
if [ ! -f "$F_INNODB" ]; then
    gcc -O2 -o "$WORK/rewrite_innodb" "$WORK/rewrite_innodb.c"
    cp "$F_CRC" "$F_INNODB"
    "$WORK/rewrite_innodb" "$F_INNODB" >/dev/null
fi

# --- measuring ----------------------------------------------------------
now() { date +%s.%N; }
mbps() { python3 -c "import sys; print(f'{$1/1e6/$2:.0f}')"; }
median() { python3 -c "import sys,statistics; print(statistics.median([float(x) for x in sys.argv[1:]]))" "$@"; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
size_of() { stat -c %s "$1"; }

run_timed() { # cmd... -> seconds (exit code 0 or 1 accepted; anything else aborts)
    local s e rc=0
    s=$(now)
    "$@" >/dev/null 2>&1 || rc=$?
    e=$(now)
    if [ $rc -gt 1 ]; then echo "checksum-compare: '$*' exited $rc" >&2; exit 2; fi
    python3 -c "print($e - $s)"
}

# Correctness first: innotune must find every page valid with the right algorithm.
for pair in "$F_FULL:full_crc32" "$F_CRC:crc32" "$F_INNODB:innodb"; do
    f=${pair%%:*} algo=${pair##*:}
    "$INNOTUNE" --format json checksum --algorithm "$algo" "$f" >"$WORK/check.json" \
        || { echo "checksum-compare: innotune rejects $f as $algo" >&2; exit 2; }
done
innochecksum "$F_FULL" >/dev/null && innochecksum "$F_CRC" >/dev/null

warm() { # file -> "innotune_MBps innochecksum_MBps"
    local f=$1 sz a=() b=()
    sz=$(size_of "$f")
    cat "$f" >/dev/null
    for _ in $(seq "$ROUNDS"); do
        a+=("$(mbps "$sz" "$(run_timed "$INNOTUNE" checksum "$f")")")
        b+=("$(mbps "$sz" "$(run_timed innochecksum "$f")")")
    done
    echo "$(median "${a[@]}") $(median "${b[@]}")"
}

fio_run() { # fio args... -> fio's JSON in $WORK/fio.json
    fio --name=seqread --readonly --rw=read --direct=1 --output-format=json "$@" >"$WORK/fio.json" 2>/dev/null
}
fio_mbps() { # -> MB/s as fio reports it in $WORK/fio.json (its own I/O time)
    python3 -c "import json; print(round(json.load(open('$WORK/fio.json'))['jobs'][0]['read']['bw_bytes']/1e6, 1))"
}
fio_bw() { # fio args... -> MB/s as fio reports it
    fio_run "$@" && fio_mbps
}

cold() { # file -> "innotune_own innotune_wall fio_psync_own fio_psync_wall fio_uring4_own" (MB/s)
    # Each tool's own read rate (innotune's read_bytes_per_s, fio's bw_bytes: both time their
    # reads, not their start-up) is the target's like-for-like pair; the wall rates (the whole
    # command, start-up and exit included, timed here) are shown beside it.
    local f=$1 sz ai=() aw=() bi=() bw=() c=() s e
    sz=$(size_of "$f")
    for _ in $(seq "$ROUNDS"); do
        drop_caches
        s=$(now)
        "$INNOTUNE" --format json checksum --direct "$f" >"$WORK/cold.json" || [ $? -eq 1 ]
        e=$(now)
        aw+=("$(mbps "$sz" "$(python3 -c "print($e - $s)")")")
        ai+=("$(python3 -c "import json; print(round(json.load(open('$WORK/cold.json'))['result']['read_bytes_per_s']/1e6, 1))")")
        drop_caches
        # Timed: fio alone; its JSON is parsed after, as innotune's is.
        s=$(now)
        fio_run --filename="$f" --bs=4m --ioengine=psync
        e=$(now)
        bw+=("$(mbps "$sz" "$(python3 -c "print($e - $s)")")")
        bi+=("$(fio_mbps)")
        # Informative: what the disk gives with several reads in flight.
        drop_caches
        c+=("$(fio_bw --filename="$f" --bs=4m --ioengine=io_uring --iodepth=4)")
    done
    echo "$(median "${ai[@]}") $(median "${aw[@]}") $(median "${bi[@]}") $(median "${bw[@]}") $(median "${c[@]}")"
}

threads() { # file -> "t1_MBps t2_MBps"
    local f=$1 sz a=() b=()
    sz=$(size_of "$f")
    cat "$f" >/dev/null
    for _ in $(seq "$ROUNDS"); do
        a+=("$(mbps "$sz" "$(run_timed "$INNOTUNE" checksum --threads 1 "$f")")")
        b+=("$(mbps "$sz" "$(run_timed "$INNOTUNE" checksum --threads 2 "$f")")")
    done
    echo "$(median "${a[@]}") $(median "${b[@]}")"
}

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

echo "== warm full_crc32" >&2; read -r wf_i wf_c < <(warm "$F_FULL")
echo "== warm crc32" >&2;      read -r wc_i wc_c < <(warm "$F_CRC")
echo "== cold --direct vs fio" >&2; read -r cd_i cd_iw cd_f cd_fw cd_u < <(cold "$F_CRC")
echo "== threads on innodb" >&2; read -r t1 t2 < <(threads "$F_INNODB")

MB=$(( $(size_of "$F_CRC") / 1000000 ))
{
    echo
    echo "## checksum — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), ${MB} MB files, median of ${ROUNDS} alternating rounds, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo
    echo "| comparison | innotune MB/s | peer MB/s | ratio | target |"
    echo "|---|---|---|---|---|"
    echo "| warm, full_crc32, vs MariaDB innochecksum | $wf_i | $wf_c | $(ratio "$wf_i" "$wf_c") | ≥ 2 |"
    echo "| warm, crc32, vs MariaDB innochecksum | $wc_i | $wc_c | $(ratio "$wc_i" "$wc_c") | > full_crc32 ratio |"
    echo "| cold, --direct, vs fio --rw=read --bs=4m --direct=1, each tool's own read rate | $cd_i | $cd_f | $(ratio "$cd_i" "$cd_f") | ≥ 0.95 |"
    echo "| cold, the same, wall time of each whole command | $cd_iw | $cd_fw | $(ratio "$cd_iw" "$cd_fw") | — |"
    echo "| cold, --direct (own rate), vs fio … --ioengine=io_uring --iodepth=4 (informative) | $cd_i | $cd_u | $(ratio "$cd_i" "$cd_u") | — |"
    echo "| warm, legacy innodb, --threads 2 vs --threads 1 | $t2 | $t1 | $(ratio "$t2" "$t1") | > 1 |"
    echo
    echo "Reproduce: \`cargo build --release && SIZE_MB=$SIZE_MB ROUNDS=$ROUNDS bench/checksum-compare.sh\`"
} | tee -a "$RESULTS"
