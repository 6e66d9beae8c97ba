#!/usr/bin/env bash
# Submission batch size, fio and innotune, on a RAM-backed loop device.
#
# fio submits every I/O as soon as it is queued (iodepth_batch_submit=1, its
# default); innotune did one submission per reap until issue 17. This runs,
# alternating for ROUNDS rounds on the same file of a loop device (direct
# I/O) whose backing file is on a tmpfs, four variants of one job:
#   fio (default batch 1), fio --iodepth_batch_submit=QD,
#   innotune --iodepth_batch_submit 1 (the default), innotune --iodepth_batch_submit 0 (= QD)
# and appends the median IOPS of each, the ratios and the commands to
# bench/log/<UTC date>.md.
#
# Usage (as root): bench/submit-batch.sh [ROUNDS=5] [RUNTIME_S=5]
#   env: RW=randread BS=16k QD=32 NJ=1, INNOTUNE=path (default target/release/innotune)
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
RUNTIME=${2:-5}
RW=${RW:-randread}
BS=${BS:-16k}
QD=${QD:-32}
NJ=${NJ:-1}
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-target}/release/innotune}
[ -x "$INNOTUNE" ] || { echo "submit-batch: build first (cargo build --release) or set INNOTUNE" >&2; exit 2; }
command -v fio >/dev/null || { echo "submit-batch: fio is not installed (apt-get install fio)" >&2; exit 2; }

. bench/lib.sh
bench_workdir submit-batch
bench_ram_ext4
# innotune lays the file out; fio then runs on that very file.
"$INNOTUNE" --format json bench --name sb --directory "$WORK/mnt" --rw write --bs 1m --iodepth 4 --direct=1 --size 1g > /dev/null
FILE="$WORK/mnt/innotune-sb.0"

python3 - "$INNOTUNE" "$WORK/mnt" "$FILE" "$ROUNDS" "$RUNTIME" "$RW" "$BS" "$QD" "$NJ" "$(uptime)" <<'PY'
import datetime, json, statistics, subprocess, sys
inn, mnt, file, rounds, runtime, rw, bs, qd, nj, up = sys.argv[1:11]
rounds, runtime = int(rounds), int(runtime)

def fio(batch):
    cmd = ["fio", "--name=t", f"--filename={file}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
           f"--numjobs={nj}", "--group_reporting", "--ioengine=io_uring", "--direct=1", "--norandommap",
           "--time_based", f"--runtime={runtime}", "--size=1g", "--output-format=json"]
    if batch:
        cmd += [f"--iodepth_batch_submit={qd}"]
    j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["jobs"][0]
    return j["read"]["iops"] + j["write"]["iops"], " ".join(cmd)

def innotune(batch):
    cmd = [inn, "--format", "json", "bench", "--name", "sb", "--directory", mnt, "--rw", rw, "--bs", bs,
           "--iodepth", qd, "--numjobs", nj, "--direct=1", "--size", "1g", "--runtime", f"{runtime}s",
           "--iodepth_batch_submit", str(batch)]
    jobs = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["result"]["result"]["jobs"]
    return sum(d.get("read", {}).get("iops_per_s", 0) + d.get("write", {}).get("iops_per_s", 0) for d in jobs), " ".join(cmd)

variants = [("fio, batch 1 (default)", lambda: fio(False)), (f"fio, batch {qd}", lambda: fio(True)),
            ("innotune, batch 1 (default)", lambda: innotune(1)), (f"innotune, batch {qd} (0)", lambda: innotune(0))]
res = {n: [] for n, _ in variants}
cmds = {}
for r in range(rounds):
    order = variants if r % 2 == 0 else variants[::-1]
    for n, f in order:
        v, c = f()
        res[n].append(v)
        cmds[n] = c
    print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {res[n][-1]:.0f}" for n, _ in variants), file=sys.stderr)

base = statistics.median(res[variants[0][0]])
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
out = [f"\n## submit batch, {rw} {bs} depth {qd} x {nj} job(s), RAM-backed loop ({now})\n",
       f"{rounds} alternating rounds of {runtime} s on one file of a loop device (direct I/O) on a tmpfs; `uptime` before: `{up.strip()}`.\n",
       "| variant | median IOPS | vs fio default | rounds |", "|---|---:|---:|---|"]
for n, _ in variants:
    m = statistics.median(res[n])
    out.append(f"| {n} | {m:.0f} | {m / base:.3f} | {', '.join(f'{x:.0f}' for x in res[n])} |")
out.append("\nReproduce (as root): `" + " ".join(
    [f"RW={rw} BS={bs} QD={qd} NJ={nj}", "bench/submit-batch.sh", str(rounds), str(runtime)]) + "`; the runs are:\n")
for n, _ in variants:
    out.append(f"- {n}: `{cmds[n].replace(mnt, 'MNT')}`")
text = "\n".join(out) + "\n"
with open(__import__("os").environ["BENCH_LOG"], "a") as f:
    f.write(text)
print(text)
PY
