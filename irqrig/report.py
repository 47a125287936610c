"""`runner.py report RESULTS`: plots and the summary of a result set.

  latency-<scenario>.png   per-stage latency distributions, variants overlaid
  hog-<scenario>.png       hard-stage latency against the hog length (sweeps)
  deadline-<scenario>.png  lost samples against the deadline (sweeps)
  coverage-<scenario>.png  campaigns: soft sections / instructions hit, per subsystem

Latencies come from each run's device event log (virtual-clock stamps),
through sensorlog.latencies(), the accessor the verdicts use: a plot shows
exactly the samples a verdict judged.  Sweep plots read figures.get().
"""

import os
import re

from irqrig import figures, results, sensorlog

STAGES = ("hard", "thread", "user")


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def _latencies(run):
    """Per-stage latencies in us, as the verdicts counted them."""
    path = (run.get("logs") or {}).get("sensor")
    if not path or not os.path.exists(path):
        return None
    lat = sensorlog.latencies(sensorlog.read_events(path))
    return {s: [v / 1000.0 for v in lat[s]] for s in STAGES}


def latency_plot(name, runs, out):
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    drawn = False
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, run in enumerate(runs):
        lat = _latencies(run)
        if not lat:
            continue
        for ax, stage in zip(axes, STAGES):
            v = [x for x in lat[stage] if x > 0]
            if v:
                ax.hist(v, bins=60, histtype="step", log=True, color=colors[i % len(colors)],
                        label="%s (n=%d)" % (run["variant"], len(v)))
                drawn = True
    if not drawn:
        plt.close(fig)
        return None
    for ax, stage in zip(axes, STAGES):
        ax.set_title("%s stage" % stage)
        ax.set_xlabel("latency (us, device virtual clock)")
        ax.set_ylabel("samples")
        if ax.get_legend_handles_labels()[0]:   # a stage with no samples has none
            ax.legend(fontsize=7)
    fig.suptitle(name)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def sweep_plot(name, runs, param, figure, ylabel, out, xscale=1.0, xlabel=None):
    plt = _plt()
    series = {}
    for run in runs:
        x = (run.get("params") or {}).get(param)
        y = figure(run)
        if x is None or y is None:
            continue
        series.setdefault(run["variant"], []).append((x * xscale, y))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=variant)
    ax.set_xlabel(xlabel or param)
    ax.set_ylabel(ylabel)
    ax.set_title(name)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _hard(key):
    def get(run):
        v = figures.get(run, "hard " + key)
        return None if v is None else v / 1000.0
    return get


def _lost(run):
    return figures.get(run, "lost")


def make(path):
    """Write the plots for a result set; returns their paths."""
    data = results.load(path)
    run_dir = path if os.path.isdir(path) else os.path.dirname(path)
    plots = os.path.join(run_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    by_name = {}
    for r in data["runs"]:
        by_name.setdefault(r.get("scenario_name", r["scenario"]), []).append(r)
    made = []
    for name, runs in sorted(by_name.items()):
        params = {k for r in runs for k in (r.get("params") or {})}
        if "driver.hog_length_us" in params:
            for key in ("p50", "max"):
                p = sweep_plot(name, runs, "driver.hog_length_us", _hard(key),
                               "hard-stage latency %s (us)" % key,
                               os.path.join(plots, "hog-%s-%s.png" % (_safe(name), key)),
                               xlabel="hog length (us)")
                made += [p] if p else []
        if "sensor.deadline_ns" in params:
            p = sweep_plot(name, runs, "sensor.deadline_ns", _lost, "samples lost",
                           os.path.join(plots, "deadline-%s.png" % _safe(name)),
                           xscale=1e-3, xlabel="deadline (us)")
            made += [p] if p else []
        if not params:
            p = latency_plot(name, runs, os.path.join(plots, "latency-%s.png" % _safe(name)))
            made += [p] if p else []
        if any((r.get("figures") or {}).get("campaign") for r in runs):
            p = coverage_plot(name, runs, os.path.join(plots, "coverage-%s.png" % _safe(name)))
            made += [p] if p else []
    return made


def coverage_plot(name, runs, out):
    """A campaign's coverage per subsystem: the share of soft sections and
    of their instructions where an interrupt landed, one bar per run."""
    plt = _plt()
    series = []
    for r in runs:
        c = (r.get("figures") or {}).get("campaign")
        if not c or not c["coverage"]:
            continue
        per = {}
        for sec in c["coverage"]:
            d = per.setdefault(sec["subsystem"], [0, 0, 0, 0])
            d[0] += 1
            d[1] += bool(sec["landed"])
            d[2] += sec["insns"]
            d[3] += sec["landed"]
        series.append(("%s (%s)" % (r["variant"], c["mode"]), per))
    if not series:
        return None
    subs = sorted({k for _, per in series for k in per})
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.1 * len(subs) * 2), 4.5))
    width = 0.8 / len(series)
    for i, (label, per) in enumerate(series):
        xs = [j + i * width for j in range(len(subs))]
        for ax, (num, den) in zip(axes, ((1, 0), (3, 2))):
            ax.bar(xs, [100.0 * per.get(k, [0] * 4)[num] / max(1, per.get(k, [1] * 4)[den])
                        for k in subs], width, label=label)
    for ax, what in zip(axes, ("sections with a landed interrupt",
                               "instructions with a landed interrupt")):
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(subs))])
        ax.set_xticklabels(subs, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("% of soft " + what.split()[0])
        ax.set_title(what)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7)
    fig.suptitle("%s: soft-section coverage" % name)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
