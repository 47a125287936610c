"""Where interrupts landed: QEMU's own interrupt log, read as it is written.

With `-d int,cpu_reset -D FIFO` QEMU's TCG logs every interrupt and
exception it delivers, with the instruction it interrupted:

    12: v=ec e=0000 i=0 cpl=0 IP=0010:ffffffff81a0c8d2 pc=ffffffff81a0c8d2 SP=...

followed by a register dump, and "check_exception old: 0x8 new 0xe" /
"Triple fault" when exceptions cascade.  A reader thread drains the FIFO
(QEMU blocks on it, so nothing is lost), counts hardware-interrupt landings
per kernel instruction, and keeps the last events before the first double
or triple fault, which is where a crash's interrupt landed.  Nothing in the
guest changes: this is the emulator's view.

The log has no vCPU number; with several vCPUs the events before a fault
are candidates, not a single answer (the campaign says so).
"""

import json
import os
import re
import threading
from collections import Counter, deque

HEADER = re.compile(r"^\s*\d+: v=([0-9a-f]{2}) e=([0-9a-f]{4}) i=(\d) cpl=(\d) "
                    r"IP=[0-9a-f]{4}:([0-9a-f]+)")
CASCADE = re.compile(r"check_exception old: 0x([0-9a-f]+) new 0x([0-9a-f]+)")
KERNEL_MIN = 0xffff800000000000
FIRST_EXTERNAL_VECTOR = 0x20
TAIL = 256                      # events kept before a fault


class Log:
    """QEMU's interrupt log, line by line: landings and the first fault."""

    def __init__(self):
        self.by_ip = Counter()          # kernel IP -> hardware interrupts landed there
        self.vectors = Counter()
        self.events = 0
        self.tail = deque(maxlen=TAIL)
        self.fault = None               # {"kind", "line", "before": [events]}
        self.triple = False

    def feed(self, line):
        m = HEADER.match(line)
        if m:
            vec, err, is_int, cpl, ip = m.groups()
            vec, ip = int(vec, 16), int(ip, 16)
            self.events += 1
            ev = {"v": vec, "ip": ip, "cpl": int(cpl), "soft": is_int == "1",
                  "e": int(err, 16)}
            self.tail.append(ev)
            if vec >= FIRST_EXTERNAL_VECTOR and is_int == "0":
                self.vectors[vec] += 1
                if cpl == "0" and ip >= KERNEL_MIN:
                    self.by_ip[ip] += 1
            if vec == 8 and self.fault is None:
                self.fault = {"kind": "double fault", "before": list(self.tail)}
            return
        if line.startswith("Triple fault"):
            self.triple = True
            if self.fault is None or self.fault["kind"] != "triple fault":
                self.fault = {"kind": "triple fault",
                              "before": (self.fault or {}).get("before") or list(self.tail)}
            return
        m = CASCADE.search(line)
        if m and self.fault is None and int(m.group(1), 16) == 8:
            self.fault = {"kind": "double fault", "before": list(self.tail)}

    def summary(self):
        return {
            "events": self.events,
            "hw_interrupts": sum(self.vectors.values()),
            "vectors": {"0x%02x" % v: n for v, n in sorted(self.vectors.items())},
            "kernel_landings": sum(self.by_ip.values()),
            "by_ip": {"0x%x" % ip: n for ip, n in sorted(self.by_ip.items())},
            "fault": None if self.fault is None else {
                "kind": self.fault["kind"],
                "before": [dict(e, ip="0x%x" % e["ip"]) for e in self.fault["before"]]},
        }


class Reader(Log):
    """Drains QEMU's interrupt log from a FIFO in a thread."""

    def __init__(self, fifo):
        super().__init__()
        self.fifo = fifo
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        # Opening blocks until QEMU opens its end.
        try:
            f = open(self.fifo, encoding="ascii", errors="replace")
        except OSError:
            return
        with f:
            for line in f:
                self.feed(line)

    def stop(self, timeout=30):
        """Wait for QEMU's end to close (QEMU has exited); the summary."""
        if self._thread.is_alive():
            # QEMU never opened the FIFO: open it ourselves so the reader ends.
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        self._thread.join(timeout)
        try:
            os.unlink(self.fifo)
        except OSError:
            pass
        return self.summary()


def write(path, summary):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f)


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
