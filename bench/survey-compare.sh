#!/usr/bin/env bash
# innotune bench --survey vs fio --readonly on the same devices.
#
# Makes two loop devices (--direct-io=on) on files under /var/tmp filled
# with random bytes (a sparse file would be read as holes, never touching
# the disk), then per round, alternating which tool goes first (ABBA):
#   - `innotune bench --survey A B --runtime R`: each device alone (four
#     read jobs), then both at once; its sequential 1 MiB qd16 figure per
#     device, its class aggregate, and its wall times (parallel vs the sum
#     of the devices alone);
#   - fio --readonly --direct=1 --rw=read --bs=1M --iodepth=16
#     --ioengine=io_uring on each device alone, then on both at once.
#   - the same fio job with --mem=mmaphuge (its buffers on 2 MiB huge pages,
#     as innotune's are for a buffer set of 2 MiB or more) on each device
#     alone: the like-for-like peer. The script reserves 24 hugetlb pages
#     (vm.nr_hugepages) for it and puts the old value back on exit.
# With VDA=1 the host's real disk /dev/vda is surveyed too (read-only is
# safe on the mounted root disk) and compared the same way.
# With BACKING=ram the loop devices' files live on a tmpfs: no disk and no
# hypervisor cache under them (whose bursts to 500-1100 MiB/s made single
# disk-backed runs of both tools jump), so the tools' own cost decides.
# Medians and innotune/fio ratios are appended to bench/log/<UTC date>.md with the
# command that reproduces them and the load average (the machine is shared).
#
# Usage: bench/survey-compare.sh [ROUNDS=3] [RUNTIME_S=5]
#   env: INNOTUNE=path/to/binary (default: cargo build --release),
#        SIZE_MB=512 (each loop device's file), VDA=0|1, BACKING=disk|ram
# Needs root (losetup), fio, python3. Cleans up on every exit path: the
# loop devices go back to scheduler none, are detached, files removed.
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
RUNTIME=${2:-5}
SIZE_MB=${SIZE_MB:-512}
VDA=${VDA:-0}
BACKING=${BACKING:-disk}
case "$BACKING" in disk|ram) ;; *) echo "survey-compare: BACKING must be disk or ram" >&2; exit 2 ;; esac

if [ -z "${INNOTUNE:-}" ]; then
  cargo build --release -q
  INNOTUNE="${CARGO_TARGET_DIR:-target}/release/innotune"
fi
command -v fio >/dev/null || { echo "survey-compare: fio is not installed (apt-get install fio)" >&2; exit 2; }

. bench/lib.sh
bench_workdir survey-compare
bench_hugepages 24
DATA=$WORK
if [ "$BACKING" = ram ]; then
  DATA=$WORK/ram
  bench_tmpfs "$DATA" $((2 * SIZE_MB + 64))
fi
LOOPS=()
for n in a b; do
  dd if=/dev/urandom of="$DATA/$n" bs=1M count="$SIZE_MB" status=none
  sync "$DATA/$n"
  bench_loop "$DATA/$n"
  LOOPS+=("$LOOP")
done

python3 - "$INNOTUNE" "$ROUNDS" "$RUNTIME" "$SIZE_MB" "$VDA" "$BACKING" "${LOOPS[@]}" <<'PY'
import datetime, json, statistics, subprocess, sys, time

innotune, rounds, runtime, size_mb, vda, backing = sys.argv[1:7]
loops = sys.argv[7:9]
rounds, runtime = int(rounds), int(runtime)
devs = loops + (["/dev/vda"] if vda == "1" else [])
MiB = 1048576.0

def survey(args):
    t0 = time.monotonic()
    out = subprocess.run([innotune, "--format", "json", "bench", "--survey", *args,
                          "--runtime", "%ds" % runtime], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["result"]["survey"], time.monotonic() - t0

def fio(targets, huge=False):
    cmd = ["fio", "--readonly", "--direct=1", "--rw=read", "--bs=1M", "--iodepth=16",
           "--ioengine=io_uring", "--time_based", "--runtime=%d" % runtime, "--output-format=json"]
    if huge:
        cmd.append("--mem=mmaphuge")
    for i, t in enumerate(targets):
        cmd += ["--name=j%d" % i, "--filename=" + t]
    t0 = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - t0
    return [j["read"]["bw_bytes"] / MiB for j in json.loads(out)["jobs"]], wall, cmd

res = {d: {"innotune": [], "fio": [], "fio_huge": []} for d in devs}
agg = {"innotune": [], "fio": []}
walls = {"alone": [], "parallel": [], "fio_alone": [], "fio_parallel": []}
fio_cmd = None
for r in range(rounds):
    def run_innotune():
        s, _ = survey(devs)
        for c in s["classes"]:
            for d in c["disks"]:
                seq = next(f for f in d["alone"] if f["job"] == "seq-read-1m-qd16")
                res[d["device"]]["innotune"].append(seq["bw_bytes_per_s"] / MiB)
            if c["class"] == "loop":
                a = next(x for x in c["parallel"]["aggregate"] if x["job"] == "seq-read-1m-qd16")
                agg["innotune"].append(a["bw_bytes_per_s"] / MiB)
                walls["alone"].append(c["alone_wall_s"])
                walls["parallel"].append(c["parallel"]["wall_s"])
    def run_fio():
        global fio_cmd
        alone = 0.0
        for d in devs:
            bw, wall, fio_cmd = fio([d])
            res[d]["fio"].append(bw[0])
            if d in loops:
                alone += wall
            res[d]["fio_huge"].append(fio([d], huge=True)[0][0])
        bw, wall, _ = fio(loops)
        agg["fio"].append(sum(bw))
        walls["fio_alone"].append(alone)
        walls["fio_parallel"].append(wall)
    order = [run_fio, run_innotune] if r % 2 == 0 else [run_innotune, run_fio]
    for fn in order:
        fn()
    print("round %d: " % (r + 1) + "; ".join("%s innotune %.0f fio %.0f fio-huge %.0f MiB/s" % (
        d, res[d]["innotune"][-1], res[d]["fio"][-1], res[d]["fio_huge"][-1]) for d in devs),
        file=sys.stderr, flush=True)

med = statistics.median
load = open("/proc/loadavg").read().split()[:3]
fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
lines = ["", "## survey-compare (%s), %s UTC" % (backing, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")), "",
         "Sequential 1 MiB reads at depth 16 (O_DIRECT, io_uring), read-only: `innotune bench --survey` "
         "(its `seq-read-1m-qd16` figure, each device alone) vs `fio --readonly` on the same device; "
         "%d rounds x %d s per job, the tool going first alternating; medians. Devices: two loop devices "
         "(--direct-io=on) on %d MiB files of random bytes %s%s. "
         "%s; 2 CPUs; load average at the end %s. "
         "fio-huge is the same fio job with `--mem=mmaphuge` (buffers on 2 MiB huge pages, as innotune's "
         "are for a buffer set of 2 MiB or more): the like-for-like peer. "
         "Target: ratio within 0.95..1.05." % (
             rounds, runtime, int(size_mb),
             "on a tmpfs (RAM: the tools' own cost decides)" if backing == "ram"
             else "in /var/tmp (the same virtio disk backs both)", ", and /dev/vda itself (the mounted root disk)" if vda == "1" else "",
             fio_ver, " ".join(load)), "",
         "| device | fio MiB/s | fio-huge MiB/s | innotune MiB/s | ratio vs fio | ratio vs fio-huge | fio runs | fio-huge runs | innotune runs |",
         "|---|---:|---:|---:|---:|---:|---|---|---|"]
for d in devs:
    f, h, i = med(res[d]["fio"]), med(res[d]["fio_huge"]), med(res[d]["innotune"])
    lines.append("| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s | %s | %s |" % (
        d, f, h, i, i / f, i / h, ", ".join("%.0f" % x for x in res[d]["fio"]),
        ", ".join("%.0f" % x for x in res[d]["fio_huge"]),
        ", ".join("%.0f" % x for x in res[d]["innotune"])))
fa, ia = med(agg["fio"]), med(agg["innotune"])
lines += ["", "Both loop devices at once (class aggregate): fio %.0f MiB/s, innotune %.0f MiB/s (ratio %.3f). "
          "innotune's survey of the loop class: both devices alone took %.1f s (median; 4 jobs x %d s each, "
          "one device after the other), both at once %.1f s: %.2f of the sum (target: the time of one "
          "device, %.2f of the sum). fio, sequential job only: alone %.1f s summed, at once %.1f s." % (
              fa, ia, ia / fa, med(walls["alone"]), runtime, med(walls["parallel"]),
              med(walls["parallel"]) / med(walls["alone"]), 1.0 / len(loops),
              med(walls["fio_alone"]), med(walls["fio_parallel"])),
          "",
          "Reproduce (as root): `BACKING=%s SIZE_MB=%s VDA=%s bench/survey-compare.sh %d %d`; innotune ran "
          "`innotune --format json bench --survey %s --runtime %ds`, fio ran `%s`." % (
              backing, size_mb, vda, rounds, runtime, " ".join(devs), runtime, " ".join(fio_cmd)), ""]
with open(__import__("os").environ["BENCH_LOG"], "a") as f:
    f.write("\n".join(lines))
print("\n".join(lines))
PY
