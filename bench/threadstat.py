"""Snapshots of the host's CPU time, per thread, for the bench scripts that
ask which threads did a run's work (fio-compare.sh, engine-variants/
loop-worker.sh and thread-cpu.sh), and `thread_kind()`, the one naming of
threads by kind that engine-variants/write-trace.py and profile.py share. Plain /proc reads, no dependency: the
scripts must run on a fresh Debian with python3 only.

Imported: `snapshot()` gives /proc/stat's cpu line (user nice system idle
iowait irq softirq steal, in ticks) and {tid: (comm, utime + stime ticks)}.
Run as a script: prints the same, a "cpu ..." line then "tid comm ticks"
lines (spaces in comm as "_"), for shell scripts to diff two files with
`load()`.
"""
import glob
import os

HZ = os.sysconf("SC_CLK_TCK")


def snapshot():
    cpu = [int(v) for v in open("/proc/stat").readline().split()[1:9]]
    threads = {}
    for p in glob.glob("/proc/[0-9]*/task/[0-9]*/stat"):
        try:
            s = open(p).read()
        except OSError:
            continue  # the thread ended between glob and open
        comm = s[s.index("(") + 1:s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        threads[p.split("/")[4]] = (comm.replace(" ", "_"), int(f[11]) + int(f[12]))
    return cpu, threads


def load(path):
    """A snapshot printed by running this file."""
    lines = open(path).read().splitlines()
    cpu = [int(v) for v in lines[0].split()[1:]]
    threads = {}
    for line in lines[1:]:
        tid, comm, ticks = line.split()
        threads[tid] = (comm, int(ticks))
    return cpu, threads


def unbound_kworker(comm):
    """A kworker of the unbound pools ("kworker/u8:3"), where a loop device's
    work runs, whatever it ran last."""
    return comm.startswith("kworker/u")


def thread_kind(comm):
    """A thread's comm as the kind of thread it is in a loop-device bench:
    "tool" (fio's "fio"; innotune's main thread and its I/O threads
    "bench-J-T"), "kworker/u" (the unbound pools, where a loop device's work
    runs), "kworker/N" (the per-CPU pools: ext4's direct-I/O write
    completions), "ksoftirqd" (block completions raised outside an
    interrupt), "idle" (the idle task, "swapper/N", which only a sampling
    profile sees) or "other"."""
    if comm in ("fio", "innotune") or comm.startswith("bench-"):
        return "tool"
    if unbound_kworker(comm):
        return "kworker/u"
    if comm.startswith("kworker/"):
        return "kworker/N"
    if comm.startswith("ksoftirqd"):
        return "ksoftirqd"
    if comm.startswith("swapper"):
        return "idle"
    return "other"


if __name__ == "__main__":
    cpu, threads = snapshot()
    print("cpu", " ".join(map(str, cpu)))
    for tid, (comm, ticks) in threads.items():
        print(tid, comm, ticks)
