"""The guest console protocol (pexpect over QEMU's serial on stdio).

The guest's init prints one boot line, then runs a shell with echo off.
Each command is framed by markers the guest prints itself:

    echo @@B<n>.<token>@@; <command>; echo "@@E<n>.<token>@@ rc=$?"

The markers are written split (``@@B""7.<token>@@``) so an echoed command
line can never match them, and carry a random per-boot token so command
output cannot fake them.  Kernel messages may interleave with command output; they
stay in the console log, and the command's text keeps them out only as far as
a line-based filter can (callers parse what they need, e.g. JSON lines).
"""

import re
import secrets
import time

import pexpect

from irqrig import procs
from irqrig.errors import GuestError, IrqrigError

BOOT_RE = re.compile(r"IRQRIG-BOOTED ([^\r\n]*)\r*\n")
PANIC_RE = r"Kernel panic - not syncing[^\r\n]*"
# Console lines that mean the kernel found a bug (counted in every verdict).
BAD_PATTERNS = {
    "bug": re.compile(r"\bBUG: "),
    "warning": re.compile(r"\bWARNING: "),
    "oops": re.compile(r"\bOops\b|general protection fault"),
    "lockdep": re.compile(r"possible (recursive |circular |irq )?locking|"
                          r"inconsistent lock state|possible deadlock|"
                          r"possible irqsoft deadlock|"
                          r"INFO: task .* blocked for more than|"
                          r"soft lockup|hard LOCKUP|"
                          # "detected stalls on CPUs/tasks" (another CPU
                          # saw it) and "self-detected stall on CPU"
                          r"rcu: INFO: .*detected stalls?\b|"
                          r"rcu_preempt detected stalls|"
                          r"rcu: .* kthread (starved for|timer wakeup didn't happen)"),
    "panic": re.compile(r"Kernel panic"),
}


def scan(text):
    """Count each kind of bad console line; returns {kind: [lines]}."""
    found = {k: [] for k in BAD_PATTERNS}
    for line in text.splitlines():
        for kind, rx in BAD_PATTERNS.items():
            if rx.search(line):
                found[kind].append(line.strip())
    return found


def parse_kv(text):
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


class Console:
    """Talks to one booted guest.  ``child`` is a pexpect spawn."""

    def __init__(self, child, log_path):
        self.child = child
        self.log_path = log_path
        self.n = 0
        self.token = secrets.token_hex(4)

    def _fail(self, what):
        raise GuestError("%s (console log: %s)\n%s" % (what, self.log_path, self.tail()))

    def tail(self, lines=12):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def _silence(self):
        """How long the guest had printed nothing: a slow command still
        prints, a stuck one (or a shell that does not come back) does not."""
        last = getattr(self.child.logfile_read, "last", None)
        if last is None:
            return ""
        return " (the console printed nothing in the last %.0f s)" % (time.monotonic() - last)

    def wait_boot(self, timeout, shell=True):
        """Wait for init's boot line; returns its key=value fields."""
        i = self._expect([BOOT_RE.pattern, PANIC_RE], timeout,
                         "guest did not boot within %d s" % timeout)
        if i == 1:
            self._fail("kernel panic during boot: %s" % self.child.after)
        info = parse_kv(self.child.match.group(1))
        if shell:
            self._expect([r"irqrig# "], 30, "no shell prompt after boot")
        return info

    def wait_poweroff(self, timeout):
        """A batch boot: wait until the guest has run its script and is off."""
        i = self._expect(["IRQRIG-POWEROFF", PANIC_RE], timeout,
                         "batch run did not finish within %d s" % timeout)
        if i == 1:
            self._fail("kernel panic: %s" % self.child.after)
        try:
            self.child.expect(pexpect.EOF, timeout=60)
        except pexpect.TIMEOUT:
            self._fail("guest did not power off after its batch script")

    def _expect(self, patterns, timeout, timeout_msg):
        try:
            return self.child.expect(patterns, timeout=timeout)
        except pexpect.TIMEOUT:
            self._fail(timeout_msg + self._silence())
        except pexpect.EOF:
            text = self.child.before or ""
            if "Kernel panic" in text:
                m = re.search(PANIC_RE, text)
                self._fail("kernel panic: %s" % (m.group(0) if m else ""))
            self._fail("QEMU exited unexpectedly")

    def run(self, command, timeout=60):
        """Run a shell command in the guest; returns (exit code, output)."""
        self.n += 1
        n = self.n
        tag = "%d.%s" % (n, self.token)
        start, end = "@@B%s@@" % tag, "@@E%s@@" % tag
        line = 'echo @@B""%s@@; %s; echo "@@E""%s@@ rc=$?"' % (tag, command, tag)
        if len(line) > 3000:
            raise IrqrigError("guest command too long for the console (%d chars): %.60s..."
                              % (len(line), command))
        self.child.sendline(line)
        self._expect([re.escape(start)], 30, "guest did not start command %r" % command)
        i = self._expect([re.escape(end) + r" rc=(\d+)", PANIC_RE], timeout,
                         "guest command timed out after %d s: %s" % (timeout, command))
        if i == 1:
            self._fail("kernel panic while running %r: %s" % (command, self.child.after))
        rc = int(self.child.match.group(1))
        output = self.child.before.replace("\r\n", "\n").strip("\n")
        return rc, output

    def poweroff(self, timeout=60):
        """End the shell; init powers the guest off and QEMU exits."""
        self.child.sendline("exit")
        try:
            self.child.expect(pexpect.EOF, timeout=timeout)
        except pexpect.TIMEOUT:
            self._fail("guest did not power off within %d s" % timeout)


class RecordingConsole:
    """Collects the commands steps would run, for a batch boot (no output)."""

    def __init__(self):
        self.commands = []

    def run(self, command, timeout=60):
        self.commands.append(command)
        return 0, ""


class ReplayConsole:
    """Hands steps the results a batch boot printed, in order."""

    def __init__(self, results):
        self.results = list(results)

    def run(self, command, timeout=60):
        if not self.results:
            raise GuestError("batch run ended before command %r" % command)
        return self.results.pop(0)


def batch_script(commands, token):
    """The guest script of a batch boot: every command framed by markers."""
    lines = []
    for n, cmd in enumerate(commands, 1):
        tag = "%d.%s" % (n, token)
        lines.append('echo @@B%s@@; %s; echo "@@E%s@@ rc=$?"' % (tag, cmd, tag))
    return "\n".join(lines) + "\n"


def parse_batch(text, count, token):
    """[(rc, output)] for the commands of a batch boot, from its console log."""
    text = text.replace("\r\n", "\n")
    out = []
    for n in range(1, count + 1):
        tag = re.escape("%d.%s" % (n, token))
        m = re.search(r"@@B%s@@\n(.*?)@@E%s@@ rc=(\d+)" % (tag, tag), text, re.S)
        if not m:
            break
        out.append((int(m.group(2)), m.group(1).strip("\n")))
    return out


class StampedLog:
    """The console log file, remembering when the guest last printed."""

    def __init__(self, f):
        self.f = f
        self.last = time.monotonic()

    def write(self, text):
        self.f.write(text)
        if text:
            self.last = time.monotonic()

    def flush(self):
        self.f.flush()

    def close(self):
        self.f.close()


def spawn(argv, log_path, env=None):
    """Start QEMU (or a stand-in) under pexpect, logging the console."""
    logf = StampedLog(open(log_path, "w", encoding="utf-8", errors="replace"))
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8",
                          codec_errors="replace", timeout=60, env=env,
                          dimensions=(50, 4000))
    child.logfile_read = logf
    procs.register(child.pid)
    child.started = time.monotonic()
    return child


def stop(child):
    """Make sure a child is gone; kill it only if it is still running."""
    try:
        if child.isalive():
            child.terminate(force=True)
        child.close(force=True)
    except pexpect.ExceptionPexpect:
        pass            # already reaped (procs.kill_started on a signal)
    finally:
        procs.unregister(child.pid)
        if child.logfile_read:
            child.logfile_read.close()
