"""Where a hot tier beats S3: the crossing of two lines through the runs' times against the round trip, its
interval, the table and the sentences, on made-up samples whose answer is known."""
import math

import numpy as np
import pandas as pd
import pytest

from perfkit.datasets.taxi import SCHEMA
from perfkit.experiments.payoff_report import crossover, payoff_sentences, payoff_table
from perfkit.experiments.tier_payoff import scan_query


def _samples(query: str, s3_at, tier_s: float, rtts=(0, 20, 60), runs: int = 4, noise: float = 0.01, mb=1.0,
             seed: int = 1) -> pd.DataFrame:
    """S3 takes s3_at(rtt) seconds and the tier tier_s, each run off by up to `noise` either way."""
    rng = np.random.default_rng(seed)
    rows = []
    for rtt in rtts:
        for where, seconds in (("s3", s3_at(rtt)), ("alluxio", tier_s)):
            rows += [{"engine": "trino", "query": query, "storage": where, "rtt_ms": float(rtt), "small_get_ms": rtt,
                      "wall_s": seconds + rng.uniform(-noise, noise), "mb_read": mb} for _ in range(runs)]
    return pd.DataFrame(rows)


def test_the_scan_reads_every_column_of_the_taxi_table():
    query = scan_query()
    sql = query.for_table("trips")
    assert sql.startswith("SELECT count(*) AS trips, max(trip_id)") and sql.endswith(" FROM trips")
    assert sql.count("max(") == len(SCHEMA) == 51
    assert all(f"max({name}) AS max_{name}" in sql for name, _, _ in SCHEMA)


def test_the_tier_overtakes_s3_where_the_two_lines_cross_with_an_interval_around_it():
    samples = _samples("q1", lambda rtt: 0.2 + 0.01 * rtt, tier_s=0.5)  # equal at 30 ms
    s3, tier = samples[samples["storage"] == "s3"], samples[samples["storage"] == "alluxio"]
    found = crossover(s3, tier)
    assert found["ms"] == pytest.approx(30, abs=2)
    assert found["slope_s3"] == pytest.approx(0.01, rel=0.1) and abs(found["slope_tier"]) < 0.001
    assert found["low"] < found["ms"] < found["high"] and found["high"] - found["low"] < 10
    assert found["text"].startswith(f"{found['ms']:.0f} ms (95% CI {found['low']:.0f} ms to {found['high']:.0f} ms)")
    assert "extrapolated" not in found["text"]


def test_a_crossing_beyond_the_measured_distances_is_said_to_be_extrapolated():
    samples = _samples("q1", lambda rtt: 0.2 + 0.002 * rtt, tier_s=0.5)  # equal at 150 ms, measured to 60
    found = crossover(samples[samples["storage"] == "s3"], samples[samples["storage"] == "alluxio"])
    assert found["ms"] == pytest.approx(150, rel=0.15)
    assert found["text"].endswith("beyond the 60 ms measured (extrapolated)")


def test_a_tier_faster_everywhere_and_one_never_faster_are_said_so():
    faster = _samples("scan", lambda rtt: 1.0 + 0.02 * rtt, tier_s=0.4, mb=88)
    never = _samples("q1", lambda rtt: 0.3, tier_s=0.5)  # S3 flat: a tier slower at 0 ms stays slower
    for frame, expect in ((faster, "the lines cross below 0 ms (95% CI"), (never, "never: ")):
        found = crossover(frame[frame["storage"] == "s3"], frame[frame["storage"] == "alluxio"])
        assert found["text"].startswith(expect), found["text"]
    assert crossover(faster[faster["storage"] == "s3"], faster[faster["storage"] == "alluxio"])["text"].endswith(
        ": no slower at any round trip measured (to 60 ms)")


def test_too_few_runs_give_the_crossing_without_an_interval_and_one_distance_no_crossing():
    two = _samples("q1", lambda rtt: 0.2 + 0.01 * rtt, tier_s=0.5, runs=2)
    found = crossover(two[two["storage"] == "s3"], two[two["storage"] == "alluxio"])
    assert found["ms"] == pytest.approx(30, abs=3) and math.isnan(found["low"]) and "CI" not in found["text"]
    one = _samples("q1", lambda rtt: 0.3, tier_s=0.5, rtts=(20,))
    assert crossover(one[one["storage"] == "s3"], one[one["storage"] == "alluxio"])["text"] == (
        "one distance: no line to cross")


def test_the_table_gives_medians_and_ratios_per_distance_and_the_sentences_order_queries_by_bytes():
    samples = pd.concat([_samples("q1", lambda rtt: 0.2 + 0.002 * rtt, tier_s=0.5, mb=0.89),
                         _samples("scan", lambda rtt: 1.0 + 0.02 * rtt, tier_s=0.4, mb=87.7, seed=2)])
    table = payoff_table(samples)
    assert list(table["query"]) == ["q1", "scan"] and list(table["MB read"]) == [0.89, 87.7]
    q1 = table.iloc[0]
    s3_60 = samples[(samples["query"] == "q1") & (samples["storage"] == "s3") & (samples["rtt_ms"] == 60)]
    assert q1["S3 at 60 ms (s)"] == round(s3_60["wall_s"].median(), 3)
    at_0 = samples[(samples["query"] == "q1") & (samples["rtt_ms"] == 0)].groupby("storage")["wall_s"].median()
    assert q1["S3 ÷ tier at 0 ms"].startswith(f"{at_0['s3'] / at_0['alluxio']:.2f}× (")
    assert q1["S3 ÷ tier at 0 ms"].endswith(", S3 faster)")
    assert table.iloc[1]["S3 ÷ tier at 60 ms"].endswith(", tier faster)")
    [sentence] = payoff_sentences(table)
    assert sentence.startswith("Where alluxio pays off (trino, hot, against S3 read directly at 3 round trips "
                               "from 0 to 60 ms): q1 (0.89 MB) faster beyond 1")
    assert "; scan (87.7 MB) no slower at any round trip measured." in sentence


def test_the_plot_draws_each_storage_median_at_each_round_trip_one_panel_per_query():
    from perfkit import plots

    samples = pd.concat([_samples("q1", lambda rtt: 0.2 + 0.01 * rtt, tier_s=0.5, mb=0.89),
                         _samples("scan", lambda rtt: 1.0 + 0.02 * rtt, tier_s=0.4, mb=87.7, seed=2)])
    fig = plots.tier_payoff(samples)
    assert [ax.get_title() for ax in fig.axes] == ["trino q1 (0.89 MB read)", "trino scan (88 MB read)"]
    s3_line = fig.axes[0].get_lines()[0]
    expected = samples[(samples["query"] == "q1") & (samples["storage"] == "s3")].groupby("rtt_ms")["wall_s"].median()
    assert list(s3_line.get_xdata()) == [0, 20, 60] and np.allclose(s3_line.get_ydata(), expected.values)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["s3", "alluxio"]
