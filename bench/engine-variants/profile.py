"""Summarise profile.sh's runs: microseconds of host CPU per I/O, by kind of
thread and by function, fio against innotune.

Usage: profile.py F tool:round:base [...]
  base.json is the tool's JSON report, base.txt the `perf report -F
  sample,comm,sym -t TAB` lines of its run, base.cpu the `-F sample,cpu,comm`
  lines. F is the sampling rate per CPU.

A sample stands for 1/F s of one CPU, so samples / F / I/Os is the CPU time
per I/O. "idle" is the idle task (swapper): time a CPU had nothing to run,
which on this 2-CPU VM is the slack the tool and the loop's chain leave.
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from threadstat import thread_kind  # noqa: E402

F = float(sys.argv[1])


def ios_of(path, tool):
    d = json.load(open(path))
    if tool == "fio":
        x = d["jobs"][0]
        x = x["write"] if x["write"]["total_ios"] else x["read"]
        return x["total_ios"], x["iops"]
    x = d["result"]["result"]["jobs"][0]
    x = x.get("write") or x["read"]
    return x["total_ios"], x["iops_per_s"]


def kind(comm, tool):
    """bench/threadstat.py's kind of thread, with both kworker pools as one
    (the loop's worker, and for writes ext4's completions) and the tool
    counted only in its own runs."""
    k = thread_kind(comm)
    if k.startswith("kworker"):
        return "kworker"
    if k == "tool" and (comm == "fio") != (tool == "fio"):
        return "other"
    return k


# per tool: kind -> us/IO summed over rounds; (kind, sym) -> us/IO; rounds
by_kind = defaultdict(lambda: defaultdict(float))
by_sym = defaultdict(lambda: defaultdict(float))
by_cpu = defaultdict(lambda: defaultdict(float))
rounds = defaultdict(int)
per_run = []
iops = defaultdict(list)
for arg in sys.argv[2:]:
    tool, r, base = arg.split(":", 2)
    n, rate = ios_of(base + ".json", tool)
    rounds[tool] += 1
    iops[tool].append(rate)
    for line in open(base + ".txt"):
        p = line.rstrip("\n").split("\t")
        if len(p) < 3 or not p[0].strip().isdigit():
            continue
        samples, comm, sym = int(p[0]), p[1].strip(), p[2].strip()
        us = samples / F / max(n, 1) * 1e6
        k = kind(comm, tool)
        by_kind[tool][k] += us
        # "[k] func" or "[.] func": keep the space (kernel or user) with the name
        by_sym[tool][(k, sym)] += us
    # Each CPU's samples by kind of thread. CPU numbers mean nothing from
    # one run to the next (the loop's unbound kworker can settle on either),
    # so each run's CPUs are named by role: the one where the loop's chain
    # (kworker + ksoftirqd) took the most samples is "chain", the rest "other".
    cpu = defaultdict(lambda: defaultdict(int))
    for line in open(base + ".cpu"):
        p = line.rstrip("\n").split("\t")
        if len(p) < 3 or not p[0].strip().isdigit():
            continue
        cpu[p[1].strip()][kind(p[2].strip(), tool)] += int(p[0])
    if cpu:
        chain = max(cpu, key=lambda c: cpu[c]["kworker"] + cpu[c]["ksoftirqd"])
        for c, ks in cpu.items():
            role = "chain" if c == chain else "other"
            for k, v in ks.items():
                by_cpu[tool][(role, k)] += v
        pct = lambda c, k: 100.0 * cpu[c][k] / (sum(cpu[c].values()) or 1)
        others = [c for c in cpu if c != chain]
        per_run.append("| %s | %s | %.0f | %.0f | %.0f | %.0f | %s |" % (
            r, tool, rate, pct(chain, "tool"), pct(chain, "kworker") + pct(chain, "ksoftirqd"),
            pct(chain, "idle"), " / ".join("%.0f" % pct(c, "idle") for c in others) or "-"))

tools = [t for t in ("fio", "innotune") if t in rounds]
mean = lambda t, d: {k: v / rounds[t] for k, v in d.items()}
K = {t: mean(t, by_kind[t]) for t in tools}
S = {t: mean(t, by_sym[t]) for t in tools}
for t in tools:
    print("%-8s IOPS per run: %s" % (t, " ".join("%.0f" % x for x in iops[t])))
print()
print("| kind of thread | " + " | ".join("%s µs/IO" % t for t in tools) + " | innotune − fio |")
print("|---|" + "---:|" * (len(tools) + 1))
kinds = ["tool", "kworker", "ksoftirqd", "other", "idle"]
for k in kinds + ["all but idle"]:
    if k == "all but idle":
        v = [sum(x for kk, x in K[t].items() if kk != "idle") for t in tools]
    else:
        v = [K[t].get(k, 0.0) for t in tools]
    d = "%+.2f" % (v[-1] - v[0]) if len(v) == 2 else ""
    print("| %s | %s | %s |" % (k, " | ".join("%.2f" % x for x in v), d))
print()
print("Each CPU's samples by kind of thread, as % of that CPU's samples (all rounds). \"chain\" is")
print("the CPU where the loop's kworker and ksoftirqd took the most samples in that run:")
print()
print("| tool | CPU | " + " | ".join(kinds) + " |")
print("|---|---|" + "---:|" * len(kinds))
for t in tools:
    for role in ("chain", "other"):
        tot = sum(v for (r, _), v in by_cpu[t].items() if r == role) or 1
        print("| %s | %s | %s |" % (t, role, " | ".join("%.0f" % (100 * by_cpu[t].get((role, k), 0) / tot) for k in kinds)))
print()
print("Per run: the tool's share of the chain's CPU, and each CPU's idle share (%):")
print()
print("| round | tool | IOPS | tool on chain CPU | kworker + ksoftirqd on chain CPU | chain CPU idle | other CPU idle |")
print("|---:|---|---:|---:|---:|---:|---:|")
for line in per_run:
    print(line)
if len(tools) == 2:
    keys = set(S["fio"]) | set(S["innotune"])
    rows = sorted(keys, key=lambda key: -abs(S["innotune"].get(key, 0) - S["fio"].get(key, 0)))
    print()
    print("Functions whose CPU per I/O differs most (the idle task left out):")
    print()
    print("| thread | function | fio µs/IO | innotune µs/IO | innotune − fio |")
    print("|---|---|---:|---:|---:|")
    shown = 0
    for key in rows:
        if key[0] == "idle":
            continue
        a, b = S["fio"].get(key, 0.0), S["innotune"].get(key, 0.0)
        print("| %s | %s | %.3f | %.3f | %+.3f |" % (key[0], key[1].replace("|", "/"), a, b, b - a))
        shown += 1
        if shown == 25:
            break
