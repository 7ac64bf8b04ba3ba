"""A cache tier in front of S3, cold, warm and hot: the same queries on S3 directly and through each tier.

    c = CacheTierComparison(load_profile("lab"), engines=["trino"], storages=["s3", "trino-cache"])
    report = run_report(c); report.tries_table(); report.counters_table()

Per round, query and storage (the storages' order rotates each round): the tier is emptied and the page cache
dropped where permitted, then three reads with nothing emptied between them: cold (the first read after
emptying), warm, hot. Emptying before every try would measure only cold reads (a known benchmark mistake).
S3 read directly gets the same three tries, as the reference. Every record says its try, what was emptied,
and the tier's own counters over that run: bytes served from the cache and bytes fetched from S3, so a "hot"
read that did not hit the cache shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from perfkit.errors import PerfkitError
from perfkit.experiments.attempt import TierCounters
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.protocol import TRIES, QueryStep, Step, drop_page_cache
from perfkit.storages import backing_of
from perfkit.tiers import Counters, is_tier, tier

EXPERIMENT = "cache_tier"


@dataclass
class CacheTierComparison(QueryComparison):
    experiment = EXPERIMENT
    # the report's: the study's engines (Spark and Hive through Alluxio) beside Trino and both tiers; the queries
    # report's taxi files (placed once for both); the narrowest query and a wider one, one round of three tries each
    # (the pay-off adds hot rounds); and a time limit, so a batch run ends
    REPORT_DEFAULTS = {"engines": ["trino", "spark", "hive"], "storages": ["s3", "alluxio", "trino-cache"],
                       "rows": 1_000_000, "files": 8,
                       "queries": ["q1", "q3"], "runs": 1, "query_timeout_s": 600}

    engines: list[str] = field(default_factory=lambda: ["trino"])
    storages: list[str] = field(default_factory=lambda: ["s3", "trino-cache"])
    baseline: str = "s3"
    runs: int = 2
    warmup: int = 0

    def __post_init__(self):
        super().__post_init__()
        tiers = [s for s in self.storages if is_tier(s)]
        if not tiers or any(backing_of(t) != self.baseline for t in tiers):
            raise PerfkitError(f"storages {self.storages!r}, baseline {self.baseline!r}: the cache-tier comparison "
                               "reads the tiers' backing storage directly (the baseline) and through one or more "
                               "tiers, e.g. ['s3', 'trino-cache'] with baseline 's3'")

    def steps(self) -> list[QueryStep]:
        """Per engine, query and round, each storage (in the run's order: seeded per query, rotated each round) read
        cold, warm, hot."""
        return [QueryStep(engine, query, Step("measured", round_, where), try_)
                for engine in self.engines for query in self.suite_queries for round_ in range(self.runs)
                for where in self.in_run_order(self.storages, round_, f"{engine}/{query.id}") for try_ in TRIES]

    def label(self, step: QueryStep) -> str:
        return f"{step.engine} {step.query.id} {step.storage} {step.try_}"

    def begin(self) -> dict:
        """The run's config with the tiers' notes: a tier that cannot hold the data is said so, before any read."""
        config = super().begin()
        config["tier_notes"] = self.size_notes(self.tableset)
        for note in config["tier_notes"].values():
            print(f"warning: {note}", flush=True)
        self.tier_tables: dict[tuple[str, str], dict] = {}  # (engine, tier) -> its tables since it was emptied
        return config

    def attempt(self, step: QueryStep) -> None:
        """One try: a cold one empties the storage's caches first; through a tier, its counters around the read."""
        engine, tables = self.open_engines.get(step.engine)
        if engine is None:
            return
        where, key = step.storage, (step.engine, step.storage)
        if self.unavailable_reason(engine.name, where, step.query):
            return self.measure(self.results, engine, step.query, step.step, tables[where])  # says why, once
        cache = tier(where, self.profile) if is_tier(where) else None
        params = {"try": step.try_, "emptied": "nothing (after cold)"}
        if step.try_ == "cold":
            params["emptied"] = self.empty(where)
            held = cache.cached_bytes() if cache is not None else None  # what the emptying left (a free not done)
            if held is not None:
                params["held_before_bytes"] = held
            # Trino's cache: a fresh catalog took over
            self.tier_tables[key] = cache.current_tables(tables[where]) if cache is not None else tables[where]
        watch = (TierCounters(cache, engine),) if cache is not None else ()
        self.measure(self.results, engine, step.query, step.step, self.tier_tables[key], params, watch)

    def size_notes(self, tableset) -> dict[str, str]:
        """Tier -> why it cannot hold the data (only tiers that cannot)."""
        data_bytes = sum(t.bytes for t in tableset.tables[self.baseline].values())
        notes = {where: tier(where, self.profile).size_note(data_bytes) for where in self.storages if is_tier(where)}
        return {where: note for where, note in notes.items() if note}

    def empty(self, where: str) -> str:
        """Before a cold try only: the tier emptied, and the page cache dropped where permitted."""
        parts = [tier(where, self.profile).empty()] if is_tier(where) else []
        return "; ".join(parts + [drop_page_cache()])

    def counters(self, engine, where: str) -> Counters | None:
        return tier(where, self.profile).counters(engine) if is_tier(where) else None
