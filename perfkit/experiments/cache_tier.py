"""A cache tier in front of S3, cold, warm and hot: the same queries on S3 directly and through each tier.

    c = CacheTierComparison(load_profile("lab"), engines=["trino"], storages=["s3", "trino-cache"])
    c.run(); c.tries_table(); c.counters_table()

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

import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.findings import Findings, plural
from perfkit.experiments.cache_tier_why import why_sentences, why_table
from perfkit.experiments.engine_storage_matrix import _rotated
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison, _range
from perfkit.protocol import Step, drop_page_cache
from perfkit.results import ResultSet
from perfkit.tiers import BACKING, Counters, is_tier, tier
from perfkit.tiers.base import SETTLE_POLL_S
from perfkit.progress import progress_bar

EXPERIMENT = "cache_tier"
TRIES = ("cold", "warm", "hot")
SAME = 1.10  # a ratio within 10% either way is "about the same"


@dataclass
class CacheTierComparison(QueryComparison):
    experiment = EXPERIMENT
    # the report's: both tiers; the queries report's taxi files (placed once for both); the narrowest query and a
    # wider one, one round of three tries each (the pay-off adds hot rounds); and a time limit, so a batch run ends
    REPORT_DEFAULTS = {"storages": [BACKING, "alluxio", "trino-cache"], "rows": 1_000_000, "files": 8,
                       "queries": ["q1", "q3"], "runs": 1, "query_timeout_s": 600}

    engines: list[str] = field(default_factory=lambda: ["trino"])
    storages: list[str] = field(default_factory=lambda: [BACKING, "trino-cache"])
    baseline: str = BACKING
    runs: int = 2
    warmup: int = 0

    def __post_init__(self):
        super().__post_init__()
        if self.baseline != BACKING or not any(is_tier(s) for s in self.storages):
            raise PerfkitError(f"storages {self.storages!r}: the cache-tier comparison reads {BACKING} directly "
                               "(the baseline) and through one or more tiers, e.g. ['s3', 'trino-cache']")

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
        data_bytes = sum(t.bytes for t in tableset.tables[BACKING].values())
        notes = {where: tier(where, self.profile).size_note(data_bytes) for where in self.storages if is_tier(where)}
        return {where: note for where, note in notes.items() if note}

    def notes(self) -> pd.DataFrame:
        """The warnings of the run (a tier smaller than the data), one row per tier."""
        found = self._results().config.get("tier_notes", {})
        return pd.DataFrame({"tier": list(found), "note": list(found.values())})

    def empty(self, where: str) -> str:
        """Before a cold try only: the tier emptied, and the page cache dropped where permitted."""
        parts = [tier(where, self.profile).empty()] if is_tier(where) else []
        return "; ".join(parts + [drop_page_cache()])

    def counters(self, engine, where: str) -> Counters | None:
        return tier(where, self.profile).counters(engine) if is_tier(where) else None

    # summaries -------------------------------------------------------------------------------------------
    def tries_frame(self) -> pd.DataFrame:
        """The successful runs, one row each, with their try and counters as columns."""
        frame = self._results().to_frame()
        frame = frame[frame["ok"].astype(bool)].copy()
        params = pd.DataFrame(list(frame["params"]), index=frame.index)
        for column in ("try", "cache_bytes", "s3_bytes", "emptied", "tier_holds_bytes", "settled", "fill_wait_s",
                       "tier_activity"):
            frame[column] = params[column] if column in params else None
        return frame

    def tries_table(self) -> pd.DataFrame:
        """The study's shape, per engine, query and tier: S3 | cold | warm | hot (median seconds), and S3 / tier."""
        frame = self.tries_frame()
        medians = frame.groupby(["subject", "case", "storage", "try"])["wall_s"].median()
        rows = []
        for (engine, case), group in frame.groupby(["subject", "case"], sort=True):
            s3 = group.loc[group["storage"] == BACKING, "wall_s"].median()
            for where in [s for s in self.storages if is_tier(s) and (group["storage"] == s).any()]:
                row = {"engine": engine, "query": case, "tier": where, "S3 (s)": round(s3, 3)}
                for try_ in TRIES:
                    seconds = medians.get((engine, case, where, try_))
                    row[f"{try_} (s)"] = None if seconds is None else round(seconds, 3)
                for try_ in TRIES:
                    seconds = row[f"{try_} (s)"]
                    row[f"{try_} vs S3"] = None if not seconds else _verdict(s3 / seconds)
                rows.append(row)
        return pd.DataFrame(rows)

    def findings(self, payoff=None) -> Findings:
        """Per engine and tier, each try's speed against S3 read directly (S3 median ÷ tier median, over the queries),
        hot reads that still fetched from S3, where the hot tier pays off (a TierPayoff that has run), and what the
        number of rounds lets this run decide."""
        from perfkit.findings import data_size, where

        tries = self.tries_table()
        sentences, undecided = [], []
        for (engine, where_), group in tries.groupby(["engine", "tier"], sort=False):
            parts = []
            for try_ in TRIES:
                ratios = (group["S3 (s)"] / group[f"{try_} (s)"].astype(float)).dropna()
                if len(ratios):
                    faster = int((ratios > SAME).sum())
                    slower = int((ratios < 1 / SAME).sum())
                    parts.append(f"{try_} {_range(ratios, '{:.2f}×')} S3's speed ({faster} faster, {slower} slower, "
                                 f"{len(ratios) - faster - slower} about the same of {plural(len(ratios), 'query')})")
            if parts:
                sentences.append(f"{engine} through {where_}: " + "; ".join(parts) + ".")
        counters = self.counters_table()
        missed = counters[(counters["try"] == "hot") & (counters["MB from S3"] > 0)]
        if len(missed):
            sentences.append(f"{plural(len(missed), 'hot run')} still fetched from S3 "
                             f"({missed['MB from S3'].sum():.1f} MB in all): not all from the cache.")
        if payoff is not None and payoff.points:
            sentences += payoff.sentences()
        sentences += self._cold_price_sentences()
        sentences += why_sentences(self.why_table())
        if self.runs < 3:
            undecided.append(f"{plural(self.runs, 'round')} per query and tier: medians without a spread, so no "
                             "verdict beyond noise (more rounds: runs=5)")
        conditions = (f"{data_size(self.rows, self.files, self.file_format, self.suite, self.scale)}; "
                      f"{plural(self.runs, 'round')} of cold, warm and hot; "
                      f"{where(self.profile, self.measured_network)}")
        if payoff is not None and payoff.points:
            conditions += f"; {payoff.conditions()}"
        found = Findings(sentences, conditions, undecided)
        if len(failed := self.failures()):
            found.undecided.append(f"{plural(len(failed), 'failed run')} (listed under Failures)")
        return found

    def _cold_price_sentences(self) -> list[str]:
        """Per tier: what its cold tries fetched from S3 against what the same queries read when hot (all they read,
        from the cache or not), and how long a background fill went on after the cold query ended."""
        frame = self.tries_frame()
        frame = frame[frame["storage"].map(is_tier)]
        sentences = []
        for (engine, where_), group in frame.groupby(["subject", "storage"], sort=False):
            keyed = group.set_index(["case", "iteration", "try"])
            cold, warm, hot = (_try_rows(keyed, try_) for try_ in TRIES)
            pairs = cold.index.intersection(hot.index)
            from_s3 = cold.loc[pairs, "s3_bytes"].astype(float)
            hot_read = hot.loc[pairs, "cache_bytes"].astype(float) + hot.loc[pairs, "s3_bytes"].astype(float)
            if not len(pairs) or from_s3.isna().any() or hot_read.isna().any():
                continue  # no counters from this tier, or no cold and hot try of the same query and round
            fetched, read = from_s3.sum(), hot_read.sum()
            times = "try" if len(pairs) == 1 else "tries"
            sentence = (f"The cold tier's price, {engine} through {where_}: its cold {times} fetched "
                        f"{fetched / 1e6:.1f} MB from S3 for queries that read {read / 1e6:.1f} MB when hot")
            if read > 0:
                sentence += f" ({fetched / read:.1f}× the bytes read)"
            waits = cold.loc[pairs, "fill_wait_s"].dropna().astype(float)
            if len(waits):
                sentence += (f", and it was seen full {_range(waits, '{:.1f}')} s after the query (its background "
                             f"fill, looked at every {SETTLE_POLL_S:g} s)")
            elif len(warm_s3 := warm["s3_bytes"].dropna().astype(float)):  # its fill is the read itself
                sentence += (f", and had nothing left to fill after the query: its warm {times} fetched "
                             f"{warm_s3.sum() / 1e6:.1f} MB from S3")
            sentences.append(sentence + ".")
        return sentences

    def why_table(self) -> pd.DataFrame:
        """What one hot query asked of S3 read directly and of each tier (perfkit.experiments.cache_tier_why)."""
        return why_table(self.tries_frame())

    def counters_table(self) -> pd.DataFrame:
        """Every tier run with the bytes its tier served from cache and fetched from S3; a hot run that fetched
        from S3 is flagged."""
        frame = self.tries_frame()
        frame = frame[frame["storage"].map(is_tier)]
        table = pd.DataFrame({
            "engine": frame["subject"], "tier": frame["storage"], "query": frame["case"],
            "round": frame["iteration"] + 1, "try": frame["try"], "seconds": frame["wall_s"].round(3),
            "MB from cache": (frame["cache_bytes"].astype(float) / 1e6).round(2),
            "MB from S3": (frame["s3_bytes"].astype(float) / 1e6).round(2),
            "MB the tier holds after": (frame["tier_holds_bytes"].astype(float) / 1e6).round(2),
            "emptied before": frame["emptied"],
            "after the run": frame["settled"].fillna("nothing to wait for")})
        table["check"] = [_hit_check(t, s3) for t, s3 in zip(table["try"], table["MB from S3"])]
        order = table["try"].map({t: i for i, t in enumerate(TRIES)})
        return table.assign(_order=order).sort_values(["engine", "tier", "query", "round", "_order"],
                                                      kind="stable").drop(columns="_order").reset_index(drop=True)


def _verdict(speedup: float) -> str:
    """S3 time / tier time as a factor and in words."""
    words = "faster" if speedup > SAME else "slower" if speedup < 1 / SAME else "about the same"
    return f"{speedup:.2f}x ({words})"


def _hit_check(try_: str, s3_mb: float) -> str:
    if s3_mb != s3_mb:  # NaN: the tier reported no counters
        return "no counters from the tier"
    if try_ == "cold":
        return "ok" if s3_mb > 0 else "cold read fetched nothing from S3: was the tier emptied?"
    if try_ == "hot" and s3_mb > 0:
        return f"hot read fetched {s3_mb} MB from S3: not all from the cache"
    return "ok"


def _try_rows(keyed: pd.DataFrame, try_: str) -> pd.DataFrame:
    """The rows of one try, indexed by (query, round)."""
    if try_ in keyed.index.get_level_values("try"):
        return keyed.xs(try_, level="try")
    return keyed.iloc[0:0].droplevel("try")


