//! Statistics behind every verdict: medians, bootstrap confidence intervals.
