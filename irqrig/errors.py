"""Errors the runner reports as one clear message (no traceback), and the
exit status each one gives.

Exit status of runner.py (README, "Exit status"):
  0  every run passed
  1  a scenario failed (the rig worked and judged it)
  2  bad input or usage: a scenario, suite, results file or command line
     the runner refuses; nothing was run or written
  3  the rig itself failed (a build, a missing package, a crash of the
     runner) or a run is incomplete (interrupted, timed out, errored)
"""

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_RIG = 3


class IrqrigError(Exception):
    """Base: the message says what happened and where the logs are."""
    exit_code = EXIT_RIG


class UsageError(IrqrigError):
    """Bad input: a command line, file or value the runner refuses."""
    exit_code = EXIT_USAGE


class ScenarioError(UsageError):
    """A scenario or suite file is invalid: names the file and the key."""


class ResultsError(UsageError):
    """A results.json that cannot be read (missing, truncated, old schema)."""


class NotBuiltError(UsageError):
    """--no-build was given but what the command needs is not built."""


class MissingError(IrqrigError):
    """A package, source or build product is missing; says how to get it."""


class BuildError(IrqrigError):
    """A build step failed."""


class GuestError(IrqrigError):
    """The guest panicked, hung or did not boot."""


class RunTimeout(GuestError):
    """A run went past its scenario's timeout_s and was stopped."""


class Interrupted(BaseException):
    """SIGTERM/SIGHUP (or Ctrl-C) during a run: the run set is written as
    incomplete and the runner exits with EXIT_RIG.  A BaseException so that
    no `except Exception` in a step swallows it."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason
