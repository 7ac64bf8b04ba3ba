"""Summary statistics, speed-ups with bootstrap confidence intervals, and plain-words verdicts.

Only measured, successful samples are summarised; warm-up runs never are.

A family of verdicts (every row of one compare() or compare_storages() call: each engine and query of a report) read
at 95% per row calls something "beyond noise" in the family far more often than 5% of the time when nothing differs:
with m rows about 1 - 0.95^m (19% for 4 queries, 64% for 20). `family_confidence=0.95` makes the whole family's
chance of any false call at most 5%: each row's interval at 1 - 0.05 / m (Bonferroni; Holm's step-down would call a
little more but gives no interval per row), as far as each interval holds its level: a percentile bootstrap of 4 runs a
side is narrow (in simulation its 95% misses a true ratio of 1 about 7% of the time, its 98.75% 3%). bench/power.py
measures the rules' power and false alarms on the lab.
"""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from scipy import stats as sps

NOISY_CV = 0.10  # a storage whose repeats vary more than this is flagged as noisy
NOISE_FACTOR = 1.10  # perfkit compare's default factor (a change must exceed it) and the drift control's: a
# report calls no effect smaller than this, so a control that moved less is no concern (perfkit.drift)
MIN_RUNS = 3  # fewer measured runs per storage give no meaningful confidence interval
CONFIDENCE = 0.95  # each row's interval, unless a family's confidence is asked (family_level)
FAMILY_CORRECTION = "Bonferroni"  # how a family's confidence is spread over its rows (family_level)
TAIL_RESAMPLES = 25  # bootstrap resamples beyond each end of an interval at least: a 99.9% one needs more than 2,000
NOT_COMPARABLE = "not comparable: results differ"
DETECTION_POWER = 0.9  # a "detectable" change is one the verdict would call 9 times in 10 (detectable_change)
ROUNDS, MEDIANS = "rounds", "medians"  # what a compare() row's ratio is of: the typical round's, or the medians'
# the name of scipy.stats.bootstrap's random generator: rng since scipy 1.15, random_state before (Python 3.9 gets 1.13)
BOOTSTRAP_RNG = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"


def bootstrap(data, statistic, seed: int, **options):
    """scipy.stats.bootstrap drawing its resamples from np.random.default_rng(seed), in any scipy."""
    return sps.bootstrap(data, statistic, **options, **{BOOTSTRAP_RNG: np.random.default_rng(seed)})


def summary(samples) -> dict:
    """n, min, median, p95 (linear interpolation), mean and coefficient of variation (sample std / mean)."""
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        return {"n": 0, "min": np.nan, "median": np.nan, "p95": np.nan, "mean": np.nan, "cv": np.nan}
    cv = float(np.std(x, ddof=1) / np.mean(x)) if x.size > 1 and np.mean(x) else np.nan
    return {"n": int(x.size), "min": float(x.min()), "median": float(np.median(x)),
            "p95": float(np.percentile(x, 95)), "mean": float(x.mean()), "cv": cv}


def family_level(family_confidence: float, size: int) -> float:
    """The confidence of each of `size` intervals such that all of them hold together with at least
    `family_confidence` (Bonferroni: 1 - (1 - family_confidence) / size; 0.9875 for 0.95 over 4 rows)."""
    if isinstance(family_confidence, bool) or not 0 < family_confidence < 1:
        raise ValueError(f"family_confidence {family_confidence!r} must be between 0 and 1 (0.95 is usual)")
    if isinstance(size, bool) or int(size) != size or size < 0:
        raise ValueError(f"a family of {size!r} rows: give a whole number of rows, 0 or more")
    return 1 - (1 - family_confidence) / max(int(size), 1)


def resamples_for(confidence: float, n_resamples: int = 2000) -> int:
    """Enough bootstrap resamples for an interval at `confidence`: at least TAIL_RESAMPLES beyond each of its ends."""
    return max(n_resamples, int(np.ceil(round(2 * TAIL_RESAMPLES / (1 - confidence), 6))))


def ratio_ci(slower, faster, confidence: float = CONFIDENCE, n_resamples: int = 2000,
             seed: int = 0) -> tuple[float, float]:
    """Bootstrap (percentile) confidence interval of median(slower) / median(faster), samples independent."""
    a, b = np.asarray(slower, float), np.asarray(faster, float)
    if a.size < MIN_RUNS or b.size < MIN_RUNS:
        return (np.nan, np.nan)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        point = float(np.median(a) / np.median(b))
        return (point, point)

    def ratio(x, y, axis=-1):
        return np.median(x, axis=axis) / np.median(y, axis=axis)

    res = bootstrap((a, b), ratio, seed, vectorized=True, paired=False, confidence_level=confidence,
                    n_resamples=n_resamples, method="percentile")
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def paired_ratio_ci(numerators, denominators, confidence: float = 0.95, n_resamples: int = 2000,
                    seed: int = 0) -> tuple[float, float, float]:
    """The median of the paired ratios numerators[i] / denominators[i] and its bootstrap (percentile) confidence
    interval, the pairs resampled whole: (median, low, high). For two paths timed side by side, round by round."""
    r = np.asarray(numerators, float) / np.asarray(denominators, float)
    point = float(np.median(r)) if r.size else np.nan
    if r.size < MIN_RUNS:
        return (point, np.nan, np.nan)
    if np.ptp(r) == 0:
        return (point, point, point)
    res = bootstrap((r,), np.median, seed, vectorized=True, confidence_level=confidence, n_resamples=n_resamples,
                    method="percentile")
    return (point, float(res.confidence_interval.low), float(res.confidence_interval.high))


def signed_rank_depth(pairs: int, confidence: float) -> int:
    """How deep into the sorted Walsh averages a Wilcoxon signed-rank interval at `confidence` starts: the largest C
    with P(T+ <= C - 1) <= (1 - confidence) / 2 under the exact null distribution of the signed-rank statistic T+ of
    `pairs` pairs (0: no interval reaches that confidence with so few pairs). scipy gives the test, not its interval."""
    n, tail = int(pairs), (1 - confidence) / 2
    probability = np.zeros(n * (n + 1) // 2 + 1)
    probability[0] = 1.0
    for rank in range(1, n + 1):  # each rank's sign is a fair coin: T+ gains `rank` or nothing
        probability = (probability + np.concatenate([np.zeros(rank), probability[:-rank]])) / 2
    return int(np.searchsorted(np.cumsum(probability), tail * (1 + 1e-9), side="right"))


def round_ratio_ci(numerators, denominators, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """The typical ratio numerators[i] / denominators[i] of rounds timed side by side, and its confidence interval:
    the Hodges-Lehmann estimate of the log ratios' centre (the median of their pairwise averages), and the Wilcoxon
    signed-rank interval around it (exact, distribution-free), back as ratios: (ratio, low, high). Pairing removes
    what moved both sides of a round alike (the machine's drift); the estimate keeps 95% of a mean's efficiency
    while one slow run moves it little. NaNs when the rounds are too few for an interval at `confidence` (6 at 95%,
    9 at 99.6%)."""
    logs = np.log(np.asarray(numerators, float) / np.asarray(denominators, float))
    logs = logs[np.isfinite(logs)]
    n = logs.size
    if n == 0:
        return (np.nan, np.nan, np.nan)
    upper = np.triu_indices(n)
    walsh = np.sort((logs[upper[0]] + logs[upper[1]]) / 2)
    point = float(np.exp(np.median(walsh)))
    depth = signed_rank_depth(n, confidence) if n >= MIN_RUNS else 0
    if depth < 1:
        return (point, np.nan, np.nan)
    return (point, float(np.exp(walsh[depth - 1])), float(np.exp(walsh[walsh.size - depth])))


def detectable_change(log_ratios, confidence: float = CONFIDENCE, power: float = DETECTION_POWER) -> float:
    """The smallest change (a factor >= 1) that round_ratio_ci's interval at `confidence` would exclude 1 for `power`
    of the time at these rounds' spread: the interval's own half-width h (exact, so its steps at few rounds count),
    plus z(power) standard errors of the estimate, h / z(the interval's tail) each: exp(h (1 + z_power / z_tail)).
    In simulation (normal rounds, 12 to 30 of them, 95% to 99.6%) a change of that size is called 88-92% of the time;
    bench/power.py compares it with the power it measures on the lab. NaN when the rounds give no interval."""
    logs = np.asarray(log_ratios, float)
    logs = logs[np.isfinite(logs)]
    depth = signed_rank_depth(logs.size, confidence) if logs.size >= MIN_RUNS else 0
    if depth < 1:
        return np.nan
    upper = np.triu_indices(logs.size)
    walsh = np.sort((logs[upper[0]] + logs[upper[1]]) / 2)
    half_width = (walsh[walsh.size - depth] - walsh[depth - 1]) / 2
    tail = sps.norm.ppf(1 - (1 - confidence) / 2)
    return float(np.exp(half_width * (1 + sps.norm.ppf(power) / tail)))


def against_target(low: float, high: float, target: float) -> str:
    """Whether a ratio with confidence interval (low, high) is within an upper target, in words."""
    if np.isnan(low) or np.isnan(high):
        return f"too few rounds to judge (need {MIN_RUNS})"
    if high <= target:
        return "met"
    if low > target:
        return "not met"
    return "not decided: the interval spans the target"


def verdict(ratio: float, ci: tuple[float, float], baseline: str = "HDFS", other: str = "S3") -> str:
    """Words for other/baseline: '<faster one> 1.4× faster' only when the CI excludes 1."""
    low, high = ci
    if np.isnan(ratio) or np.isnan(low):
        return f"too few runs to judge (need {MIN_RUNS} per storage)"
    if low > 1:
        return f"{baseline} {ratio:.2f}× faster"
    if high < 1:
        return f"{other} {1 / ratio:.2f}× faster"
    return "no difference beyond noise"


def label(storage: str) -> str:
    """How a storage is written in tables: HDFS, S3, ALLUXIO ..."""
    return storage.upper()


def throttled_requests(params) -> int:
    """The S3 requests the server throttled during a run (its record's params["throttled"]), 0 when none counted."""
    return int(params.get("throttled") or 0) if isinstance(params, dict) else 0


def compare(frame: pd.DataFrame, baseline: str = "hdfs", other: str = "s3",
            by: tuple[str, ...] = ("subject", "case"), include_throttled: bool = False,
            family_confidence: float | None = None, family_size: int | None = None,
            paired: bool = True) -> pd.DataFrame:
    """One row per (subject, case): both storages' summaries, the ratio other/baseline judged, its CI and verdict.

    The ratio judged (`speedup`, with `speedup_of` saying which): where the records carry rounds (`iteration`: both
    storages timed in each round, in a random order) and `paired`, the typical round's ratio with its Wilcoxon
    signed-rank interval (round_ratio_ci: what drifted over the run moved both sides of a round and leaves their
    ratio); else, or when the rounds are too few for an interval at the row's confidence, median(other) /
    median(baseline) with a bootstrap interval (ratio_ci). `speedup_median` and `speedup_min` are the medians' and
    minimums' ratios either way. `detectable`: when paired, the smallest change the row's verdict would call 9 times
    in 10 at its rounds' spread (detectable_change), what a "no difference" can rule out; NaN otherwise.

    A run the S3 server throttled measured its retries too: it is left out of the summaries and the verdict unless
    include_throttled; throttled_runs / throttled_requests say how many there were either way.

    Each row's interval is at 95% (CONFIDENCE) unless `family_confidence` is given: then the rows are one family of
    verdicts, and each row's interval is at family_level(family_confidence, m), m the rows that get an interval (enough
    runs on both sides, the same results), so that the chance of any "beyond noise" among them when nothing differs is
    at most 1 - family_confidence. `family_size`: m when the family spans more than these rows (compare_storages:
    every storage's). Then the frame also has ci_confidence and family_size columns, and attrs["family"] says it all:
    {"confidence", "correction", "size", "row_confidence"}."""
    groups = []
    for key, group in frame.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        groups.append((key, group, *_sides(group, baseline, other, include_throttled), same_results(group)))
    family = None
    if family_confidence is not None:
        size = family_size if family_size is not None else sum(judged(b, o, match) for _, _, b, o, match in groups)
        family = {"confidence": family_confidence, "correction": FAMILY_CORRECTION, "size": int(size),
                  "row_confidence": family_level(family_confidence, size)}
    confidence = family["row_confidence"] if family else CONFIDENCE
    rows = []
    for key, group, base, oth, results_match in groups:
        throttled = _throttled(_measured_ok(group))
        throttled_runs, throttled_total = int((throttled > 0).sum()), int(throttled.sum())
        sb, so = summary(base), summary(oth)
        by_median = so["median"] / sb["median"] if sb["n"] and so["n"] else np.nan
        by_min = so["min"] / sb["min"] if sb["n"] and so["n"] else np.nan
        rounds = _rounds(group, baseline, other, include_throttled) if paired else None
        if rounds is not None and signed_rank_depth(len(rounds), confidence) >= 1:
            judged_ratio, *ci = round_ratio_ci(rounds[other], rounds[baseline], confidence)
            judged_of = ROUNDS
            detectable = detectable_change(np.log(rounds[other] / rounds[baseline]), confidence)
        else:
            judged_ratio, judged_of, detectable = by_median, MEDIANS, np.nan
            ci = ratio_ci(oth, base, confidence=confidence, n_resamples=resamples_for(confidence))
        if not results_match:  # timing two different answers says nothing about the storages
            by_median = by_min = judged_ratio = np.nan
            ci = (np.nan, np.nan)
        failed = int((~group["ok"].astype(bool)).sum())
        rows.append({
            **dict(zip(by, key)),
            **{f"{baseline}_{k}": v for k, v in sb.items()},
            **{f"{other}_{k}": v for k, v in so.items()},
            "speedup": judged_ratio, "speedup_of": judged_of, "ci_low": ci[0], "ci_high": ci[1],
            "detectable": detectable if results_match else np.nan,
            "speedup_median": by_median, "speedup_min": by_min,
            "verdict": verdict(judged_ratio, ci, label(baseline), label(other)) if results_match else NOT_COMPARABLE,
            "results_match": results_match,
            "noisy": bool((sb["cv"] > NOISY_CV) or (so["cv"] > NOISY_CV)),
            "failed_runs": failed,
            "throttled_runs": throttled_runs, "throttled_requests": throttled_total,
            "throttled_kept": include_throttled,
            **({"ci_confidence": confidence, "family_size": family["size"]} if family else {}),
        })
    table = pd.DataFrame(rows)
    if family:
        table.attrs["family"] = family
    return table


def judged(base, other, results_match: bool = True) -> bool:
    """Whether a row gets an interval (and so a verdict that can say "beyond noise"): MIN_RUNS on each side and the
    same results. The rows of a family that count in its correction."""
    return bool(results_match) and len(base) >= MIN_RUNS and len(other) >= MIN_RUNS


def samples(frame: pd.DataFrame, include_throttled: bool = False) -> pd.DataFrame:
    """The rows that are samples: measured (never warm-up), successful, and not throttled by the S3 server unless
    include_throttled (a throttled run timed its retries too)."""
    ok = _measured_ok(frame)
    return ok if include_throttled else ok[_throttled(ok) == 0]


def same_results(frame: pd.DataFrame) -> bool:
    """True when every successful run, on every storage, returned the same result: timing two different answers
    says nothing about the storages."""
    return frame.loc[frame["ok"].astype(bool), "result_hash"].dropna().nunique() <= 1


def _measured_ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["phase"] == "measured") & frame["ok"].astype(bool)]


def _throttled(rows: pd.DataFrame) -> pd.Series:
    """Per row, the requests the S3 server throttled during it."""
    return (rows["params"].map(throttled_requests) if "params" in rows else pd.Series(0, index=rows.index)).astype(int)


def compare_storages(frame: pd.DataFrame, storages: list[str], baseline: str,
                     by: tuple[str, ...] = ("subject", "case"), include_throttled: bool = False,
                     family_confidence: float | None = None) -> pd.DataFrame:
    """compare() of every other storage against the baseline: one row per (subject, case, storage).

    `family_confidence`: every row of every storage is one family (compare's family_confidence), its size counted
    over them all."""
    pairs = [(other, frame[frame["storage"].isin([baseline, other])]) for other in storages if other != baseline]
    size = None
    if family_confidence is not None:
        size = sum(judged(*_sides(group, baseline, other, include_throttled), same_results(group))
                   for other, rows in pairs for _, group in rows.groupby(list(by), sort=True))
    parts = []
    for other, rows in pairs:
        part = compare(rows, baseline, other, by, include_throttled, family_confidence, size)
        part.insert(len(by), "storage", other)
        parts.append(part)
    if not parts:
        return pd.DataFrame()
    table = pd.concat(parts, ignore_index=True)
    if family_confidence is not None:
        table.attrs["family"] = parts[0].attrs["family"]
    return table


def _sides(group: pd.DataFrame, baseline: str, other: str, include_throttled: bool) -> tuple:
    """The baseline's and the other storage's samples (wall seconds) of one row."""
    ok = samples(group, include_throttled)
    return (ok.loc[ok["storage"] == baseline, "wall_s"].to_numpy(), ok.loc[ok["storage"] == other, "wall_s"].to_numpy())


def judged_words(comparison: pd.DataFrame) -> str:
    """What compare()'s ratios are of, for a header: "typical round" (paired), "medians" or, mixed, "as judged"."""
    kinds = set(comparison["speedup_of"].dropna()) if "speedup_of" in comparison else {MEDIANS}
    return {frozenset({ROUNDS}): "typical round", frozenset({MEDIANS}): "medians"}.get(frozenset(kinds), "as judged")


def _rounds(group: pd.DataFrame, baseline: str, other: str, include_throttled: bool) -> pd.DataFrame | None:
    """The rounds in which both storages have a sample, one row each, a column per storage (wall seconds); None when
    the records carry no rounds."""
    if "iteration" not in group:
        return None
    ok = samples(group, include_throttled)
    ok = ok[ok["storage"].isin([baseline, other])]
    table = ok.pivot_table(index="iteration", columns="storage", values="wall_s", aggfunc="first")
    if baseline not in table or other not in table:
        return None
    return table[[baseline, other]].dropna()
