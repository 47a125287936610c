"""Latency statistics: nearest-rank percentiles over exact integer samples."""

import math


def percentile(sorted_values, p):
    """Nearest-rank percentile (p in 0..100) of an ascending list."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def describe(values):
    """count, min, p50, p99, p99.9, max, mean of a list of numbers."""
    v = sorted(values)
    if not v:
        return {"count": 0}
    return {
        "count": len(v),
        "min": v[0],
        "p50": percentile(v, 50),
        "p99": percentile(v, 99),
        "p99.9": percentile(v, 99.9),
        "max": v[-1],
        "mean": round(sum(v) / len(v), 1),
    }
