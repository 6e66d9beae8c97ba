"""Paired comparison of two tools' per-round results, shared by the bench scripts.

Each round runs the two tools back to back on the same job, so the ratio
within a round cancels the device's slow drift (on this VM the hypervisor
swings a disk run by +-15-20 %, more than any gap between the tools). The
ratios are compared in log space with the Wilcoxon signed-rank test: the
Hodges-Lehmann estimate (median of the Walsh averages) and its exact
distribution-free 95 % confidence interval. It assumes only that a round's
noise is symmetric in log space, and it needs about 5 % more rounds than a
t-interval where the noise is normal, against the sign test's 57 %. The
exact null distribution is a small dynamic program: no scipy on a fresh
Debian.
"""
import math
import statistics

MARGIN = 0.03  # non-inferiority margin, fixed before the run: a tool 3 % slower is "worse"


def hodges_lehmann(ratios, conf=0.95):
    d = [math.log(r) for r in ratios]
    n = len(d)
    walsh = sorted((d[i] + d[j]) / 2 for i in range(n) for j in range(i, n))
    big_n = len(walsh)
    # counts[w] = how many of the 2^n sign patterns give signed-rank sum w.
    counts = [1] + [0] * big_n
    for rank in range(1, n + 1):
        for w in range(big_n, rank - 1, -1):
            counts[w] += counts[w - rank]
    # k = the critical value + 1: P(W <= k - 1) <= (1 - conf) / 2. The
    # interval is then the k-th smallest to the k-th largest Walsh average.
    k, cum = 0, 0.0
    while cum + counts[k] / 2.0 ** n <= (1 - conf) / 2:
        cum += counts[k] / 2.0 ** n
        k += 1
    est = math.exp(statistics.median(walsh))
    if k == 0:
        return est, None  # too few rounds for an interval at this confidence
    return est, (math.exp(walsh[k - 1]), math.exp(walsh[big_n - k]))


def verdict(ci, who="innotune"):
    """The verdict on a ratio's CI: `who` (the numerator) faster, slower,
    level within the margin, or undecided."""
    if ci is None:
        return "too few rounds"
    lo, hi = ci
    if lo > 1.0:
        return who + " faster"
    if hi < 1.0:
        return who + " slower" + (" (by more than the margin)" if hi < 1.0 - MARGIN else "")
    if lo >= 1.0 - MARGIN:
        return "level: not slower (CI above %.2f)" % (1.0 - MARGIN)
    return "undecided: CI reaches below %.2f" % (1.0 - MARGIN)

