import math

import numpy as np
import pandas as pd
import pytest

from perfkit import stats


def test_summary_against_hand_computed_numbers():
    s = stats.summary([4, 1, 10, 3, 2])
    assert s["n"] == 5 and s["min"] == 1 and s["median"] == 3 and s["mean"] == 4
    # p95, linear interpolation: rank 0.95 * 4 = 3.8 between 4 and 10 -> 4 + 0.8 * 6
    assert s["p95"] == pytest.approx(8.8)
    # sample std: sqrt((9 + 4 + 1 + 0 + 36) / 4) = sqrt(12.5)
    assert s["cv"] == pytest.approx(math.sqrt(12.5) / 4)


def test_summary_of_nothing_and_of_one_sample():
    assert stats.summary([])["n"] == 0
    one = stats.summary([2.5])
    assert one["median"] == 2.5 and math.isnan(one["cv"])


def test_ratio_ci_of_constant_samples_is_the_exact_ratio():
    assert stats.ratio_ci([3, 3, 3], [2, 2, 2]) == (1.5, 1.5)


def test_ratio_ci_lies_within_the_possible_ratios_and_excludes_one_when_separated():
    slow, fast = [2.0, 2.1, 2.2, 2.05], [1.0, 1.05, 1.1, 1.02]
    low, high = stats.ratio_ci(slow, fast)
    assert min(slow) / max(fast) <= low <= np.median(slow) / np.median(fast) <= high <= max(slow) / min(fast)
    assert low > 1


def test_ratio_ci_needs_three_runs_per_side():
    assert all(math.isnan(v) for v in stats.ratio_ci([1, 2], [1, 2, 3]))


@pytest.mark.parametrize("ratio, ci, words", [
    (1.4, (1.2, 1.6), "HDFS 1.40× faster"),
    (0.8, (0.7, 0.9), "S3 1.25× faster"),
    (1.05, (0.9, 1.2), "no difference beyond noise"),
    (1.0, (float("nan"), float("nan")), "too few runs to judge (need 3 per storage)"),
])
def test_verdict_words(ratio, ci, words):
    assert stats.verdict(ratio, ci) == words


def _frame(rows):
    base = {"phase": "measured", "ok": True, "result_hash": "h", "subject": "spark", "case": "q1"}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_compare_uses_measured_runs_only_and_divides_s3_by_hdfs():
    rows = [{"storage": "hdfs", "wall_s": w} for w in (1.0, 2.0, 3.0)]
    rows += [{"storage": "s3", "wall_s": w} for w in (2.0, 4.0, 6.0)]
    rows += [{"storage": "hdfs", "wall_s": 0.01, "phase": "warmup"},
             {"storage": "s3", "wall_s": 99.0, "phase": "warmup"}]
    row = stats.compare(_frame(rows)).iloc[0]
    assert row["hdfs_min"] == 1.0 and row["s3_median"] == 4.0 and row["s3_n"] == 3
    assert row["speedup_median"] == pytest.approx(2.0) and row["speedup_min"] == pytest.approx(2.0)
    assert row["results_match"] and row["failed_runs"] == 0


def test_compare_flags_different_results_and_counts_failures():
    rows = [{"storage": "hdfs", "wall_s": 1.0, "result_hash": "a"},
            {"storage": "s3", "wall_s": 1.0, "result_hash": "b"},
            {"storage": "s3", "wall_s": None, "ok": False, "result_hash": None}]
    row = stats.compare(_frame(rows)).iloc[0]
    assert not row["results_match"]
    assert row["failed_runs"] == 1
    assert row["verdict"] == "not comparable: results differ"


def test_results_that_differ_get_no_speed_up_even_with_enough_runs():
    rows = [{"storage": "hdfs", "wall_s": w, "result_hash": "a"} for w in (1.0, 1.1, 1.2)]
    rows += [{"storage": "s3", "wall_s": w, "result_hash": "b"} for w in (3.0, 3.1, 3.2)]
    row = stats.compare(_frame(rows)).iloc[0]
    assert row["verdict"] == "not comparable: results differ"
    assert np.isnan(row["speedup_median"]) and np.isnan(row["speedup_min"]) and np.isnan(row["ci_low"])
    assert row["hdfs_median"] == pytest.approx(1.1)  # the times stay visible, only the comparison goes


def test_paired_ratio_ci_of_constant_ratios_is_exact():
    assert stats.paired_ratio_ci([2.06, 1.03, 3.09], [2, 1, 3]) == pytest.approx((1.03, 1.03, 1.03))


def test_paired_ratio_ci_resamples_pairs_not_sides():
    # each pair is 5% apart while the pairs themselves span 1..10: resampling the sides apart would give a wide
    # interval, resampling the pairs keeps it at the pairs' own ratios
    base = np.arange(1.0, 11.0)
    ratios = np.array([1.04, 1.05, 1.06, 1.05, 1.04, 1.06, 1.05, 1.05, 1.04, 1.06])
    point, low, high = stats.paired_ratio_ci(base * ratios, base)
    assert point == pytest.approx(np.median(ratios))
    assert 1.04 <= low <= point <= high <= 1.06


def test_paired_ratio_ci_needs_three_pairs():
    point, low, high = stats.paired_ratio_ci([2, 3], [1, 1])
    assert point == 2.5 and math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize("low, high, words", [
    (1.01, 1.029, "met"), (1.031, 1.05, "not met"), (1.02, 1.04, "not decided: the interval spans the target"),
    (float("nan"), float("nan"), "too few rounds to judge (need 3)")])
def test_against_target_words(low, high, words):
    assert stats.against_target(low, high, 1.03) == words


# -- a family of verdicts (issue 70): each row's interval at 1 - 0.05 / m, m the rows that get one ------------------
@pytest.mark.parametrize("family, size, level", [(0.95, 1, 0.95), (0.95, 4, 0.9875), (0.95, 0, 0.95),
                                                 (0.90, 10, 0.99)])
def test_family_level_spreads_the_family_s_error_over_its_rows(family, size, level):
    assert stats.family_level(family, size) == pytest.approx(level)


@pytest.mark.parametrize("family, size", [(1.0, 4), (0.0, 4), (True, 4), (0.95, -1), (0.95, 2.5)])
def test_family_level_refuses_what_is_no_confidence_or_no_count(family, size):
    with pytest.raises(ValueError):
        stats.family_level(family, size)


def test_resamples_leave_enough_beyond_each_end_of_a_narrow_interval():
    assert stats.resamples_for(0.95) == 2000  # the default of every 95% interval, unchanged
    assert stats.resamples_for(0.9975) == 20_000  # 0.125% a side: 25 resamples each
    assert stats.resamples_for(0.99, n_resamples=50_000) == 50_000


A_TIMES, B_PATTERN = [1.0, 1.02, 0.98, 1.01], [1.0, 1.03, 0.97, 1.02]


def _family_frame(shift: float = 1.04, extra_rows=()):
    """q1: B 4% slower than A, beyond noise at 95% but not at 98.75%; q2-q4: B as A, within noise either way."""
    rows = []
    for case, factor in (("q1", shift), ("q2", 1.0), ("q3", 1.0), ("q4", 1.0)):
        rows += [{"storage": "a", "wall_s": w, "case": case} for w in A_TIMES]
        rows += [{"storage": "b", "wall_s": w * factor, "case": case} for w in B_PATTERN]
    return _frame([*rows, *extra_rows])


def test_compare_without_a_family_is_as_before_each_row_at_95_percent():
    table = stats.compare(_family_frame(), "a", "b")
    assert "ci_confidence" not in table and "family" not in table.attrs
    q1 = table.set_index("case").loc["q1"]
    assert (q1["ci_low"], q1["ci_high"]) == stats.ratio_ci([w * 1.04 for w in B_PATTERN], A_TIMES)
    assert q1["ci_low"] > 1 and q1["verdict"] == f"A {q1['speedup_median']:.2f}× faster"


def test_a_family_of_four_rows_widens_each_interval_to_98_75_percent_and_drops_the_weak_call():
    table = stats.compare(_family_frame(), "a", "b", family_confidence=0.95)
    assert table.attrs["family"] == {"confidence": 0.95, "correction": "Bonferroni", "size": 4,
                                     "row_confidence": pytest.approx(0.9875)}
    assert table["ci_confidence"].tolist() == pytest.approx([0.9875] * 4) and table["family_size"].tolist() == [4] * 4
    q1 = table.set_index("case").loc["q1"]
    assert (q1["ci_low"], q1["ci_high"]) == stats.ratio_ci([w * 1.04 for w in B_PATTERN], A_TIMES, confidence=0.9875,
                                                           n_resamples=stats.resamples_for(0.9875))
    alone = stats.compare(_family_frame(), "a", "b").set_index("case").loc["q1"]
    assert q1["ci_low"] < alone["ci_low"] and q1["ci_high"] > alone["ci_high"]
    assert q1["ci_low"] < 1 and q1["verdict"] == "no difference beyond noise"
    # a clear difference stays beyond noise in the family
    strong = stats.compare(_family_frame(shift=1.10), "a", "b", family_confidence=0.95).set_index("case").loc["q1"]
    assert strong["ci_low"] > 1 and strong["verdict"].startswith("A ")


def test_a_family_counts_only_the_rows_that_get_an_interval():
    too_few = [{"storage": "a", "wall_s": 1.0, "case": "q5"}, {"storage": "b", "wall_s": 9.0, "case": "q5"}]
    differ = [{"storage": side, "wall_s": 1.0, "case": "q6", "result_hash": side} for side in "aabbb"]
    table = stats.compare(_family_frame(extra_rows=[*too_few, *differ]), "a", "b", family_confidence=0.95)
    assert len(table) == 6 and table.attrs["family"]["size"] == 4
    # a family given from outside (compare_storages: every storage's rows) is taken as given
    wider = stats.compare(_family_frame(), "a", "b", family_confidence=0.95, family_size=8)
    assert wider.attrs["family"]["row_confidence"] == pytest.approx(1 - 0.05 / 8)


def test_compare_storages_takes_every_storage_s_rows_as_one_family():
    frame = _family_frame()
    frame = pd.concat([frame, frame[frame["storage"] == "b"].assign(storage="c")], ignore_index=True)
    plain = stats.compare_storages(frame, ["a", "b", "c"], "a")
    assert "ci_confidence" not in plain and "family" not in plain.attrs
    table = stats.compare_storages(frame, ["a", "b", "c"], "a", family_confidence=0.95)
    assert len(table) == 8 and table.attrs["family"]["size"] == 8
    assert table["ci_confidence"].tolist() == pytest.approx([1 - 0.05 / 8] * 8)
    assert (table["verdict"] == "no difference beyond noise").all()
