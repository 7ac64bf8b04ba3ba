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
from collections.abc import Callable, Iterator
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.paths import lock_dir, tool_cache


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


NETWORK_LOCK = "s3-network.lock"


@contextlib.contextmanager
def network_in_use(what: str = "a perfkit run") -> Iterator[None]:
    """Held (shared) by every run while it measures: the S3 network it records must be the one it ran behind.
    Runs share it with each other; `perfkit lab network` takes it alone and is refused while any run holds it."""
    path = lock_dir() / NETWORK_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits only while a network change is being made
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def network_change() -> Iterator[None]:
    """Held (alone) while the S3 network changes; refused at once, with the fix, while a run measures."""
    path = lock_dir() / NETWORK_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PerfkitError("the S3 network cannot change while a perfkit run is measuring behind it (lock "
                               f"{path}): wait for the run to end, then set the network again") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fetched_once(target: Path, ready: Path, fetch: Callable[[], object]) -> Path:
    """`target` in the tool cache, made by `fetch()` unless `ready` (its completion marker, or itself) exists.

    Under a lock of its own in the tool cache (its .locks folder), not in lock_dir(): every lab that shares the cache
    shares it (two clones starting their labs at once, the test suite's labs side by side), so the second waits and
    finds it made, where it would have fetched it again and replaced the folder the first was starting a daemon from."""
    if ready.exists():
        return target
    key = hashlib.sha256(str(target).encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", target.name)
    with held(tool_cache() / ".locks" / f"{safe}-{key}.lock", str(target), doing="fetching", then="it is reused"):
        if not ready.exists():
            fetch()
    return target
