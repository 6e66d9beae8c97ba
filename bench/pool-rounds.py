"""Pool the paired rounds of several fio-compare runs recorded in bench/log/*.md.

Each fio-compare entry holds, per job, the innotune/fio ratio of every round
(the two runs of a round are back to back, so slow drifts of the host cancel
within it). One run of 9 rounds leaves a 95 % CI about +-5 % wide on this
VM, too wide to tell "level" from "a little ahead". Rounds from several runs
of the same binary, backing and peer settings are the same experiment
repeated, so their ratios pool into one Hodges-Lehmann estimate with its
exact CI (bench/paired.py). This is a secondary analysis chosen after the
runs: RESULTS.md says so wherever it quotes one. The ratios are read as
recorded, to two decimals, so a single run's estimate here can differ from
its own entry's in the third decimal.

Runs whose command sets FIO_THREAD or BACKING other than the one asked are
left out (a different peer or device); so is anything outside the date and
the time window. The entries do not name the host's CPU (the readings
below them do): choose a window that holds one host type, or say that the
pool mixes them.

Usage: python3 bench/pool-rounds.py BACKING DATE [FROM [TO]]
       python3 bench/pool-rounds.py BACKING DATE FROM-TO [FROM-TO ...]
  e.g. python3 bench/pool-rounds.py ram 2026-11-27 10:00 14:05
       python3 bench/pool-rounds.py ram 2026-11-27 06:40-06:50 16:25-17:00
  (the second form pools several windows of one day, for a host type that
  came back later in the day)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired import hodges_lehmann, verdict  # noqa: E402

if len(sys.argv) < 3:
    sys.exit(__doc__.split("\n\n")[-1])
backing, day = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3 and "-" in sys.argv[3]:
    windows = [tuple(w.split("-", 1)) for w in sys.argv[3:]]
else:
    windows = [(sys.argv[3] if len(sys.argv) > 3 else "00:00",
                sys.argv[4] if len(sys.argv) > 4 else "23:59")]
log_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log")
text = "\n".join(open(os.path.join(log_dir, n)).read() for n in sorted(os.listdir(log_dir)) if n.endswith(".md"))
head = re.compile(r"^fio-compare \((\w+)\), (\d{4}-\d\d-\d\d) (\d\d:\d\d) UTC")

pool, runs = {}, {}
for entry in text.split("\n## ")[1:]:
    m = head.match(entry)
    if not m or m.group(1) != backing or m.group(2) != day:
        continue
    if not any(lo <= m.group(3) <= hi for lo, hi in windows):
        continue
    cmd = re.search(r"Reproduce \(as root\): `([^`]*)`", entry)
    if cmd is None or "FIO_THREAD=1" in cmd.group(1):
        continue
    table = re.search(r"Paired per round.*?\n\n(.*?)\n\n", entry, re.S)
    if table is None:
        continue
    for line in table.group(1).splitlines()[2:]:
        cells = [c.strip() for c in line.split("|")[1:-1]]
        ratios = [float(x) for x in cells[1].split()]
        pool.setdefault(cells[0], []).extend(ratios)
        runs.setdefault(cells[0], []).append(m.group(3))

if not pool:
    sys.exit("pool-rounds: no fio-compare (%s) entry of %s in %s (FIO_THREAD runs left out)" % (
        backing, day, ", ".join("%s-%s" % w for w in windows)))
print("| job | runs (UTC) | rounds | estimate | 95 % CI | innotune ahead | verdict |")
print("|---|---|---:|---:|---|---:|---|")
for job, ratios in pool.items():
    est, ci = hodges_lehmann(ratios)
    ahead = sum(r > 1 for r in ratios)
    print("| %s | %s | %d | %.3f | %s | %d of %d | %s |" % (
        job, ", ".join(runs[job]), len(ratios), est, "%.3f–%.3f" % ci if ci else "-",
        ahead, len(ratios), verdict(ci)))
