#!/usr/bin/env bash
# Issue 45: tracing at device rates. What a live `innotune trace` costs a
# load far faster than a disk: 4 KiB random reads at depth 32 from two
# jobs (`innotune bench`, io_uring, O_DIRECT) on ext4 on a loop device
# (direct I/O) over a file on a tmpfs, i.e. RAM. The arms of a round run
# in an order that rotates (A B C D, B C D A, …):
#   plain     the load alone
#   innotune  the load while `innotune trace MNT` captures it (tracefs:
#             every block event of the loop device, Q2C/D2C and the rest)
#   bpftrace  the load while bpftrace runs a biolatency-style script on the
#             same device (block_rq_issue → block_rq_complete, a log2
#             histogram in the kernel: the anchor a DBA would reach for)
#   kernel    the floor of any tracefs reader: an instance set up as
#             innotune's (the same events, device filter, buffer and clock)
#             drained by a minimal reader that throws the pages away, so the
#             ratio is what the tracepoints and the copy alone cost the load
#             (with no reader at all the kernel overwrites its oldest pages,
#             which measured dearer than reading them)
#   innotune-b  as innotune, with the binary INNOTUNE_B (an A/B of two builds)
# ARMS="plain innotune bpftrace kernel" (the default) picks and orders them.
# Per round: each arm's IOPS and machine CPU per I/O; each arm's ratios to
# plain, with the paired Hodges-Lehmann estimate and its exact 95 % interval
# over the rounds (bench/paired.py); innotune's events per second and the
# events it lost (lost_events, which it reports, never drops silently); its
# Q2C median against bpftrace's median bucket.
# Appends to bench/log/<UTC date>.md.
#
# RATE=N: the load is fio capped at N IOPS in all (--rate_iops N/2 a job)
# instead of as fast as the CPUs go: a device's rate with CPU to spare,
# where the cost shows in the machine's CPU per I/O, recorded for every arm
# (/proc/stat busy time over the load's run, the tracer's work included).
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
[ -z "${RATE:-}" ] || command -v fio >/dev/null || { echo "RATE needs fio (apt-get install fio)" >&2; exit 2; }
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

WORK=$WORK MNT=$MNT KDEV=$KDEV ARMS=${ARMS:-plain innotune bpftrace kernel} INNOTUNE=$INNOTUNE INNOTUNE_B=${INNOTUNE_B:-} RATE=${RATE:-} ROUNDS=$ROUNDS RUNTIME=$RUNTIME HERE=$HERE DEV=$DEV MAJMIN=$MAJMIN \
python3 - <<'PY'
import json, os, re, signal, statistics, subprocess, sys, time
sys.path.insert(0, os.environ["HERE"])
from paired import hodges_lehmann, verdict

work, mnt, inno = os.environ["WORK"], os.environ["MNT"], os.environ["INNOTUNE"]
rounds, runtime = int(os.environ["ROUNDS"]), int(os.environ["RUNTIME"])
dev, majmin = os.environ["DEV"], os.environ["MAJMIN"].replace(":", ",")

RATE = int(os.environ.get("RATE") or 0)
last_cpu = [0.0]

def busy_s():
    # The machine's busy time (all CPUs): /proc/stat's cpu line less idle and iowait.
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(f[:8]) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")

def load():
    b0 = busy_s()
    if RATE:
        # A device's rate rather than the CPUs' limit: fio's --rate_iops
        # (innotune bench has no rate cap), on the files innotune laid out.
        out = subprocess.run(["fio", "--name", "r", "--rw", "randread", "--bs", "4k", "--iodepth", "32",
                              "--numjobs", "2", "--direct", "1", "--size", "512m", "--ioengine", "io_uring",
                              "--runtime", f"{runtime}", "--time_based", "--rate_iops", f"{RATE // 2}",
                              "--directory", mnt, "--filename_format", "innotune-$jobname.$jobnum",
                              "--output-format", "json"],
                             capture_output=True)
        if out.returncode:
            sys.exit(f"fio failed: {out.stdout.decode()[-2000:]}{out.stderr.decode()[-2000:]}")
        out = out.stdout
        iops = sum(j["read"]["iops"] for j in json.loads(out)["jobs"])
    else:
        out = subprocess.run([inno, "bench", "--name", "r", "--rw", "randread", "--bs", "4k",
                              "--iodepth", "32", "--numjobs", "2", "--direct=1", "--size", "512m",
                              "--runtime", f"{runtime}s", "--directory", mnt, "--format", "json"],
                             check=True, capture_output=True).stdout
        r = json.loads(out)["result"]["result"]
        iops = sum(j.get("read", {}).get("iops_per_s", 0) for j in r["jobs"])
    # CPU µs of the whole machine per I/O over the load's run (the tracer's
    # own work inside that time included).
    last_cpu[0] = (busy_s() - b0) * 1e6 / max(iops * runtime, 1)
    return iops

def started(pred, what):
    for _ in range(400):
        if pred():
            return
        time.sleep(0.05)
    sys.exit(f"{what} did not start")

def plain():
    return load(), {}

def innotune(binary=inno):
    p = subprocess.Popen([binary, "trace", mnt, "--format", "json"], stdout=subprocess.PIPE,
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

EVENTS = ["block_bio_queue", "block_getrq", "block_rq_insert", "block_rq_issue",
          "block_rq_complete", "block_bio_backmerge", "block_bio_frontmerge"]

def put(path, value):
    with open(path, "w") as f:
        f.write(value)

# The least a reader can do: innotune's loop (poll every CPU's
# trace_pipe_raw for up to 100 ms, read each until it is empty) with the
# pages thrown away, not decoded.
DRAIN = r"""
import os, select, sys
fds = [os.open(p, os.O_RDONLY | os.O_NONBLOCK) for p in sys.argv[1:]]
poll = select.poll()
for fd in fds:
    poll.register(fd, select.POLLIN)
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    poll.poll(100)
    for fd in fds:
        while True:
            try:
                if not os.read(fd, 65536):
                    break
            except BlockingIOError:
                break
"""

def kernel():
    # The same instance innotune trace makes (src/trace/capture.rs: EVENTS,
    # BUFFER_KB, CLOCK, the dev filter), drained by DRAIN: what the
    # tracepoints and the copy alone cost the load.
    inst = f"/sys/kernel/tracing/instances/innotune-bench-{os.getpid()}"
    os.mkdir(inst)
    reader = None
    try:
        put(f"{inst}/buffer_size_kb", "8192")
        put(f"{inst}/trace_clock", "local")
        for e in EVENTS:
            put(f"{inst}/events/block/{e}/filter", f"dev == {os.environ['KDEV']}")
            put(f"{inst}/events/block/{e}/enable", "1")
        cpus = sorted(os.listdir(f"{inst}/per_cpu"))
        reader = subprocess.Popen([sys.executable, "-c", DRAIN] +
                                  [f"{inst}/per_cpu/{c}/trace_pipe_raw" for c in cpus],
                                  stdout=subprocess.PIPE, text=True)
        if reader.stdout.readline().strip() != "ready":
            sys.exit("the drain reader did not start")
        iops = load()
        for e in EVENTS:
            put(f"{inst}/events/block/{e}/enable", "0")
        read, lost = 0, 0
        for c in cpus:
            for l in open(f"{inst}/per_cpu/{c}/stats"):
                k, _, v = l.partition(":")
                if k.strip() == "read events":
                    read += int(v)
                if k.strip() in ("overrun", "dropped events"):
                    lost += int(v)
        return iops, {"read": read, "lost": lost}
    finally:
        if reader:
            reader.kill()
            reader.wait()
        os.rmdir(inst)

every = {"plain": plain, "innotune": innotune, "bpftrace": bpf, "kernel": kernel,
         "innotune-b": lambda: innotune(os.environ["INNOTUNE_B"])}
arms = [(a, every[a]) for a in os.environ["ARMS"].split()]
if "plain" not in os.environ["ARMS"].split():
    sys.exit("ARMS must include plain")
load()  # warm
res = {a: [] for a, _ in arms}
info = {a: [] for a, _ in arms}
for r in range(rounds):
    order = arms[r % len(arms):] + arms[:r % len(arms)]
    for name, fn in order:
        iops, extra = fn()
        extra["cpu_us_per_io"] = last_cpu[0]
        res[name].append(iops)
        info[name].append(extra)
        print(f"round {r+1} {name:8s} {iops:10.0f} IOPS {extra}", file=sys.stderr)

def ratio(a):
    est, ci = hodges_lehmann([x / y for x, y in zip(res[a], res["plain"])])
    cis = f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "—"
    return est, cis, verdict(ci, a)

def cpu(a):
    return statistics.median(i["cpu_us_per_io"] for i in info[a])

def cpu_ratio(a):
    est, ci = hodges_lehmann([x["cpu_us_per_io"] / y["cpu_us_per_io"]
                              for x, y in zip(info[a], info["plain"])])
    return f"{est:.3f} ({ci[0]:.3f}–{ci[1]:.3f})" if ci else f"{est:.3f}"

label = {"plain": "plain", "innotune": "innotune trace", "innotune-b": f"innotune trace ({os.environ.get('INNOTUNE_B')})",
         "bpftrace": "bpftrace", "kernel": "kernel: the instance, pages read and thrown away"}
load_avg = open("/proc/loadavg").read().split()[0]
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
names = [a for a, _ in arms]
text = (f"\n### trace-rate ({stamp})\n\n"
        f"`ROUNDS={rounds} RUNTIME={runtime} {f'RATE={RATE} ' if RATE else ''}ARMS=\"{' '.join(names)}\" bench/trace-rate.sh`: 4 KiB random reads, depth 32, 2 jobs, "
        f"{f'fio capped at {RATE} IOPS in all, ' if RATE else 'as fast as the CPUs go (innotune bench), '}"
        f"on ext4 on a loop device over tmpfs ({dev}); rotating order. "
        f"Load average at the end {load_avg} ({os.cpu_count()} CPUs).\n\n"
        f"| arm | median IOPS | ratio to plain (paired HL) | 95 % CI | verdict | machine CPU µs per I/O (median) | CPU per I/O to plain (paired HL, 95 % CI) |\n|---|---:|---:|---|---|---:|---|\n"
        f"| plain | {statistics.median(res['plain']):.0f} | — | — | — | {cpu('plain'):.2f} | — |\n")
for a in names:
    if a != "plain":
        e, c, v = ratio(a)
        text += f"| {label[a]} | {statistics.median(res[a]):.0f} | {e:.3f} | {c} | {v} | {cpu(a):.2f} | {cpu_ratio(a)} |\n"
text += "\n"
for a in ("innotune", "innotune-b"):
    if a in names:
        ev = [i["events"] / max(i["span_s"], 1e-9) for i in info[a]]
        lost = sum(i["lost"] for i in info[a])
        events = sum(i["events"] for i in info[a])
        q2c = statistics.median([i["q2c_p50_ns"] for i in info[a] if i["q2c_p50_ns"]] or [0])
        text += (f"{label[a]}: {statistics.median(ev):.0f} events/s captured (median over rounds), {events} events, "
                 f"{lost} lost (lost_events: the larger of the pages' count and overrun + dropped; all reported); "
                 f"Q2C p50 {q2c/1000:.1f} µs. ")
if "bpftrace" in names:
    meds = [i["median_bucket_ns"] for i in info["bpftrace"] if i["median_bucket_ns"]]
    mb = statistics.median_low(meds) if meds else None
    text += ("bpftrace: issue→complete median bucket "
             f"{'%.1f–%.1f µs' % (mb[0]/1000, mb[1]/1000) if mb else '—'}. ")
if "kernel" in names:
    text += (f"kernel: {sum(i['read'] for i in info['kernel'])} events read and thrown away, "
             f"{sum(i['lost'] for i in info['kernel'])} lost (overrun + dropped). ")
text += "\n"
with open(os.environ.get("BENCH_LOG"), "a") as f:
    f.write(text)
print(text)
PY
