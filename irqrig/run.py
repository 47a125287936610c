"""Run scenario points on kernel variants: boot, steps, verdicts, figures.

One boot per (scenario point, variant, repetition).  A boot that panics,
hangs or fails a step ends with a verdict and its logs; the next one runs.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import tempfile
import time

from irqrig import build_driver, build_kernel, console, gdbcheck, gdbfire, paths, qemu
from irqrig import hardoff, hostfreeze, hoststall, sensorlog, variants
from irqrig.errors import GuestError, IrqrigError, MissingError
from irqrig.util import log

KVM_PROBE = os.path.join(paths.BUILD, "kvm-probe.json")


class Verdicts:
    def __init__(self):
        self.items = []

    def add(self, name, ok, detail=""):
        self.items.append({"name": name, "ok": bool(ok), "detail": detail})
        return ok

    @property
    def ok(self):
        return all(v["ok"] for v in self.items)


def kvm_works(kernel, initrd, timeout=20):
    """Probe once (result cached): does a KVM guest reach init here?"""
    cached = None
    try:
        with open(KVM_PROBE, encoding="utf-8") as f:
            cached = json.load(f)
    except (OSError, ValueError):
        pass
    if cached and cached.get("kernel") == kernel:
        return cached["works"]
    works = False
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        cfg = qemu.QemuConfig(kernel, initrd, cpus=1, accel="kvm")
        logp = os.path.join(paths.BUILD, "kvm-probe-console.log")
        child = console.spawn(cfg.argv(), logp)
        try:
            console.Console(child, logp).wait_boot(timeout)
            works = True
        except GuestError:
            works = False
        finally:
            console.stop(child)
    os.makedirs(paths.BUILD, exist_ok=True)
    with open(KVM_PROBE, "w", encoding="utf-8") as f:
        json.dump({"kernel": kernel, "works": works}, f)
    log("kvm probe: %s" % ("KVM guests boot here" if works else "KVM unusable, using TCG"))
    return works


def resolve_accel(want, kernel, initrd):
    if want == "auto":
        return "kvm" if kvm_works(kernel, initrd) else "tcg"
    if want == "kvm" and not kvm_works(kernel, initrd):
        raise IrqrigError("accel = \"kvm\" asked for, but the KVM probe failed here "
                          "(guests hang under nested KVM); use tcg or auto")
    return want


CYCLIC_RE = re.compile(r"T:\s*(\d+).*?C:\s*(\d+).*?Min:\s*(\d+).*?Avg:\s*(\d+).*?Max:\s*(\d+)")


def parse_cyclictest(text):
    threads = [dict(zip(("thread", "cycles", "min", "avg", "max"), map(int, m.groups())))
               for m in CYCLIC_RE.finditer(text)]
    if not threads:
        return None
    return {"threads": threads, "max_us": max(t["max"] for t in threads),
            "avg_us": round(sum(t["avg"] for t in threads) / len(threads), 1)}


def json_lines(text):
    """JSON objects printed on their own lines (kernel messages may interleave)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def s_mode(st, scn):
    return st["mode"] or scn["sensor"]["mode"]


class Boot:
    """One guest boot for one scenario point on one variant."""

    def __init__(self, scn, variant, log_dir, accel):
        self.scn = scn
        self.variant = variants.get(variant)
        self.log_dir = log_dir
        self.accel = accel
        self.verdicts = Verdicts()
        self.figures = {}
        self.steps = []
        self.con = None
        self.guest = {}
        self.background_load = False
        self.gdb_result = None
        self.host = None            # hoststall summary (runs without icount)
        self.clock_offset_ns = None  # host CLOCK_MONOTONIC - device virtual time
        # The test-only unsafe build (the seed article's self-deadlock).
        self.module = scn["driver"]["module"]
        os.makedirs(log_dir, exist_ok=True)
        self.sock_dir = None

    def qemu_config(self):
        q = self.scn["qemu"]
        s = self.scn["sensor"]
        sensor = None
        if s["enabled"]:
            sensor = {"irq-mode": s["irq_mode"], "late-skip-ns": s["late_skip_ns"]}
        kdir = paths.kernel_dir(self.variant.name)
        check = self.scn["gdb"]["check"]
        # Every guest gets a gdbstub: after a hang it is how the kernel log
        # that the stuck CPU could not print gets out (lx-dmesg).
        return qemu.QemuConfig(
            kernel=os.path.join(kdir, "arch", "x86", "boot", "bzImage"),
            initrd=paths.initramfs(self.variant.name),
            cpus=q["cpus"], memory=q["memory_mb"], accel=self.accel,
            icount=q["icount_shift"], machine=q["machine"], append=q["append"],
            sensor=sensor,
            sensor_log=os.path.join(self.log_dir, "sensor.log") if sensor else None,
            qmp=os.path.join(self.sock_dir, "qmp.sock"),
            gdb=os.path.join(self.sock_dir, "gdb.sock"),
            paused=check,
            plugins=hardoff.boot_plugins(self.scn, self.variant.name, self.log_dir,
                                         self.accel))

    # -- steps --------------------------------------------------------

    def step_cyclictest(self, st):
        threads = ("-t %d" % st["threads"]) if st["threads"] else "-S"
        cmd = ("cyclictest -q -m %s -p %d -i %d -D %ds"
               % (threads, st["priority"], st["interval_us"], max(1, int(st["duration_s"]))))
        rc, out = self.con.run(cmd, timeout=st["timeout_s"] or int(st["duration_s"]) + 60)
        res = parse_cyclictest(out)
        self.verdicts.add("cyclictest ran", rc == 0 and res is not None,
                          "rc=%d" % rc if res else "no cyclictest summary in output")
        if res:
            prev = self.figures.get("cyclictest_max_us", 0)
            self.figures["cyclictest_max_us"] = max(prev, res["max_us"])
            self.figures["cyclictest_avg_us"] = res["avg_us"]
        return {"command": cmd, "rc": rc, "result": res}

    def insmod_args(self):
        d = self.scn["driver"]
        args = []
        if d["nodelay"] and self.guest.get("irqsoft") == "1":
            args.append("nodelay=1")
        if d["hog_length_us"]:
            args += ["hog_us=%d" % d["hog_length_us"], "hog_period_us=%d" % d["hog_period_us"],
                     "hog_cpu=%d" % d["hog_cpu"]]
            if d["hog_line_lock"]:
                args.append("hog_line_lock=1")
        return args

    def load_driver(self):
        cmd = " ".join(["insmod", "/lib/modules/%s.ko" % self.module] + self.insmod_args())
        rc, out = self.con.run(cmd, timeout=60)
        self.verdicts.add("driver loaded (%s)" % self.module, rc == 0, out[-200:])
        if rc == 0:
            rc, out = self.con.run("test -c /dev/irq-sensor0", timeout=30)
            self.verdicts.add("/dev/irq-sensor0 exists", rc == 0)
        return rc == 0

    def sensor_args(self, st):
        s = dict(self.scn["sensor"])
        s.update({k: v for k, v in st.items() if k in s and v is not None})
        args = ["--mode", s["mode"], "--period-ns", str(s["period_ns"]),
                "--jitter-ns", str(s["jitter_ns"]), "--burst-count", str(s["burst_count"]),
                "--burst-gap-ns", str(s["burst_gap_ns"]), "--seed", str(s["seed"]),
                "--deadline-ns", str(s["deadline_ns"]), "--latch", str(s["latch_depth"]),
                "--spurious-every", str(s["spurious_every"]),
                "--drop-every", str(s["drop_every"])]
        if st["samples"]:
            args += ["--samples", str(st["samples"])]
        args += ["--duration", "%g" % st["duration_s"]]
        if st["rt_priority"]:
            args += ["--rt-prio", str(st["rt_priority"])]
        return args

    def step_sensor(self, st):
        cmd = "sensor-read " + " ".join(self.sensor_args(st))
        timeout = st["timeout_s"] or int(st["duration_s"]) + 120
        rc, out = self.con.run(cmd, timeout=timeout)
        res = next((j for j in json_lines(out) if j.get("tool") == "sensor-read"), None)
        ok = res is not None and rc in (0, 1)
        self.verdicts.add("sensor-read reported", ok, "rc=%d %s" % (rc, out[-300:] if not ok else ""))
        if res:
            self.verdicts.add("sample values intact", res.get("bad_values") == 0,
                              "bad_values=%s" % res.get("bad_values"))
            if st["contiguous"]:
                self.verdicts.add("sensor-read: contiguous sequence (%s)" % s_mode(st, self.scn),
                                  res.get("gaps") == 0 and res.get("samples", 0) > 0,
                                  "samples=%s gaps=%s missing=%s" % (
                                      res.get("samples"), res.get("gaps"), res.get("missing")))
            reads = self.figures.setdefault("sensor_read", [])
            reads.append({k: res.get(k) for k in ("samples", "gaps", "missing", "bad_values",
                                                   "ring_overflows", "elapsed_s")})
            self.figures["driver_counters"] = res.get("counters")
        return {"command": cmd, "rc": rc, "result": res}

    def step_rmmod_insmod(self, st):
        results = []
        for i in range(st["cycles"]):
            rc1, out1 = self.con.run("rmmod %s" % self.module, timeout=60)
            rc2 = 1
            if rc1 == 0:
                rc2, out2 = self.con.run(" ".join(["insmod", "/lib/modules/%s.ko" % self.module]
                                                  + self.insmod_args()), timeout=60)
            results.append({"rmmod": rc1, "insmod": rc2})
            if rc1 or rc2:
                break
        ok = all(r["rmmod"] == 0 and r["insmod"] == 0 for r in results) \
            and len(results) == st["cycles"]
        self.verdicts.add("rmmod/insmod x%d clean" % st["cycles"], ok, str(results))
        return {"cycles": results}

    def step_load(self, st):
        cmd = "loadgen --kind %s --duration %g" % (",".join(st["generators"]), st["duration_s"])
        if st["background"]:
            rc, out = self.con.run("(%s > /tmp/loadgen.out 2>&1 &)" % cmd, timeout=30)
            self.background_load = True
            return {"command": cmd, "background": True, "rc": rc}
        rc, out = self.con.run(cmd, timeout=int(st["duration_s"]) + 120)
        res = next((j for j in json_lines(out) if j.get("tool") == "loadgen"), None)
        self.verdicts.add("loadgen %s ran" % ",".join(st["generators"]), rc == 0 and res is not None,
                          out[-200:])
        return {"command": cmd, "rc": rc, "result": res}

    def step_gdb_fire(self, st):
        rc, out = self.con.run("cat /sys/module/%s/sections/.text" % self.module, timeout=30)
        words = out.split()
        if rc or not words:
            self.verdicts.add("gdb-fire: module text address", False, out[-200:])
            return {"rc": rc}
        base = int(words[-1], 16)
        ko = os.path.join(build_driver.out_dir(self.variant.name), "irq_sensor",
                          self.module + ".ko")
        addr = base + gdbfire.fire_offset(ko)
        fire = gdbfire.GdbFire(self.cfg.gdb, addr, st["fires"],
                               os.path.join(self.log_dir, "gdb-fire.log"))
        fire.start()
        cmd = "sensor-read --mode manual --passive --duration %g --latch 16" % st["duration_s"]
        rc, out = self.con.run(cmd, timeout=st["timeout_s"] or int(st["duration_s"]) + 120)
        fired = fire.finish()
        res = next((j for j in json_lines(out) if j.get("tool") == "sensor-read"), None)
        self.verdicts.add("gdb-fire: fired from inside the hog", fired > 0,
                          "fired %d of %d" % (fired, st["fires"]))
        self.figures["gdb_fire"] = {"fired": fired, "address": "0x%x" % addr,
                                    "samples_read": res and res.get("samples")}
        return {"command": cmd, "rc": rc, "fired": fired, "result": res}

    def step_shell(self, st):
        rc, out = self.con.run(st["command"], timeout=st["timeout_s"] or 120)
        self.verdicts.add("shell: %s" % st["command"][:60], rc == st["expect_rc"],
                          "rc=%d, expected %d" % (rc, st["expect_rc"]))
        return {"command": st["command"], "rc": rc, "output": out[-2000:]}

    def gdb_verdict(self, exp):
        g = self.gdb_result
        if g is None:
            self.verdicts.add("gdb check produced a verdict", False,
                              "no gdb-check.json (see gdb.log)")
            return
        longest = g.get("longest_window") or {}
        self.figures["gdb"] = {
            "mode": g["mode"], "distinct_sites": g["distinct_sites"], "stops": g["stops"],
            "breakpoints": g["breakpoints"], "violations": g["violations"],
            "static_cli": g["static"]["cli"], "static_sites": g["static"]["sites"],
            "longest_window_insns": longest.get("instructions"),
            "longest_window_at": longest.get("function"),
            "wall_s": g["wall_s"],
        }
        if g["table"]:
            limit = 0 if exp["violations_max"] is None else exp["violations_max"]
            first = (g["violation_records"] or [{}])[0]
            self.verdicts.add("gdb: cli only in allow-listed hard sections (<= %d violations)"
                              % limit, g["violations"] <= limit,
                              "%d violations, first at %s (%s)" % (
                                  g["violations"], first.get("function"), first.get("task"))
                              if g["violations"] else "")
        else:
            self.verdicts.add("gdb census ran (stock kernel: counts only)",
                              g["distinct_sites"] > 0, "%d sites" % g["distinct_sites"])

    # -- the boot ------------------------------------------------------

    def check_boot(self, info):
        binfo = build_kernel.info(self.variant.name) or {}
        want_model = "rt" if self.variant.preempt_rt else "preempt"
        self.verdicts.add("kernel release", info.get("release") == binfo.get("release"),
                          "guest %s, built %s" % (info.get("release"), binfo.get("release")))
        self.verdicts.add("preemption model", info.get("model") == want_model,
                          "guest %s, variant wants %s" % (info.get("model"), want_model))
        self.verdicts.add("cpu count", info.get("cpus") == str(self.scn["qemu"]["cpus"]),
                          "guest %s, qemu %d" % (info.get("cpus"), self.scn["qemu"]["cpus"]))

    def run_steps(self):
        if self.scn["driver"]["load"]:
            self.load_driver()
        deadline = time.monotonic() + self.scn["timeout_s"]
        for st in self.scn["steps"]:
            if time.monotonic() > deadline:
                raise GuestError("scenario timeout (%d s) reached before step %s"
                                 % (self.scn["timeout_s"], st["type"]))
            fn = getattr(self, "step_" + st["type"].replace("-", "_"), None)
            if fn is None:
                raise IrqrigError("step type %r is not implemented" % st["type"])
            self.steps.append(dict(fn(st), type=st["type"]))
        # Always, traced or not: a batch boot runs the same commands either
        # way, so the IF tracker is the only difference between the two.
        hardoff.record_modules(self)

    def plan_batch(self):
        """Pass 1 of a batch boot: the commands the steps will run."""
        rec = console.RecordingConsole()
        self.con, self.guest = rec, {"irqsoft": "1" if self.variant.irqsoft
                                     else "0"}
        self.run_steps()
        self.verdicts, self.figures, self.steps = Verdicts(), {}, []
        # Derived from the commands, not random: the script is on the kernel
        # command line, and identical runs need byte-identical guests.  No
        # command is typed in batch mode, so nothing can echo a marker.
        token = hashlib.sha256("\n".join(rec.commands).encode()).hexdigest()[:8]
        script = console.batch_script(rec.commands, token)
        encoded = base64.b64encode(script.encode()).decode()
        if len(encoded) > 1500:
            raise IrqrigError("batch scenario %s: script too long for the kernel command "
                              "line (%d bytes encoded)" % (self.scn.name, len(encoded)))
        return rec.commands, token, encoded

    def run(self):
        # Unix socket paths are limited to 107 bytes: keep them short.
        self.sock_dir = tempfile.mkdtemp(prefix="irqrig-")
        cfg = self.cfg = self.qemu_config()
        batch = self.plan_batch() if self.scn["batch"] else None
        if batch:
            cfg.append = (cfg.append + " irqrig.batch=" + batch[2]).strip()
        for p, what in ((cfg.kernel, "kernel"), (cfg.initrd, "initramfs"),
                        (cfg.binary, "QEMU")):
            if not os.path.exists(p):
                shutil.rmtree(self.sock_dir, ignore_errors=True)
                raise MissingError("%s for %s is not built (%s): run ./runner.py build %s"
                                   % (what, self.variant.name, p, self.variant.name))
        if cfg.sensor_log and os.path.exists(cfg.sensor_log):
            os.unlink(cfg.sensor_log)
        result = {
            "variant": self.variant.name,
            "kernel": build_kernel.info(self.variant.name),
            "qemu": {"version": qemu.version(cfg.binary), "argv": cfg.argv(),
                     "accel": cfg.accel, "icount_shift": cfg.icount},
            "logs": {"console": os.path.join(self.log_dir, "console.log")},
        }
        if cfg.sensor_log:
            result["logs"]["sensor"] = cfg.sensor_log
        t0 = time.monotonic()
        child = console.spawn(cfg.argv(), result["logs"]["console"])
        # Without icount, host scheduling delays are guest latency: measure them.
        watch = hoststall.VcpuWatch(child.pid).start() if cfg.icount is None else None
        # Host CPU freezes matter only to match the sensor's loss bursts.
        freeze = None
        if cfg.icount is None and cfg.sensor is not None:
            freeze = hostfreeze.FreezeProbe(os.path.join(self.log_dir,
                                                         "host-freezes.jsonl")).start()
        status = "error"
        check = None
        try:
            if self.scn["gdb"]["check"]:
                result["logs"]["gdb"] = os.path.join(self.log_dir, "gdb.log")
                check = gdbcheck.GdbCheck(self.variant.name, cfg.gdb,
                                          os.path.join(self.log_dir, "gdb-check.json"),
                                          result["logs"]["gdb"],
                                          census=not self.variant.irqsoft)
                check.start()
            live = console.Console(child, result["logs"]["console"])
            self.con = live
            info = live.wait_boot(self.scn["boot_timeout_s"], shell=batch is None)
            result["boot_s"] = round(time.monotonic() - t0, 2)
            result["guest"] = info
            self.guest = info
            self.check_boot(info)
            if freeze is not None:
                self.clock_offset_ns = self.read_clock_offset(cfg)
            if batch:
                commands, token, _ = batch
                live.wait_poweroff(self.scn["timeout_s"])
                with open(result["logs"]["console"], encoding="utf-8",
                          errors="replace") as f:
                    done = console.parse_batch(f.read(), len(commands), token)
                self.con = console.ReplayConsole(done)
                if len(done) < len(commands):
                    raise GuestError("batch run stopped after %d of %d commands (console "
                                     "log: %s)" % (len(done), len(commands),
                                                   result["logs"]["console"]))
                self.run_steps()
            else:
                self.run_steps()
                live.poweroff()
            status = "done"
        except GuestError as e:
            self.verdicts.add("guest ran to the end", False, str(e).splitlines()[0])
            result["error"] = str(e)
            if child.isalive() and check is None:
                dump = os.path.join(self.log_dir, "dmesg-after-hang.txt")
                if gdbcheck.dump_dmesg(self.variant.name, cfg.gdb, dump):
                    result["logs"]["dmesg_after_hang"] = dump
        finally:
            if watch is not None:
                self.host = watch.stop()
                self.host["clock_offset_ns"] = self.clock_offset_ns
            if freeze is not None:
                self.host.update(freeze.stop())
            console.stop(child)
            if check is not None:
                self.gdb_result = check.finish()
            shutil.rmtree(self.sock_dir, ignore_errors=True)
            result["wall_s"] = round(time.monotonic() - t0, 2)
        self.finish(result)
        result["status"] = ("pass" if self.verdicts.ok else "fail") if status == "done" \
            else "error"
        if self.scn["expect"]["expect_failure"]:
            self.judge_expected_failure(result)
        return result

    def read_clock_offset(self, cfg):
        """Host monotonic minus device time (ns), from the device's
        clock-sync property, or None: then freezes are not matched."""
        try:
            q = qemu.Qmp(cfg.qmp)
            try:
                sync = json.loads(q.qom_get(qemu.SENSOR_QOM_PATH, "clock-sync"))
            finally:
                q.close()
            return sync["host"] - sync["virtual"]
        except (OSError, RuntimeError, ValueError, KeyError) as e:
            log("%s: no clock-sync from the device (%s): loss bursts are not "
                "matched against host CPU freezes" % (self.variant.name, e))
            return None

    def judge_expected_failure(self, result):
        """A negative scenario passes when the rig detects the failure."""
        want = self.scn["expect"]["expect_failure"]
        console_found = self.figures.get("console", {})
        error = result.get("error") or ""
        detected = {
            # lock debugging reports: lockdep, the irqsoft check, spinlock BUGs
            "lockdep": console_found.get("lockdep", 0) + console_found.get("bug", 0) > 0,
            "hang": result["status"] == "error" and ("timed out" in error
                                                     or "did not" in error),
            "violation": (self.figures.get("gdb") or {}).get("violations", 0) > 0
            or ((self.figures.get("hardoff") or {}).get("violations") or 0) > 0,
        }
        hit = [k for k, v in detected.items() if v] if want == "any" else \
            ([want] if detected[want] else [])
        for v in self.verdicts.items:
            v["expected_failure_context"] = True
        self.verdicts.items.insert(0, {
            "name": "expected failure detected (%s)" % want, "ok": bool(hit),
            "detail": "detected: %s" % (", ".join(hit) or "nothing")})
        result["expected_failure"] = {"want": want, "detected": detected}
        result["status"] = "pass" if hit else "fail"

    def host_loss_detail(self, bursts, n_bursts):
        """Match loss bursts against vCPU stalls and host CPU freezes; the
        text goes to self.host["loss_detail"].  True if the host explains
        every burst (and the burst list is complete)."""
        h = self.host
        offset = h.get("clock_offset_ns")
        if offset is not None and "stall_clock_t0" in h:
            # On the host's clock a vCPU kept off its CPU is a freeze of that
            # vCPU: the same rule explains bursts by either.
            stall = hostfreeze.explained(bursts, hoststall.stall_spans(h), offset)
            how = "inside"
        else:
            stall = hoststall.at_a_stall(bursts, h["stalls"])
            how = "within 100 ms of"
        text = "; the host kept a vCPU waiting >= %g ms %d times (max %g ms), %d of the " \
            "bursts %s such a stall" % (h["stall_threshold_ms"], h["vcpu_stalls"],
                                        h["vcpu_stall_max_ms"], sum(stall), how)
        frozen = [False] * len(bursts)
        if offset is not None:
            frozen = hostfreeze.explained(bursts, h["freezes"], offset)
            h["loss_bursts_in_a_freeze"] = sum(frozen)
            text += ("; host CPUs stood still >= %g ms %d times (max %g ms, %s), %d of the "
                     "bursts inside such a freeze" % (
                         h["freeze_threshold_ms"], h["host_cpu_freezes"],
                         h["host_cpu_freeze_max_ms"], h["probe"], sum(frozen)))
        h["loss_bursts_at_a_stall"] = sum(stall)
        explained = sum(1 for a, b in zip(stall, frozen) if a or b)
        h["loss_bursts_explained"] = explained
        h["loss_detail"] = text
        return explained == n_bursts == len(bursts)

    def excuse_gaps(self, lost):
        """The reader's sequence gaps are the device's lost samples when all
        of those were lost at host stalls or freezes: clear its contiguity verdicts."""
        missing = sum(r.get("missing") or 0 for r in self.figures.get("sensor_read", []))
        if missing > lost:
            return
        for v in self.verdicts.items:
            if v["name"].startswith("sensor-read: contiguous") and not v["ok"]:
                v["ok"] = True
                v["detail"] += (" - excused: the missing samples were lost at host stalls "
                                "or freezes")

    def finish(self, result):
        """Console scan and device figures, after QEMU has exited."""
        text = ""
        for key in ("console", "dmesg_after_hang"):
            if result["logs"].get(key):
                with open(result["logs"][key], encoding="utf-8", errors="replace") as f:
                    text += f.read()
        found = console.scan(text)
        counts = {k: len(v) for k, v in found.items()}
        self.figures["console"] = counts
        if self.scn["expect"]["console_clean"]:
            bad = [line for v in found.values() for line in v]
            self.verdicts.add("console clean (no BUG/WARNING/Oops/lockdep/panic)",
                              not bad, "; ".join(bad[:3]))
        exp = self.scn["expect"]
        if self.scn["gdb"]["check"]:
            self.gdb_verdict(exp)
        if self.scn["trace"]["hardoff"]:
            hardoff.judge_boot(self, result)
        if result["logs"].get("sensor") and os.path.exists(result["logs"]["sensor"]):
            sensor = sensorlog.summarize(result["logs"]["sensor"])
            self.figures["sensor"] = sensor
            if sensor["counts"]["raised"]:
                self.verdicts.add("stage order t_raise <= hard <= thread <= user",
                                  sensor["stage_order_errors"] == 0,
                                  "%d samples out of order" % sensor["stage_order_errors"])
            if exp["lost_max"] is not None:
                lost = sensor["counts"]["lost"]
                bursts = sensor["loss_burst_spans_ns"]
                detail = "lost %d (deadline %d, overflow %d) in %d bursts" % (
                    lost, sensor["counts"]["lost_deadline"],
                    sensor["counts"]["lost_overflow"], sensor["loss_bursts"])
                if sensor["counts"]["host_late"]:
                    detail += ("; %d generator events not raised: QEMU ran the device's "
                               "timer more than %g ms late" % (
                                   sensor["counts"]["host_late"],
                                   self.scn["sensor"]["late_skip_ns"] / 1e6))
                excused = False
                if self.host and lost:
                    excused = self.host_loss_detail(bursts, sensor["loss_bursts"])
                    detail += self.host["loss_detail"]
                    excused = excused and exp["host_stalls_excuse_losses"]
                if excused:
                    detail += " - excused: every burst is at a host stall or freeze"
                    self.excuse_gaps(lost)
                self.verdicts.add("samples lost <= %d" % exp["lost_max"],
                                  lost <= exp["lost_max"] or excused, detail)
            for stage, key in (("hard", "hard_p99_us"), ("hard", "hard_max_us"),
                               ("thread", "thread_p99_us"), ("user", "user_p99_us")):
                bound = exp[key]
                if bound is None:
                    continue
                figure = "max" if key.endswith("max_us") else "p99"
                value = sensor["latency_ns"][stage].get(figure)
                self.verdicts.add("%s %s <= %g us" % (stage, figure, bound),
                                  value is not None and value <= bound * 1000,
                                  "%s ns" % value)
        if exp["cyclictest_max_us"] is not None and "cyclictest_max_us" in self.figures:
            self.verdicts.add("cyclictest max <= %d us" % exp["cyclictest_max_us"],
                              self.figures["cyclictest_max_us"] <= exp["cyclictest_max_us"],
                              "max %d us" % self.figures["cyclictest_max_us"])
        if self.host:
            self.figures["host"] = self.host
        result["steps"] = self.steps
        result["figures"] = self.figures
        result["verdicts"] = self.verdicts.items
