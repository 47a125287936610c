"""gdb-scripts/irqrig_gdb, imported by runner code (its gdb-free modules).

The package lives beside the runner for gdb, which sources
gdb-scripts/irqrig.py; the runner imports it here, once, by its file
location (no sys.path edits).  Modules that `import gdb` work only in gdb.
"""

import importlib
import importlib.util
import os
import sys

from irqrig import paths

_PKG = "irqrig_gdb"


def _package():
    if _PKG not in sys.modules:
        where = os.path.join(paths.GDB_SCRIPTS, _PKG)
        spec = importlib.util.spec_from_file_location(
            _PKG, os.path.join(where, "__init__.py"), submodule_search_locations=[where])
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[_PKG] = pkg
        spec.loader.exec_module(pkg)
    return sys.modules[_PKG]


def module(name):
    """irqrig_gdb.<name>, e.g. module("inventory")."""
    _package()
    return importlib.import_module("%s.%s" % (_PKG, name))
