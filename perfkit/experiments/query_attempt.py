"""One query run: the engine's call timed inside its observers (perfkit.experiments.attempt: the storage's health,
the run's I/O, S3's throttled requests), and the record it leaves, a sample or a failure with its cause.

A stop (Ctrl-C, SIGTERM) goes up to the runner, which records the run in flight (perfkit.experiments.runner).
started_at + wall_s is the timed interval: the observers' snapshots are outside both. A write workload's result is
what it wrote, read back after the timing."""
from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable

from perfkit.accounting.run_io import RunAccounting
from perfkit.accounting.sources import ServerSources
from perfkit.engines import result_hash
from perfkit.errors import root_cause
from perfkit.experiments.attempt import Observer, Run, RunIo, S3Faults, StorageHealth, Watched
from perfkit.results import ResultSet, now
from perfkit.storages import backing_of


def timed_run(results: ResultSet, record: dict, engine, sql: str, observers: list[Observer],
              timeout_s: float | None, explain: Callable[[str], str | None], read_back: str | None = None) -> None:
    """Run `sql` once on `engine` and add its record to `results` (`record`: subject, storage, case, phase,
    iteration, params). `explain`: the storage's reading of an engine error (None: its root cause stands);
    `read_back`: the table a write workload wrote, whose rows are its result."""
    with Watched(observers) as watched:
        if watched.refused:
            results.add(**record, started_at=now(), wall_s=None, ok=False, error=watched.refused)
            return
        started, t0 = now(), time.perf_counter()
        try:
            rows = engine.execute(sql, timeout_s=timeout_s)
            error = None
            watched.answered()
        except Exception as err:  # noqa: BLE001 - any engine error fails this run only
            error = explain(str(err)) or root_cause(err, 500)
        wall = time.perf_counter() - t0
        watched.stop()
        digest = result_hash(rows) if error is None and not read_back else None
        run = watched.end(Run(record, error))
    if run.error:
        results.add(**record, io=run.io.stored(), started_at=started, wall_s=wall, ok=False, error=run.error)
        return
    if read_back:
        rows = engine.execute(f"SELECT * FROM {read_back}")
        digest = result_hash(rows)
    results.add(**record, io=run.io.stored(), started_at=started, wall_s=wall, rows=len(rows), result_hash=digest)


def run_observers(profile, results: ResultSet, engine, where: str, probe, health_interval_s: float,
                  accounting: RunAccounting | None) -> list[Observer]:
    """What watches each run on `where`: the storage's health (`probe`), S3's throttled requests and, where counted,
    the run's I/O (S3Faults reads what RunIo counted: it ends after it)."""
    return [StorageHealth({where: probe}, health_interval_s),
            S3Faults(profile, results.config, engine, where, counted=accounting is not None),
            *([RunIo(accounting)] if accounting else [])]


def run_accounting(engine, where: str, io_sources: ServerSources) -> RunAccounting:
    """The snapshots around one run on `where`: the storages' own counters (`io_sources`) and the engine's, of the
    storage the run reads (a tier reads S3); a stand-in engine may count only throttled S3 requests, or nothing."""
    storage = backing_of(where) or where  # a tier reads its backing storage
    counts = getattr(engine, "io_counters", None) or getattr(engine, "s3_counters", None)
    if counts is not None and "storage" in inspect.signature(counts).parameters:  # an engine that can narrow them
        counts = functools.partial(counts, storage=where)
    source = engine.io_source() if hasattr(engine, "io_source") else f"{engine.name}'s S3 client statistics"
    settle = getattr(engine, "settle", None)
    return RunAccounting(io_sources, counts, source if counts else "", storage=storage, settle=settle)
