"""A cache tier in front of S3, cold, warm and hot: the same queries on S3 directly and through each tier.

    c = CacheTierComparison(load_profile("lab"), engines=["trino"], storages=["s3", "trino-cache"])
    report = c.run_report(); report.tries_table(); report.counters_table()

Per round, query and storage (the storages' order rotates each round): the tier is emptied and the page cache
dropped where permitted, then three reads with nothing emptied between them: cold (the first read after
emptying), warm, hot. Emptying before every try would measure only cold reads (a known benchmark mistake).
S3 read directly gets the same three tries, as the reference. Every record says its try, what was emptied,
and the tier's own counters over that run: bytes served from the cache and bytes fetched from S3, so a "hot"
read that did not hit the cache shows.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field


from perfkit.errors import PerfkitError
from perfkit.experiments.engine_storage_matrix import _rotated
from perfkit.experiments.cache_tier_report import TRIES, CacheTierReport
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.protocol import Step, drop_page_cache
from perfkit.results import ResultSet
from perfkit.storages import backing_of
from perfkit.tiers import Counters, is_tier, tier
from perfkit.progress import progress_bar

EXPERIMENT = "cache_tier"


@dataclass
class CacheTierComparison(QueryComparison):
    experiment = EXPERIMENT
    Report = CacheTierReport
    # the report's: both tiers; the queries report's taxi files (placed once for both); the narrowest query and a
    # wider one, one round of three tries each (the pay-off adds hot rounds); and a time limit, so a batch run ends
    REPORT_DEFAULTS = {"storages": ["s3", "alluxio", "trino-cache"], "rows": 1_000_000, "files": 8,
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

    def run(self, progress: bool = True) -> ResultSet:
        total = len(self.engines) * len(self.suite_queries) * self.runs * len(self.storages) * len(TRIES)
        with self._recording(progress) as (results, tableset), \
                progress_bar(total=total, desc=self.experiment, unit="query", disable=not progress) as bar:
            results.config["tier_notes"] = self.size_notes(tableset)
            for note in results.config["tier_notes"].values():
                print(f"warning: {note}", flush=True)
            for engine_name in self.engines:
                with self.engine_with_tables(results, engine_name, tableset) as (engine, tables):
                    if engine is None:
                        bar.update(total // len(self.engines))
                        continue
                    for query in self.suite_queries:
                        for round_ in range(self.runs):
                            for where in _rotated(self.storages, round_):
                                bar.set_postfix_str(f"{engine_name} {query.id} {where}")
                                self._three_tries(results, engine, query, round_, where, tables[where])
                                bar.update(len(TRIES))
                        results.save()
        return results

    def _three_tries(self, results, engine, query, round_: int, where: str, tables) -> None:
        if self.unavailable_reason(engine.name, where, query):
            self.measure(results, engine, query, Step("measured", round_, where), tables)  # records why, once
            return
        cache = tier(where, self.profile) if is_tier(where) else None
        emptied = self.empty(where)
        if cache is not None:
            tables = cache.current_tables(tables)  # Trino's cache: a fresh catalog took over
        for try_ in TRIES:
            before = self.counters(engine, where)
            worked_before = cache.activity() if cache is not None else {}
            first = len(results.records)
            self.measure(results, engine, query, Step("measured", round_, where), tables)
            # the fill this read started belongs to this try's counters, and must not run into the next try
            waited = time.monotonic()
            settled = cache.settle() if cache is not None else None
            waited = time.monotonic() - waited
            after = self.counters(engine, where)
            used = after - before if after and before else None
            worked = cache.activity() if cache is not None else {}
            worked = {name: n - worked_before[name] for name, n in worked.items() if name in worked_before}
            held = cache.cached_bytes() if cache is not None else None
            for record in results.records[first:]:
                record.params.update({"try": try_, "emptied": emptied if try_ == "cold" else "nothing (after cold)"})
                if used is not None:
                    record.params.update({"cache_bytes": used.cache_bytes, "s3_bytes": used.s3_bytes})
                    if worked:
                        record.params["tier_activity"] = worked
                if held is not None:
                    record.params["tier_holds_bytes"] = held
                if settled:  # the tier fills in the background: how long past the query it went on
                    record.params.update({"settled": settled, "fill_wait_s": round(waited, 2)})

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
