"""Plots of the IF tracker's figures (results.json "hardoff"), for report.py.

  hardoff-sites-<scenario>.png  per-site longest hard-off window, per run
  hardoff-hist-<scenario>.png   distribution of kernel hard-off window lengths
"""

import os

from irqrig import report

SITES = 12


def _label(run):
    label = run["variant"]
    if run.get("params"):
        label += " " + ",".join("%s=%s" % (k.split(".")[-1], v)
                                for k, v in run["params"].items())
    if run.get("repeat"):
        label += " r%d" % run["repeat"]
    return label


def sites_plot(name, runs, out):
    runs = [r for r in runs if ((r.get("figures") or {}).get("hardoff") or {}).get("sites")]
    if not runs:
        return None
    plt = report._plt()
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 0.35 * SITES * len(runs) + 1),
                             squeeze=False)
    for ax, r in zip(axes[:, 0], runs):
        sites = r["figures"]["hardoff"]["sites"][:SITES]
        names = [s.get("at") or s["site"] for s in sites][::-1]
        ax.barh(range(len(sites)), [s["max_ns"] / 1000.0 for s in sites][::-1],
                color=["tab:red" if s["violations"] else "tab:blue" for s in sites][::-1])
        ax.set_yticks(range(len(sites)))
        ax.set_yticklabels([n[:60] for n in names], fontsize=7)
        ax.set_xlabel("longest hard-off window (us, %s clock)" % r["figures"]["hardoff"]["clock"])
        ax.set_title("%s: %s" % (name, _label(r)), fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def hist_plot(name, runs, out):
    runs = [r for r in runs if ((r.get("figures") or {}).get("hardoff") or {}).get("hist_ns")]
    if not runs:
        return None
    plt = report._plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in runs:
        hist = r["figures"]["hardoff"]["hist_ns"]
        xs = [max(lower, 1) / 1000.0 for lower, _ in hist]
        ax.step(xs, [count for _, count in hist], where="post", label=_label(r))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("hard-off window length (us, bucket lower bound)")
    ax.set_ylabel("windows")
    ax.set_title("%s: kernel hard-off windows" % name)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def plots(name, runs, plots_dir):
    made = []
    for fn, stem in ((sites_plot, "hardoff-sites"), (hist_plot, "hardoff-hist")):
        p = fn(name, runs, os.path.join(plots_dir, "%s-%s.png" % (stem, report._safe(name))))
        if p:
            made.append(p)
    return made
