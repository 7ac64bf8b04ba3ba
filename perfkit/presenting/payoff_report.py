"""The pay-off sweep's report, from its records alone: per engine, query and tier, S3's and the tier's hot times at
each round trip, and where the tier overtakes S3 (the crossing of the two fitted lines, with a bootstrap interval).

    PayoffReport.load(comparison_results)   # the sweep that ran with a cache-tier comparison, measuring nothing

Each distance of the sweep is a run of its own (experiment cache_tier_payoff, perfkit.experiments.tier_payoff);
each records the sweep it belongs to (config["payoff"], with the comparison's run id)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfkit import drift, stats
from perfkit.accounting.recorded_io import RunIO
from perfkit.experiments.tier_payoff import EXPERIMENT
from perfkit.presenting.query_report import QueryReport
from perfkit.findings import Findings, plural
from perfkit.results import ResultSet, runs_whose_config
from perfkit.tiers import is_tier

FAR = 1e6  # ms: a crossing this far (or none) is shown as ∞


@dataclass
class PayoffReport:
    """The sweep's distances (`points`: one QueryReport each, nearest first) and what the sweep was asked: `rtt_ms`,
    `per_connection_mb_s`, `runs` hot rounds, `queries` (ids), `movable` (False: S3 where it is, one point)."""

    points: list[QueryReport] = field(default_factory=list)
    rtt_ms: list[int] = field(default_factory=list)
    per_connection_mb_s: float = 0.0
    runs: int = 0
    queries: list[str] = field(default_factory=list)
    movable: bool = True

    @classmethod
    def of(cls, sweep) -> PayoffReport:
        """The report of a TierPayoff sweep that has run: its distances' records and what it was asked."""
        return cls([QueryReport(point._results()) for point in sweep.points], sweep.rtt_ms, sweep.per_connection_mb_s,
                   sweep.runs, [q.id for q in sweep.queries], sweep.movable)

    @classmethod
    def load(cls, comparison: ResultSet) -> PayoffReport:
        """The sweep recorded with this cache-tier run (none: a report with no points, which says nothing)."""
        of_this_run = runs_whose_config(comparison.folder / EXPERIMENT,
                                        lambda config: (config.get("payoff") or {}).get("of_run") == comparison.run_id)
        points = [QueryReport.load(path) for path in of_this_run]
        sweep = points[0].results.config["payoff"] if points else {}
        points.sort(key=_asked_rtt_ms)  # nearest first; a run id tells the second, not the order within it
        return cls(points, list(sweep.get("rtt_ms", [])), float(sweep.get("per_connection_mb_s", 0.0)),
                   int(sweep.get("runs", 0)), list(sweep.get("queries", [])), bool(sweep.get("movable", True)))


    def samples(self) -> pd.DataFrame:
        """Every hot, successful run: engine, query, storage, its distance (asked round trip, measured small GET),
        seconds, the bytes a tier fetched from S3 during it (0 when hot), and the MB the engine read (Trino's query
        stats) where it says."""
        frames = []
        for point in self.points:
            frame = point.results.to_frame()
            frame = frame[frame["ok"].astype(bool) & (frame["phase"] == "measured")]
            calibration = point.measured_network
            frames.append(pd.DataFrame({
                "engine": frame["subject"], "query": frame["case"], "storage": frame["storage"],
                "rtt_ms": _asked_rtt_ms(point),
                "small_get_ms": getattr(calibration, "small_get_ms", math.nan),
                "wall_s": frame["wall_s"].astype(float),
                "tier_s3_bytes": [(params or {}).get("s3_bytes", math.nan) for params in frame["params"]],
                "mb_read": [RunIO.of(io).counts("engine").get("input_bytes", math.nan) / 1e6
                            for io in frame["io"]]}))
        columns = ["engine", "query", "storage", "rtt_ms", "small_get_ms", "wall_s", "tier_s3_bytes", "mb_read"]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    def table(self) -> pd.DataFrame:
        """Per engine, query and tier: MB the query read, S3's and the tier's median seconds at each round trip with
        S3 ÷ tier (its 95% CI and verdict; a verdict within its distance's drift control marked), and the round trip
        beyond which the tier is faster (its 95% CI), or why there is none."""
        return self._table().drop(columns=["_cross", "_cells"], errors="ignore")

    def _table(self, samples: pd.DataFrame | None = None) -> pd.DataFrame:
        """payoff_table, its ratio verdicts marked where a distance's drift control moved more than the smallest
        ratio the sweep calls beyond noise."""
        table = payoff_table(self.samples() if samples is None else samples)
        smallest = payoff_smallest_effect(table)
        return mark_drift(table, {rtt: drift.drift_bound(config, smallest) for rtt, config in self._controls()})

    def _controls(self) -> list[tuple[float, dict]]:
        """Each distance's asked round trip and its run's config (where its drift control is)."""
        return [(_asked_rtt_ms(point), point.results.config) for point in self.points]

    def _named_controls(self) -> list[tuple[str, dict]]:
        return [(_network_name(point), point.results.config) for point in self.points]

    def sentences(self) -> list[str]:
        samples = self.samples()
        said = payoff_sentences(self._table(samples), self.movable)
        missed = samples[samples["tier_s3_bytes"].astype(float) > 0]
        if len(missed):
            said.append(f"{plural(len(missed), 'hot pay-off run')} through a tier still fetched from S3 "
                        f"({missed['tier_s3_bytes'].sum() / 1e6:.1f} MB in all): not all from the cache.")
        return said

    def undecided(self) -> list[str]:
        """What the sweep did not decide: its drift control moved, at some distance, more than the smallest ratio it
        calls beyond noise (perfkit.drift)."""
        note = drift.sweep_drift_note(self._named_controls(), payoff_smallest_effect(payoff_table(self.samples())))
        return [note] if note else []

    def conditions(self) -> str:
        """e.g. 'hot reads of q1 and scan at round trips of 0, 20 and 60 ms (85 MB/s per connection), 3 rounds each';
        and its drift control at each distance."""
        where = (f"at round trips of {', '.join(map(str, self.rtt_ms))} ms ({self.per_connection_mb_s:g} MB/s per "
                 "connection), each calibrated" if self.movable else "with S3 where it is")
        said = f"the pay-off: hot reads of {', '.join(self.queries)} {where}, {plural(self.runs, 'round')} each"
        if not self.points:
            return said
        control = drift.sweep_conditions_phrase(self._named_controls())
        return f"{said}; " + (f"its runs: {control}" if control == drift.NOT_RECORDED else f"its {control}")

    def findings(self) -> Findings:
        """The sweep's own Findings (the cache tier's report quotes sentences(), undecided() and conditions())."""
        return Findings(self.sentences(), self.conditions(), self.undecided())

    def failures(self) -> pd.DataFrame:
        frames = [point.failures().assign(network=_network_name(point)) for point in self.points]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def raise_for_failures(self) -> None:
        for point in self.points:
            point.raise_for_failures()


def _asked(point: QueryReport) -> dict:
    """The network a distance's run asked for (its calibration's); {} where S3 sat where it is."""
    calibration = point.measured_network
    return (calibration.network or {}) if calibration is not None else {}


def _asked_rtt_ms(point: QueryReport) -> float:
    return float(_asked(point).get("rtt_ms") or 0.0)


def _network_name(point: QueryReport) -> str:
    return _asked(point).get("name") or "as it is"


def payoff_table(samples: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (engine, query), group in samples.groupby(["engine", "query"], sort=True):
        through_tier = group["storage"].map(is_tier)
        s3 = group[~through_tier]  # read directly: the tiers' backing storage
        for where, cached in group[through_tier].groupby("storage", sort=True):
            read = pd.concat([s3, cached])["mb_read"].dropna()  # Trino's query stats; none from Spark's or Hive's
            row = {"engine": engine, "query": query, "tier": where,
                   "MB read": round(float(read.median()), 2) if len(read) else math.nan}
            cells = {}
            for rtt, at in s3.groupby("rtt_ms"):
                direct, through = at["wall_s"], cached.loc[cached["rtt_ms"] == rtt, "wall_s"]
                row[f"S3 at {rtt:g} ms (s)"] = round(float(direct.median()), 3)
                row[f"tier at {rtt:g} ms (s)"] = round(float(through.median()), 3) if len(through) else None
                ratio = direct.median() / through.median() if len(through) else math.nan
                low, high = stats.ratio_ci(direct, through) if len(through) else (math.nan, math.nan)
                row[f"S3 ÷ tier at {rtt:g} ms"] = _ratio(ratio, low, high)
                cells[rtt] = (ratio, low, high)
            found = crossover(s3, cached)
            row.update({"tier faster beyond (ms)": found["text"], "_cross": found, "_cells": cells})
            rows.append(row)
    return pd.DataFrame(rows)


def _beyond_noise(low: float, high: float) -> bool:
    return not math.isnan(low) and (low > 1 or high < 1)


def payoff_smallest_effect(table: pd.DataFrame) -> float:
    """The smallest S3 ÷ tier ratio (either way) the table calls beyond noise; the noise factor where it calls none."""
    cells = [cell for found in (table["_cells"] if "_cells" in table else []) for cell in found.values()]
    return drift.smallest_effect(ratio for ratio, low, high in cells if _beyond_noise(low, high))


def mark_drift(table: pd.DataFrame, bounds: dict[float, float | None]) -> pd.DataFrame:
    """The table with each S3 ÷ tier verdict whose ratio is within its distance's drift bound (perfkit.drift.drift_bound
    of that distance's run) marked WITHIN_DRIFT."""
    if table.empty or not any(b is not None for b in bounds.values()):
        return table
    table = table.copy()
    for i, cells in table["_cells"].items():
        for rtt, (ratio, low, high) in cells.items():
            if _beyond_noise(low, high) and drift.within(ratio, bounds.get(rtt)):
                table.at[i, f"S3 ÷ tier at {rtt:g} ms"] = _ratio(ratio, low, high, marked=True)
    return table


def _ratio(ratio: float, low: float, high: float, marked: bool = False) -> str:
    """'1.20× (95% CI 1.10–1.30×, tier faster)'; '—' where the tier was not timed."""
    if math.isnan(ratio):
        return "—"
    if math.isnan(low):
        return f"{ratio:.2f}×"
    verdict = "tier faster" if low > 1 else "S3 faster" if high < 1 else "no difference beyond noise"
    return f"{ratio:.2f}× (95% CI {low:.2f}–{high:.2f}×, {verdict}{f'; {drift.WITHIN_DRIFT}' if marked else ''})"


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
    interval = "" if math.isnan(found["low"]) else f" (95% CI {_ms_span(found['low'], found['high'])})"
    if ms == -math.inf or ms < near:
        return f"the lines cross below {near:g} ms{interval}: no slower at any round trip measured (to {far:g} ms)"
    if ms == math.inf:
        return f"never: S3 gains no more per ms of round trip than the tier ({found['slope_s3'] * 1e3:.1f} ms per ms)"
    beyond = "" if ms <= far else f", beyond the {far:g} ms measured (extrapolated)"
    return f"{ms:.0f} ms{interval}{beyond}"


def _ms(value: float) -> str:
    return "-∞" if value <= -FAR else "∞" if value >= FAR else f"{value:.0f}"


def _ms_span(low: float, high: float) -> str:
    """'10–30 ms', '-∞ to 30 ms': a dash beside a minus reads as neither."""
    joint = " to " if low < 0 else "–"
    return f"{_ms(low)}{joint}{_ms(high)} ms"


def payoff_sentences(table: pd.DataFrame, movable: bool = True) -> list[str]:
    """Per engine and tier: where its hot reads beat S3, by MB per query and round trip."""
    if table.empty:
        return []
    said = []
    for (engine, where), rows in table.groupby(["engine", "tier"], sort=False):
        parts = []
        for _, row in rows.sort_values("MB read").iterrows():
            found = row["_cross"]
            query = f"{row['query']} ({row['MB read']:g} MB)" if row["MB read"] == row["MB read"] else row["query"]
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
                    + (f" at round trips of {_span(far)}" if movable else "") + "): "
                    + "; ".join(parts) + ".")
    return said


def _span(columns) -> str:
    """'0, 20 and 60 ms': the round trips measured, each named (a span 'from 0 to 60' reads as an interval)."""
    values = [f"{v:g}" for v in sorted(float(c.split(" at ")[1].split(" ms")[0]) for c in columns)]
    return (", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else values[0]) + " ms"
