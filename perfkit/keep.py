"""Where a run's records go when its results folder cannot take them (a full disk, a folder made read-only).

The runs measured are the expensive part: a save that fails writes them to the first fallback folder that takes
them, and the error names the path that failed, why, where the records are and the fix.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from perfkit import atomic
from perfkit.errors import PerfkitError

NO_ROOM = (errno.ENOSPC, errno.EDQUOT)
RESULTS_SETTING = "PERFKIT_RESULTS"  # perfkit.paths.results_dir's setting


class ResultsNotSaved(PerfkitError):
    """The results file could not be written; `kept` is where the records are instead (None: nowhere)."""

    def __init__(self, path: Path, error: OSError, kept: Path | None, records: int, tried: dict[Path, str]):
        self.path, self.error, self.kept = path, error, kept
        why = error.strerror or str(error)
        if error.errno in NO_ROOM:
            fix = f"free space on {mount_point(path)} or set {RESULTS_SETTING} to another folder"
        else:
            fix = f"make {path.parent} writable or set {RESULTS_SETTING} to another folder"
        measured = f"the {records} records measured are" if records != 1 else "the 1 record measured is"
        if kept is not None:
            where = f"{measured} kept in {kept}"
        else:
            where = (f"{measured} could not be kept elsewhere either ("
                     + "; ".join(f"{folder}: {reason}" for folder, reason in tried.items()) + ")")
        super().__init__(f"cannot save the results to {path}: {why}; {where}. Fix: {fix}")


def fallback_folders() -> list[Path]:
    """Where records go when the results folder cannot take them, in order: the user's home, then the temporary
    folder (often another file system, e.g. a tmpfs, with room when the home's disk is full)."""
    return [Path.home() / ".local/state/perfkit/results", Path(tempfile.gettempdir()) / "perfkit-results"]


def keep_elsewhere(path: Path, relative: Path, text: str, records: int, error: OSError) -> ResultsNotSaved:
    """Write `text` to `relative` under the first fallback folder that takes it; the error to raise, naming it."""
    tried = {}
    for folder in fallback_folders():
        target = folder / relative
        if target == path:
            continue
        try:
            atomic.write_text(target, text)
        except OSError as err:
            tried[folder] = err.strerror or str(err)
            continue
        return ResultsNotSaved(path, error, target, records, tried)
    return ResultsNotSaved(path, error, None, records, tried)


def mount_point(path: Path) -> Path:
    """The file system `path` is on, as its mount point (the folder to free space on)."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:  # a folder not yet made is on its first existing ancestor's
        path = path.parent
    while not os.path.ismount(path):
        path = path.parent
    return path
