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


# -- rounds timed side by side (issue 70): the typical round's ratio and its Wilcoxon signed-rank interval ------------
def test_the_signed_rank_depth_is_the_published_critical_value():
    # tables of the signed-rank test, two-sided 5%: reject when T <= 13 for 12 pairs, T <= 0 for 6, never for 5
    assert stats.signed_rank_depth(12, 0.95) == 14
    assert stats.signed_rank_depth(6, 0.95) == 1 and stats.signed_rank_depth(5, 0.95) == 0


@pytest.mark.parametrize("n, confidence", [(12, 0.95), (9, 1 - 0.05 / 12), (30, 0.9875)])
def test_the_round_ratio_interval_is_where_scipy_s_exact_wilcoxon_test_stops_rejecting(n, confidence):
    rng = np.random.default_rng(n)
    base = rng.lognormal(0, 0.3, n)
    other = base * rng.lognormal(0.1, 0.1, n)
    ratio, low, high = stats.round_ratio_ci(other, base, confidence)
    from scipy.stats import wilcoxon

    logs, alpha, eps = np.log(other / base), 1 - confidence, 1e-9
    exact = dict(method="exact") if n <= 50 else {}
    for bound in (np.log(low), np.log(high)):  # just outside each end the test rejects, just inside it does not
        outside = bound - eps if bound == np.log(low) else bound + eps
        inside = bound + eps if bound == np.log(low) else bound - eps
        assert wilcoxon(logs - outside, **exact).pvalue <= alpha < wilcoxon(logs - inside, **exact).pvalue
    walsh = [(a + b) / 2 for i, a in enumerate(logs) for b in logs[i:]]
    assert ratio == pytest.approx(math.exp(np.median(walsh)))  # Hodges-Lehmann: the median of the pairwise averages


def test_too_few_rounds_give_a_ratio_but_no_interval():
    ratio, low, high = stats.round_ratio_ci([2, 2.2, 1.8, 2.1, 2.0], [1, 1, 1, 1, 1])
    assert ratio == pytest.approx(2.0) and math.isnan(low) and math.isnan(high)


def test_identical_rounds_give_false_alarms_at_most_at_the_stated_rate():
    # 4,000 null trials of 12 rounds, drift and heavy-tailed noise: the exact interval misses a ratio of 1 at most
    # 2 x P(T <= 13) = 174 / 4096 = 4.25% of the time (scipy's exact p of T = 13), plus 3 standard errors of 4,000
    from scipy.stats import wilcoxon

    negative_ranks_sum_to_13 = np.arange(1, 13) * np.where(np.isin(np.arange(1, 13), [1, 12]), -1, 1)
    level = wilcoxon(negative_ranks_sum_to_13, method="exact").pvalue
    rng = np.random.default_rng(70)
    missed = 0
    for _ in range(4000):
        base = rng.lognormal(0, 0.5, 12)
        other = base * np.exp(rng.standard_t(3, 12) * 0.1)
        _, low, high = stats.round_ratio_ci(other, base)
        missed += low > 1 or high < 1
    assert level == pytest.approx(174 / 4096)
    assert missed / 4000 <= level + 3 * math.sqrt(level * (1 - level) / 4000)


def _drifting_rounds(ratio: float, rounds: int = 12, seed: int = 1) -> pd.DataFrame:
    """Both storages timed each round; the machine's drift (x0.5 to x2 from round to round) moves both alike, the
    storage b's runs `ratio` times a's and 2% noise of their own."""
    rng = np.random.default_rng(seed)
    rows = []
    for iteration in range(rounds):
        drift = 2 ** rng.uniform(-1, 1)
        for storage, factor in (("a", 1.0), ("b", ratio)):
            rows.append({"storage": storage, "case": "q1", "iteration": iteration,
                         "wall_s": drift * factor * math.exp(rng.normal(0, 0.02))})
    return _frame(rows)


def test_compare_pairs_the_rounds_so_drift_does_not_hide_a_five_percent_change():
    paired = stats.compare(_drifting_rounds(1.05), "a", "b").iloc[0]
    unpaired = stats.compare(_drifting_rounds(1.05), "a", "b", paired=False).iloc[0]
    assert paired["speedup_of"] == stats.ROUNDS and unpaired["speedup_of"] == stats.MEDIANS
    assert paired["ci_low"] > 1 and paired["verdict"] == f"A {paired['speedup']:.2f}× faster"
    assert paired["speedup"] == pytest.approx(1.05, abs=0.02)
    assert unpaired["verdict"] == "no difference beyond noise"  # the drift swamps it between the medians


def test_rounds_too_few_for_the_family_s_level_fall_back_to_the_medians():
    # 6 rounds give an exact 95% interval, none at 98.75%: a family of four falls back to the medians' bootstrap
    frame = _drifting_rounds(1.5, rounds=6)
    alone = stats.compare(frame, "a", "b").iloc[0]
    family = stats.compare(frame, "a", "b", family_confidence=0.95, family_size=4).iloc[0]
    assert alone["speedup_of"] == stats.ROUNDS and family["speedup_of"] == stats.MEDIANS
    assert family["speedup"] == family["speedup_median"]


def test_a_round_missing_one_storage_is_left_out_of_the_pairs():
    frame = _drifting_rounds(1.05)
    frame = frame[~((frame["iteration"] == 3) & (frame["storage"] == "b"))]
    kept = _drifting_rounds(1.05)
    kept = kept[kept["iteration"] != 3]
    assert stats.compare(frame, "a", "b").iloc[0]["speedup"] == stats.compare(kept, "a", "b").iloc[0]["speedup"]


@pytest.mark.parametrize("rounds, confidence", [(12, 0.95), (12, 1 - 0.05 / 3), (30, 1 - 0.05 / 12)])
def test_a_change_of_the_detectable_size_is_called_about_nine_times_in_ten(rounds, confidence):
    # predicted from null rounds (the median over 200 runs' predictions), then planted in 400 more and judged
    rng = np.random.default_rng(rounds)
    sigma = 0.12
    predicted = np.median([stats.detectable_change(rng.normal(0, sigma, rounds), confidence) for _ in range(200)])
    shift = math.log(predicted)
    called = sum(stats.round_ratio_ci(np.exp(rng.normal(shift, sigma, rounds)), np.ones(rounds), confidence)[1] > 1
                 for _ in range(400))
    assert 0.84 <= called / 400 <= 0.96  # 0.9, give or take the simulation's 3 standard errors and the test's steps


def test_no_detectable_change_without_an_interval():
    assert math.isnan(stats.detectable_change([0.1, 0.2])) and math.isnan(stats.detectable_change([0.1] * 5))
