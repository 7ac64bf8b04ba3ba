"""Where a hot tier beats S3: the crossing of two lines through the runs' times against the round trip, its
interval, the table and the sentences, on made-up samples whose answer is known."""
import math

import numpy as np
import pandas as pd
import pytest

from perfkit.datasets.taxi import SCHEMA
from perfkit.presenting.payoff_report import crossover, payoff_sentences, payoff_table
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
    assert found["text"].startswith(f"{found['ms']:.0f} ms (95% CI {found['low']:.0f}–{found['high']:.0f} ms)")
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
    assert q1["S3 ÷ tier at 0 ms"].startswith(f"{at_0['s3'] / at_0['alluxio']:.2f}× (95% CI ")
    assert q1["S3 ÷ tier at 0 ms"].endswith(", S3 faster)")
    assert table.iloc[1]["S3 ÷ tier at 60 ms"].endswith(", tier faster)")
    [sentence] = payoff_sentences(table)
    assert sentence.startswith("Where alluxio pays off (trino, hot, against S3 read directly at round trips of 0, "
                               "20 and 60 ms): q1 (0.89 MB) faster beyond 1")
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


class _Engine:
    def __init__(self, name, *args):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def versions(self):
        return {self.name: f"{self.name} 1.0 (fake)"}

    def execute(self, sql, timeout_s=None):
        return [("yellow", 3)]


class _Cache:
    """Trino's cache as the pay-off sees it: read through Trino only, its own tables, counters that count."""
    engines = ["trino"]

    def unavailable(self):
        return None

    def reads_through(self, engine):
        return engine in self.engines

    def current_tables(self, tables):
        return {name: f"{table}_cached" for name, table in tables.items()}  # None here: the crash this test pins

    served = 0

    def counters(self, engine):  # 100 bytes more from the cache at each look: a read between two looks served 100
        from perfkit.tiers import Counters

        self.served += 100
        return Counters(cache_bytes=self.served, s3_bytes=0)

    def settle(self):
        return "settled"


def test_a_point_runs_each_engine_on_the_tiers_it_can_read_and_says_why_not_on_the_others(monkeypatch, tmp_path):
    from perfkit.config import load_profile
    from perfkit.experiments import hdfs_vs_s3_queries, query_tables, tier_payoff
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.suites import DEFAULT_TABLE

    cache = _Cache()
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setattr(hdfs_vs_s3_queries, "get_engine", _Engine)
    monkeypatch.setattr(tier_payoff, "tier", lambda where, profile: cache)
    monkeypatch.setattr(query_tables, "tier", lambda where, profile: cache)
    monkeypatch.setattr(QueryComparison, "begin", lambda self: {"versions": {}, "parameters": self.parameters()}
                        if setattr(self, "probes", {w: lambda: None for w in ("s3", "trino-cache")}) is None else {})
    monkeypatch.setattr(QueryComparison, "register_tables", lambda self, engine, tableset: {
        "s3": {DEFAULT_TABLE: "perfkit.t_s3"},
        "trino-cache": {DEFAULT_TABLE: "cache.t"} if engine.name == "trino" else None})  # spark cannot read it
    point = tier_payoff.PayoffPoint(load_profile("lab"), engines=["spark", "trino"], storages=["s3", "trino-cache"],
                                    baseline="s3", queries=["q1"], runs=2, warmup=0, accounting=False,
                                    health_interval_s=0.01)
    point.tableset = "tables"
    point.run(progress=False)
    rows = [(r.subject, r.storage, r.params.get("try"), r.ok) for r in point.results.records]
    assert ("spark", "trino-cache", None, False) in rows  # recorded once as unavailable, with why, not a crash
    unavailable = [r for r in point.results.records if r.subject == "spark" and r.storage == "trino-cache"]
    assert len(unavailable) == 1 and "read through trino only, not spark" in unavailable[0].error
    trino_cache = [r for r in point.results.records if r.subject == "trino" and r.storage == "trino-cache"]
    assert [(r.params["try"], r.params["cache_bytes"], r.ok) for r in trino_cache] == [
        ("fill", 100, True), ("hot", 100, True), ("hot", 100, True)]
    assert sum(1 for r in rows if r[:2] == ("spark", "s3")) == 3  # the fill and two hot reads
