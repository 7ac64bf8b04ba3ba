"""Where perfkit keeps things: the tool cache, results, reports and logs (the lab's own home is the lab package's)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from perfkit.errors import PerfkitError


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


def lock_dir() -> Path:
    """Locks that runs on this machine share (a dataset being placed): per user, not per checkout, since two
    checkouts (git worktrees) may run against the one lab."""
    return Path(os.environ.get("PERFKIT_LOCK_DIR", Path.home() / ".local/state/perfkit/locks"))


def ensure_writable_dir(path: Path | str, what: str, fix: str = "") -> Path:
    """`path`, created if missing and proven writable (a temporary file made and removed), else a PerfkitError
    naming the folder, the problem and the fix. Call it before any work whose result goes there: a folder found
    unusable after an hour of measuring loses the hour."""
    path = Path(path)
    fix = fix or "make it a writable folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # exist_ok covers folders only
        raise PerfkitError(f"{what} {path} is not a folder: {fix}") from None
    except OSError as err:
        raise PerfkitError(f"{what} {path} cannot be created ({err.strerror or err}): {fix}") from None
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".perfkit-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise PerfkitError(f"{what} {path} is not writable ({err.strerror or err}): {fix}") from None
    return path


def results_dir_checked(experiment: str | None = None) -> Path:
    """results_dir() (or its `experiment` sub-folder), created and proven writable: call it before measuring."""
    fix = "set PERFKIT_RESULTS to a writable folder"
    root = ensure_writable_dir(results_dir(), "results folder", fix)
    return ensure_writable_dir(root / experiment, "results folder", fix) if experiment else root
