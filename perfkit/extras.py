"""perfkit's optional parts, named by the extra that installs them.

A cluster node needs only what runs there (the library and its measurements: `pip install perfkit`); rendering
reports (`perfkit[report]`: papermill, nbconvert, JupyterLab) and the tools perfkit runs from its own Python
(`perfkit[tools]`: the aws CLI, DuckDB and tpchgen-cli for TPC-H's independent check) are extras, so installing
perfkit into a cluster's Python brings no second `aws` onto its PATH and no Jupyter onto every node."""
from __future__ import annotations

import importlib
import importlib.util
import sys

from perfkit.errors import PerfkitError

# module -> the extra that installs it
EXTRA_OF = {"papermill": "report", "nbconvert": "report", "nbformat": "report", "awscli": "tools",
            "duckdb": "tools"}


def missing(module: str, needed_for: str) -> str | None:
    """Why `needed_for` cannot run in this Python (the module is not installed, with the fix), or None."""
    if importlib.util.find_spec(module) is not None:
        return None
    return (f"{needed_for} needs {module}, which is not installed in this Python ({sys.executable}). "
            f"Fix: pip install 'perfkit[{EXTRA_OF[module]}]'")


def require(module: str, needed_for: str):
    """The module, imported; or a PerfkitError naming the extra that installs it."""
    reason = missing(module, needed_for)
    if reason:
        raise PerfkitError(reason)
    return importlib.import_module(module)
