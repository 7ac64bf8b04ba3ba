"""Where perfkit keeps things: lab state, the tool cache, results and reports."""
from __future__ import annotations

import os
from pathlib import Path


def lab_home() -> Path:
    """Lab data, logs, configs and pid files: one folder."""
    return Path(os.environ.get("PERFKIT_LAB_HOME", Path.home() / ".local/state/perfkit/lab"))


def tool_cache() -> Path:
    """Downloaded tools (jars, Go binaries), outside any clone so a second clone reuses them."""
    return Path(os.environ.get("PERFKIT_CACHE", Path.home() / ".cache/perfkit"))


def project_root() -> Path:
    """The checkout perfkit runs from (editable install), else the working directory."""
    here = Path(__file__).resolve().parents[1]
    if (here / "pyproject.toml").exists() and (here / "notebooks").is_dir():
        return here
    return Path.cwd()


def results_dir() -> Path:
    return Path(os.environ.get("PERFKIT_RESULTS", project_root() / "data" / "results"))


def reports_dir() -> Path:
    return Path(os.environ.get("PERFKIT_REPORTS", project_root() / "reports"))


def log_dir() -> Path:
    """Logs of the processes perfkit starts for a run (the Spark driver's), not of the lab's daemons."""
    return Path(os.environ.get("PERFKIT_LOG_DIR", Path.home() / ".local/state/perfkit/logs"))
