"""When copying to HDFS pays off: the first study's trade.

A user queries data on S3 directly, or copies it once S3 -> HDFS and then queries HDFS. Over n runs of a query the
first costs n × mean S3 time and the second copy + n × mean HDFS time (a total over runs is n × the mean, not the
median), so copying pays off from the smallest n with copy < n × penalty, penalty = mean S3 − mean HDFS per run.

    be = break_even(41.2, s3_seconds, hdfs_seconds); be.sentence()
    table = break_even_table(comparison._frame(), copy_s=41.2); plot_break_even(table)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfkit import stats, validate
from perfkit.findings import plural

N_RESAMPLES = 2000  # as stats.ratio_ci
COLUMNS = ["engine", "query", "copy_s", "s3_mean_s", "hdfs_mean_s", "penalty_s", "penalty_low", "penalty_high",
           "runs", "runs_low", "runs_high", "finding"]


@dataclass(frozen=True)
class BreakEven:
    copy_s: float
    penalty_s: float  # mean S3 − mean HDFS seconds per run; nan when a storage has no run
    penalty_ci: tuple[float, float]  # (nan, nan) with fewer than stats.MIN_RUNS runs on a storage
    runs: int | None  # None: copying never pays off (no penalty), or there is no penalty to tell
    runs_ci: tuple[float, float]  # from the penalty's bounds: math.inf where a bound is no penalty
    confidence: float = 0.95

    def sentence(self) -> str:
        """Plain words with the numbers, for a report's table."""
        low, high = self.penalty_ci
        if math.isnan(low):
            return f"cannot tell: too few runs (need {stats.MIN_RUNS} per storage)"
        if self.runs is None:
            return f"copying never pays off: S3 is not slower (penalty {_s(self.penalty_s)} s, CI {_s(low)}–{_s(high)})"
        first, last = (_count(n) for n in self.runs_ci)
        return (f"copying pays off after {plural(self.runs, 'run')} ({self.confidence * 100:g}% CI {first}–{last}): "
                f"copy {self.copy_s:.1f} s, S3 penalty {_s(self.penalty_s)} s per run")


def break_even(copy_s: float, s3_samples, hdfs_samples, confidence: float = 0.95, seed: int = 0) -> BreakEven:
    """After how many runs copying the data S3 -> HDFS once (copy_s seconds), then querying HDFS, beats querying S3,
    from one query's measured seconds per run on each storage (independent samples)."""
    copy_s = _copy_seconds(copy_s)
    s3, hdfs = np.asarray(s3_samples, float), np.asarray(hdfs_samples, float)
    penalty = float(s3.mean() - hdfs.mean()) if s3.size and hdfs.size else math.nan
    low, high = _penalty_ci(s3, hdfs, confidence, seed)
    # the largest penalty gives the fewest runs; a bound that is no penalty never pays off
    runs_ci = (math.nan, math.nan) if math.isnan(low) else (_runs_or_never(copy_s, high), _runs_or_never(copy_s, low))
    return BreakEven(copy_s, penalty, (low, high), _runs(copy_s, penalty), runs_ci, confidence)


def break_even_table(frame: pd.DataFrame, copy_s: float, s3: str = "s3", hdfs: str = "hdfs",
                     confidence: float = 0.95, include_throttled: bool = False) -> pd.DataFrame:
    """One row per (engine, query) of an HDFS vs S3 runs frame (the experiment's records): the break-even of each,
    from the samples stats.compare uses (measured, successful, unthrottled unless include_throttled)."""
    copy_s = _copy_seconds(copy_s)
    rows = []
    pair = frame[frame["storage"].isin([s3, hdfs])]
    for (engine, query), group in pair.groupby(["subject", "case"], sort=True):
        ok = stats.samples(group, include_throttled)
        on_s3 = ok.loc[ok["storage"] == s3, "wall_s"].to_numpy(float)
        on_hdfs = ok.loc[ok["storage"] == hdfs, "wall_s"].to_numpy(float)
        if stats.same_results(group):
            be = break_even(copy_s, on_s3, on_hdfs, confidence)
            finding = be.sentence()
        else:  # the storages answered differently: their times are not of the same work
            be = BreakEven(copy_s, math.nan, (math.nan, math.nan), None, (math.nan, math.nan), confidence)
            finding = stats.NOT_COMPARABLE
        rows.append({"engine": engine, "query": query, "copy_s": copy_s,
                     "s3_mean_s": stats.summary(on_s3)["mean"], "hdfs_mean_s": stats.summary(on_hdfs)["mean"],
                     "penalty_s": be.penalty_s, "penalty_low": be.penalty_ci[0], "penalty_high": be.penalty_ci[1],
                     "runs": be.runs, "runs_low": be.runs_ci[0], "runs_high": be.runs_ci[1], "finding": finding})
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["runs"] = table["runs"].astype("Int64")  # whole runs, <NA> where copying never pays off
    return table


def plot_break_even(table: pd.DataFrame, ax=None):
    """A horizontal bar per engine and query: the runs after which copying pays off, whiskers its CI. An upper bound
    that never pays off is cut at the axis' end and marked ▸; every bar says its numbers, "never" where infinite."""
    import matplotlib.pyplot as plt  # the tables need no matplotlib

    rows = table.reset_index(drop=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    low, high = rows["runs_low"].astype(float).to_numpy(), rows["runs_high"].astype(float).to_numpy()
    runs = rows["runs"].astype(float).fillna(0).to_numpy()
    runs[np.isnan(low)] = 0  # never, or cannot tell: no bar, its words instead
    shown = runs > 0
    finite = np.concatenate([runs[shown], low[np.isfinite(low)], high[np.isfinite(high)]])
    end = 1.25 * finite.max() if len(finite) else 10.0  # where a CI that never pays off is cut
    err = np.array([runs - low, np.minimum(high, end) - runs])
    err[:, ~shown] = 0
    err = err.clip(min=0)  # a percentile interval may leave out its point
    y = np.arange(len(rows))[::-1]  # the table's first row on top
    ax.barh(y, runs, xerr=err, capsize=3, color="#2ca02c", alpha=0.85)
    cut = shown & np.isinf(high)
    ax.plot(np.full(cut.sum(), end), y[cut], ">", color="black")  # the whisker goes on: its CI never ends
    for yi, at, lo, hi, row in zip(y, runs + err[1], low, high, rows.itertuples()):
        if math.isnan(lo):
            words = "cannot tell" if row.finding != stats.NOT_COMPARABLE else row.finding
        elif math.isinf(lo):  # not even the largest penalty pays the copy back
            words = "never"
        else:
            words = f"{_count(row.runs)} (CI {_count(lo)}–{_count(hi)})"
        ax.text(at, yi, f" {words}", va="center", fontsize=8)  # after the whisker
    ax.set_xlim(0, end * 1.3)
    ax.set_yticks(y, [f"{e} {q}" for e, q in zip(rows["engine"], rows["query"])])
    ax.set_xlabel("runs of the query after which copying S3 → HDFS pays off (whiskers: CI)")
    ax.figure.tight_layout()
    return ax.figure


def _copy_seconds(value) -> float:
    return validate.number("copy_s", value, above=0, unit="seconds (the measured S3 → HDFS copy)")


def _penalty_ci(s3: np.ndarray, hdfs: np.ndarray, confidence: float, seed: int) -> tuple[float, float]:
    """Bootstrap (percentile) interval of mean(s3) − mean(hdfs), samples independent: as stats.ratio_ci."""
    if s3.size < stats.MIN_RUNS or hdfs.size < stats.MIN_RUNS:
        return (math.nan, math.nan)
    if np.ptp(s3) == 0 and np.ptp(hdfs) == 0:  # every resample is the same: the interval is the point
        point = float(s3.mean() - hdfs.mean())
        return (point, point)

    def difference(x, y, axis=-1):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    res = stats.bootstrap((s3, hdfs), difference, seed, vectorized=True, paired=False, confidence_level=confidence,
                          n_resamples=N_RESAMPLES, method="percentile")
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def _runs(copy_s: float, penalty: float) -> int | None:
    """The smallest n with copy_s < n × penalty; None when there is no penalty to pay the copy back."""
    return math.floor(copy_s / penalty) + 1 if penalty > 0 else None


def _runs_or_never(copy_s: float, penalty: float) -> float:
    runs = _runs(copy_s, penalty)
    return math.inf if runs is None else runs


def _count(n) -> str:
    return "never" if n is None or n is pd.NA or math.isinf(n) else f"{int(n)}"


def _s(seconds: float) -> str:
    """Seconds as a person writes them: two decimals, small ones to two digits, a real minus sign."""
    text = f"{seconds:.2f}" if abs(seconds) >= 0.01 or seconds == 0 else f"{seconds:.2g}"
    return text.replace("-", "−")
