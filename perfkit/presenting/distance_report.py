"""The S3-distance sweep's report, from its settings' records alone: the samples with the setting each ran behind,
the slopes (seconds per ms of round trip), what the lowest bandwidth cost, the break-even per setting, the Findings.

    report = run_report(S3Distance("lab", rtt_ms=[0, 20, 40]))  # measures every setting, then reports
    report = DistanceReport.load("data/results/s3_distance/RUN.jsonl")  # every setting of that run again

Each setting is one recording (a query comparison behind that network, with its calibration); each records the sweep's
parameters and the run group it belongs to (perfkit.results.RUN_GROUP), so one file finds the others.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from scipy import stats as sps

from perfkit import drift
from perfkit.errors import PerfkitError
from perfkit.experiments.s3_distance import SWEEP
from perfkit.presenting.query_report import QueryReport, _failed
from perfkit.findings import (Findings, ci_span, data_size, estimate, interval_decimals, p_value, plural, rounded,
                              runs_phrase)
from perfkit.network import NetworkProfile
from perfkit.results import grouped_files
from perfkit.storages import reads_remote



class DistanceReport:
    """The report of an S3Distance sweep: `points`, each setting's QueryReport in the sweep's order; `sweep`, its
    parameters (rtt_ms, per_connection_mb_s, rows, files, runs, warmup)."""

    def __init__(self, points: list[QueryReport], sweep: dict):
        self.points, self.sweep = points, sweep
        self.rtt_ms, self.per_connection_mb_s = sweep["rtt_ms"], sweep["per_connection_mb_s"]
        self.rows, self.files, self.runs, self.warmup = sweep["rows"], sweep["files"], sweep["runs"], sweep["warmup"]

    @classmethod
    def of(cls, sweep) -> DistanceReport:
        """The report of an S3Distance sweep that has run: its points' records and its own parameters."""
        declared = [setting.name for setting in sweep.settings]  # they ran in a random order; shown as declared
        points = sorted(sweep.points, key=lambda point: declared.index(point.group["part"]))
        return cls([QueryReport(point._results()) for point in points], sweep.sweep_record())

    @classmethod
    def load(cls, results: str | Path | list) -> DistanceReport:
        """A stored sweep's report: one setting's results file (the others are found beside it) or every one."""
        paths = grouped_files(results) if isinstance(results, (str, Path)) else [Path(p) for p in results]
        points = [QueryReport.load(path) for path in paths]
        sweep = points[0].results.config.get(SWEEP) if points else None
        if not sweep:
            raise PerfkitError(f"{paths[0]}: its records name no {SWEEP} sweep: give a run of s3_distance")
        return cls(points, sweep)


    def samples(self) -> pd.DataFrame:
        """Every measured, successful run with the setting it ran behind (asked and measured)."""
        frames = []
        for point in self.points:
            calibration = point.measured_network
            asked = calibration.network
            frame = point.results.to_frame()
            frame = frame[frame["ok"].astype(bool) & (frame["phase"] == "measured")]
            frames.append(frame.assign(rtt_ms=asked["rtt_ms"], per_connection_mb_s=asked["per_connection_mb_s"],
                                       small_get_ms=calibration.small_get_ms,
                                       one_connection_mb_s=calibration.one_connection_mb_s))
        columns = ["subject", "case", "storage", "wall_s", "rtt_ms", "per_connection_mb_s", "small_get_ms",
                   "one_connection_mb_s"]
        numbers = dict.fromkeys(columns[3:], float)  # a setting without a bandwidth is NaN: float in every frame
        frames = [f[columns].astype(numbers) for f in frames if len(f)]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)

    def environment(self) -> pd.DataFrame:
        """Versions, host, profile and a setting's parameters (the same at every setting but the network)."""
        return self.points[0].environment() if self.points else pd.DataFrame(columns=["setting", "value"])

    def calibrations(self) -> pd.DataFrame:
        """What each setting asked and what its path measured."""
        return pd.DataFrame([{"network": self._network(p), **{
            name: getattr(p.measured_network, k) for k, name in CALIBRATION_COLUMNS.items()},
            "not as asked": "; ".join(p.measured_network.shortfalls()) or "—"} for p in self.points])

    def slope_fits(self) -> pd.DataFrame:
        """fit_slopes of the sweep's samples, its columns as code reads them (s_per_ms_rtt, ci_low, ...)."""
        return fit_slopes(self.samples())

    def slopes(self) -> pd.DataFrame:
        """The slopes as a reader sees them: per engine, query and storage, seconds per ms of round trip with its 95%
        CI (each to the digits its interval means), what the round trips and the lowest bandwidth cost, what bounds
        the query."""
        return slopes_table(self.slope_fits())

    def break_even(self) -> pd.DataFrame:
        """Each setting's break-even (its own copy time and S3 penalties), one block of rows per setting, as a reader
        sees it (QueryReport.break_even)."""
        return self._break_even(lambda point: point.break_even())

    def break_even_frame(self) -> pd.DataFrame:
        """break_even with the columns code reads (QueryReport.break_even_frame: runs, engine, finding, ...)."""
        return self._break_even(lambda point: point.break_even_frame())

    def _break_even(self, table_of) -> pd.DataFrame:
        frames = [table_of(point).assign(network=self._network(point)) for point in self.points]
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return table[["network", *[c for c in table.columns if c != "network"]]] if len(table) else table

    def failures(self) -> pd.DataFrame:
        frames = [point.failures().assign(network=self._network(point)) for point in self.points]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def findings(self) -> Findings:
        """What the sweep found, first in its report: per engine and storage, each query's seconds per ms of round trip
        (with its 95% CI) and what bounds it; what the lowest bandwidth cost; after how many runs copying to HDFS pays
        off per setting; whether the drift control held at each setting (perfkit.drift: the sweep calls no ratio
        beyond noise, so the noise factor is its bar)."""
        samples = self.samples()
        slopes = fit_slopes(samples)
        bound = max((b for b in drift.sweep_drift_bound(self._controls()).values() if b is not None), default=None)
        factors = sweep_factors(samples)
        sentences, undecided = [], []
        for (engine, where), rows in _s3_first(slopes).groupby(["engine", "storage"], sort=False):
            fitted = rows.dropna(subset=["s_per_ms_rtt"])
            undecided += [f"{engine} {q} on {where.upper()}: too few samples to fit a slope"
                          for q in rows.loc[rows["s_per_ms_rtt"].isna(), "query"]]
            if len(fitted):
                sentences.append(_slope_sentence(engine, where, fitted, factors, bound))
            if rows["bandwidth_p"].notna().any():
                sentences.append(_bandwidth_sentence(engine, where, rows.dropna(subset=["bandwidth_p"])))
        sentences += _break_even_sentences(self.break_even_frame())
        if len(failed := self.failures()):
            undecided.append(f"{_failed(len(failed))}, listed under Failures")
        if note := drift.sweep_drift_note(self._controls()):
            undecided.append(note)
        return Findings(sentences, self._conditions(), undecided)

    def _controls(self) -> list[tuple[str, dict]]:
        """Each setting's name and its run's config, where its drift control is (perfkit.drift)."""
        return [(self._network(point), point.results.config) for point in self.points]

    def _conditions(self) -> str:
        settings = (f"S3 behind emulated round trips of {', '.join(map(str, self.rtt_ms))} ms (no bandwidth limit) and "
                    f"{', '.join(f'{v:g}' for v in self.per_connection_mb_s)} MB/s per connection (0 ms added), each "
                    "calibrated before its runs; HDFS local")
        return "; ".join([data_size(self.rows, self.files, "orc"), runs_phrase(self.runs, self.warmup), settings,
                          "the embedded lab on this machine (Toxiproxy between S3's clients and server)",
                          drift.sweep_conditions_phrase(self._controls())])

    @staticmethod
    def _network(point: QueryReport) -> str:
        return NetworkProfile(**point.measured_network.network).describe()

    def raise_for_failures(self) -> None:
        for point in self.points:
            point.raise_for_failures()


def fit_slopes(samples: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per engine, query and storage: seconds per ms of round trip (least squares over every sample of the RTT sweep,
    with its confidence interval) and what the whole sweep costs; the seconds lost at the lowest bandwidth against no
    limit (Welch's t-test says whether beyond noise); then which bounds the query. HDFS is the control: it should
    be bound by neither."""
    rows = []
    for (engine, query, where), group in samples.groupby(["subject", "case", "storage"], sort=True):
        sweep = group[group["per_connection_mb_s"].isna()]
        slope = low = high = math.nan
        if sweep["rtt_ms"].nunique() >= 2 and len(sweep) > 2:
            fit = sps.linregress(sweep["rtt_ms"].astype(float), sweep["wall_s"].astype(float))
            half = fit.stderr * sps.t.ppf(0.5 + confidence / 2, len(sweep) - 2)
            slope, low, high = fit.slope, fit.slope - half, fit.slope + half
        nearest = sweep[sweep["rtt_ms"] == sweep["rtt_ms"].min()]["wall_s"].astype(float)
        limited = group[group["per_connection_mb_s"].notna()]
        narrowest = limited[limited["per_connection_mb_s"] == limited["per_connection_mb_s"].min()]["wall_s"]
        bandwidth_s, bandwidth_p = math.nan, math.nan
        if len(narrowest) >= 2 and len(nearest) >= 2:
            bandwidth_s = narrowest.astype(float).mean() - nearest.mean()
            bandwidth_p = sps.ttest_ind(narrowest.astype(float), nearest, equal_var=False).pvalue
        span = sweep["rtt_ms"].max() - sweep["rtt_ms"].min()
        rows.append({"engine": engine, "query": query, "storage": where, "s_per_ms_rtt": slope, "ci_low": low,
                     "ci_high": high, "rtt_sweep_ms": span, "rtt_cost_s": slope * span,
                     "lowest_mb_s": limited["per_connection_mb_s"].min(), "bandwidth_cost_s": bandwidth_s,
                     "bandwidth_p": bandwidth_p,
                     "bound_by": bound_by(low, slope * span, bandwidth_s, bandwidth_p, 1 - confidence)})
    return pd.DataFrame(rows)


def _s3_first(slopes: pd.DataFrame) -> pd.DataFrame:
    """S3 (the storage read remotely) before HDFS (the control) for each engine."""
    return slopes.sort_values(["engine", "storage"],
                              key=lambda c: ~c.map(reads_remote).astype(bool) if c.name == "storage" else c,
                              kind="stable")


SHOWN_EACH = 8  # queries a sentence names one by one; beyond, their median and range (every one is in the table)
CALIBRATION_COLUMNS = {"small_get_ms": "small GET (ms)", "small_get_direct_ms": "small GET, direct (ms)",
                       "one_connection_mb_s": "one connection (MB/s)", "parallel_mb_s": "in parallel (MB/s)"}


def slopes_table(fits: pd.DataFrame) -> pd.DataFrame:
    """fit_slopes' frame with plain headers: each slope with its 95% CI to the digits the interval's width means, the
    costs to the hundredth of a second, Welch's p in words."""
    if fits.empty:
        return fits
    decimals = [interval_decimals(lo, hi, v) for v, lo, hi in zip(fits["s_per_ms_rtt"], fits["ci_low"],
                                                                    fits["ci_high"])]
    return pd.DataFrame({
        "engine": fits["engine"], "query": fits["query"], "storage": fits["storage"].str.upper(),
        "s per ms of round trip": [rounded(v, d) for v, d in zip(fits["s_per_ms_rtt"], decimals)],
        "95% CI": [ci_span(lo, hi, decimals=d) for lo, hi, d in zip(fits["ci_low"], fits["ci_high"], decimals)],
        "round trips swept (ms)": fits["rtt_sweep_ms"],
        "round trips' cost (s)": [rounded(v, 2) for v in fits["rtt_cost_s"]],
        "lowest MB/s per connection": fits["lowest_mb_s"],
        "lowest bandwidth's cost (s)": [rounded(v, 2) for v in fits["bandwidth_cost_s"]],
        "Welch p": [p_value(p) if p == p else "—" for p in fits["bandwidth_p"]],
        "bound by": fits["bound_by"],
    })


def sweep_factors(samples: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """Per (engine, query, storage): the median time at the farthest round trip ÷ at the nearest (no bandwidth limit):
    the effect of the whole sweep as a ratio, held against the drift control's move."""
    found = {}
    sweep = samples[samples["per_connection_mb_s"].isna()] if len(samples) else samples
    for key, group in sweep.groupby(["subject", "case", "storage"], sort=False) if len(sweep) else ():
        near = group.loc[group["rtt_ms"] == group["rtt_ms"].min(), "wall_s"].median()
        far = group.loc[group["rtt_ms"] == group["rtt_ms"].max(), "wall_s"].median()
        found[key] = far / near if near else math.nan
    return found


def _slope_sentence(engine: str, where: str, rows: pd.DataFrame, factors: dict | None = None,
                    bound: float | None = None) -> str:
    """Each query's seconds per ms of round trip with its 95% CI and what the sweep cost it (median and range beyond
    SHOWN_EACH queries); what bounds them. A query bound by latency whose whole sweep moved its time less than the
    drift control moved is marked (perfkit.drift.WITHIN_DRIFT)."""
    bounds = rows["bound_by"].value_counts()
    bound_by_ = "; ".join(("bound by neither beyond noise" if kind == "neither (within noise)" else f"bound by {kind}")
                          + f" on {bounds[kind]} of {plural(len(rows), 'query')}" for kind in bounds.index)
    control = "" if reads_remote(where) else " (the control)"
    span = rows["rtt_sweep_ms"].iloc[0]
    if len(rows) > SHOWN_EACH:
        slopes, costs = rows["s_per_ms_rtt"], rows["rtt_cost_s"]
        decimals = interval_decimals(0.0, float((rows["ci_high"] - rows["ci_low"]).median()), slopes.median())
        return (f"{engine} on {where.upper()}{control}: median {rounded(slopes.median(), decimals)} s per ms of round "
                f"trip (range {rounded(slopes.min(), decimals)}–{rounded(slopes.max(), decimals)} over "
                f"{plural(len(rows), 'query')}; each one's 95% CI in the table), median {rounded(costs.median(), 2)} s "
                f"more over the {span:g} ms sweep; {bound_by_}.")
    each = []
    for i, row in enumerate(rows.itertuples()):
        value, _, interval = estimate(row.s_per_ms_rtt, row.ci_low, row.ci_high).partition(" (")
        notes = [interval.removesuffix(")")] if interval else []
        effect = (factors or {}).get((engine, row.query, where), math.nan)
        if row.bound_by != "neither (within noise)" and drift.within(effect, bound):
            notes.append(drift.WITHIN_DRIFT)
        each.append(f"{row.query} {value}" + (" s per ms of round trip" if i == 0 else "")
                    + (f" ({'; '.join(notes)})" if notes else ""))
    costs = ", ".join(f"{row.query} {rounded(row.rtt_cost_s, 2)} s" for row in rows.itertuples())
    costs = (f"over the {span:g} ms sweep: {costs} more" if len(rows) > 1 else
             f"{rounded(rows['rtt_cost_s'].iloc[0], 2)} s more over the {span:g} ms sweep")
    return f"{engine} on {where.upper()}{control}: {', '.join(each)}; {costs}; {bound_by_}."


def _bandwidth_sentence(engine: str, where: str, rows: pd.DataFrame, alpha: float = 0.05) -> str:
    beyond = int(((rows["bandwidth_p"] < alpha) & (rows["bandwidth_cost_s"] > 0)).sum())
    costs = rows["bandwidth_cost_s"]
    if len(rows) == 1:
        each = f"{_signed(costs.iloc[0])} s per query"
    elif len(rows) <= SHOWN_EACH:
        each = ", ".join(f"{r.query} {_signed(r.bandwidth_cost_s)} s ({p_value(r.bandwidth_p)})"
                         for r in rows.itertuples())
    else:
        each = (f"median {_signed(costs.median())} s per query (range {_signed(costs.min())} to "
                f"{_signed(costs.max())} s over {plural(len(rows), 'query')})")
    return (f"{engine} on {where.upper()} at {rows['lowest_mb_s'].min():g} MB/s per connection: {each} against no "
            f"limit, slower beyond noise (Welch p < {alpha:g}) on {beyond} of {plural(len(rows), 'query')}.")


def _signed(value: float) -> str:
    """'+0.10', never '-0.00'."""
    return f"{round(value, 2) + 0.0:+.2f}" if value == value else "—"


def _break_even_sentences(table: pd.DataFrame) -> list[str]:
    """Per network setting: after how many runs of a query copying to HDFS pays off, or why it was not measured."""
    if table.empty:
        return []
    found = []
    for network, rows in table.groupby("network", sort=False):
        if "engine" not in rows or rows["engine"].isna().all():  # the copy was not measured at this setting
            found.append(f"At {network}: {rows['finding'].iloc[0]}.")
            continue
        pays = rows["runs"].dropna()
        if pays.empty:
            found.append(f"At {network}: copying to HDFS never pays off (no query slower on S3).")
            continue
        runs = f"{plural(int(pays.min()), 'run')} of a query" + (
            "" if pays.min() == pays.max() else f" at the earliest, {int(pays.max())} at the latest,")
        found.append(f"At {network}: copying to HDFS pays off after {runs} on {len(pays)} of "
                     f"{plural(len(rows), 'engine-query pair')}" + (", never on the others." if len(pays) < len(rows)
                                                                    else "."))
    return found

def bound_by(slope_low: float, rtt_cost_s: float, bandwidth_cost_s: float, bandwidth_p: float,
             alpha: float = 0.05) -> str:
    """'latency' when the round trip's cost is beyond noise (its slope's interval above 0) and the larger of the two;
    'bandwidth' when the lowest bandwidth's cost is beyond noise and the larger; else 'neither (within noise)'."""
    latency = not math.isnan(slope_low) and slope_low > 0
    bandwidth = not math.isnan(bandwidth_p) and bandwidth_p < alpha and bandwidth_cost_s > 0
    if latency and (not bandwidth or rtt_cost_s >= bandwidth_cost_s):
        return "latency"
    if bandwidth:
        return "bandwidth"
    return "neither (within noise)"
