# Engine variants and fio, alternating, on one file (issue 17), from a throwaway build.
# Build: git apply bench/engine-variants/uring-exp.patch && cargo build --release --bin innotune,
# copy the binary aside, git checkout src/bench/engine/uring.rs. Then, as root, on a RAM-backed
# loop device made for the run:
#   RW=randwrite QD=16 INNOTUNE=copy bench/engine-variants/variants-ab.sh 5 fio,default,nobufs 20
# or on a mount of your own, with MNT/innotune-rr.0 laid out (1 GiB):
#   MNT=... INNOTUNE=copy python3 bench/engine-variants/compare.py 5 fio,default,nobufs 20
# Variants (INNOTUNE_URING_EXP, see uring-exp.patch): default = the shipped ring; nodefer = no
# single issuer + deferred task running; nobufs = no registered buffers; nofiles = no registered
# files. A variant KEY=VALUE[+KEY=VALUE] sets those variables instead (reap-variants.patch: X_GE=1,
# X_SPIN=N, X_MIN=K). A variant args:FLAG[+FLAG] runs the shipped engine with those bench
# flags added (args:--mem=mmaphuge: buffers on huge pages), and fio:FLAG[+FLAG] runs fio with those
# flags added (fio:--fixedbufs+--registerfiles: fio with innotune's registered buffers and files).
# Any variant may end in @CPUS (fio@1, default@1): run under taskset -c CPUS.
# Each round runs every variant once, in turn, the order reversed every other round.
# Prints each run (IOPS, CPU per I/O, host CPU steal, each CPU's entries into idle per I/O), then per variant the medians and, against
# the first innotune variant and against fio, the paired per-round estimate with its 95 % CI
# (bench/paired.py), on all rounds and on the quiet ones (every run of the round below 5 % steal).
# Each run also reads the block-layer counters of the loop device under MNT and of the whole disk
# under its backing file (DISKS="loop0 vda" to name others), per layer: requests per second of the
# tool's own runtime, mean time per request and mean number in flight (bench/devstat.py says why).
import glob, json, os, resource, statistics, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from paired import hodges_lehmann, verdict
import devstat

mnt = os.environ["MNT"]; rt = sys.argv[1]; variants = sys.argv[2].split(","); rounds = int(sys.argv[3])
bs = os.environ.get("BS", "16k"); qd = os.environ.get("QD", "32"); rw = os.environ.get("RW", "randread")
nj = os.environ.get("NJ", "1")
QUIET = 5.0


def cpu_ticks():
    return [int(v) for v in open("/proc/stat").readline().split()[1:9]]


def idle_entries():
    # Entries into each CPU's idle states (cpuidle's per-state usage counters;
    # on this VM every one is a halt, a VM exit, since haltpoll's guest-side
    # polling is off: guest_halt_poll_ns 0).
    out = []
    for c in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpuidle")):
        out.append(sum(int(open(u).read()) for u in glob.glob(c + "/state*/usage")))
    return out


DEVS = devstat.devices(mnt)


def timed(cmd, env=None):
    b = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = cpu_ticks(); i0 = idle_entries(); s0 = devstat.snapshot(DEVS)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    t1 = cpu_ticks(); a = resource.getrusage(resource.RUSAGE_CHILDREN); i1 = idle_entries(); s1 = devstat.snapshot(DEVS)
    d = [y - x for x, y in zip(t0, t1)]
    timed.idle = [y - x for x, y in zip(i0, i1)]
    timed.dev = (s0, s1)
    return json.loads(out), (a.ru_utime - b.ru_utime) + (a.ru_stime - b.ru_stime), 100.0 * d[7] / max(sum(d), 1)


res = {}
print("uptime:", open("/proc/loadavg").read().strip(), flush=True)
for r in range(rounds):
    for v in (variants if r % 2 == 0 else variants[::-1]):
        # NAME@CPUS: the same variant run under `taskset -c CPUS` (every
        # thread of the tool on those CPUs, as fio's cpus_allowed would).
        name, _, cpus = v.partition("@")
        pin = ["taskset", "-c", cpus] if cpus else []
        if name == "fio" or name.startswith("fio:"):
            # fio:FLAG[+FLAG...]: fio with these flags added.
            extra = name[len("fio:"):].split("+") if name.startswith("fio:") else []
            j, cpu, steal = timed(pin + ["fio", "--name=rr", "--filename=" + mnt + "/innotune-rr.0", "--rw=" + rw, "--bs=" + bs,
                                   "--iodepth=" + qd, "--numjobs=" + nj, "--ioengine=io_uring", "--direct=1", "--size=1024m",
                                   "--time_based", "--runtime=" + rt, "--norandommap", "--group_reporting", "--output-format=json"] + extra)
            d = j["jobs"][0]; d = d["read"] if d["read"]["total_ios"] else d["write"]; iops = d["iops"]; n = d["total_ios"]
            secs = d["runtime"] / 1000.0
        else:
            env = dict(os.environ)
            extra = []
            if name.startswith("args:"):
                # args:FLAG[+FLAG...]: the shipped binary with these bench flags added.
                extra = name[len("args:"):].split("+")
            elif "=" in name:
                # KEY=VALUE[+KEY=VALUE...]: the switches of another throwaway
                # patch (reap-variants.patch: X_GE, X_SPIN, X_MIN).
                env.update(kv.split("=", 1) for kv in name.split("+"))
            else:
                env["INNOTUNE_URING_EXP"] = name
            env.setdefault("INNOTUNE_STATE_DIR", "/tmp/exp-state")
            j, cpu, steal = timed(pin + [os.environ["INNOTUNE"], "--format", "json", "bench", "--name", "rr", "--rw", rw, "--bs", bs,
                                   "--iodepth", qd, "--numjobs", nj, "--ioengine", "io_uring", "--direct=1", "--size", "1024m",
                                   "--runtime", rt, "--directory", mnt] + extra, env)
            d = j["result"]["result"]["jobs"][0]; d = d.get("read") or d["write"]; iops = d["iops_per_s"]; n = d["total_ios"]
            secs = d["runtime_s"]
        timed.dev = devstat.delta(*timed.dev, secs)
        res.setdefault(v, []).append((iops, cpu * 1e9 / max(n, 1), steal, timed.dev))
        print("round %d %-8s IOPS %7.0f  CPU %5.0f ns/IO  steal %4.1f %%  idle entries/IO %s%s" % (
            r + 1, v, iops, cpu * 1e9 / max(n, 1), steal, " ".join("%.2f" % (x / max(n, 1)) for x in timed.idle),
            "".join("  %s: %.0f/s, in flight %.1f, %.0f us, %.0f KiB" % (dn, rate, q, lat, kib)
                    for dn, (rate, lat, q, kib) in zip(DEVS, timed.dev))),
            flush=True)

for v, l in res.items():
    print("MED %-8s IOPS %7.0f  CPU %5.0f ns/IO  steal %4.1f %%" % (
        v, statistics.median(x[0] for x in l), statistics.median(x[1] for x in l), statistics.median(x[2] for x in l)))
    for k, dn in enumerate(DEVS):
        print("MED %-8s %s: %.0f requests/s, in flight %.2f, %.0f us per request, %.1f KiB per request" % (
            v, dn, statistics.median(x[3][k][0] for x in l), statistics.median(x[3][k][2] for x in l),
            statistics.median(x[3][k][1] for x in l),
            statistics.median(x[3][k][3] for x in l)))
quiet = [all(res[v][i][2] < QUIET for v in variants) for i in range(rounds)]
base = next((v for v in variants if v != "fio"), None)
for ref in [x for x in (base, "fio") if x in res] + [v for v in variants if v.startswith("fio@")]:
    for v in variants:
        if v == ref:
            continue
        for label, keep in (("all rounds", [True] * rounds), ("quiet rounds", quiet)):
            rat = [res[v][i][0] / res[ref][i][0] for i in range(rounds) if keep[i]]
            if not rat:
                print("PAIRED %s/%s %s: none" % (v, ref, label))
                continue
            est, ci = hodges_lehmann(rat)
            print("PAIRED %s/%s %s (%d): %.3f CI %s, ahead in %d; %s" % (
                v, ref, label, len(rat), est, "%.3f-%.3f" % ci if ci else "-", sum(x > 1 for x in rat), verdict(ci, v)))
        # The same pairing for each layer's requests in flight and their time: IOPS ratio
        # = in-flight ratio / time ratio at every layer the I/Os pass through.
        for k, dn in enumerate(DEVS):
            parts = []
            for what, idx in (("requests/s", 0), ("in flight", 2), ("time per request", 1)):
                est, ci = hodges_lehmann([res[v][i][3][k][idx] / res[ref][i][3][k][idx] for i in range(rounds)])
                parts.append("%s %.3f CI %s" % (what, est, "%.3f-%.3f" % ci if ci else "-"))
            print("PAIRED %s/%s %s (all rounds): %s" % (v, ref, dn, "; ".join(parts)))
print("uptime:", open("/proc/loadavg").read().strip())
