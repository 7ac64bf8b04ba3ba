"""The drift control: the same small read on every storage a run touches, timed at the run's start, between its steps
when the run is long, and at its end (perfkit.experiments.runner). If the control moved while the run ran, conditions
moved under the cells too, and a report says so (perfkit.drift) instead of printing the move as a storage's effect.

The read is one data file's first 64 KiB through perfkit's own client of the storage, READS times round-robin over
the storages: a latency-bound request like a query's footer reads, small enough not to disturb the run. It runs
between steps, never during one, so no run's own I/O counts it."""
from __future__ import annotations

import time
from collections.abc import Callable

from perfkit.errors import root_cause
from perfkit.results import now
from perfkit.storages import get_storage
from perfkit.storages.registry import storage_of_url

READ_BYTES = 64 * 1024
READS = 5  # per storage and round: the median of 5 is steady where one read is not
BETWEEN_S = 120.0  # a run longer than this is timed between steps too, at most this often


class DriftControl:
    """Times each storage's control read; `record()` is what the run's config keeps under "control"."""

    def __init__(self, reads: dict[str, Callable[[], object]], what: str, between_s: float = BETWEEN_S,
                 clock: Callable[[], float] = time.monotonic):
        self.reads, self.what, self.between_s, self.clock = dict(reads), what, between_s, clock
        self.rounds: list[dict] = []
        self.failed: dict[str, str] = {}
        self.last = clock()

    def time(self, at: str) -> None:
        """One round ("start", "between" or "end"): every storage's read READS times, interleaved across storages so a
        passing blip hits them alike. A storage whose read fails is named in `failed` and left out from then on."""
        seconds: dict[str, list[float]] = {where: [] for where in self.reads if where not in self.failed}
        if not self.rounds:  # one untimed read each first: the client's connection and the server's first-request
            for where in list(seconds):  # costs are not conditions (a first round without it read 2-3x slower)
                try:
                    self.reads[where]()
                except Exception as err:  # noqa: BLE001
                    self.failed[where] = f"{at}: {root_cause(err, 200)}"
                    del seconds[where]
        for _ in range(READS):
            for where in list(seconds):
                t0 = time.perf_counter()
                try:
                    self.reads[where]()
                except Exception as err:  # noqa: BLE001 - a control that cannot be read is said, never fatal
                    self.failed[where] = f"{at}: {root_cause(err, 200)}"
                    del seconds[where]
                    continue
                seconds[where].append(round(time.perf_counter() - t0, 6))
        self.rounds.append({"at": at, "time": now(), "seconds": seconds})
        self.last = self.clock()

    def due(self) -> bool:
        """A round between steps is due: the last was more than between_s ago."""
        return self.clock() - self.last >= self.between_s

    def record(self) -> dict:
        failed = {"failed": dict(self.failed)} if self.failed else {}
        return {"what": self.what, "rounds": list(self.rounds), **failed}


def what_read(storages) -> str:
    return (f"a {READ_BYTES // 1024} KiB read of one data file on {', '.join(s.upper() for s in storages)}, "
            f"{READS} times at start and end (and every {BETWEEN_S:.0f} s between steps)")


def files_control(profile, files: dict) -> DriftControl:
    """The control of a run that knows its files: storage -> (folder Location, file name), each read's first
    READ_BYTES."""
    reads = {where: _first_bytes(get_storage(where, profile), folder, name) for where, (folder, name) in files.items()}
    return DriftControl(reads, what_read(list(reads)))


def _first_bytes(storage, folder, name: str) -> Callable[[], bytes]:
    return lambda: storage.read_range(folder, name, 0, READ_BYTES)


def file_read(profile, where: str, url: str, name: str | None = None) -> Callable[[], bytes]:
    """A read of the first READ_BYTES of a file of `where`: `url` is its folder (a table's location), `name` the file
    in it (None: the first listed, looked up once, now)."""
    storage = get_storage(where, profile)
    folder = storage_of_url(url, where)
    if name is None:
        listed = storage.list_tree(folder) or {}
        if not listed:
            raise FileNotFoundError(f"no data file in {url}")
        name = sorted(listed)[0]
    return _first_bytes(storage, folder, name)


def table_control(profile, tableset, storages) -> DriftControl | None:
    """The control of a query run: one file of its first table on each storage that holds files (a tier reads its
    backing storage's files, which are controlled already). A storage whose file cannot be found is said."""
    reads, failed = {}, {}
    for where in storages:
        tables = (getattr(tableset, "tables", None) or {}).get(where) or {}
        table = next(iter(tables.values()), None)
        if table is None:
            continue
        try:
            name = table.first_file.rsplit("/", 1)[-1] if table.first_file else None
            reads[where] = file_read(profile, where, table.location, name)
        except Exception as err:  # noqa: BLE001
            failed[where] = f"start: {root_cause(err, 200)}"
    if not reads and not failed:
        return None
    control = DriftControl(reads, what_read(list(reads) or list(failed)))
    control.failed.update(failed)
    return control
