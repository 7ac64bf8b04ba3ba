"""The one window mechanism: a storage's own count of an experiment's runs, read once before the first run and once
after the last (where it cannot be read around each run), beside the engines' sum over the same runs.

A window is a storage's counter source with `open()`, `close(records=...) -> WindowCount` and `abandon() -> str | None`:
S3's CloudWatch request metrics (perfkit.accounting.window) and HDFS's JMX (perfkit.accounting.hdfs_window).
counted_window() opens it around the runs and stores its comparison in results.config; compare_with_engines() is the
one comparison of a window's count with the engines'."""
from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from perfkit.accounting.concurrent import OtherRunsInWindow
from perfkit.accounting.recorded_io import RunIO
from perfkit.storages import backing_of

STOPPED = "not counted: the experiment stopped before its last run"


@dataclass
class WindowCount:
    """What a storage counted from `start` to `end`: `totals` under perfkit's counter names, or `missing` with why
    (then no totals: never zeros); `notes` on what the count holds."""
    source: str
    start: datetime
    end: datetime
    totals: dict[str, float] = field(default_factory=dict)
    missing: str | None = None
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict:
        """A JSON-ready summary for a run's config."""
        return {"source": self.source, "window": [self.start.isoformat(), self.end.isoformat()],
                "totals": self.totals, "missing": self.missing or "", "notes": self.notes}


@contextlib.contextmanager
def counted_window(results, key: str, window, compare: Callable, others: OtherRunsInWindow | None = None):
    """Around an experiment's runs: `window` opened before them and closed after; its count compared with the
    engines' sum over the same runs (`compare(count, records, attributable)`, a table with attrs["notes"]) and
    stored in results.config[key], with whether another perfkit process measured in the window (`others`: then the
    storage's count is not this experiment's alone). A run that stops in the window leaves the count missing."""
    others = others or OtherRunsInWindow()
    window.open()  # a window that cannot be opened (a filter perfkit may not create) fails before any run
    others.open()
    try:
        yield window
    except BaseException:
        problem = window.abandon()
        results.config[key] = {"missing": STOPPED, "notes": [problem] if problem else []}
        raise
    attributable = not others.close()
    count = window.close(records=results.records)
    compared = compare(count, results.records, attributable)
    results.config[key] = {**count.describe(), "attributable": attributable, "notes": compared.attrs["notes"],
                           "compared": stored_rows(compared)}


def compare_with_engines(count: WindowCount, records, *, storage: str, label: str, server: str,
                         counters: dict[str, str], engine_counts: Callable[[dict], dict[str, float] | None],
                         attributable: bool, overlapped: str, caveat: str) -> pd.DataFrame:
    """One row per counter of `counters` (name -> what): what the storage counted in the window (`server` names its
    column), the engines' sum over the runs on `storage` that started in it (`engine_counts(RunIO.engine)`: the
    counters a run's engine count gives, None when it has none) and the storage's minus the engines' (none when the
    window is not `attributable`). Unknown is NaN, never 0: summed only when every run counted it. attrs["notes"]
    says why, and what else the storage counted (`caveat`)."""
    notes = list(count.notes) + ([] if attributable else [overlapped])
    in_window = [r for r in records if count.start <= started(r) < count.end]
    on_storage = [r for r in in_window if r.storage == storage]
    counted = [c for r in on_storage if (c := engine_counts(RunIO.of(r.io).engine)) is not None]
    if not on_storage:
        notes.append(f"no run on {label} started in the window")
    elif len(counted) < len(on_storage):
        notes.append(f"{len(on_storage) - len(counted)} of {len(on_storage)} runs on {label} in the window have no "
                     "engine count: the engines' sum is not shown")
    complete = bool(on_storage) and len(counted) == len(on_storage)
    if count.missing:
        notes.append(f"{label}'s count: {count.missing}")
    through_tier = sum(1 for r in in_window if r.storage != storage and backing_of(r.storage) == storage)
    if through_tier:
        notes.append(f"{through_tier} runs through a cache tier in the window: the tier's own {label} requests are in "
                     f"{label}'s count, not in any engine's")
    notes.append(caveat)
    rows = []
    for name, what in counters.items():
        value = math.nan if count.missing else count.totals.get(name, math.nan)
        engines = math.fsum(c[name] for c in counted) if complete and all(name in c for c in counted) else math.nan
        rows.append({"counter": name, "what": what, server: value, "engines": engines,
                     "difference": value - engines if attributable else math.nan})
    table = pd.DataFrame(rows)
    table.attrs["notes"] = notes
    return table


def stored_rows(table: pd.DataFrame) -> list[dict]:
    """A window's comparison as results.config keeps it (JSON): an unknown figure is null, not NaN."""
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in table.to_dict("records")]


def started(record) -> pd.Timestamp:
    """When a run started, as a timestamp (records keep ISO text)."""
    return pd.to_datetime(record.started_at, utc=True)
