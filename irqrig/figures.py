"""A run's figures by name: the one accessor for results tables, compare
and report (all read what the verdicts computed, never the logs again).

Every figure here is "lower is better".
"""

# name -> (path into a run's "figures", unit)
FIGURES = {
    "hard p50": (("sensor", "latency_ns", "hard", "p50"), "ns"),
    "hard p99": (("sensor", "latency_ns", "hard", "p99"), "ns"),
    "hard max": (("sensor", "latency_ns", "hard", "max"), "ns"),
    "thread p99": (("sensor", "latency_ns", "thread", "p99"), "ns"),
    "user p99": (("sensor", "latency_ns", "user", "p99"), "ns"),
    "lost": (("sensor", "counts", "lost"), "samples"),
    "cyclictest max": (("cyclictest_max_us",), "us"),
    "gdb violations": (("gdb", "violations"), ""),
    "console reports": (None, ""),
}


def get(run, name):
    """The figure's value in a run, or None when the run did not measure it."""
    path, _ = FIGURES[name]
    figs = run.get("figures") or {}
    if path is None:            # console reports: the sum of every kind
        c = figs.get("console") or {}
        return sum(c.values()) if c else None
    for key in path:
        if not isinstance(figs, dict) or key not in figs:
            return None
        figs = figs[key]
    return figs


def unit(name):
    return FIGURES[name][1]


def latency_count(run, stage):
    return ((((run.get("figures") or {}).get("sensor") or {}).get("latency_ns") or {})
            .get(stage) or {}).get("count", 0)
