#!/usr/bin/env bash
# fio vs innotune bench on the same jobs, same file, same device.
#
# Makes a loop device (direct I/O) on a file under /var/tmp, puts ext4 on it,
# lays out one file per job with innotune, then runs fio and innotune on that
# very file, alternating (ABBA) for several rounds. Medians of IOPS, CPU per
# I/O and p99 latency, with innotune/fio ratios, are appended to
# bench/log/<UTC date>.md with the command that reproduces them.
#
# CPU per I/O is measured the same way for both tools: user+sys CPU of the
# whole process tree (getrusage(RUSAGE_CHILDREN) around the run) divided by
# the I/Os the tool reports. fio runs with --norandommap, which is what
# innotune does (uniform block-aligned offsets drawn with replacement).
#
# Usage: bench/fio-compare.sh [ROUNDS=3] [RUNTIME_S=10]
#   env: INNOTUNE=path/to/binary (default: cargo build --release),
#        SIZE_MB=1024 (file per job; the loop device holds 4 of them),
#        ONLY=job[,job...] (run just these jobs),
#        FIO_THREAD=1 (fio's jobs as threads of one process, `--thread`, as
#        innotune's are; fio's default is one process per job),
#        BACKING=disk|ram|cache: the loop device's file on /var/tmp (the real
#        disk, default) or on a tmpfs (device time ~0; needs 3*SIZE_MB of
#        RAM). `cache` is `ram` with both tools reading buffered (--direct=0)
#        from files held in the page cache, read jobs only: no device and no
#        kernel worker below the tool at all, so each tool's own cost per I/O
#        (and the copy out of the cache, the same for both) decides. On a
#        2-CPU VM a RAM-backed loop device is not that: its worker chain runs
#        beside the tool and sets the rate (RESULTS.md, write-trace).
# Needs root (losetup, mount), fio, python3. Cleans up on every exit path.
set -euo pipefail
# Results go to the day's log (bench/log/<UTC date>.md keeps the summary and the index).
export BENCH_LOG=${BENCH_LOG:-$(cd "$(dirname "$0")" && pwd)/log/$(date -u +%F).md}
mkdir -p "$(dirname "$BENCH_LOG")"
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
RUNTIME=${2:-10}
SIZE_MB=${SIZE_MB:-1024}
SIZE="${SIZE_MB}m"
BACKING=${BACKING:-disk}
case $BACKING in
  disk|ram|cache) ;;
  *) echo "fio-compare: BACKING=$BACKING is not one of disk, ram, cache" >&2; exit 2 ;;
esac

if [ -z "${INNOTUNE:-}" ]; then
  cargo build --release -q
  INNOTUNE="${CARGO_TARGET_DIR:-target}/release/innotune"
fi
command -v fio >/dev/null || { echo "fio-compare: fio is not installed (apt-get install fio)" >&2; exit 2; }

. bench/lib.sh
bench_workdir fio-compare
MNT="$WORK/mnt"
BACKFILE="$WORK/backing"
if [ "$BACKING" = ram ] || [ "$BACKING" = cache ]; then
  bench_tmpfs "$WORK/ram" $((4 * SIZE_MB + 600))
  BACKFILE="$WORK/ram/backing"
fi
truncate -s "$((4 * SIZE_MB + 512))M" "$BACKFILE"
bench_loop "$BACKFILE"
bench_ext4 "$LOOP" "$MNT"

python3 - "$INNOTUNE" "$MNT" "$ROUNDS" "$RUNTIME" "$SIZE" "$LOOP" "$BACKING" <<'PY'
import datetime, json, os, resource, statistics, subprocess, sys, time

innotune, mnt, rounds, runtime, size, loop, backing = sys.argv[1:8]
rounds, runtime = int(rounds), int(runtime)
direct = "0" if backing == "cache" else "1"
fio_thread = os.environ.get("FIO_THREAD") == "1"

# name, rw, bs, iodepth, numjobs, engine (innotune name, fio name)
JOBS = [
    ("randread-qd32-uring", "randread", "16k", 32, 1, "io_uring", "io_uring"),
    ("randread-16threads-sync", "randread", "16k", 1, 16, "sync", "psync"),
    ("randwrite-qd16-uring", "randwrite", "16k", 16, 1, "io_uring", "io_uring"),
    # Issue 17: small reads at a deep queue from two threads, where the
    # tool's own per-I/O cost decides on fast devices.
    ("randread-4k-qd128-2jobs", "randread", "4k", 128, 2, "io_uring", "io_uring"),
]

# ONLY=name[,name...]: run just these jobs (a focused re-run of one job with
# more rounds); the default runs them all.
if os.environ.get("ONLY"):
    only = os.environ["ONLY"].split(",")
    unknown = sorted(set(only) - {j[0] for j in JOBS})
    if unknown:
        sys.exit("fio-compare: ONLY names no job %s; the jobs are %s" % (
            ", ".join(unknown), ", ".join(j[0] for j in JOBS)))
    JOBS = [j for j in JOBS if j[0] in only]
if backing == "cache":
    # Buffered writes would only dirty the cache and leave the flush to a
    # kernel thread mid-run: the cache mode compares reads.
    JOBS = [j for j in JOBS if "write" not in j[1]]
    if not JOBS:
        sys.exit("fio-compare: BACKING=cache runs the read jobs only; ONLY named none")

def cpu_ticks():
    # /proc/stat's cpu line: user nice system idle iowait irq softirq steal.
    return [int(v) for v in open("/proc/stat").readline().split()[1:9]]

sys.path.insert(0, "bench")
from threadstat import HZ, snapshot, unbound_kworker
import devstat

# The block devices under the files (the loop device, and for BACKING=disk
# the disk under its backing file), read around every run: how many requests
# each tool kept in flight at each layer, and how long each took there.
DEVS = devstat.devices(mnt) if backing != "cache" else []

def worker_ticks():
    # CPU ticks of every kworker of the unbound pools ("kworker/u8:3"): the
    # loop device's work items run there (with other unbound work, so this
    # is an upper bound on the loop's worker). Selecting the threads named
    # after the loop's workqueue ("-loop0") is no lower bound worth having:
    # a kworker takes the name of the workqueue it ran last, and most that
    # ran the loop's work between two snapshots were named otherwise at
    # both (bench/log/<UTC date>.md 2026-11-27 10:26). Far below 100 % of one CPU,
    # the loop's worker is not what limits the device.
    return {tid: t for tid, (comm, t) in snapshot()[1].items() if unbound_kworker(comm)}

def worker_share(a, b, secs):
    ticks = sum(tb - a.get(tid, 0) for tid, tb in b.items())
    return 100.0 * ticks / HZ / max(secs, 1e-9)

def timed(cmd):
    w0 = worker_ticks()
    timed.dev = devstat.snapshot(DEVS)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = cpu_ticks()
    c0 = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    c1 = time.monotonic()
    t1 = cpu_ticks()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed.dev = (timed.dev, devstat.snapshot(DEVS))
    worker = worker_share(w0, worker_ticks(), c1 - c0)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # The hypervisor's share of this VM's CPU time during the run (steal):
    # on a shared VM it moves a RAM-backed run's IOPS by tens of percent.
    d = [b - a for a, b in zip(t0, t1)]
    steal = 100.0 * d[7] / max(sum(d), 1)
    return json.loads(out), cpu, (steal, worker)

def innotune_cmd(j):
    name, rw, bs, depth, nj, eng, _ = j
    return [innotune, "--format", "json", "bench", "--name", name, "--rw", rw, "--bs", bs,
            "--iodepth", str(depth), "--numjobs", str(nj), "--ioengine", eng, "--direct=" + direct,
            "--size", size, "--runtime", str(runtime), "--directory", mnt]

def fio_cmd(j):
    name, rw, bs, depth, nj, _, eng = j
    return ["fio", "--name=" + name, "--filename=" + os.path.join(mnt, "innotune-%s.0" % name),
            "--rw=" + rw, "--bs=" + bs, "--iodepth=%d" % depth, "--numjobs=%d" % nj,
            "--ioengine=" + eng, "--direct=" + direct, "--size=" + size, "--time_based",
            "--runtime=%d" % runtime, "--norandommap", "--group_reporting",
            "--lat_percentiles=1", "--output-format=json"] + (["--thread"] if fio_thread else [])

def warm(j):
    # BACKING=cache: every page of the job's file in the page cache before
    # each run (a no-op copy when it already is), outside the timed part.
    if backing == "cache":
        with open(os.path.join(mnt, "innotune-%s.0" % j[0]), "rb") as f:
            while f.read(1 << 20):
                pass

def run_innotune(j):
    warm(j)
    r, cpu, (steal, worker) = timed(innotune_cmd(j))
    job = r["result"]["result"]["jobs"][0]
    d = job.get("read") or job["write"]
    return (d["iops_per_s"], cpu * 1e9 / max(d["total_ios"], 1), d["clat"]["p99_ns"] / 1000.0, steal, worker,
            devstat.delta(*timed.dev, d["runtime_s"]))

def run_fio(j):
    warm(j)
    r, cpu, (steal, worker) = timed(fio_cmd(j))
    job = r["jobs"][0]
    d = job["read"] if job["read"]["total_ios"] else job["write"]
    # fio's lat (issue -> completion) spans what innotune times: for io_uring,
    # fio's clat starts only after the submitting system call.
    pct = d["lat_ns"].get("percentile") or d["clat_ns"]["percentile"]
    return (d["iops"], cpu * 1e9 / max(d["total_ios"], 1), pct["99.000000"] / 1000.0, steal, worker,
            devstat.delta(*timed.dev, d["runtime"] / 1000.0))

# Lay out every job's file once (innotune writes it; fio then uses the same file).
for j in JOBS:
    c = innotune_cmd(j)
    # A size-based run of one block lays the file out (--runtime 0 is refused).
    i = c.index("--runtime")
    del c[i:i + 2]
    c += ["--io_size", j[2]]
    # Laid out with O_DIRECT in every mode: a buffered layout (cache mode)
    # would leave gigabytes dirty for writeback to flush during the runs.
    c = [a if not a.startswith("--direct=") else "--direct=1" for a in c]
    subprocess.run(c, check=True, capture_output=True)

res = {j[0]: {"fio": [], "innotune": []} for j in JOBS}
for r in range(rounds):
    for j in JOBS:
        order = [("fio", run_fio), ("innotune", run_innotune)]
        if r % 2:
            order.reverse()
        for tool, fn in order:
            v = fn(j)
            res[j[0]][tool].append(v)
            print("round %d %-26s %-8s IOPS %9.0f  CPU %6.0f ns/IO  p99 %8.1f us  steal %4.1f %%  kworker/u %5.1f %%" % (r + 1, j[0], tool, *v[:5])
                  + "".join("  %s: in flight %.1f, %.0f us" % (dn, x[devstat.IN_FLIGHT], x[devstat.TIME])
                            for dn, x in zip(DEVS, v[5])),
                  file=sys.stderr, flush=True)

def med(tool, name, i):
    return statistics.median(v[i] for v in res[name][tool])

load = open("/proc/loadavg").read().split()[:3]
fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
lines = ["", "## fio-compare (%s), %s UTC" % (backing, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")), "",
         "Loop device %s (--direct-io=on) on a file %s, ext4; %s; %d rounds x %d s, ABBA order; "
         "medians. CPU = user+sys of the whole process tree / I/Os. p99 = fio's lat_ns (issue to completion, "
         "--lat_percentiles=1), the span innotune's clat_ns covers. Load average at end: %s. "
         "Targets: IOPS ratio >= 1.00 (issue 17; 0.95 before it), CPU ratio <= 1.00, p99 ratio within 0.80..1.20." % (
             loop, {"disk": "in /var/tmp (disk)", "ram": "on tmpfs (RAM)",
                   "cache": "on tmpfs, both tools reading buffered (--direct=0) from files held in the page cache "
                            "(no device below the tool: its own cost per I/O decides)"}[backing],
             fio_ver + (" with --thread (its jobs as threads of one process, as innotune's)" if fio_thread else ""),
             rounds, runtime, " ".join(load)), "",
         "| job | fio IOPS | innotune IOPS | ratio | fio CPU ns/IO | innotune CPU ns/IO | ratio | fio p99 us | innotune p99 us | ratio |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for j in JOBS:
    n = j[0]
    fi, ii = med("fio", n, 0), med("innotune", n, 0)
    fc, ic = med("fio", n, 1), med("innotune", n, 1)
    fp, ip = med("fio", n, 2), med("innotune", n, 2)
    lines.append("| %s | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f | %.1f | %.1f | %.3f |" % (
        n, fi, ii, ii / fi, fc, ic, ic / fc, fp, ip, ip / fp))
# Paired view and its verdict: bench/paired.py (shared with the engine A/B scripts).
from paired import MARGIN, hodges_lehmann, verdict
lines += ["", "Paired per round (innotune/fio IOPS of the two back-to-back runs of the same round; Hodges–Lehmann "
          "estimate with the exact 95 %% Wilcoxon signed-rank CI, on log ratios; non-inferiority margin %d %%, "
          "fixed before the run):" % round(MARGIN * 100), "",
          "| job | per-round ratios | estimate | 95 % CI | innotune ahead | verdict |",
          "|---|---|---:|---|---:|---|"]
QUIET = 5.0  # % steal: a round is quiet when both its runs stayed below it (fixed before the run)
quiet_rows = []
for j in JOBS:
    n = j[0]
    pairs = list(zip(res[n]["fio"], res[n]["innotune"]))
    ratios = [i[0] / f[0] for f, i in pairs]
    est, ci = hodges_lehmann(ratios)
    lines.append("| %s | %s | %.3f | %s | %d of %d | %s |" % (
        n, " ".join("%.2f" % r for r in ratios), est,
        "%.3f–%.3f" % ci if ci else "–", sum(r > 1.0 for r in ratios), len(ratios), verdict(ci)))
    q = [i[0] / f[0] for f, i in pairs if f[3] < QUIET and i[3] < QUIET]
    if len(q) == len(ratios):
        quiet_rows.append("| %s | all %d rounds quiet | | | | |" % (n, len(q)))
    elif q:
        qe, qci = hodges_lehmann(q)
        quiet_rows.append("| %s | %s | %.3f | %s | %d of %d | %s |" % (
            n, " ".join("%.2f" % r for r in q), qe, "%.3f–%.3f" % qci if qci else "–",
            sum(r > 1.0 for r in q), len(q), verdict(qci)))
    else:
        quiet_rows.append("| %s | no quiet round | | | | |" % n)
# Secondary analysis, fixed before the run: the same test on the quiet
# rounds only. The hypervisor's steal hits the two runs of a round unevenly
# (one at 25 %, the other at 6 %), and such a round's ratio says more about
# the host than about the tools.
lines += ["", "Quiet rounds only (both runs' host CPU steal below %.0f %%; the same test, a secondary analysis):" % QUIET, "",
          "| job | per-round ratios | estimate | 95 % CI | innotune ahead | verdict |",
          "|---|---|---:|---|---:|---|"] + quiet_rows
# Steal: the share of this VM's CPU time the hypervisor took during each
# run (/proc/stat). Pairing cancels what two back-to-back runs share; a
# round whose two runs saw different steal is noise the CI has to absorb.
steal_parts = []
for j in JOBS:
    n = j[0]
    fs, ins = [v[3] for v in res[n]["fio"]], [v[3] for v in res[n]["innotune"]]
    steal_parts.append("%s fio %.1f %%, innotune %.1f %% (max %.1f %%)" % (
        n, statistics.median(fs), statistics.median(ins), max(fs + ins)))
lines += ["", "Host CPU steal during the runs (/proc/stat; median per tool): " + "; ".join(steal_parts) + "."]
# The loop device's worker (upper bound): at ~100 % of one CPU it, not the
# tool, would set the rate, and a tool that spends less CPU per I/O could
# not turn that into IOPS.
worker_parts = []
for j in JOBS:
    n = j[0]
    fw, iw = [v[4] for v in res[n]["fio"]], [v[4] for v in res[n]["innotune"]]
    worker_parts.append("%s fio %.0f %%, innotune %.0f %% (range %.0f–%.0f %%)" % (
        n, statistics.median(fw), statistics.median(iw), min(fw + iw), max(fw + iw)))
lines += ["", "Unbound kernel workers, where the loop device's work runs (all kworker/u* threads, so an upper bound "
          "on the loop's worker; CPU time over the run's wall time, as % of one CPU; median per tool): "
          + "; ".join(worker_parts) + "."]
# Per layer, paired like IOPS: the in-flight ratio over the time-per-request
# ratio is the rate ratio at that layer (Little's law). When innotune keeps
# more requests in flight at a device than fio (CI above 1) and the rates
# are level, that device completes what it is given at its own pace: it,
# not the tool, sets the rate, and a faster tool cannot raise it.
if DEVS:
    lines += ["", "Per layer (bench/devstat.py): requests in flight at each device under the files, mean over the "
              "tool's runtime, of the job's depth (iodepth x numjobs), and the mean time per request there; "
              "paired innotune/fio ratios with their 95 % CI. IOPS ratio = in-flight ratio / time ratio.", "",
              "| job | device | fio in flight | innotune in flight | in flight, innotune/fio | fio us/request | innotune us/request | time, innotune/fio | reading |",
              "|---|---|---:|---:|---|---:|---:|---|---|"]
    for j in JOBS:
        n, depth = j[0], j[3] * j[4]
        pairs = list(zip(res[n]["fio"], res[n]["innotune"]))
        _, ci_iops = hodges_lehmann([i[0] / f[0] for f, i in pairs])
        for k, dn in enumerate(DEVS):
            q = hodges_lehmann([i[5][k][devstat.IN_FLIGHT] / max(f[5][k][devstat.IN_FLIGHT], 1e-9) for f, i in pairs])
            t = hodges_lehmann([i[5][k][devstat.TIME] / max(f[5][k][devstat.TIME], 1e-9) for f, i in pairs])
            fmt = lambda e: "%.3f (%s)" % (e[0], "%.3f–%.3f" % e[1] if e[1] else "–")
            # Only where IOPS is not shown faster: a faster tool needs no
            # reading, and fewer in flight with each served faster (the sync
            # threads on RAM) is how it got there.
            reading = ""
            if ci_iops and ci_iops[0] <= 1.0:
                if q[1] and q[1][0] > 1.0:
                    reading = ("innotune offers the device more, at the same rate: the device sets it"
                               if ci_iops[1] >= 1.0 else
                               "innotune offers the device more, and it completes fewer: the device sets it")
                elif q[1] and q[1][1] < 1.0:
                    reading = "innotune keeps fewer here"
            lines.append("| %s | %s | %.1f of %d | %.1f of %d | %s | %.0f | %.0f | %s | %s |" % (
                n, dn, statistics.median(f[5][k][devstat.IN_FLIGHT] for f, _ in pairs), depth,
                statistics.median(i[5][k][devstat.IN_FLIGHT] for _, i in pairs), depth, fmt(q),
                statistics.median(f[5][k][devstat.TIME] for f, _ in pairs),
                statistics.median(i[5][k][devstat.TIME] for _, i in pairs), fmt(t), reading))
lines += ["", "Reproduce (as root): `%s%sBACKING=%s SIZE_MB=%s bench/fio-compare.sh %d %d`. For the first job innotune ran "
          "`innotune %s` and fio ran `%s`." % ("ONLY=%s " % os.environ["ONLY"] if os.environ.get("ONLY") else "",
                                              "FIO_THREAD=1 " if fio_thread else "",
                                              backing, size[:-1], rounds, runtime,
                                              " ".join(innotune_cmd(JOBS[0])[1:]).replace(mnt, "$MNT"),
                                              " ".join(fio_cmd(JOBS[0])).replace(mnt, "$MNT")), ""]
with open(__import__("os").environ["BENCH_LOG"], "a") as f:
    f.write("\n".join(lines))
print("\n".join(lines))
PY
