import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from perfkit import stats
from perfkit.breakeven import COLUMNS, BreakEven, break_even, break_even_table, plot_break_even
from perfkit.errors import PerfkitError
from perfkit.results import ResultSet

S3 = [3.1, 2.9, 3.3, 3.0, 3.2]  # mean 3.1
HDFS = [2.0, 1.9, 2.1, 2.2, 1.8]  # mean 2.0: penalty 1.1 s per run


def test_no_spread_by_hand():
    be = break_even(10, [2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    # 10 runs: 10 + 10 x 1 = 20, not below 20; 11 runs: 10 + 11 x 1 = 21 < 22
    assert (be.copy_s, be.penalty_s, be.penalty_ci, be.runs, be.runs_ci) == (10.0, 1.0, (1.0, 1.0), 11, (11, 11))
    assert be.sentence() == "copying pays off after 11 runs (95% CI 11–11): copy 10.0 s, S3 penalty 1.00 s per run"


def test_penalty_is_the_difference_of_means_not_medians():
    be = break_even(10, [1.0, 1.0, 7.0], [1.0, 1.0, 1.0])  # medians equal; totals differ by 6 s every 3 runs
    assert be.penalty_s == pytest.approx(2.0) and be.runs == 6  # 10 / 2 = 5: 5 runs only break even


def test_spread_ci_is_the_percentile_bootstrap_of_the_difference_of_means():
    be = break_even(41.2, S3, HDFS, confidence=0.9, seed=3)
    expected = sps.bootstrap((np.array(S3), np.array(HDFS)), lambda x, y, axis: x.mean(axis) - y.mean(axis),
                             paired=False, vectorized=True, confidence_level=0.9, n_resamples=2000,
                             method="percentile", **{stats.BOOTSTRAP_RNG: np.random.default_rng(3)}).confidence_interval
    assert be.penalty_ci == pytest.approx((expected.low, expected.high))
    low, high = be.penalty_ci
    assert 0 < low < be.penalty_s < high and be.penalty_s == pytest.approx(1.1)
    assert be.runs == math.floor(41.2 / be.penalty_s) + 1 == 38
    assert be.runs_ci == (math.floor(41.2 / high) + 1, math.floor(41.2 / low) + 1)
    assert be.runs_ci[0] <= be.runs <= be.runs_ci[1]
    assert be.sentence() == (f"copying pays off after 38 runs (90% CI {be.runs_ci[0]}–{be.runs_ci[1]}): "
                             "copy 41.2 s, S3 penalty 1.10 s per run")


def test_same_seed_same_interval():
    assert break_even(41.2, S3, HDFS).penalty_ci == break_even(41.2, S3, HDFS, seed=0).penalty_ci


def test_never_pays_off_when_s3_is_not_slower():
    be = break_even(10, [2.0, 2.0, 2.0], [3.0, 3.0, 3.0])
    assert be.penalty_s == -1.0 and be.runs is None and be.runs_ci == (math.inf, math.inf)
    assert be.sentence() == "copying never pays off: S3 is not slower (penalty −1.00 s, CI −1.00–−1.00)"
    assert break_even(10, [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]).runs is None  # no penalty at all: never either


def test_penalty_interval_across_zero_has_no_upper_bound():
    s3, hdfs = [3.1, 2.9, 3.3, 3.0, 3.2], [3.1, 2.85, 3.2, 3.0, 3.15]  # penalty 0.04 s, well within the noise
    be = break_even(41.2, s3, hdfs)
    low, high = be.penalty_ci
    assert low < 0 < be.penalty_s < high
    assert be.runs_ci == (math.floor(41.2 / high) + 1, math.inf)
    assert f"(95% CI {be.runs_ci[0]}–never)" in be.sentence()


def test_never_pays_off_with_an_interval_that_reaches_a_penalty():
    be = break_even(41.2, [3.0, 2.9, 3.1, 3.0], [3.02, 2.95, 3.1, 3.05])  # penalty -0.03 s
    low, high = be.penalty_ci
    assert be.runs is None and low < 0 < high and be.runs_ci == (math.floor(41.2 / high) + 1, math.inf)
    assert be.sentence() == (f"copying never pays off: S3 is not slower (penalty −0.03 s, "
                             f"CI −{abs(low):.2f}–{high:.2f})")


@pytest.mark.parametrize("s3, hdfs", [([2.0, 2.1], [1.0, 1.1, 1.2]), ([2.0, 2.1, 2.2], [1.0]), ([], [])])
def test_too_few_runs_cannot_tell(s3, hdfs):
    be = break_even(10, s3, hdfs)
    assert all(math.isnan(v) for v in be.penalty_ci + be.runs_ci)
    assert be.sentence() == "cannot tell: too few runs (need 3 per storage)"


@pytest.mark.parametrize("copy_s, shown", [(0, "0"), (-5.0, "-5.0"), (float("nan"), "nan"), (math.inf, "inf"),
                                           (None, "None"), ("fast", "'fast'")])
def test_copy_time_must_be_finite_positive_seconds(copy_s, shown):
    with pytest.raises(PerfkitError) as err:
        break_even(copy_s, [2.0] * 3, [1.0] * 3)
    assert str(err.value).startswith(f"copy_s={shown}: ")
    if copy_s != "fast":
        assert str(err.value) == f"copy_s={shown}: give a number of seconds (the measured S3 → HDFS copy) > 0"


def test_the_table_refuses_a_bad_copy_time_too():
    with pytest.raises(PerfkitError, match=r"copy_s=0: give a number of seconds"):
        break_even_table(_runs_frame(), 0)


def _runs_frame():
    """Records as the HDFS vs S3 experiment writes them: warm-ups, a failed run, a throttled run, two queries."""
    results = ResultSet("hdfs_vs_s3_queries", run_id="test")

    def run(engine, storage, query, seconds, phase="measured", iteration=0, **values):
        results.add(subject=engine, storage=storage, case=query, phase=phase, iteration=iteration,
                    started_at="2024-01-01T00:00:00+00:00", wall_s=seconds, **values)

    for engine in ("spark", "trino"):
        for query, s3, hdfs in (("q1", S3, HDFS), ("q2", [1.0, 1.0, 1.0], [1.5, 1.5, 1.5])):
            for where, seconds in (("s3", s3), ("hdfs", hdfs)):
                run(engine, where, query, 60.0, phase="warmup", rows=1, result_hash="h")  # never counted
                for i, s in enumerate(seconds):
                    run(engine, where, query, s, iteration=i, rows=1, result_hash="h")
    run("spark", "s3", "q1", 0.01, iteration=9, ok=False, error="boom")  # failed: not a sample
    run("spark", "s3", "q1", 30.0, iteration=8, rows=1, result_hash="h", params={"throttled": 4})  # timed retries
    run("trino", "alluxio", "q1", 0.5, rows=1, result_hash="h")  # another storage: not in the trade
    return results.to_frame()


def test_table_from_the_experiments_records():
    table = break_even_table(_runs_frame(), 10)
    assert list(table.columns) == COLUMNS
    assert list(zip(table["engine"], table["query"])) == [("spark", "q1"), ("spark", "q2"), ("trino", "q1"),
                                                          ("trino", "q2")]
    spark_q1, spark_q2, trino_q1 = (table.iloc[i] for i in range(3))
    # the warm-up (60 s), the failed (0.01 s) and the throttled (30 s) runs left out: the samples alone
    expected = break_even(10, S3, HDFS)
    assert spark_q1["s3_mean_s"] == pytest.approx(3.1) and spark_q1["hdfs_mean_s"] == pytest.approx(2.0)
    assert spark_q1["penalty_s"] == pytest.approx(1.1) and spark_q1["runs"] == 10  # 10 / 1.1 = 9.09
    assert (spark_q1["penalty_low"], spark_q1["penalty_high"]) == expected.penalty_ci
    assert (spark_q1["runs_low"], spark_q1["runs_high"]) == expected.runs_ci
    assert spark_q1["copy_s"] == 10 and spark_q1["finding"] == expected.sentence()
    assert trino_q1["runs"] == 10
    assert spark_q2["penalty_s"] == -0.5 and spark_q2["runs"] is pd.NA and spark_q2["runs_high"] == math.inf
    assert spark_q2["finding"].startswith("copying never pays off")


def test_table_keeps_throttled_runs_when_asked():
    table = break_even_table(_runs_frame(), 10, include_throttled=True)
    assert table.iloc[0]["s3_mean_s"] == pytest.approx((sum(S3) + 30.0) / 6)


def test_table_of_too_few_and_of_different_answers():
    frame = _runs_frame()
    frame = frame[~((frame["subject"] == "trino") & (frame["storage"] == "hdfs") & (frame["iteration"] == 0))]
    frame.loc[(frame["subject"] == "spark") & (frame["case"] == "q2") & (frame["storage"] == "s3"), "result_hash"] = "x"
    table = break_even_table(frame, 10).set_index(["engine", "query"])
    assert table.loc[("spark", "q2"), "finding"] == "not comparable: results differ"
    assert math.isnan(table.loc[("spark", "q2"), "penalty_s"])
    assert table.loc[("trino", "q2"), "finding"] == "cannot tell: too few runs (need 3 per storage)"


def test_plot_has_one_bar_per_row():
    frame = _runs_frame()
    one_run = frame[(frame["subject"] == "spark") & (frame["case"] == "q1") & (frame["iteration"] == 0)]
    table = break_even_table(pd.concat([frame, one_run.assign(subject="hive")]), 10)
    assert list(table["engine"]) == ["hive", "spark", "spark", "trino", "trino"]
    fig = plot_break_even(table)
    ax = fig.axes[0]
    assert len(ax.patches) == len(table) == 5
    assert [p.get_width() for p in ax.patches] == [0, 10, 0, 10, 0]  # cannot tell and never: words, no bar
    words = [t.get_text().strip() for t in ax.texts]
    assert words[0] == "cannot tell" and words[2] == words[4] == "never"
    assert words[1] == f"10 (CI {int(table['runs_low'][1])}–{int(table['runs_high'][1])})"
    labels = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert max(labels, key=labels.get) == "hive q1"  # the table's first row on top
    plt.close(fig)


def test_plot_cuts_a_never_ending_interval_at_the_axis():
    be = break_even(41.2, [3.1, 2.9, 3.3, 3.0, 3.2], [3.1, 2.85, 3.2, 3.0, 3.15])
    table = _table_of(be)
    fig, ax = plt.subplots()
    assert plot_break_even(table, ax=ax) is fig
    assert np.isfinite(ax.get_xlim()[1]) and ax.get_xlim()[1] > be.runs
    assert ax.texts[0].get_text().strip() == f"{be.runs} (CI {be.runs_ci[0]}–never)"
    arrows = [line for line in ax.lines if line.get_marker() == ">"]
    assert len(arrows) == 1 and be.runs < arrows[0].get_xdata()[0] < ax.get_xlim()[1]  # marked where it is cut
    plt.close(fig)


def _table_of(be: BreakEven):
    return pd.DataFrame([{"engine": "spark", "query": "q1", "copy_s": be.copy_s, "s3_mean_s": np.nan,
                          "hdfs_mean_s": np.nan, "penalty_s": be.penalty_s, "penalty_low": be.penalty_ci[0],
                          "penalty_high": be.penalty_ci[1], "runs": be.runs, "runs_low": be.runs_ci[0],
                          "runs_high": be.runs_ci[1], "finding": be.sentence()}]).astype({"runs": "Int64"})
