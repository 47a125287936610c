"""Errors the runner reports as one clear message (no traceback)."""


class IrqrigError(Exception):
    """Base: the message says what happened and where the logs are."""


class MissingError(IrqrigError):
    """A package, source or build product is missing; says how to get it."""


class BuildError(IrqrigError):
    """A build step failed."""


class ScenarioError(IrqrigError):
    """A scenario file is invalid: names the file and the key."""


class GuestError(IrqrigError):
    """The guest panicked, hung or did not boot."""
