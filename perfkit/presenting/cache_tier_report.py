"""The cache tier's report, from its records alone (perfkit.presenting.query_report): per engine, query and tier,
the cold, warm and hot tries against S3 read directly, the tier's own counters of each run (a hot read that still
fetched from S3 shows), the cold tier's price, and why each tier is faster or slower (cache_tier_why)."""
from __future__ import annotations

import pandas as pd

from perfkit.findings import Findings, plural
from perfkit.protocol import TRIES
from perfkit.presenting import cache_tier_bytes, cache_tier_faults
from perfkit.presenting.cache_tier_why import why_sentences, why_table
from perfkit.presenting.query_report import QueryReport, _range
from perfkit.tiers import is_tier
from perfkit.tiers.base import SETTLE_POLL_S

SAME = 1.10  # a ratio within 10% either way is "about the same"
PHASES = ("cold: the first read after the tier was emptied and the page cache dropped, S3 read directly after the "
          "same drop; warm: the second read, nothing emptied; hot: the third; each engine had read every table once "
          "on S3 before its first timed run, so no try pays the engine's own cold start")


class CacheTierReport(QueryReport):
    """The report of a CacheTierComparison run (its pay-off sweep, a TierPayoff, adds its sentences to findings())."""

    def notes(self) -> pd.DataFrame:
        """The warnings of the run (a tier smaller than the data), one row per tier."""
        found = self._results().config.get("tier_notes", {})
        return pd.DataFrame({"tier": list(found), "note": list(found.values())})

    def tries_frame(self) -> pd.DataFrame:
        """The successful runs, one row each, with their try and counters as columns."""
        frame = self._results().to_frame()
        frame = frame[frame["ok"].astype(bool)].copy()
        params = pd.DataFrame(list(frame["params"]), index=frame.index)
        for column in ("try", "cache_bytes", "s3_bytes", "emptied", "held_before_bytes", "tier_holds_bytes",
                       "tier_capacity_bytes", "settled", "fill_wait_s", "tier_activity"):
            frame[column] = params[column] if column in params else None
        return frame

    def tries_table(self) -> pd.DataFrame:
        """The study's shape, per engine, query and tier: S3 (the median of all its tries, for the plot) and, try by
        try, S3 read directly in that try, the tier in it (median seconds), and their ratio like for like: S3's cold
        try against the tier's cold try, warm against warm, hot against hot (PHASES says what each means)."""
        frame = self.tries_frame()
        medians = frame.groupby(["subject", "case", "storage", "try"])["wall_s"].median()
        rows = []
        for (engine, case), group in frame.groupby(["subject", "case"], sort=True):
            s3 = group.loc[group["storage"] == self.baseline, "wall_s"].median()
            for where in [s for s in self.storages if is_tier(s) and (group["storage"] == s).any()]:
                row = {"engine": engine, "query": case, "tier": where, "S3 (s)": round(s3, 3)}
                for try_ in TRIES:
                    direct = medians.get((engine, case, self.baseline, try_))
                    seconds = medians.get((engine, case, where, try_))
                    row[f"S3 {try_} (s)"] = None if direct is None else round(direct, 3)
                    row[f"{try_} (s)"] = None if seconds is None else round(seconds, 3)
                for try_ in TRIES:
                    seconds, direct = row[f"{try_} (s)"], row[f"S3 {try_} (s)"]
                    row[f"{try_}: tier vs S3 {try_}"] = _verdict(direct / seconds) if seconds and direct else None
                rows.append(row)
        return pd.DataFrame(rows)

    def phases(self) -> str:
        """What cold, warm and hot mean in this run, in one sentence."""
        return PHASES

    def findings(self, payoff=None) -> Findings:
        """Per engine and tier, each try's speed against S3 read directly (S3 median ÷ tier median, over the queries),
        hot reads that still fetched from S3, where the hot tier pays off (a TierPayoff that has run), and what the
        number of rounds lets this run decide."""
        from perfkit.findings import data_size, where

        tries = self.tries_table()
        sentences, undecided = [], []
        for (engine, where_), group in tries.groupby(["engine", "tier"], sort=False):
            parts = []
            for try_ in TRIES:  # like for like: each try against S3's own try of the same kind
                ratios = (group[f"S3 {try_} (s)"].astype(float) / group[f"{try_} (s)"].astype(float)).dropna()
                if len(ratios):
                    faster = int((ratios > SAME).sum())
                    slower = int((ratios < 1 / SAME).sum())
                    parts.append(f"{try_} {_range(ratios, '{:.2f}×')} the speed of S3's {try_} try ({faster} faster, "
                                 f"{slower} slower, {len(ratios) - faster - slower} about the same of "
                                 f"{plural(len(ratios), 'query')})")
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
        sentences += cache_tier_bytes.bytes_sentences(by_source := self.bytes_table())
        if len(unequal := cache_tier_bytes.disagreements(by_source)):
            undecided.append(f"on {plural(len(unequal), 'tier run')} the counts of bytes do not add up (the tier's "
                             "against the S3 server's, or cache + S3 against the bytes read): listed under 'Where "
                             "each read came from'")
        sentences += why_sentences(self.why_table())
        undecided += cache_tier_faults.fault_notes(self.tries_frame())
        if self.runs < 3:
            undecided.append(f"{plural(self.runs, 'round')} per query and tier: medians without a spread, so no "
                             "verdict beyond noise (more rounds: runs=5)")
        conditions = (f"{data_size(self.rows, self.files, self.file_format, self.suite, self.scale)}; "
                      f"{plural(self.runs, 'round')} of cold, warm and hot ({PHASES}); "
                      f"{where(self.profile_name, self.measured_network)}; {self.control_phrase()}")
        if payoff is not None and payoff.points:
            conditions += f"; {payoff.conditions()}"
            undecided += payoff.undecided()
        if note := self.drift_note(SAME):  # the smallest ratio this report calls faster or slower
            undecided.append(note)
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

    def bytes_table(self) -> pd.DataFrame:
        """Every tier run's bytes from the cache and from S3, by the tier and by the S3 server, against the bytes the
        engine read (perfkit.presenting.cache_tier_bytes)."""
        return cache_tier_bytes.bytes_table(self.tries_frame())

    def warmup_table(self) -> pd.DataFrame:
        """The reads each tier needed before it served a query's bytes (cache_tier_bytes.warmup_table)."""
        return cache_tier_bytes.warmup_table(self.bytes_table())

    def why_table(self) -> pd.DataFrame:
        """What one hot query asked of S3 read directly and of each tier (perfkit.presenting.cache_tier_why)."""
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
            "MB held before": (frame["held_before_bytes"].astype(float) / 1e6).round(2),
            "after the run": frame["settled"].fillna("nothing to wait for")})
        table["check"] = [_hit_check(t, s3) for t, s3 in zip(table["try"], table["MB from S3"])]
        order = table["try"].map({t: i for i, t in enumerate(TRIES)})
        return table.assign(_order=order).sort_values(["engine", "tier", "query", "round", "_order"],
                                                      kind="stable").drop(columns="_order").reset_index(drop=True)


def _verdict(speedup: float) -> str:
    """S3 time / tier time as a factor and in words."""
    words = "faster" if speedup > SAME else "slower" if speedup < 1 / SAME else "about the same"
    return f"{speedup:.2f}× ({words})"


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
