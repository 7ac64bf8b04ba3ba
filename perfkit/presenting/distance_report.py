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

from perfkit.errors import PerfkitError
from perfkit.experiments.s3_distance import SWEEP
from perfkit.presenting.query_report import QueryReport
from perfkit.findings import Findings, data_size, plural, runs_phrase
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
        return cls([QueryReport(point._results()) for point in sweep.points], sweep.sweep_record())

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
            k: getattr(p.measured_network, k) for k in ("small_get_ms", "small_get_direct_ms", "one_connection_mb_s",
                                                     "parallel_mb_s")},
            "not as asked": "; ".join(p.measured_network.shortfalls()) or "-"} for p in self.points])

    def slopes(self) -> pd.DataFrame:
        return fit_slopes(self.samples())

    def break_even(self) -> pd.DataFrame:
        """Each setting's break-even (its own copy time and S3 penalties), one block of rows per setting."""
        frames = [point.break_even().assign(network=self._network(point)) for point in self.points]
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return table[["network", *[c for c in table.columns if c != "network"]]] if len(table) else table

    def failures(self) -> pd.DataFrame:
        frames = [point.failures().assign(network=self._network(point)) for point in self.points]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def findings(self) -> Findings:
        """What the sweep found, first in its report: per engine and storage, seconds per ms of round trip and what
        bounds its queries; what the lowest bandwidth cost; after how many runs copying to HDFS pays off per setting."""
        slopes = self.slopes()
        sentences, undecided = [], []
        for (engine, where), rows in _s3_first(slopes).groupby(["engine", "storage"], sort=False):
            fitted = rows.dropna(subset=["s_per_ms_rtt"])
            undecided += [f"{engine} {q} on {where.upper()}: too few samples to fit a slope"
                          for q in rows.loc[rows["s_per_ms_rtt"].isna(), "query"]]
            if len(fitted):
                sentences.append(_slope_sentence(engine, where, fitted))
            if rows["bandwidth_p"].notna().any():
                sentences.append(_bandwidth_sentence(engine, where, rows.dropna(subset=["bandwidth_p"])))
        sentences += _break_even_sentences(self.break_even())
        if len(failed := self.failures()):
            undecided.append(f"{plural(len(failed), 'failed run or problem')}, listed under Failures")
        return Findings(sentences, self._conditions(), undecided)

    def _conditions(self) -> str:
        settings = (f"S3 behind emulated round trips of {', '.join(map(str, self.rtt_ms))} ms (no bandwidth limit) and "
                    f"{', '.join(f'{v:g}' for v in self.per_connection_mb_s)} MB/s per connection (0 ms added), each "
                    "calibrated before its runs; HDFS local")
        return "; ".join([data_size(self.rows, self.files, "orc"), runs_phrase(self.runs, self.warmup), settings,
                          "the embedded lab on this machine (Toxiproxy between S3's clients and server)"])

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


def _values(series: pd.Series, fmt: str) -> str:
    """'0.020' for one query, 'median 0.020, 0.010 to 0.030' for several; -0.000 shown as 0.000."""
    values = [round(v, 6) + 0.0 for v in series]
    if len(values) == 1:
        return fmt.format(values[0])
    return f"median {fmt.format(series.median() + 0.0)}, {fmt.format(min(values))} to {fmt.format(max(values))}"


def _slope_sentence(engine: str, where: str, rows: pd.DataFrame) -> str:
    bounds = rows["bound_by"].value_counts()
    bound = "; ".join(f"{'bound by ' + kind if kind != 'neither (within noise)' else 'bound by neither beyond noise'}"
                      f" on {bounds[kind]} of {plural(len(rows), 'query')}" for kind in bounds.index)
    control = "" if reads_remote(where) else " (the control)"
    return (f"{engine} on {where.upper()}{control}: {_values(rows['s_per_ms_rtt'], '{:.3f}')} s per ms of round trip, "
            f"{_values(rows['rtt_cost_s'], '{:.2f}')} s more over the {rows['rtt_sweep_ms'].iloc[0]:g} ms sweep; "
            f"{bound}.")


def _bandwidth_sentence(engine: str, where: str, rows: pd.DataFrame, alpha: float = 0.05) -> str:
    beyond = int(((rows["bandwidth_p"] < alpha) & (rows["bandwidth_cost_s"] > 0)).sum())
    return (f"{engine} on {where.upper()} at {rows['lowest_mb_s'].min():g} MB/s per connection: "
            f"{_values(rows['bandwidth_cost_s'], '{:+.2f}')} s per query against no limit, slower beyond noise "
            f"(Welch p < {alpha:g}) on {beyond} of {plural(len(rows), 'query')}.")


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
        runs = (plural(int(pays.min()), "run") if pays.min() == pays.max()
                else f"{int(pays.min())}–{int(pays.max())} runs")
        found.append(f"At {network}: copying to HDFS pays off after {runs} of a query on {len(pays)} of "
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
