"""Where a hot cache tier beats S3: hot reads of the cache-tier comparison's queries and of a scan of every column
(most of the table's bytes), with S3 at several round trips.

    payoff = TierPayoff(comparison, rtt_ms=[0, 60]); payoff.run(); payoff.table(); payoff.sentences()

A hot tier reads nothing from S3, so its time should not move with S3's distance; S3's grows by a round trip per
request made in sequence and by bytes over bandwidth. Each distance is a recording of its own (the network cannot
change under a run, and each keeps its calibration): the network set, one untimed read per query and storage that
fills the tiers, then `runs` hot rounds with the storages' order rotating. Per engine, query and tier, a line through
each side's times against the round trip gives the round trip beyond which the tier is faster, with a bootstrap
interval over the runs at each distance. The network is set back to where it was when the sweep ends.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfkit import stats, validate
from perfkit.accounting.recorded_io import RunIO
from perfkit.datasets.taxi import SCHEMA
from perfkit.errors import PerfkitError
from perfkit.experiments.cache_tier import CacheTierComparison
from perfkit.experiments.engine_storage_matrix import _rotated
from perfkit.findings import plural
from perfkit.network import NetworkProfile, check
from perfkit.progress import progress_bar
from perfkit.protocol import Step
from perfkit.results import ResultSet
from perfkit.suites import Query
from perfkit.tiers import BACKING, is_tier, tier

EXPERIMENT = "cache_tier_payoff"
SCAN = "scan"
FAR = 1e6  # ms: a crossing this far (or none) is shown as ∞
EC2_S3_MB_S = 85  # bandwidth per connection at every distance of the sweep: S3 from EC2 (perfkit.network)


def scan_query() -> Query:
    """Every column of the taxi table read: the max of each. No engine here answers an aggregate from ORC's column
    statistics, so the query reads the table's bytes, where q1 reads one column of 51."""
    maxima = ", ".join(f"max({name}) AS max_{name}" for name, _, _ in SCHEMA)
    return Query(SCAN, "max of every column (reads every column)", f"SELECT count(*) AS trips, {maxima} FROM {{table}}")


class PayoffPoint(CacheTierComparison):
    """One distance's hot reads, saved with the other distances of the sweep."""

    experiment = EXPERIMENT
    fill = True  # the first distance's untimed read per query and storage; the tiers stay full for the others

    def run(self, progress: bool = True) -> ResultSet:
        total = len(self.engines) * len(self.suite_queries) * len(self.storages) * (self.runs + self.fill)
        with self._recording(progress) as (results, tableset), \
                progress_bar(total=total, desc=f"{self.experiment} {self.profile_network()}", unit="query",
                             disable=not progress) as bar:
            for engine_name in self.engines:
                with self.engine_with_tables(results, engine_name, tableset) as (engine, tables):
                    if engine is None:
                        bar.update(total // len(self.engines))
                        continue
                    tables = {where: tier(where, self.profile).current_tables(tables[where]) if is_tier(where)
                              else tables[where] for where in self.storages}
                    for round_ in range(-1 if self.fill else 0, self.runs):  # -1: the read that fills the tiers
                        for where in _rotated(self.storages, max(round_, 0)):
                            for query in self.suite_queries:
                                bar.set_postfix_str(f"{engine_name} {query.id} {where}")
                                self._hot_read(results, engine, query, round_, where, tables[where])
                                bar.update()
                    results.save()
        return results

    def _hot_read(self, results, engine, query, round_: int, where: str, tables) -> None:
        """One read; through a tier, with the tier's counters around it, so a "hot" read that fetched from S3 shows."""
        first = len(results.records)
        phase = "warmup" if round_ < 0 else "measured"
        if self.unavailable_reason(engine.name, where, query):
            return self.measure(results, engine, query, Step(phase, max(round_, 0), where), tables)  # says why, once
        before = self.counters(engine, where)
        self.measure(results, engine, query, Step(phase, max(round_, 0), where), tables)
        if round_ < 0 and is_tier(where):
            tier(where, self.profile).settle()  # its background fill done before the timed reads
        after = self.counters(engine, where)
        for record in results.records[first:]:
            record.params["try"] = "fill" if round_ < 0 else "hot"
            if before is not None and after is not None:
                used = after - before
                record.params.update({"cache_bytes": used.cache_bytes, "s3_bytes": used.s3_bytes})

    def profile_network(self) -> str:
        found = self.profile.provider.network()
        return found.name if found is not None else "as it is"


@dataclass
class TierPayoff:
    """The hot tiers of `comparison` against S3 read directly, at each round trip of `rtt_ms` (S3 from EC2's
    bandwidth per connection at each), on the comparison's first query (or `queries`) and a scan of every column
    (taxi data): the narrowest read and the widest."""

    comparison: CacheTierComparison
    rtt_ms: list[int] = field(default_factory=lambda: [0, 60])
    per_connection_mb_s: float = EC2_S3_MB_S
    runs: int = 3
    queries: list[str] | None = None  # of the comparison's; None: its first (the narrowest read of the report's)
    scan: bool = True  # add the scan of every column (the taxi dataset only)
    points: list[PayoffPoint] = field(default_factory=list, init=False)

    def __post_init__(self):
        self.rtt_ms = validate.wholes("rtt_ms", self.rtt_ms, minimum=0)
        self.runs = validate.whole("runs", self.runs)
        self.per_connection_mb_s = validate.number("per_connection_mb_s", self.per_connection_mb_s, above=0,
                                                   unit="MB/s")
        self.scan = validate.flag("scan", self.scan)
        self.movable = self.comparison.profile.provider.network() is not None
        if self.movable and len(set(self.rtt_ms)) == 1:
            raise PerfkitError(f"rtt_ms {self.rtt_ms!r}: give two or more round trips to find where the tier "
                               "overtakes S3, e.g. [0, 20, 60], or [] for no sweep")
        sweep = "the cache tier's pay-off sweep"
        self.settings = [check(NetworkProfile(f"rtt {rtt} ms", rtt_ms=rtt, per_connection_mb_s=self.per_connection_mb_s,
                                              source=sweep)) for rtt in self.rtt_ms] if self.movable else [None]
        if not self.rtt_ms:
            self.settings = []  # no sweep: the report says nothing of where the tier pays off
        known = {q.id: q for q in self.comparison.suite_queries}
        asked = validate.names("queries", self.queries) if self.queries is not None else list(known)[:1]
        if unknown := [q for q in asked if q not in known]:
            raise PerfkitError(f"queries {unknown!r}: the pay-off reads queries of the comparison's, "
                               f"{', '.join(known)}")
        self.queries = [known[q] for q in asked]
        if self.scan and self.comparison.source == "taxi":
            self.queries.append(scan_query())

    def run(self, progress: bool = True) -> pd.DataFrame:
        """Each distance in turn (on a cluster, S3 where it is: one), then the network the comparison ran behind."""
        profile = self.comparison.profile
        was = profile.provider.network()
        if self.settings and self.comparison.tableset is None:
            self.comparison.prepare(progress)  # the comparison's data, placed once for every distance
        try:
            for network in self.settings:
                if network is not None:  # the lab's S3 clients keep their endpoint: the profile stays true
                    profile.provider.use_network(network)
                point = PayoffPoint(profile, **self._point_args())
                point.suite_queries = self.queries
                point.tableset, point.placed = self.comparison.tableset, self.comparison.placed
                point.fill = not self.points
                point.run(progress)
                self.points.append(point)
        finally:
            if was is not None and self.settings:
                profile.provider.use_network(was)
        return self.samples()

    def _point_args(self) -> dict:
        c = self.comparison
        return dict(engines=c.engines, storages=c.storages, suite=c.suite, scale=c.scale, tables=c.tables,
                    rows=c.rows, files=c.files, queries=c.queries, runs=self.runs, query_timeout_s=c.query_timeout_s,
                    prices=c.prices)

    def samples(self) -> pd.DataFrame:
        """Every hot, successful run: engine, query, storage, its distance (asked round trip, measured small GET),
        seconds, the bytes a tier fetched from S3 during it (0 when hot), and the MB the engine read (Trino's query
        stats) where it says."""
        frames = []
        for point in self.points:
            frame = point.results.to_frame()
            frame = frame[frame["ok"].astype(bool) & (frame["phase"] == "measured")]
            calibration = point.s3_network()
            asked = calibration.network if calibration is not None else {}
            frames.append(pd.DataFrame({
                "engine": frame["subject"], "query": frame["case"], "storage": frame["storage"],
                "rtt_ms": float(asked.get("rtt_ms") or 0.0),
                "small_get_ms": getattr(calibration, "small_get_ms", math.nan),
                "wall_s": frame["wall_s"].astype(float),
                "tier_s3_bytes": [(params or {}).get("s3_bytes", math.nan) for params in frame["params"]],
                "mb_read": [RunIO.of(io).counts("engine").get("input_bytes", math.nan) / 1e6
                            for io in frame["io"]]}))
        columns = ["engine", "query", "storage", "rtt_ms", "small_get_ms", "wall_s", "tier_s3_bytes", "mb_read"]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    def table(self) -> pd.DataFrame:
        """Per engine, query and tier: MB the query read, S3's and the tier's median seconds at each round trip with
        S3 ÷ tier, and the round trip beyond which the tier is faster (its 95% interval), or why there is none."""
        return payoff_table(self.samples()).drop(columns="_cross", errors="ignore")

    def sentences(self) -> list[str]:
        samples = self.samples()
        said = payoff_sentences(payoff_table(samples), self.movable)
        missed = samples[samples["tier_s3_bytes"].astype(float) > 0]
        if len(missed):
            said.append(f"{plural(len(missed), 'hot pay-off run')} through a tier still fetched from S3 "
                        f"({missed['tier_s3_bytes'].sum() / 1e6:.1f} MB in all): not all from the cache.")
        return said

    def conditions(self) -> str:
        """e.g. 'hot reads of q1 and scan at round trips of 0, 20 and 60 ms (85 MB/s per connection), 3 rounds each'."""
        where = (f"at round trips of {', '.join(map(str, self.rtt_ms))} ms ({self.per_connection_mb_s:g} MB/s per "
                 "connection), each calibrated" if self.movable else "with S3 where it is")
        return (f"the pay-off: hot reads of {', '.join(q.id for q in self.queries)} {where}, "
                f"{plural(self.runs, 'round')} each")

    def failures(self) -> pd.DataFrame:
        frames = [point.report().failures().assign(network=point.profile_network()) for point in self.points]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def raise_for_failures(self) -> None:
        for point in self.points:
            point.report().raise_for_failures()


def payoff_table(samples: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (engine, query), group in samples.groupby(["engine", "query"], sort=True):
        s3 = group[group["storage"] == BACKING]
        for where, cached in group[group["storage"] != BACKING].groupby("storage", sort=True):
            row = {"engine": engine, "query": query, "tier": where,
                   "MB read": round(float(pd.concat([s3, cached])["mb_read"].median()), 2)}
            for rtt, at in s3.groupby("rtt_ms"):
                direct, through = at["wall_s"], cached.loc[cached["rtt_ms"] == rtt, "wall_s"]
                row[f"S3 at {rtt:g} ms (s)"] = round(float(direct.median()), 3)
                row[f"tier at {rtt:g} ms (s)"] = round(float(through.median()), 3) if len(through) else None
                ratio = direct.median() / through.median() if len(through) else math.nan
                low, high = stats.ratio_ci(direct, through) if len(through) else (math.nan, math.nan)
                row[f"S3 ÷ tier at {rtt:g} ms"] = _ratio(ratio, low, high)
            found = crossover(s3, cached)
            row.update({"tier faster beyond (ms)": found["text"], "_cross": found})
            rows.append(row)
    return pd.DataFrame(rows)


def _ratio(ratio: float, low: float, high: float) -> str:
    if math.isnan(ratio):
        return "-"
    if math.isnan(low):
        return f"{ratio:.2f}×"
    verdict = "tier faster" if low > 1 else "S3 faster" if high < 1 else "no difference beyond noise"
    return f"{ratio:.2f}× ({low:.2f}–{high:.2f}, {verdict})"


def _lines(s3: tuple, cached: tuple) -> tuple[float, float, float, float]:
    """Least-squares intercepts and slopes (seconds, seconds per ms) of S3's and the tier's times."""
    b_s3, a_s3 = np.polyfit(s3[0], s3[1], 1)
    b_tier, a_tier = np.polyfit(cached[0], cached[1], 1)
    return a_s3, b_s3, a_tier, b_tier


def _cross(a_s3: float, b_s3: float, a_tier: float, b_tier: float) -> float:
    """The round trip where S3's line rises above the tier's: -inf when S3 is slower at every distance, +inf when
    it never is (S3 gains no more per ms than the tier)."""
    gain = b_s3 - b_tier
    if gain <= 0:
        return -math.inf if a_s3 > a_tier else math.inf
    return (a_tier - a_s3) / gain


def crossover(s3: pd.DataFrame, cached: pd.DataFrame, confidence: float = 0.95, seed: int = 0) -> dict:
    """Where the tier overtakes S3: {ms, low, high, slope_s3, slope_tier, span, text}. The interval resamples the
    runs within each distance and side (percentile bootstrap); fewer than MIN_RUNS runs anywhere: no interval."""
    distances = sorted(set(s3["rtt_ms"]) & set(cached["rtt_ms"]))
    found = {"ms": math.nan, "low": math.nan, "high": math.nan, "slope_s3": math.nan, "slope_tier": math.nan,
             "span": (min(distances), max(distances)) if distances else (math.nan, math.nan)}
    if len(distances) < 2:
        return {**found, "text": "one distance: no line to cross"}
    groups = [frame.loc[frame["rtt_ms"] == d, "wall_s"].to_numpy(float) for frame in (s3, cached) for d in distances]
    n = len(distances)

    def lines(*samples) -> tuple[float, float, float, float]:
        """The two fitted lines through the runs per distance, S3's groups first, then the tier's."""
        xs = [np.full(len(g), d) for g, d in zip(samples, distances * 2)]
        return _lines((np.concatenate(xs[:n]), np.concatenate(samples[:n])),
                      (np.concatenate(xs[n:]), np.concatenate(samples[n:])))

    def statistic(*samples):
        return float(np.clip(_cross(*lines(*samples)), -FAR, FAR))  # lines that never cross: the interval's end

    a_s3, b_s3, a_tier, b_tier = lines(*groups)
    found.update(ms=_cross(a_s3, b_s3, a_tier, b_tier), slope_s3=b_s3, slope_tier=b_tier)
    if math.isfinite(found["ms"]) and min(len(g) for g in groups) >= stats.MIN_RUNS and any(np.ptp(g) for g in groups):
        res = stats.bootstrap(tuple(groups), statistic, seed, vectorized=False, paired=False,
                              confidence_level=confidence, n_resamples=999, method="percentile")
        found.update(low=float(res.confidence_interval.low), high=float(res.confidence_interval.high))
    found["text"] = _cross_text(found)
    return found


def _cross_text(found: dict) -> str:
    ms, (near, far) = found["ms"], found["span"]
    interval = "" if math.isnan(found["low"]) else f" (95% CI {_ms(found['low'])} to {_ms(found['high'])})"
    if ms == -math.inf or ms < near:
        return f"the lines cross below {near:g} ms{interval}: no slower at any round trip measured (to {far:g} ms)"
    if ms == math.inf:
        return f"never: S3 gains no more per ms of round trip than the tier ({found['slope_s3'] * 1e3:.1f} ms per ms)"
    beyond = "" if ms <= far else f", beyond the {far:g} ms measured (extrapolated)"
    return f"{ms:.0f} ms{interval}{beyond}"


def _ms(value: float) -> str:
    return "-∞" if value <= -FAR else "∞" if value >= FAR else f"{value:.0f} ms"


def payoff_sentences(table: pd.DataFrame, movable: bool = True) -> list[str]:
    """Per engine and tier: where its hot reads beat S3, by MB per query and round trip."""
    if table.empty:
        return []
    said = []
    for (engine, where), rows in table.groupby(["engine", "tier"], sort=False):
        parts = []
        for _, row in rows.sort_values("MB read").iterrows():
            found = row["_cross"]
            query = f"{row['query']} ({row['MB read']:g} MB)"
            if not movable:
                ratio = next(v for k, v in row.items() if str(k).startswith("S3 ÷ tier"))
                parts.append(f"{query} S3 ÷ tier {ratio}")
            elif found["ms"] == -math.inf or found["ms"] < found["span"][0]:
                parts.append(f"{query} no slower at any round trip measured")
            elif found["ms"] == math.inf:
                parts.append(f"{query} never faster: S3's time does not grow faster with the round trip than the "
                             "tier's")
            else:
                parts.append(f"{query} faster beyond {row['tier faster beyond (ms)']}")
        far = table.filter(like="S3 at").columns
        said.append(f"Where {where} pays off ({engine}, hot, against S3 read directly"
                    + (f" at {plural(len(far), 'round trip')} from {_span(far)}" if movable else "") + "): "
                    + "; ".join(parts) + ".")
    return said


def _span(columns) -> str:
    values = sorted(float(c.split(" at ")[1].split(" ms")[0]) for c in columns)
    return f"{values[0]:g} to {values[-1]:g} ms"
