"""Host noise: what the host did to a run that no guest code caused.

Without icount the guest's clocks follow host time, so the host's own
interruptions are guest latency:
  stalls.py   vCPU threads kept runnable but off a CPU (schedstat)
  freezes.py  the host's CPUs stopped outright by its hypervisor (a probe)
This module starts both for a boot (Watch) and matches the sensor's loss
bursts against what they recorded (explain_losses), the one rule verdicts
use to tell the host's losses from the guest's.
"""

from irqrig.hostnoise import freezes, stalls


class Watch:
    """The host-noise probes of one boot.  vCPU stalls are sampled in
    every run without icount; host CPU freezes only matter to explain the
    sensor's loss bursts, so that probe runs only with a sensor."""

    def __init__(self, qemu_pid, freeze_log=None):
        self.stalls = stalls.VcpuWatch(qemu_pid).start()
        self.freezes = freezes.FreezeProbe(freeze_log).start() if freeze_log else None

    def stop(self, clock_offset_ns=None):
        """Stop the probes; their summary (results.json's figures.host).
        clock_offset_ns: host CLOCK_MONOTONIC minus device virtual time, from
        the device's clock-sync property (None: freezes are not matched)."""
        summary = self.stalls.stop()
        summary["clock_offset_ns"] = clock_offset_ns
        if self.freezes is not None:
            summary.update(self.freezes.stop())
        return summary


def explain_losses(bursts, n_bursts, host):
    """Match loss bursts ([first, last] device ns) against vCPU stalls and
    host CPU freezes.  Returns (every burst explained, text for people,
    {"loss_bursts_at_a_stall", "loss_bursts_in_a_freeze",
    "loss_bursts_explained"}).  The burst list must be complete (n_bursts)
    for the answer to be yes."""
    offset = host.get("clock_offset_ns")
    if offset is not None and "stall_clock_t0" in host:
        # On the host's clock a vCPU kept off its CPU is a freeze of that
        # vCPU: the same rule explains bursts by either.
        at_stall = freezes.explained(bursts, stalls.stall_spans(host), offset)
        how = "inside"
    else:
        at_stall = stalls.at_a_stall(bursts, host["stalls"])
        how = "within 100 ms of"
    text = "; the host kept a vCPU waiting >= %g ms %d times (max %g ms), %d of the " \
        "bursts %s such a stall" % (host["stall_threshold_ms"], host["vcpu_stalls"],
                                    host["vcpu_stall_max_ms"], sum(at_stall), how)
    counts = {"loss_bursts_at_a_stall": sum(at_stall)}
    frozen = [False] * len(bursts)
    if offset is not None and "freezes" in host:
        frozen = freezes.explained(bursts, host["freezes"], offset)
        counts["loss_bursts_in_a_freeze"] = sum(frozen)
        text += ("; host CPUs stood still >= %g ms %d times (max %g ms, %s), %d of the "
                 "bursts inside such a freeze" % (
                     host["freeze_threshold_ms"], host["host_cpu_freezes"],
                     host["host_cpu_freeze_max_ms"], host["probe"], sum(frozen)))
    explained = sum(1 for a, b in zip(at_stall, frozen) if a or b)
    counts["loss_bursts_explained"] = explained
    return explained == n_bursts == len(bursts), text, counts
