"""What watches one attempt of any experiment (a query run, a copy, a read test, a TestDFSIO operation), each concern
on its own: the storage's health, the run's I/O, the engine's throttled and retried S3 requests, a cache tier's
counters. The experiment times its call; the observers add to the attempt's record.

    with Watched([StorageHealth(...), S3Faults(...), RunIo(...)]) as watched:
        if watched.refused: ...                 # a storage was down before the run: it does not start
        ... rows = engine.execute(sql); watched.answered() ...
        watched.stop()                          # the timed interval is over
        run = watched.end(Run(record, error))   # io, flags, the storage's fault: added by each observer

Observers start in their list's order and end in the reverse one (a stack): S3Faults reads the I/O RunIo counted.
A run that stops otherwise (Ctrl-C, an observer's own error) lets every started observer go (abandon).
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from perfkit.accounting.recorded_io import RunIO
from perfkit.accounting.run_io import RunAccounting
from perfkit.health import HealthWatch
from perfkit.storages import backing_of, client_of, get_storage
from perfkit.storages.base import S3_CLIENT

S3_FAULTS = ("s3_throttled", "s3_retried")  # the S3 requests a run had throttled or retried: flagged, not failed


@dataclass
class Run:
    """One run's record as the observers complete it: `record` holds the ResultSet.add fields (params among them)."""
    record: dict
    error: str | None = None
    io: RunIO = field(default_factory=RunIO)


class Observer:
    """Hooks around one run; each is optional."""

    def start(self) -> str | None:
        """Before the timed interval; a reason returned here means the run does not start."""
        return None

    def answered(self) -> None:
        """The engine answered (inside the timed interval)."""

    def stop(self) -> None:
        """The timed interval is over, answer or error; the answer is not hashed yet."""

    def end(self, run: Run) -> None:
        """After the run: add to its record."""

    def abandon(self) -> None:
        """The run stopped without end(): let go of what it held."""


class Watched:
    """The observers of one run, as a context manager (see the module's example)."""

    def __init__(self, observers: list[Observer]):
        self.observers = observers
        self.refused: str | None = None
        self._started: list[Observer] = []
        self._ended = False

    def __enter__(self) -> Watched:
        for observer in self.observers:
            self._started.append(observer)
            if reason := observer.start():
                self.refused = reason
                break
        return self

    def answered(self) -> None:
        for observer in self._started:
            observer.answered()

    def stop(self) -> None:
        for observer in self._started:
            observer.stop()

    def end(self, run: Run) -> Run:
        self._ended = True
        for observer in reversed(self._started):
            observer.end(run)
        return run

    def __exit__(self, *exc) -> None:
        if not self._ended:
            for observer in reversed(self._started):
                with contextlib.suppress(Exception):  # letting go never hides why the run stopped
                    observer.abandon()


class StorageHealth(Observer):
    """The storage probed before, during and after the run (HealthWatch): down before, the run does not start; down
    during or after, that is the run's error, whatever the engine said."""

    def __init__(self, probes: dict, interval_s: float, said_by: str = "the engine"):
        self.watch = HealthWatch(probes, interval_s)
        self.said_by = said_by  # who ran the attempt, quoted after the storage's fault: a tool's own error follows

    def start(self) -> str | None:
        self.watch.__enter__()
        return self.watch.problem  # do not even start: the run would only wait in storage-client retries

    def answered(self) -> None:
        self.watch.answered()

    def end(self, run: Run) -> None:
        self.watch.__exit__(None, None, None)
        if self.watch.problem:  # the storage's fault is the cause
            run.error = self.watch.problem + (f"; {self.said_by} said: {run.error}" if run.error else "")

    def abandon(self) -> None:
        self.watch.__exit__(None, None, None)


class RunIo(Observer):
    """The storages' and the engine's counters around the run (RunAccounting): the record's io."""

    def __init__(self, accounting: RunAccounting):
        self.accounting = accounting

    def start(self) -> None:
        self.accounting.before()  # outside the timed interval

    def stop(self) -> None:
        self.accounting.finish()  # the after snapshot's reads go out; the answer is hashed while they are out

    def end(self, run: Run) -> None:
        run.io = self.accounting.after()

    def abandon(self) -> None:
        self.accounting.abandon()


class S3Faults(Observer):
    """The engine's throttled and retried S3 requests during a run on a storage that reads S3 (s3, a tier in front of
    it), flagged in the run's params: from the run's I/O where RunIo counted it (`counted`), else the engine's
    counters before and after. The run set's config says, per engine, whether the engine counts them at all."""

    def __init__(self, profile, config: dict, engine, where: str, counted: bool):
        self.profile, self.config, self.engine, self.where, self.counted = profile, config, engine, where, counted
        self.reads_s3 = client_of(backing_of(where)) == S3_CLIENT  # the engine's S3 client reads it
        self.before: dict[str, float] = {}

    def start(self) -> None:
        if self.reads_s3 and not self.counted:
            self.before = self.counters()

    def end(self, run: Run) -> None:
        if not self.reads_s3:
            return
        if self.counted:
            found = {key: value for key, value in run.io.counts("engine").items() if key in S3_FAULTS}
        else:
            after = self.counters() if self.before else {}
            found = {key: after.get(key, 0) - self.before.get(key, 0) for key in after}
        counted = self.config.setdefault("s3_throttling_counted", {})
        counted[self.engine.name] = counted.get(self.engine.name, False) or bool(found or self.before)
        for name, key in (("throttled", "s3_throttled"), ("retried", "s3_retried")):  # flagged, not failed
            if (n := found.get(key, 0)) > 0:
                run.record["params"][name] = int(n)

    def counters(self) -> dict[str, float]:
        """The engine's throttled and retried S3 requests so far; {} when it does not count them (or its counter
        cannot be read: not counted, the run goes on)."""
        try:
            found = get_storage(self.where, self.profile).snapshot(self.engine)
        except Exception:  # noqa: BLE001 - a counter that cannot be read is not counted; the run goes on
            found = {}
        return {key: value for key, value in found.items() if key in S3_FAULTS}


class TierCounters(Observer):
    """A cache tier's own counters around one read through it: the bytes it served from the cache and fetched from S3
    (so a "hot" read that missed shows), in the run's params. `settle`: the fill the read started is waited for as
    soon as the timed interval is over (it belongs to this read, and must not run into the next); first in the
    observers' list, it stops first, so the run's I/O (RunIo) is read after the fill too: the S3 server's count and
    the tier's then cover the same reads. `details`: also the tier's activity, what it holds after, and how long its
    fill went on past the query."""

    def __init__(self, cache, engine, settle: bool = True, details: bool = True):
        self.cache, self.engine, self.settle, self.details = cache, engine, settle, details
        self.before = None
        self.worked_before: dict = {}
        self.settled: str | None = None
        self.waited_s = 0.0

    def start(self) -> None:
        self.before = self.cache.counters(self.engine)
        if self.details:
            self.worked_before = self.cache.activity()

    def stop(self) -> None:
        if self.settle:
            waited = time.monotonic()
            self.settled = self.cache.settle()
            self.waited_s = time.monotonic() - waited

    def end(self, run: Run) -> None:
        settled, waited = self.settled, self.waited_s
        after = self.cache.counters(self.engine)
        params = run.record["params"]
        if after and self.before:
            used = after - self.before
            params.update({"cache_bytes": used.cache_bytes, "s3_bytes": used.s3_bytes})
            if self.details:
                worked = {name: n - self.worked_before[name] for name, n in self.cache.activity().items()
                          if name in self.worked_before}
                if worked:
                    params["tier_activity"] = worked
        if not self.details:
            return
        held = self.cache.cached_bytes()
        if held is not None:
            params["tier_holds_bytes"] = held
            params["tier_capacity_bytes"] = self.cache.capacity_bytes()
        if settled:  # the tier fills in the background: how long past the query it went on
            params.update({"settled": settled, "fill_wait_s": round(waited, 2)})
