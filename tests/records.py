"""Run records for verdict tests: what irqrig/boot.py would have written."""

import json
import os
import tomllib

from irqrig import scenario


def point(text):
    (p,) = scenario.parse(tomllib.loads(text), "t.toml")
    return p


def sensor_read_output(samples=100, gaps=0, missing=0, rc_timed_out=False, bad_values=0):
    return json.dumps({"tool": "sensor-read", "samples": samples, "gaps": gaps,
                       "missing": missing, "bad_values": bad_values,
                       "ring_overflows": 0, "elapsed_s": 1.0, "timed_out": rc_timed_out,
                       "interrupted": False, "counters": {}})


def record(p, log_dir, steps=(), variant="6.12-rt", outcome="completed", sensor_log=None,
           host=None, guest=True, console=""):
    """A run record for scenario point p, its files in log_dir."""
    logs = {"console": os.path.join(log_dir, "console.log")}
    with open(logs["console"], "w", encoding="utf-8") as f:
        f.write(console)
    if sensor_log is not None:
        logs["sensor"] = sensor_log
    rec = {"scenario": p.label, "scenario_name": p.name, "scenario_file": "t.toml",
           "params": p.params, "repeat": 0, "config": p.data, "variant": variant,
           "logs": logs, "steps": list(steps), "outcome": outcome,
           "kernel": {"release": "6.12.0"}}
    if guest:
        rec["guest"] = {"release": "6.12.0", "cpus": str(p["qemu"]["cpus"]),
                        "model": "rt" if variant.startswith("6.12-rt") else "preempt",
                        "irqsoft": "0"}
    if p["driver"]["load"]:
        rec["driver"] = {"command": "insmod", "rc": 0, "output": "", "dev_rc": 0}
    if host is not None:
        rec["host"] = host
    if outcome != "completed":
        rec["error"] = "guest command timed out after 5 s: sleep 600"
    return rec
