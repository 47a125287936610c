"""Helpers for end-to-end tests: run scenario text on real boots."""

import os
import tomllib

from irqrig import paths, rejudge, results, scenario, suite


def _checked(rs):
    """Every e2e result set is judged again from its records alone
    (runner.py rejudge): the verdicts must come out the same."""
    data = results.load(rs.dir)
    again = rejudge.rejudge(data)
    diff = rejudge.changes(data, again)
    if diff:
        raise AssertionError("rejudge disagrees with the run's own verdicts: %s" % diff)
    return rs


def run_text(text, label, variants=None):
    """Run scenario TOML text (no build: the test command built everything)."""
    points = scenario.parse(tomllib.loads(text), "%s.toml" % label)
    return _checked(suite.execute(points, "e2e-" + label, ["tests/e2e", label],
                                  only_variants=variants, do_build=False))


def run_file(name, label, variants=None):
    points = scenario.load(os.path.join(paths.SCENARIOS, name + ".toml"))
    return _checked(suite.execute(points, "e2e-" + label, ["tests/e2e", label],
                                  only_variants=variants, do_build=False))


def verdict(run, name_part):
    for v in run["verdicts"]:
        if name_part in v["name"]:
            return v
    return None
