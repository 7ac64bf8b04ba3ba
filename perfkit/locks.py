"""One run at a time places a dataset (or makes a partitioned table): a second run waits, then finds the data in
place (the table made) and reuses it.

Without it, two runs started together on data not yet generated both generate and upload the same files, and one
deletes the folder the other is filling (a dataset folder whose marker says incomplete is a stopped run's leftover
to the placement plan). The lock is an flock(2) on a file: the kernel releases it when its holder exits, however it
exits, so a killed run never leaves the next one waiting.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from perfkit.paths import lock_dir


def dataset_lock(name: str, file_format: str, where: list[str]) -> contextlib.AbstractContextManager:
    """The lock of dataset `name` in `file_format` at the folders `where` (URLs): two runs placing it at other
    folders (another profile's prefix, another cluster) do not wait for each other."""
    key = hashlib.sha256("\n".join(sorted(where)).encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{name}-{file_format}")
    return held(lock_dir() / f"{safe}-{key}.lock", f"dataset {name} ({file_format})")


def table_lock(engine: str, table: str) -> contextlib.AbstractContextManager:
    """The lock of making table `table` (a name that ends with its definition's digest) on `engine`: a table is made
    in several statements (look, drop perfkit's stale one, CREATE, then its partitions), and a second run must neither
    drop it nor take it as made before its partitions are there."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"table-{engine}-{table}")
    return held(lock_dir() / f"{safe}.lock", f"table {table} on {engine}", doing="making",
                then="the table is shared")


@contextlib.contextmanager
def held(path: Path, what: str, doing: str = "placing", then: str = "its data is reused") -> Iterator[None]:
    """Hold the lock file `path` for the block; if another process holds it, say so once on stderr and wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # the file is never deleted: a run that deleted it could let a third lock a new file while a second holds the old
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another perfkit run"
            print(f"perfkit: {holder} is {doing} {what}: waiting for it to finish, then {then} (lock {path})",
                  file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"perfkit run pid {os.getpid()} (since {time.strftime('%H:%M:%S')})")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
