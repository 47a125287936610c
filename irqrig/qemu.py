"""QEMU command lines and the QEMU processes the runner starts.

The processes are registered with irqrig/procs.py, which makes sure none
outlive the runner.
"""

import functools
import json
import os
import re
import socket
import subprocess
import time

from irqrig import paths

# tsc=reliable: TSC calibration fails under TCG, which leaves hrtimers in
# low-resolution mode (1 ms) on tsc-early; trust the TSC instead.
DEFAULT_APPEND = "console=ttyS0 nokaslr panic=-1 loglevel=5 tsc=reliable"
# Under icount the guest's RTC starts at a fixed date: the boot-time wall
# clock seeds the kernel's RNG, so a host-dated RTC made two otherwise
# identical runs diverge (about 1 ms by the time the driver loaded).
ICOUNT_RTC = "base=2026-01-01T00:00:00,clock=vm"
# The irq-sensor device: its id, and so its path for QMP's qom-get/qom-set.
SENSOR_ID = "sensor"
SENSOR_QOM_PATH = "/machine/peripheral/" + SENSOR_ID


class QemuConfig:
    """Everything that decides a QEMU command line (also stored in results)."""

    def __init__(self, kernel, initrd, cpus=2, memory=512, accel="tcg",
                 icount=None, machine="q35", append="", sensor=None,
                 sensor_log=None, qmp=None, gdb=None, paused=False,
                 binary=None, cpu=None, one_insn_per_tb=False, int_log=None,
                 plugins=None):
        self.binary = binary or paths.QEMU_BINARY
        self.kernel = kernel
        self.initrd = initrd
        self.cpus = cpus
        self.memory = memory
        self.accel = accel
        self.icount = icount            # None, or the icount shift
        self.machine = machine
        self.append = append
        self.sensor = sensor            # dict of irq-sensor properties, or None
        self.sensor_log = sensor_log
        self.qmp = qmp                  # unix socket path
        self.gdb = gdb                  # unix socket path for the gdbstub
        self.paused = paused
        self.cpu = cpu                  # -cpu model, None: QEMU's default
        # Interrupts land between any two instructions, as on hardware (TCG
        # otherwise delivers them only at translation-block boundaries):
        # -singlestep up to QEMU 8.0, -accel tcg,one-insn-per-tb=on after.
        # True: from the first instruction; "after-boot": off on the command
        # line, switched on by the runner (one_insn_per_tb_on()).
        self.one_insn_per_tb = one_insn_per_tb
        self.int_log = int_log          # -d int,cpu_reset into this file/FIFO
        self.plugins = list(plugins or [])   # -plugin values ("file.so,arg=v,...")

    def _from_start(self):
        return self.one_insn_per_tb is True

    def _accel_props(self):
        if self._from_start() and self.accel == "tcg" and \
                version_tuple(self.binary) >= (8, 1):
            return ",one-insn-per-tb=on"
        return ""

    def one_insn_per_tb_monitor(self):
        """The HMP command that switches one-insn-per-tb on at run time.
        It changes the cflags every TB lookup asks for; QEMU leaves a
        block chain only at an indirect jump, return or interrupt, and
        from then on runs one-instruction blocks only."""
        return "one-insn-per-tb on" if version_tuple(self.binary) >= (8, 1) \
            else "singlestep on"

    def argv(self):
        # -nodefaults: no default CD-ROM, VGA or parallel port.  Measured on
        # QEMU 10.0 with Debian's SeaBIOS 1.16.2: the BIOS waits forever on
        # the default (empty) AHCI CD-ROM and never boots the kernel.
        a = [self.binary, "-nodefaults",
             "-machine", self.machine,
             "-accel", self.accel + self._accel_props(),
             "-smp", str(self.cpus), "-m", str(self.memory),
             "-display", "none", "-nic", "none", "-no-reboot",
             # Named vCPU threads ("CPU 0/TCG"): irqrig/hostnoise/stalls.py finds them.
             "-name", "irqrig,debug-threads=on",
             "-serial", "stdio", "-monitor", "none",
             "-kernel", self.kernel, "-initrd", self.initrd,
             "-append", (DEFAULT_APPEND + " " + self.append).strip()]
        if self.accel == "tcg" and self.icount is not None:
            a += ["-icount", "shift=%d,sleep=off" % self.icount, "-rtc", ICOUNT_RTC]
        if self.cpu:
            a += ["-cpu", self.cpu]
        if self._from_start() and not self._accel_props():
            a += ["-singlestep"]
        if self.int_log:
            a += ["-d", "int,cpu_reset", "-D", self.int_log]
        for d in paths.FIRMWARE_DIRS:
            if os.path.isdir(d):
                a += ["-L", d]
        if self.sensor is not None:
            props = dict(self.sensor)
            props.setdefault("id", SENSOR_ID)
            if self.sensor_log:
                a += ["-chardev", "file,id=sensorlog,path=%s" % self.sensor_log]
                props["log"] = "sensorlog"
            a += ["-device", ",".join(["irq-sensor"] + ["%s=%s" % (k, _prop(v))
                                                        for k, v in props.items()])]
        if self.qmp:
            a += ["-qmp", "unix:%s,server=on,wait=off" % self.qmp]
        if self.gdb:
            a += ["-chardev", "socket,id=gdb0,path=%s,server=on,wait=off" % self.gdb,
                  "-gdb", "chardev:gdb0"]
        if self.paused:
            a += ["-S"]
        for p in self.plugins:
            a += ["-plugin", p]
        return a


def _prop(v):
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


@functools.lru_cache(maxsize=None)
def version_tuple(binary):
    """(major, minor) of a QEMU binary, (0, 0) if it does not say."""
    m = re.search(r"version (\d+)\.(\d+)", version(binary))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def version(binary=None):
    out = subprocess.run([binary or paths.QEMU_BINARY, "--version"],
                         capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else "unknown"


# --- QMP ----------------------------------------------------------------

class Qmp:
    """A minimal synchronous QMP client over the run's unix socket."""

    def __init__(self, path, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.settimeout(timeout)
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.buf = b""
        self._read()                                # greeting
        self.command("qmp_capabilities")

    def _read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **arguments):
        msg = {"execute": name}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise RuntimeError("QMP %s: %s" % (name, reply["error"].get("desc")))
            # asynchronous events are skipped

    def qom_get(self, path, prop):
        return self.command("qom-get", path=path, property=prop)

    def hmp(self, command_line):
        """A human monitor command; its output."""
        return self.command("human-monitor-command", **{"command-line": command_line})

    def qom_set(self, path, prop, value):
        return self.command("qom-set", path=path, property=prop, value=value)

    def close(self):
        self.sock.close()
