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
Usage: python3 write-trace.py TRACE LABEL
"""
import re
import statistics
import sys

ring = re.compile(r"\s(\d+\.\d+): (io_uring_submit_req|io_uring_complete): .*?user_data 0x([0-9a-f]+)")
block = re.compile(r"\s(\d+\.\d+): (block_rq_issue|block_rq_complete): \d+,\d+ \S+ (?:\d+ )?(?:\(\) )?(\d+) \+")
work = re.compile(r"\s(\d+\.\d+): io_uring_local_work_run: .*?count (\d+)")

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


def dist(x):
    if not x:
        return "-"
    x = sorted(x)
    return "%6.1f %6.1f %6.1f" % (statistics.mean(x), x[len(x) // 2], x[int(len(x) * 0.9)])


rate = subs / max((last or 0) - (first or 0), 1) * 1e6
print("%-9s %8.0f  %s | %s | %s | %4.1f" % (sys.argv[2], rate, dist(to_cqe), dist(react), dist(device),
                                          statistics.mean(batch) if batch else 0))
