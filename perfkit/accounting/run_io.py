"""One run's I/O: every source read just before and just after the run, each side's difference kept apart.

Each run's I/O is a RunIO (perfkit.accounting.recorded_io): a side that could not be read is missing with its
reason (the run itself is kept; a counter the server's sources do not count is not_counted, with why), and a run
that overlapped another perfkit run is "not attributable": its server counters are not kept, never shared. So is a
run whose engine still had work running when the run's I/O was read (`settle`), which the next run's snapshots would
otherwise split between the two."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from perfkit.accounting import counters
from perfkit.accounting.concurrent import ConcurrentRuns
from perfkit.accounting.recorded_io import SIDES, RunIO
from perfkit.accounting.sources import ServerSources
from perfkit.errors import root_cause

READERS = ThreadPoolExecutor(8, thread_name_prefix="run-io")  # shared by every run: one run measures at a time
NOT_ATTRIBUTABLE = "not attributable: another perfkit run measured at the same time, and the server counts both"


class RunAccounting:
    """Snapshots around runs, one at a time. `server` are the storages' own counters (S3 log, HDFS JMX, ...);
    `engine` is a callable that returns the engine's own counters, or None when it keeps none."""

    def __init__(self, server_sources: ServerSources, engine=None, engine_source: str = "",
                 concurrent: ConcurrentRuns | None = None, storage: str | None = None, settle=None):
        # only the sources of the storage the run reads (`storage`, by name; None: every storage's)
        wanted = server_sources.on(storage)
        self.server_sources = wanted.read
        self._not_per_run = list(wanted.not_per_run.values())  # said by each run on their storage
        self._not_counted = {counter: why for whys in wanted.not_counted.values() for counter, why in whys.items()}
        self.engine, self.engine_source = engine, engine_source
        # waits until the engine runs nothing (Engine.settle): None, or what still ran
        self.settle = settle or (lambda: None)
        self._unsettled: list[str] = []
        self.concurrent = concurrent or ConcurrentRuns()
        self._before: dict[str, dict | str] = {}
        self._after_asked: tuple | None = None  # the after snapshot's reads, out since finish()
        self._failed: list[str] = []  # server sources that did not answer the last snapshot

    def before(self) -> None:
        self.concurrent.start()
        self._unsettled = [f"before the run: {why}"] if (why := self.settle()) else []
        self._before = self._collect(self._ask())

    def finish(self) -> None:
        """The run is over: its after snapshot's reads go out now, and after() collects them. In between the caller
        may do what touches no storage (hash the answer): the reads are round trips, and they wait in parallel."""
        if why := self.settle():
            self._unsettled.append(f"after the run: {why}")
        self._after_asked = self._ask()

    def after(self) -> RunIO:
        failed_before = self._failed
        if self._after_asked is None:
            self.finish()
        after, self._after_asked = self._collect(self._after_asked), None
        overlapped = self.concurrent.stop()
        io = RunIO(attributable=not (overlapped or self._unsettled))
        for side, was in self._before.items():
            now = after.get(side)
            if isinstance(was, str) or isinstance(now, str) or now is None:
                io.missing[side] = was if isinstance(was, str) else now if isinstance(now, str) else "not read after"
                continue
            setattr(io, side, counters.difference(was, now))
            io.sources[side] = self._source_name(side)
        if self._not_per_run and io.server is None and "server" not in io.missing:
            io.missing["server"] = "; ".join(self._not_per_run)
        failed = list(dict.fromkeys(failed_before + self._failed))
        if failed and io.server is not None:  # a source that failed either time: its counters are not this run's
            io.missing["server"] = "; ".join(failed)
        if overlapped and io.server is not None:
            io.drop("server", NOT_ATTRIBUTABLE)
        elif self._unsettled:  # both sides: the engine's count, too, holds work of another run or misses some
            for side in SIDES:
                io.drop(side, "not attributable: " + "; ".join(self._unsettled))
        if io.server is not None:  # read, but without these counters: why their blanks are blank
            io.not_counted.update(self._not_counted)
        return io

    def abandon(self) -> None:
        """The run stopped (Ctrl-C): no after snapshot, but other runs must not see this one as still measuring."""
        self.concurrent.stop()

    def _source_name(self, side: str) -> str:
        if side == "engine":
            return self.engine_source
        return "; ".join(source.name for source in self.server_sources)

    def _ask(self) -> tuple:
        """A snapshot's reads, sent: the sources and the engine are read side by side, each a round trip (JMX, a
        metrics endpoint), and a run pays two snapshots."""
        asked = [(source, READERS.submit(source.read)) for source in self.server_sources]
        return asked, READERS.submit(self.engine) if self.engine is not None else None

    def _collect(self, reads: tuple) -> dict[str, dict | str]:
        """Each side's counters, or why they could not be read. A server source that does not answer is left out of
        the sum and named (its counters then show as not counted, not as zero)."""
        asked, engine = reads
        found: dict[str, dict | str] = {}
        if asked:
            counts, failed = [], []
            for source, answer in asked:
                try:
                    counts.append(answer.result())
                except Exception as err:  # noqa: BLE001 - a source that does not answer: its counts are missing
                    failed.append(f"{source.name} not read: {root_cause(err, 160)}")
            found["server"] = counters.total(*counts) if counts else "; ".join(failed)
            self._failed = failed
        if engine is not None:
            try:
                engine_counts = engine.result()
            except Exception as err:  # noqa: BLE001
                engine_counts = f"not read: {root_cause(err, 200)}"
            if engine_counts is not None:
                found["engine"] = engine_counts
        return found
