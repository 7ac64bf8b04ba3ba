"""Whether another perfkit run measured at the same time as this one: then a server's counters hold both runs' I/O,
and neither run's share can be told ("not attributable"), so it is never split or given to one of them.

Each process appends a byte to a shared file when it starts measuring (O_APPEND: atomic) and holds an flock on a
file of its own while it measures. A run overlapped another if, at its end, the shared file grew by more than its
own byte (another started during it), or, at its start, another process's file was locked (one was measuring)."""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from perfkit.paths import lock_dir


class ConcurrentRuns:
    appended = 0  # this process's bytes in the shared file: a window over its own runs tells them from others'

    def __init__(self, folder: Path | None = None):
        self.folder = (folder or lock_dir()) / "measuring"
        self._mine = self.folder / f"{os.getpid()}.lock"
        self._handle = None
        self._size_at_start = 0
        self._others_at_start = False

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._others_at_start = self.others_measuring()
        self._handle = open(self._mine, "a+")  # held until stop()
        fcntl.flock(self._handle, fcntl.LOCK_EX)
        fd = os.open(self.folder / "starts", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, b".")
            ConcurrentRuns.appended += 1
            self._size_at_start = os.lseek(fd, 0, os.SEEK_CUR)  # just past our byte, whoever appends after
        finally:
            os.close(fd)

    def stop(self) -> bool:
        """True when another run measured during this one."""
        size = self.starts_size()
        started_since = 1 if size is None else size - self._size_at_start  # the file went: cannot tell
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None
            self._mine.unlink(missing_ok=True)
        return self._others_at_start or started_since > 0

    def starts_size(self) -> int | None:
        """The shared file's size: one byte per run ever started here; None when it is not there."""
        try:
            return (self.folder / "starts").stat().st_size
        except OSError:
            return None

    def others_measuring(self) -> bool:
        for path in self.folder.glob("*.lock"):
            if path == self._mine:
                continue
            with contextlib.suppress(OSError), open(path) as handle:  # read-only: a checker never makes a file
                try:
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(handle, fcntl.LOCK_UN)
        return False


class OtherRunsInWindow:
    """Whether another process measured during a window that spans many of this process's runs (an experiment's
    CloudWatch window): such a process was measuring when the window opened, or appended more bytes than this
    process did while it was open. This process's own runs, measuring inside the window, are no overlap."""

    def __init__(self, folder: Path | None = None):
        self.runs = ConcurrentRuns(folder)
        self._size = self._appended = 0
        self._others_at_open = False

    def open(self) -> None:
        self.runs.folder.mkdir(parents=True, exist_ok=True)
        self._others_at_open = self.runs.others_measuring()
        self._size, self._appended = self.runs.starts_size() or 0, ConcurrentRuns.appended

    def close(self) -> bool:
        """True when another process measured during the window."""
        others_started = (self.runs.starts_size() or 0) - self._size - (ConcurrentRuns.appended - self._appended)
        return self._others_at_open or others_started > 0
