"""How a measurement is taken: warm-up runs, then measured runs interleaved across storages; the cold-cache step."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


@dataclass(frozen=True)
class Step:
    phase: str  # warmup | measured
    iteration: int
    storage: str
    cold: bool = False  # drop the page cache first


@dataclass(frozen=True)
class Protocol:
    """The query experiments' (QueryParameters builds it from its fields, where the defaults are declared once)."""
    warmup: int
    runs: int
    cold_cache: bool = False  # measured runs start with an empty page cache (benchto's cache-drop phase)

    def __post_init__(self):
        if self.warmup < 0 or self.runs < 1:
            raise ValueError(f"need warmup >= 0 and runs >= 1 (got warmup={self.warmup}, runs={self.runs})")

    def steps(self, storages: list[str], key: str = "", seed: int = 0) -> Iterator[Step]:
        """Round after round, every storage once, in run_order: a drift in the machine's load hits every storage alike
        and no storage always runs first (the measured rounds continue the warm-up's rotation)."""
        for phase, count, first in (("warmup", self.warmup, 0), ("measured", self.runs, self.warmup)):
            for iteration in range(count):
                for storage in run_order(storages, first + iteration, key, seed):
                    yield Step(phase, iteration, storage, cold=self.cold_cache and phase == "measured")

    def count(self, storages: list[str]) -> int:
        return (self.warmup + self.runs) * len(storages)


@dataclass(frozen=True)
class QueryStep:
    """One query run of a query experiment: an engine, a query of the suite, its protocol step; `try_`: which read
    of a cache tier's sequence it is (cold, warm, hot; fill, hot), where the experiment has one."""
    engine: str
    query: object  # perfkit.suites.Query: its `id` is the record's case
    step: Step
    try_: str | None = None

    @property
    def storage(self) -> str:
        return self.step.storage

    def record(self) -> dict:
        """The record fields of this run (what the runner records when a stop interrupts it)."""
        return dict(subject=self.engine, storage=self.step.storage, case=self.query.id, phase=self.step.phase,
                    iteration=self.step.iteration, params={"try": self.try_} if self.try_ else {})


TRIES = ("cold", "warm", "hot")  # a cache tier's reads, in order, with nothing emptied between them


def rotated(items: list, by: int) -> list:
    """The same items, starting at a different one each round: no cell always runs first (after a cold start)."""
    k = by % len(items) if items else 0
    return items[k:] + items[:k]


def run_order(items: list, round_: int, key: str = "", seed: int = 0) -> list:
    """The items in a seeded random order for `key` (a query, a cell), rotated by the round: over as many rounds as
    items each runs in every position once (a Latin square), and the first differs from key to key, so neither a
    fixed order nor the first run's cold start can pose as an item's effect. The same seed gives the same order."""
    base = list(items)
    random.Random(f"{seed}/{key}").shuffle(base)
    return rotated(base, round_)


def drop_page_cache() -> str:
    """Flush dirty pages, then drop the page cache so that reads hit the disk; say what happened."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as err:
        return f"page cache kept (cannot write /proc/sys/vm/drop_caches: {err.strerror}); reads may be cached"
    return "page cache dropped"
