"""The irq-sensor's event log (one JSON object a line) -> figures.

Latencies come from the device's virtual-clock stamps, never from guest
clocks: latency = ack stamp - t_raise, in ns, as the device computed it.
"""

import json

from irqrig.stats import describe

STAGES = ("hard", "thread", "user")
BURST_GAP_NS = 20_000_000


def read_events(path):
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                events.append(json.loads(line))
            except ValueError:
                # A partial last line when QEMU was killed; anything else is a bug.
                events.append({"ev": "corrupt", "line": n})
    return events


def loss_bursts(times, gap_ns=BURST_GAP_NS):
    """Lost samples closer than gap_ns to the previous one form one burst
    (one stretch in which nobody drained the latch): [[first, last] ns]."""
    bursts = []
    for t in sorted(times):
        if bursts and t - bursts[-1][1] <= gap_ns:
            bursts[-1][1] = t
        else:
            bursts.append([t, t])
    return bursts


def latencies(events):
    """Per-stage latency samples (ns) that measure the kernel: a sample
    raised without an interrupt (drop_every) is taken when the next
    interrupt comes, so its delay measures the fault and is left out.
    The one accessor for verdicts, figures and plots."""
    lat = {s: [] for s in STAGES}
    no_irq = set()
    for e in events:
        ev = e.get("ev")
        if ev == "raise":
            (no_irq.discard if e.get("irq") else no_irq.add)(e["seq"])
        elif ev == "ack" and e["seq"] not in no_irq:
            lat[e["stage"]].append(e["lat"])
    return lat


def summarize(path):
    events = read_events(path)
    lat = latencies(events)
    stamps = {}            # seq -> {"raise": t, stage: t}
    counts = {"raised": 0, "irq": 0, "dropped": 0, "spurious": 0, "bad_acks": 0,
              "stale_acks": 0, "lost_deadline": 0, "lost_overflow": 0,
              "corrupt": 0, "host_late": 0, "log_full": 0}
    bad_ack_reasons = {}
    order_errors = 0
    for e in events:
        ev = e.get("ev")
        if ev == "raise":
            counts["raised"] += 1
            counts["irq" if e.get("irq") else "dropped"] += 1
            stamps[e["seq"]] = {"raise": e["t"]}
        elif ev == "ack":
            s = stamps.setdefault(e["seq"], {})
            s[e["stage"]] = e["t"]
        elif ev == "lost":
            counts["lost_" + e.get("why", "deadline")] += 1
        elif ev == "spurious":
            counts["spurious"] += 1
        elif ev == "bad_ack":
            counts["bad_acks"] += 1
            why = "%s: %s" % (e.get("stage"), e.get("why", "?"))
            bad_ack_reasons[why] = bad_ack_reasons.get(why, 0) + 1
        elif ev == "stale_ack":
            counts["stale_acks"] += 1
        elif ev == "corrupt":
            counts["corrupt"] += 1
        elif ev == "late":
            counts["host_late"] += 1
        elif ev == "log_full":          # the device stopped logging at its cap
            counts["log_full"] += 1
    # t_raise <= hard <= thread <= user for every sample that reached a stage.
    for s in stamps.values():
        seq_t = [s.get(k) for k in ("raise",) + STAGES]
        seen = [t for t in seq_t if t is not None]
        if seen != sorted(seen) or (None in seq_t and any(
                t is not None for t in seq_t[seq_t.index(None):])):
            order_errors += 1
    counts["lost"] = counts["lost_deadline"] + counts["lost_overflow"]
    bursts = loss_bursts([e["t"] for e in events if e.get("ev") == "lost"])
    return {
        "counts": counts,
        "bad_ack_reasons": bad_ack_reasons,
        "loss_bursts": len(bursts),
        "loss_burst_spans_ns": bursts[:5000],
        "stage_order_errors": order_errors,
        "latency_ns": {s: describe(v) for s, v in lat.items()},
    }
