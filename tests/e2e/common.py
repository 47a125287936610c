"""Helpers for end-to-end tests: run scenario text on real boots."""

import os
import tomllib

from irqrig import paths, scenario, suite


def run_text(text, label, variants=None):
    """Run scenario TOML text (no build: the test command built everything)."""
    points = scenario.parse(tomllib.loads(text), "%s.toml" % label)
    return suite.execute(points, "e2e-" + label, ["tests/e2e", label],
                         only_variants=variants, do_build=False)


def run_file(name, label, variants=None):
    points = scenario.load(os.path.join(paths.SCENARIOS, name + ".toml"))
    return suite.execute(points, "e2e-" + label, ["tests/e2e", label],
                         only_variants=variants, do_build=False)


def verdict(run, name_part):
    for v in run["verdicts"]:
        if name_part in v["name"]:
            return v
    return None
