"""Parse one tracefs capture of write-trace.sh: where each I/O's time goes.

Per io_uring request (matched by user_data) and per loop-device request
(matched by sector) it prints the mean, median and p90 in microseconds of:
  submit -> CQE      io_uring_submit_req to io_uring_complete (the CQE is
                     posted when the tool next enters the kernel to reap:
                     the ring runs its deferred task work then);
  CQE -> resubmit    io_uring_complete to the next io_uring_submit_req of the
                     same user_data: the tool's own reaction;
  at the device      block_rq_issue to block_rq_complete on the loop device
                     (queued at the loop's worker, the copy into tmpfs, and
                     the completion softirq);
and how many requests one run of the ring's deferred work completed.
If the capture holds sched_wakeup and sched_stat_runtime events
(write-trace.sh WAKE=1), more lines give wakeups per I/O by kind of thread
and each CPU's time by kind of thread.
Usage: python3 write-trace.py TRACE LABEL
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from threadstat import thread_kind  # noqa: E402

ring = re.compile(r"\s(\d+\.\d+): (io_uring_submit_req|io_uring_complete): .*?user_data 0x([0-9a-f]+)")
block = re.compile(r"\s(\d+\.\d+): (block_rq_issue|block_rq_complete): \d+,\d+ \S+ (?:\d+ )?(?:\(\) )?(\d+) \+")
work = re.compile(r"\s(\d+\.\d+): io_uring_local_work_run: .*?count (\d+)")
wakeup = re.compile(r": sched_wakeup: comm=(\S+)")
runtime = re.compile(r"\[(\d+)\]\s+\S+\s+(\d+\.\d+): sched_stat_runtime: comm=(.+?) pid=(\d+) runtime=(\d+)")
# A task's comm as the kind of thread it is (bench/threadstat.py); the idle
# task never appears in these events.
KINDS = ("tool", "kworker/u", "kworker/N", "ksoftirqd", "other")
kind = thread_kind


wakes = dict.fromkeys(KINDS, 0)
# Per CPU: ns run per kind of thread; first and last timestamp of the capture.
ran = {}
t_first = t_last = None

sub, comp, issued = {}, {}, {}
to_cqe, react, device, batch = [], [], [], []
first = last = None
subs = 0
for line in open(sys.argv[1]):
    m = ring.search(line)
    if m:
        t, ev, ud = float(m.group(1)) * 1e6, m.group(2), m.group(3)
        if ev == "io_uring_submit_req":
            first = first or t
            last = t
            subs += 1
            if ud in comp:
                react.append(t - comp.pop(ud))
            sub[ud] = t
        else:
            if ud in sub:
                to_cqe.append(t - sub.pop(ud))
            comp[ud] = t
        continue
    m = block.search(line)
    if m:
        t, ev, sector = float(m.group(1)) * 1e6, m.group(2), m.group(3)
        if ev == "block_rq_issue":
            issued[sector] = t
        elif sector in issued:
            device.append(t - issued.pop(sector))
        continue
    m = work.search(line)
    if m:
        batch.append(int(m.group(2)))
        continue
    m = runtime.search(line)
    if m:
        cpu = m.group(1).lstrip("0") or "0"
        per = ran.setdefault(cpu, dict.fromkeys(KINDS, 0))
        per[kind(m.group(3))] += int(m.group(5))
        t = float(m.group(2)) * 1e9
        t_first = t if t_first is None else min(t_first, t)
        t_last = t if t_last is None else max(t_last, t)
        continue
    m = wakeup.search(line)
    if m:
        wakes[kind(m.group(1))] += 1
        continue


def dist(x):
    if not x:
        return "-"
    x = sorted(x)
    return "%6.1f %6.1f %6.1f" % (statistics.mean(x), x[len(x) // 2], x[int(len(x) * 0.9)])


rate = subs / max((last or 0) - (first or 0), 1) * 1e6
print("%-9s %8.0f  %s | %s | %s | %4.1f" % (sys.argv[2], rate, dist(to_cqe), dist(react), dist(device),
                                          statistics.mean(batch) if batch else 0))
if any(wakes.values()):
    n = max(subs, 1)
    print("%-9s wakeups/IO %s" % ("", " ".join("%.2f" % (wakes[k] / n) for k in KINDS)))
span = (t_last - t_first) if t_first is not None else 0
for cpu in sorted(ran, key=int):
    per = ran[cpu]
    busy = [100 * per[k] / span for k in KINDS]
    print("%-9s CPU %s: %s %4.1f" % ("", cpu, " ".join("%4.1f" % b for b in busy), max(0.0, 100 - sum(busy))))
