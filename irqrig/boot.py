"""One boot of one scenario point on one variant: QEMU, steps, records.

A Boot starts QEMU, waits for the guest, runs the scenario's steps and
records what happened: the console log, the device event log, gdb output,
each step's command, exit code and output, and how the boot ended
(run.json in its log directory).  It judges nothing: irqrig/verdicts.py
does, from these records alone, so `runner.py rejudge` can judge a saved
run again.

The scenario's timeout_s bounds the whole boot: every wait is capped by
what is left of it, and a watchdog kills QEMU if anything outlives it; the
boot then ends as a timeout.  Any exception ends the boot as an error with
its traceback in runner-error.txt; the suite goes on with the next boot.
"""

import base64
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import traceback

from irqrig import (artifacts, campaign, console, gdbcheck, gdbfire, gdbrun, hardoff,
                    hostnoise, landings, paths, qemu, variants)
from irqrig.errors import GuestError, IrqrigError, RunTimeout
from irqrig.util import log

# How much longer the rig's own timeouts are once one_insn_per_tb is on:
# on the 6.12 -debug kernel with QEMU 10.0, 20 execs took 1.0 s without it
# and 76 s with it (scenarios/one-insn-slowdown.toml).
ONE_INSN_SLOWDOWN = 80

KVM_PROBE = os.path.join(paths.BUILD, "kvm-probe.json")
# Step outputs are kept in the record up to this size (the tail).
OUTPUT_KEEP = 64 * 1024
# After the scenario timeout, QEMU gets this long before the watchdog kills it.
WATCHDOG_GRACE_S = 5
# loadgen's longest stop grace (MAX_GRACE_S in guest-driver/tools/loadgen.c).
LOADGEN_MAX_GRACE_S = 300


def kvm_works(kernel, initrd, timeout=20):
    """Probe once (result cached): does a KVM guest reach init here?"""
    path = KVM_PROBE
    try:
        with open(path, encoding="utf-8") as f:
            cached = json.load(f)
        if cached.get("kernel") == kernel:
            return cached["works"]
    except (OSError, ValueError):
        pass
    works = False
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        cfg = qemu.QemuConfig(kernel, initrd, cpus=1, accel="kvm")
        logp = os.path.join(os.path.dirname(path), "kvm-probe-console.log")
        child = console.spawn(cfg.argv(), logp)
        try:
            console.Console(child, logp).wait_boot(timeout)
            works = True
        except GuestError:
            works = False
        finally:
            console.stop(child)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"kernel": kernel, "works": works}, f)
    log("kvm probe: %s" % ("KVM guests boot here" if works else "KVM unusable, using TCG"))
    return works


def resolve_accel(want, variant):
    if want == "tcg":
        return want
    kernel, initrd = artifacts.bzimage(variant), artifacts.initramfs(variant)
    if want == "auto":
        return "kvm" if kvm_works(kernel, initrd) else "tcg"
    if not kvm_works(kernel, initrd):
        raise IrqrigError("accel = \"kvm\" asked for, but the KVM probe failed here "
                          "(guests hang under nested KVM); use tcg or auto")
    return want


def _keep(text):
    return text if len(text) <= OUTPUT_KEEP else "[...]" + text[-OUTPUT_KEEP:]


class Boot:
    """One guest boot for one scenario point on one variant."""

    def __init__(self, scn, variant, log_dir, accel, meta=None):
        self.scn = scn
        self.variant = variants.get(variant)
        self.log_dir = log_dir
        self.accel = accel
        self.module = scn["driver"]["module"]
        self.con = None
        self.cfg = None
        self.gdb = None             # the one gdbstub client running, if any
        self.deadline = None
        self.timed_out = False
        self.guest = {}
        # meta: the scenario's label, file, params and repeat (suite.py)
        self.record = dict(meta or {}, variant=variant, steps=[], logs={})
        os.makedirs(log_dir, exist_ok=True)

    def path(self, name):
        return os.path.join(self.log_dir, name)

    # -- limits ---------------------------------------------------------

    def limit(self, timeout):
        """A wait of at most ``timeout`` seconds, capped by the run's deadline."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RunTimeout("scenario timeout (%d s) reached" % self.scn["timeout_s"])
        return max(1, min(timeout, int(left) + 1))

    def rig_s(self, seconds):
        """A timeout the rig chose (not the scenario), for a guest that runs
        one instruction per TB from here on: about 75x slower."""
        return seconds * (ONE_INSN_SLOWDOWN if self.record.get("qemu", {}).get(
            "one_insn_per_tb") else 1)

    def step_s(self, st, extra, duration=None):
        """A step's timeout: its own, or its duration plus extra seconds."""
        if st["timeout_s"]:
            return st["timeout_s"]
        return self.rig_s((int(st["duration_s"]) if duration is None else duration) + extra)

    def run_cmd(self, command, timeout):
        try:
            rc, out = self.con.run(command, timeout=self.limit(timeout))
        except GuestError as e:
            if self.timed_out or time.monotonic() >= self.deadline:
                raise RunTimeout("scenario timeout (%d s) reached while running %r "
                                 "(console log: %s)" % (self.scn["timeout_s"], command,
                                                        self.path("console.log"))) from e
            raise
        return rc, out

    # -- QEMU -----------------------------------------------------------

    def qemu_config(self, sock_dir):
        """QEMU's configuration; the files of a [trace] hardoff boot (the
        plugin's inputs and its result) go into the record."""
        q, s = self.scn["qemu"], self.scn["sensor"]
        trace_logs, plugins = hardoff.boot_inputs(self.scn, self.variant.name,
                                                  self.log_dir, self.accel)
        self.record["logs"].update(trace_logs)
        sensor = None
        if s["enabled"]:
            sensor = {"irq-mode": s["irq_mode"], "late-skip-ns": s["late_skip_ns"]}
            if s["stuck_intx"]:
                sensor["stuck-intx"] = True
        # Every guest gets a gdbstub: after a hang it is how the kernel log
        # that the stuck CPU could not print gets out (lx-dmesg).
        return qemu.QemuConfig(
            kernel=artifacts.bzimage(self.variant.name),
            initrd=artifacts.initramfs(self.variant.name),
            cpus=q["cpus"], memory=q["memory_mb"], accel=self.accel,
            icount=q["icount_shift"], machine=q["machine"], append=q["append"],
            sensor=sensor, sensor_log=self.path("sensor.log") if sensor else None,
            qmp=os.path.join(sock_dir, "qmp.sock"), gdb=os.path.join(sock_dir, "gdb.sock"),
            paused=self.scn["gdb"]["check"], cpu=q["cpu"] or None,
            one_insn_per_tb=q["one_insn_per_tb_boot"] or
            ("after-boot" if q["one_insn_per_tb"] else False),
            int_log=os.path.join(sock_dir, "int.fifo") if self.scn["campaign"]["landings"]
            else None,
            plugins=plugins)

    def one_insn_per_tb_on(self):
        """Fine-grained delivery from here on (the boot ran at full speed),
        checked in QEMU's own account of its accelerator settings."""
        q = qemu.Qmp(self.cfg.qmp)
        try:
            out = q.hmp(self.cfg.one_insn_per_tb_monitor())
            info = q.hmp("info jit")
        finally:
            q.close()
        if out.strip() or "one-insn-per-tb: on" not in info:
            raise IrqrigError("could not switch one-insn-per-tb on through QEMU's monitor "
                             "(%s)" % (out.strip() or "info jit does not say it is on"))
        self.record["qemu"]["one_insn_per_tb"] = "after boot"

    def read_clock_offset(self):
        """Host monotonic minus device time (ns), from the device's
        clock-sync property, or None: then freezes are not matched."""
        try:
            q = qemu.Qmp(self.cfg.qmp)
            try:
                sync = json.loads(q.qom_get(qemu.SENSOR_QOM_PATH, "clock-sync"))
            finally:
                q.close()
            return sync["host"] - sync["virtual"]
        except (OSError, RuntimeError, ValueError, KeyError) as e:
            log("%s: no clock-sync from the device (%s): loss bursts are not "
                "matched against host CPU freezes" % (self.variant.name, e))
            return None

    # -- steps: each records what it ran and what came back ---------------

    def insmod_command(self):
        d = self.scn["driver"]
        args = ["insmod", "/lib/modules/%s.ko" % self.module]
        if d["nodelay"] and self.guest.get("irqsoft") == "1":
            args.append("nodelay=1")
        if d["shared_irq"]:
            args.append("shared_irq=1")
        if d["hog_length_us"]:
            args += ["hog_us=%d" % d["hog_length_us"], "hog_period_us=%d" % d["hog_period_us"],
                     "hog_cpu=%d" % d["hog_cpu"]]
            if d["hog_line_lock"]:
                args.append("hog_line_lock=1")
        return " ".join(args)

    def load_driver(self):
        cmd = self.insmod_command()
        rc, out = self.run_cmd(cmd, self.rig_s(60))
        rec = {"command": cmd, "rc": rc, "output": _keep(out), "dev_rc": None}
        if rc == 0:
            rec["dev_rc"], _ = self.run_cmd("test -c /dev/irq-sensor0", self.rig_s(30))
        self.record["driver"] = rec

    def step_cyclictest(self, st):
        threads = ("-t %d" % st["threads"]) if st["threads"] else "-S"
        cmd = ("cyclictest -q -m %s -p %d -i %d -D %ds"
               % (threads, st["priority"], st["interval_us"], max(1, int(st["duration_s"]))))
        rc, out = self.run_cmd(cmd, self.step_s(st, 60))
        return {"command": cmd, "rc": rc, "output": _keep(out)}

    def sensor_args(self, st):
        s = dict(self.scn["sensor"])
        s.update({k: v for k, v in st.items() if k in s and v is not None})
        from irqrig.scenario import SENSOR_KNOBS
        args = []
        for k in SENSOR_KNOBS:
            args += [k.option, str(s[k.key])]
        if st["samples"]:
            args += ["--samples", str(st["samples"])]
        args += ["--duration", "%g" % st["duration_s"]]
        if st["rt_priority"]:
            args += ["--rt-prio", str(st["rt_priority"])]
        return args

    def step_sensor(self, st):
        before = self.sensor_irq_cpus()
        cmd = "sensor-read " + " ".join(self.sensor_args(st))
        rc, out = self.run_cmd(cmd, self.step_s(st, 120))
        after = self.sensor_irq_cpus()
        return {"command": cmd, "rc": rc, "output": _keep(out),
                "irq_cpus": hardoff.irq_cpus_delta(before, after)}

    def sensor_irq_cpus(self):
        """{cpu: count} of the device's interrupts so far (/proc/interrupts):
        which CPU's hard-off windows bound its latency.  None if unreadable."""
        rc, out = self.run_cmd("grep -e CPU0 -e irq-sensor /proc/interrupts", self.rig_s(30))
        return hardoff.irq_cpus(out) if rc == 0 else None

    def step_rmmod_insmod(self, st):
        cycles = []
        for _ in range(st["cycles"]):
            rc1, out1 = self.run_cmd("rmmod %s" % self.module, self.step_s(st, 60, 0))
            c = {"rmmod": rc1, "rmmod_output": _keep(out1)}
            if rc1 == 0:
                c["insmod"], out2 = self.run_cmd(self.insmod_command(), self.step_s(st, 60, 0))
                c["insmod_output"] = _keep(out2)
            cycles.append(c)
            if rc1 or c.get("insmod"):
                break
        return {"cycles": cycles}

    def step_load(self, st):
        cmd = "loadgen --kind %s --duration %g" % (",".join(st["generators"]), st["duration_s"])
        if st["background"]:
            # Started in a subshell (no job-control noise); alive a second
            # later, or finished with its JSON line: a generator that cannot
            # run (a usage error, a kind the guest lacks) fails the step.
            n = sum(1 for s in self.record["steps"] if s.get("background"))
            out_file, pid_file = "/tmp/loadgen.%d.out" % n, "/tmp/loadgen.%d.pid" % n
            rc, out = self.run_cmd(
                "(%s > %s 2>&1 & echo $! > %s); sleep 1; kill -0 $(cat %s) 2>/dev/null || "
                "{ cat %s; grep -q '\"tool\":\"loadgen\"' %s; }"
                % (cmd, out_file, pid_file, pid_file, out_file, out_file), self.rig_s(30))
            return {"command": cmd, "background": True, "rc": rc, "output": _keep(out),
                    "out_file": out_file, "pid_file": pid_file}
        rc, out = self.run_cmd(cmd, self.step_s(st, 120))
        return {"command": cmd, "rc": rc, "output": _keep(out)}

    def step_gdb_fire(self, st):
        rc, out = self.run_cmd("cat /sys/module/%s/sections/.text" % self.module,
                               self.rig_s(30))
        words = out.split()
        if rc or not words:
            return {"rc": rc, "output": _keep(out), "fired": 0, "address": None}
        addr = int(words[-1], 16) + gdbfire.fire_offset(
            artifacts.module(self.variant.name, self.module))
        self.gdb = gdbfire.gdb(self.variant.name, self.cfg.gdb, addr, st["fires"],
                               self.path("gdb-fire.log"))
        self.record["logs"]["gdb_fire"] = self.gdb.log_path
        try:
            self.gdb.start()
            cmd = "sensor-read --mode manual --passive --duration %g --latch 16" \
                % st["duration_s"]
            rc, out = self.run_cmd(cmd, self.step_s(st, 120))
            self.gdb.wait(self.limit(30))
        finally:
            self.gdb.stop()
        fired = gdbfire.fired(self.gdb.output())
        self.gdb = None
        return {"command": cmd, "rc": rc, "output": _keep(out), "fired": fired,
                "address": "0x%x" % addr}

    def campaign_setup(self):
        """The sections (and, for exact mode, the instructions) of a
        campaign, written before the boot: the run's record of them."""
        c = self.scn["campaign"]
        exact = any(st["type"] == "campaign" for st in self.scn["steps"])
        if not (exact or c["landings"]):
            return
        logs = self.record["logs"]
        logs["campaign_sections"] = self.path(campaign.SECTIONS)
        secs = campaign.select(self.variant.name, c["select"], c["sections_max"], c["seed"])
        campaign.write_json(logs["campaign_sections"], secs)
        if exact:
            only = int(c["target"], 16) if c["target"] else None
            logs["campaign_targets"] = self.path(campaign.TARGETS)
            logs["campaign_progress"] = self.path(campaign.PROGRESS)
            for stale in (logs["campaign_progress"], logs["campaign_progress"] + ".end"):
                if os.path.exists(stale):
                    os.unlink(stale)
            campaign.write_json(logs["campaign_targets"], {
                "targets": campaign.targets(secs, c["insns_per_section"], c["seed"], only),
                "cpu": 0, "qom_path": qemu.SENSOR_QOM_PATH, "tries": c["tries"],
                "window": c["window"]})
        log("%s: campaign over %d soft sections (%s)" % (
            self.variant.name, len(secs), ", ".join(c["select"]) or "all"))

    def step_campaign(self, st):
        """Exact mode: gdb fires the sensor at the targets (its MSI goes to
        CPU 0) while a reader acks the samples; ends by SIGINT to gdb.

        The guest's clock stands still while gdb holds it at a breakpoint,
        so the reader's duration (guest time) can last far longer on the
        host, and a guest whose hot paths hit breakpoints crawls.  The
        firing ends after fire_s (default duration_s) of host time, or when
        the reader is done if that is sooner; with the breakpoints gone the
        guest runs at full speed again and finishes the reader."""
        logs = self.record["logs"]
        self.run_cmd("for i in $(grep irq-sensor /proc/interrupts | cut -d: -f1); do "
                     "echo 1 > /proc/irq/$i/smp_affinity; done", self.rig_s(30))
        self.gdb = gdbrun.Gdb(self.variant.name, self.cfg.gdb, [
            "irqrig campaign %s %s" % (logs["campaign_targets"], logs["campaign_progress"])],
            self.path("gdb-campaign.log"))
        logs["gdb_campaign"] = self.gdb.log_path
        ticker = campaign.ProgressTicker(logs["campaign_progress"], self.variant.name)
        end = campaign.EndOnce(self.gdb.interrupt, logs["campaign_progress"] + ".end")
        timer = threading.Timer(st["fire_s"] or st["duration_s"], end)
        try:
            self.gdb.start()
            ticker.start()
            timer.start()
            cmd = "sensor-read --mode manual --passive --duration %g --latch 16" \
                % st["duration_s"]
            rc, out = self.run_cmd(cmd, self.step_s(st, 300))
            end()
            self.gdb.wait(self.limit(60))
        finally:
            timer.cancel()
            ticker.stop()
            self.gdb.stop()
            self.gdb = None
        return {"command": cmd, "rc": rc, "output": _keep(out)}

    def step_shell(self, st):
        rc, out = self.run_cmd(st["command"], self.step_s(st, 120, 0))
        return {"command": st["command"], "rc": rc, "output": _keep(out)}

    def run_steps(self):
        if self.scn["driver"]["load"]:
            self.load_driver()
        for st in self.scn["steps"]:
            fn = getattr(self, "step_" + st["type"].replace("-", "_"))
            self.record["steps"].append(dict(fn(st), type=st["type"]))
        for step in self.record["steps"]:
            if step.get("background"):
                step["final_output"] = self.stop_background(step)
        self.record_modules()

    def stop_background(self, step):
        """A background generator, once the steps are done: stopped (it may
        be meant to outlast them) and waited for while its workers finish
        their operations (loadgen's stop grace, LOADGEN_MAX_GRACE_S at most),
        so that what it says about its errors is read, not lost."""
        out_file = step["out_file"]
        rc, out = self.run_cmd(
            "kill -TERM $(cat %s) 2>/dev/null; n=0; while ! grep -q '\"tool\":\"loadgen\"' %s"
            " && [ $n -lt %d ]; do sleep 1; n=$((n+1)); done; cat %s"
            % (step["pid_file"], out_file, LOADGEN_MAX_GRACE_S + 30, out_file),
            self.rig_s(LOADGEN_MAX_GRACE_S + 60))
        return _keep(out)

    def record_modules(self):
        """After the steps: where the loaded modules are (the IF tracker
        allows their own .hard_irq_sites; sites are named by module).  On
        every boot, traced or not: a batch boot then runs the same commands
        either way, so the tracker is the only difference between the two."""
        rc, out = self.run_cmd(hardoff.MODULES_CMD, self.rig_s(60))
        logs = self.record["logs"]
        logs["modules"] = self.path(hardoff.MODULES_FILE)
        with open(logs["modules"], "w", encoding="utf-8") as f:
            f.write(out if rc == 0 else "")
        if self.scn["trace"]["hardoff"]:
            logs["iftrack_module_allow"] = self.path(hardoff.MODULE_ALLOW_FILE)
            hardoff.write_module_allow(hardoff.module_sections(out if rc == 0 else ""),
                                       hardoff.ko_files(self.variant.name),
                                       logs["iftrack_module_allow"])

    # -- batch boots ------------------------------------------------------

    def plan_batch(self):
        """Pass 1 of a batch boot: the commands the steps will run."""
        self.con = console.RecordingConsole()
        self.guest = {"irqsoft": "1" if self.variant.irqsoft else "0"}
        self.run_steps()
        self.record.pop("driver", None)
        self.record["steps"] = []
        commands = self.con.commands
        # Derived from the commands, not random: the script is on the kernel
        # command line, and identical runs need byte-identical guests.  No
        # command is typed in batch mode, so nothing can echo a marker.
        token = hashlib.sha256("\n".join(commands).encode()).hexdigest()[:8]
        encoded = base64.b64encode(console.batch_script(commands, token).encode()).decode()
        if len(encoded) > 1500:
            raise IrqrigError("batch scenario %s: script too long for the kernel command "
                              "line (%d bytes encoded)" % (self.scn.name, len(encoded)))
        return commands, token, encoded

    def replay_batch(self, commands, token):
        with open(self.path("console.log"), encoding="utf-8", errors="replace") as f:
            done = console.parse_batch(f.read(), len(commands), token)
        self.record["batch"] = {"commands": len(commands), "completed": len(done)}
        self.con = console.ReplayConsole(done)
        if len(done) < len(commands):
            raise GuestError("batch run stopped after %d of %d commands (console log: %s)"
                             % (len(done), len(commands), self.path("console.log")))
        self.run_steps()

    # -- the boot ---------------------------------------------------------

    def _watchdog(self, child):
        """Kill QEMU once the scenario timeout (and a grace) is over."""
        def fire():
            self.timed_out = True
            try:
                child.terminate(force=True)
            except Exception:           # already gone
                pass
        t = threading.Timer(self.deadline - time.monotonic() + WATCHDOG_GRACE_S, fire)
        t.daemon = True
        t.start()
        return t

    def run(self):
        """Boot, run the steps, stop; returns the record (also run.json)."""
        t0 = time.monotonic()
        self.deadline = t0 + self.scn["timeout_s"]
        rec, logs = self.record, self.record["logs"]
        logs["console"] = self.path("console.log")
        sock_dir = tempfile.mkdtemp(prefix="irqrig-")     # unix sockets: short paths
        child = watch = watchdog = land = None
        check = None
        clock_offset = None
        try:
            self.cfg = cfg = self.qemu_config(sock_dir)
            batch = self.plan_batch() if self.scn["batch"] else None
            if batch:
                cfg.append = (cfg.append + " irqrig.batch=" + batch[2]).strip()
            for what in ("bzImage", "initramfs", "qemu"):
                artifacts.require(self.variant.name, what)
            self.campaign_setup()
            if cfg.int_log:
                # QEMU opens its log at start-up and blocks until read.
                land = landings.Reader(cfg.int_log)
            if cfg.sensor_log:
                logs["sensor"] = cfg.sensor_log
                if os.path.exists(cfg.sensor_log):
                    os.unlink(cfg.sensor_log)
            rec["kernel"] = artifacts.kernel_info(self.variant.name)
            rec["qemu"] = {"version": qemu.version(cfg.binary), "argv": cfg.argv(),
                           "accel": cfg.accel, "icount_shift": cfg.icount,
                           "one_insn_per_tb": "whole run" if cfg.one_insn_per_tb is True
                           else False}
            child = console.spawn(cfg.argv(), logs["console"])
            watchdog = self._watchdog(child)
            if cfg.icount is None:
                # Without icount, host scheduling delays are guest latency.
                freeze_log = self.path("host-freezes.jsonl") if cfg.sensor else None
                watch = hostnoise.Watch(child.pid, freeze_log)
                if freeze_log:
                    logs["host_freezes"] = freeze_log
            if self.scn["gdb"]["check"]:
                logs["gdb"] = self.path("gdb.log")
                logs["gdb_check"] = self.path("gdb-check.json")
                check = self.gdb = gdbcheck.gdb(self.variant.name, cfg.gdb,
                                                logs["gdb_check"], logs["gdb"],
                                                census=not self.variant.irqsoft)
                check.start()
            self.con = live = console.Console(child, logs["console"])
            try:
                info = live.wait_boot(self.limit(self.scn["boot_timeout_s"]),
                                      shell=batch is None)
            except GuestError:
                if self.timed_out:
                    raise RunTimeout("scenario timeout (%d s) reached during boot"
                                     % self.scn["timeout_s"]) from None
                raise
            rec["boot_s"] = round(time.monotonic() - t0, 2)
            rec["guest"] = self.guest = info
            if cfg.one_insn_per_tb == "after-boot":
                self.one_insn_per_tb_on()
            if watch is not None and watch.freezes is not None:
                clock_offset = self.read_clock_offset()
            if batch:
                try:
                    live.wait_poweroff(self.limit(self.scn["timeout_s"]))
                except GuestError:
                    if self.timed_out or time.monotonic() >= self.deadline:
                        raise RunTimeout("scenario timeout (%d s) reached in the batch run"
                                         % self.scn["timeout_s"]) from None
                    raise
                self.replay_batch(*batch[:2])
            else:
                self.run_steps()
                live.poweroff(self.limit(self.rig_s(60)))
            rec["outcome"] = "completed"
        except GuestError as e:
            rec["outcome"] = "timeout" if isinstance(e, RunTimeout) else "guest-error"
            rec["error"] = str(e)
            self.after_hang(child)
        except IrqrigError as e:
            rec["outcome"] = "rig-error"
            rec["error"] = str(e)
        except Exception as e:          # a runner bug: this boot only
            rec["outcome"] = "rig-error"
            logs["runner_error"] = self.path("runner-error.txt")
            with open(logs["runner_error"], "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
            rec["error"] = "runner error: %s: %s (traceback: %s)" % (
                type(e).__name__, e, logs["runner_error"])
            self.after_hang(child)
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if watch is not None:
                rec["host"] = watch.stop(clock_offset)
            if child is not None:
                console.stop(child)
            if land is not None:
                logs["landings"] = self.path(campaign.LANDINGS)
                landings.write(logs["landings"], land.stop())
            if check is not None:
                check.wait(60)              # it writes its JSON when QEMU is gone
            if self.gdb is not None:
                self.gdb.stop()
            shutil.rmtree(sock_dir, ignore_errors=True)
            rec["wall_s"] = round(time.monotonic() - t0, 2)
        write_record(self.log_dir, rec)
        return rec

    def after_hang(self, child):
        """The guest is stuck but QEMU runs: get its kernel log and its
        waiting tasks out."""
        if child is None or not child.isalive():
            return
        if self.gdb is not None and self.gdb.running:
            if self.scn["gdb"]["check"]:
                return                  # the check owns the stub and writes its JSON
            self.gdb.stop()             # one gdbstub client at a time
        dump = self.path("dmesg-after-hang.txt")
        saved = gdbrun.dump_after_hang(self.variant.name, self.cfg.gdb, dump)
        for kind in ("dmesg", "cpus", "tasks"):
            if kind in saved:
                self.record["logs"][kind + "_after_hang"] = saved[kind]
        if "tasks" in saved:
            waiting = campaign.waiting_tasks(saved["tasks"])
            starved = campaign.starved_tasks(saved["tasks"])
            self.record["error"] = "%s\nafter the hang, %s; %s; tasks, stacks and locks: %s" % (
                self.record.get("error", ""),
                "waiting: " + "; ".join(waiting) if waiting else "no task waits "
                "uninterruptibly or on an rtlock",
                "runnable, longest off the CPU: " + "; ".join(starved) if starved
                else "no task is runnable off the CPU", saved["tasks"])


RECORD = "run.json"


def write_record(log_dir, rec):
    tmp = os.path.join(log_dir, RECORD + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rec, f, indent=1)
    os.replace(tmp, os.path.join(log_dir, RECORD))
