#!/usr/bin/env bash
# Issue 45: tracing at device rates. What a live `innotune trace` costs a
# load far faster than a disk: 4 KiB random reads at depth 32 from two
# jobs (`innotune bench`, io_uring, O_DIRECT) on ext4 on a loop device
# (direct I/O) over a file on a tmpfs, i.e. RAM. Three arms a round, in an
# order that rotates (A B C, B C A, C A B, …):
#   plain     the load alone
#   innotune  the load while `innotune trace MNT` captures it (tracefs:
#             every block event of the loop device, Q2C/D2C and the rest)
#   bpftrace  the load while bpftrace runs a biolatency-style script on the
#             same device (block_rq_issue → block_rq_complete, a log2
#             histogram in the kernel: the anchor a DBA would reach for)
# Per round: each arm's IOPS; the ratios innotune/plain and bpftrace/plain,
# with the paired Hodges-Lehmann estimate and its exact 95 % interval over
# the rounds (bench/paired.py); innotune's events per second and the events
# it lost (lost_events, which it reports, never drops silently); its Q2C median against bpftrace's median bucket.
# Appends to bench/log/<UTC date>.md.
#
# Usage (as root): ROUNDS=5 RUNTIME=10 bench/trace-rate.sh
#   INNOTUNE=path (default target/release/innotune)
set -euo pipefail
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
INNOTUNE=${INNOTUNE:-${CARGO_TARGET_DIR:-$HERE/../target}/release/innotune}
[ -x "$INNOTUNE" ] || { echo "build first: cargo build --release ($INNOTUNE)" >&2; exit 2; }
command -v bpftrace >/dev/null || { echo "bpftrace not installed (apt-get install bpftrace)" >&2; exit 2; }
. "$HERE/lib.sh"
bench_workdir trace-rate
# bpftrace finds tracepoints through tracefs; innotune trace mounts it for
# its own run and unmounts it after. Mounted here for the whole bench (and
# unmounted on exit) when it is not: innotune then uses the mount it finds.
if [ ! -d /sys/kernel/tracing/events/block ]; then
  mount -t tracefs tracefs /sys/kernel/tracing
  bench_undo "umount /sys/kernel/tracing"
fi
bench_ram_ext4 1200
DEV=${LOOP#/dev/}
MAJMIN=$(cat "/sys/block/$DEV/dev")
# The kernel's dev_t in block tracepoints: major << 20 | minor.
KDEV=$(( (${MAJMIN%:*} << 20) | ${MAJMIN#*:} ))
cat > "$WORK/biolatency.bt" <<BT
tracepoint:block:block_rq_issue /args->dev == $KDEV/ { @start[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /args->dev == $KDEV && @start[args->sector]/ {
  @ns = hist(nsecs - @start[args->sector]); @done = count(); delete(@start[args->sector]);
}
BT
"$INNOTUNE" bench --name r --rw randread --bs 4k --iodepth 32 --numjobs 2 --direct=1 \
  --size 512m --io_size 4k --directory "$MNT" > /dev/null   # lay out

WORK=$WORK MNT=$MNT INNOTUNE=$INNOTUNE ROUNDS=$ROUNDS RUNTIME=$RUNTIME HERE=$HERE DEV=$DEV MAJMIN=$MAJMIN \
python3 - <<'PY'
import json, os, re, signal, statistics, subprocess, sys, time
sys.path.insert(0, os.environ["HERE"])
from paired import hodges_lehmann, verdict

work, mnt, inno = os.environ["WORK"], os.environ["MNT"], os.environ["INNOTUNE"]
rounds, runtime = int(os.environ["ROUNDS"]), int(os.environ["RUNTIME"])
dev, majmin = os.environ["DEV"], os.environ["MAJMIN"].replace(":", ",")

def load():
    out = subprocess.run([inno, "bench", "--name", "r", "--rw", "randread", "--bs", "4k",
                          "--iodepth", "32", "--numjobs", "2", "--direct=1", "--size", "512m",
                          "--runtime", f"{runtime}s", "--directory", mnt, "--format", "json"],
                         check=True, capture_output=True).stdout
    r = json.loads(out)["result"]["result"]
    return sum(j.get("read", {}).get("iops_per_s", 0) for j in r["jobs"])

def started(pred, what):
    for _ in range(400):
        if pred():
            return
        time.sleep(0.05)
    sys.exit(f"{what} did not start")

def plain():
    return load(), {}

def innotune():
    p = subprocess.Popen([inno, "trace", mnt, "--format", "json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    started(lambda: os.path.exists(f"/sys/kernel/tracing/instances/innotune-{p.pid}/trace_pipe"),
            "innotune trace")
    iops = load()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    if p.returncode not in (0, 130):
        sys.exit(f"innotune trace failed: {err.decode()}")
    r = json.loads(out)["result"]
    ln = r["lines"]
    d = next((d for d in r["devices"] if d["device"] == majmin), None)
    return iops, {"events": r["events"], "span_s": r["span_s"],
                  # lost_events is already the larger of the pages' count
                  # and overrun + dropped (docs/json-trace.md).
                  "lost": ln["lost_events"],
                  "q2c_p50_ns": d["all"]["q2c"]["p50_ns"] if d else None,
                  "completed": d["all"]["bios_completed"] if d else 0}

def bpf():
    p = subprocess.Popen(["bpftrace", f"{work}/biolatency.bt"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()   # "Attaching N probes..."
    if "Attaching" not in line:
        sys.exit(f"bpftrace did not start: {line}{p.stderr.read()}")
    iops = load()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    # @ns: [lo, hi)  count |@@@|  with K/M suffixes on the bounds.
    unit = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    buckets, done = [], 0
    for l in out.splitlines():
        m = re.match(r"\[(\d+)([KMG]?), (\d+)([KMG]?)\)\s+(\d+)", l)
        if m:
            buckets.append((int(m[1]) * unit[m[2]], int(m[3]) * unit[m[4]], int(m[5])))
        m = re.match(r"@done: (\d+)", l)
        if m:
            done = int(m[1])
    total = sum(c for _, _, c in buckets)
    acc, med = 0, None
    for lo, hi, c in buckets:
        acc += c
        if med is None and acc * 2 >= total:
            med = (lo, hi)
    return iops, {"completed": done, "median_bucket_ns": med}

arms = [("plain", plain), ("innotune", innotune), ("bpftrace", bpf)]
load()  # warm
res = {a: [] for a, _ in arms}
info = {a: [] for a, _ in arms}
for r in range(rounds):
    order = arms[r % 3:] + arms[:r % 3]
    for name, fn in order:
        iops, extra = fn()
        res[name].append(iops)
        info[name].append(extra)
        print(f"round {r+1} {name:8s} {iops:10.0f} IOPS {extra}", file=sys.stderr)

def ratio(a):
    est, ci = hodges_lehmann([x / y for x, y in zip(res[a], res["plain"])])
    cis = f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "—"
    return est, cis, verdict(ci, a)

ie, ic, iv = ratio("innotune")
be, bc, bv = ratio("bpftrace")
ev = [i["events"] / max(i["span_s"], 1e-9) for i in info["innotune"]]
lost = sum(i["lost"] for i in info["innotune"])
events = sum(i["events"] for i in info["innotune"])
q2c = statistics.median([i["q2c_p50_ns"] for i in info["innotune"] if i["q2c_p50_ns"]] or [0])
meds = [i["median_bucket_ns"] for i in info["bpftrace"] if i["median_bucket_ns"]]
mb = statistics.median_low(meds) if meds else None
load_avg = open("/proc/loadavg").read().split()[0]
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
text = (f"\n### trace-rate ({stamp})\n\n"
        f"`ROUNDS={rounds} RUNTIME={runtime} bench/trace-rate.sh`: 4 KiB random reads, depth 32, 2 jobs, "
        f"on ext4 on a loop device over tmpfs ({dev}); arms plain / innotune trace / bpftrace biolatency, "
        f"rotating order. Load average at the end {load_avg} ({os.cpu_count()} CPUs).\n\n"
        f"| arm | median IOPS | ratio to plain (paired HL) | 95 % CI | verdict |\n|---|---:|---:|---|---|\n"
        f"| plain | {statistics.median(res['plain']):.0f} | — | — | — |\n"
        f"| innotune trace | {statistics.median(res['innotune']):.0f} | {ie:.3f} | {ic} | {iv} |\n"
        f"| bpftrace | {statistics.median(res['bpftrace']):.0f} | {be:.3f} | {bc} | {bv} |\n\n"
        f"innotune: {statistics.median(ev):.0f} events/s captured (median over rounds), {events} events, "
        f"{lost} lost (lost_events: the larger of the pages' count and overrun + dropped; all reported); Q2C p50 {q2c/1000:.1f} µs. "
        f"bpftrace: issue→complete median bucket "
        f"{'%.1f–%.1f µs' % (mb[0]/1000, mb[1]/1000) if mb else '—'}.\n")
with open(os.environ.get("BENCH_LOG"), "a") as f:
    f.write(text)
print(text)
PY
