"""Cache tiers as storages: which storages hold files, which engines read through a tier, and the cold/warm/hot
tables and hit checks from hand-made records."""
import pandas as pd
import pytest

from perfkit.config import emr_profile, load_profile
from perfkit.datasets.tables import Table, TableSet
from perfkit.errors import PerfkitError
from perfkit.experiments.cache_tier import CacheTierComparison
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.experiments.query_data import with_tiers
from perfkit.results import ResultSet
from perfkit.suites import DEFAULT_TABLE
from perfkit.tiers import Counters, TrinoCache
from perfkit.presenting import report_of


@pytest.mark.parametrize("storages, placed", [
    (["s3", "trino-cache"], ["s3"]), (["hdfs", "trino-cache"], ["hdfs", "s3"]), (["hdfs", "s3"], ["hdfs", "s3"])])
def test_a_tier_reads_the_s3_copy_so_s3_is_placed(storages, placed):
    cmp = QueryComparison(load_profile("lab"), engines=["trino"], storages=storages, baseline=storages[0])
    assert cmp.placed_storages == placed


def test_a_tier_table_is_the_s3_table_read_through_it():
    s3 = Table("s3a://b/p/t", "orc", [("a", "int")], 2, 100)
    tiered = with_tiers(TableSet("taxi", {"s3": {DEFAULT_TABLE: s3}}), ["s3", "trino-cache"], load_profile("lab"))
    assert tiered.tables["trino-cache"][DEFAULT_TABLE].location == "s3a://b/p/t"
    assert tiered.tables["s3"][DEFAULT_TABLE] is s3


def test_who_reads_through_trino_cache_and_what_it_does_not_run():
    cmp = QueryComparison(load_profile("lab"), engines=["trino", "spark"], storages=["s3", "trino-cache"],
                          baseline="s3", suite="hibench")
    read, write = [next(q for q in cmp.suite_queries if q.id == i) for i in ("join", "scan")]
    assert cmp.unavailable_reason("trino", "trino-cache", read) is None
    assert cmp.unavailable_reason("trino", "s3", write) is None
    assert cmp.unavailable_reason("spark", "trino-cache", read) == "trino-cache is read through trino only, not spark"
    assert "write workloads are compared on hdfs and s3" in cmp.unavailable_reason("trino", "trino-cache", write)
    on_emr = TrinoCache(emr_profile(bucket="b", master="m"))
    assert "names no Trino catalog with the file-system cache (trino_cache_catalog)" in on_emr.unavailable()
    assert on_emr.empty().startswith("Trino's cache not emptied: its folders are on the cluster's workers")


def test_the_cache_tier_comparison_needs_s3_and_a_tier():
    needs = r"reads the tiers' backing storage directly \(the baseline\) and through one or more tiers"
    with pytest.raises(PerfkitError, match=needs):
        CacheTierComparison(load_profile("lab"), storages=["hdfs", "s3"])
    with pytest.raises(PerfkitError, match=needs):  # a tier caches S3, not HDFS
        CacheTierComparison(load_profile("lab"), storages=["hdfs", "trino-cache"], baseline="hdfs")
    assert Counters(10, 3) - Counters(4, 1) == Counters(6, 2)


def _comparison(tmp_path, runs):
    c = CacheTierComparison(load_profile("lab"), engines=["trino"], runs=2)
    config = {"parameters": c.parameters(), "profile": {"name": "lab"}}  # as a run records them
    c.results = ResultSet("test_cache_tier", config, folder=tmp_path)
    for where, try_, seconds, cache_mb, s3_mb in runs:
        params = {"try": try_, "emptied": "x" if try_ == "cold" else "nothing (after cold)"}
        if where != "s3":
            params.update(cache_bytes=int(cache_mb * 1e6), s3_bytes=int(s3_mb * 1e6))
        for i, factor in enumerate((1.0, 3.0)):  # two rounds: the median is their mean
            c.results.add(subject="trino", storage=where, case="q1", phase="measured", iteration=i,
                          started_at="2026-11-22T12:00:00+00:00", wall_s=seconds * factor, rows=1,
                          result_hash="h", params=dict(params))
    return c


def test_the_published_shape_s3_cold_warm_hot_with_ratios_and_a_hot_read_that_missed_is_flagged(tmp_path):
    c = _comparison(tmp_path, [
        ("s3", "cold", 1.0, 0, 0), ("s3", "warm", 1.0, 0, 0), ("s3", "hot", 1.0, 0, 0),
        ("trino-cache", "cold", 2.0, 0, 17.0), ("trino-cache", "warm", 0.5, 17.0, 0),
        ("trino-cache", "hot", 1.0, 8.0, 9.0)])
    table = report_of(c).tries_table()
    row = table.iloc[0]
    assert (row["S3 (s)"], row["cold (s)"], row["warm (s)"], row["hot (s)"]) == (2.0, 4.0, 1.0, 2.0)
    assert (row["cold: tier vs S3 cold"], row["warm: tier vs S3 warm"], row["hot: tier vs S3 hot"]) == (
        "0.50× (slower)", "2.00× (faster)", "1.00× (about the same)")
    counters = report_of(c).counters_table()
    assert list(counters["MB from S3"])[:3] == [17.0, 0.0, 9.0]
    assert list(counters["check"])[:3] == ["ok", "ok", "hot read fetched 9.0 MB from S3: not all from the cache"]


def test_each_try_is_compared_with_s3_s_own_try_of_the_same_kind(tmp_path):
    """Issue 70: S3's cold try paid the engine's cold start; dividing the tiers' tries by S3's median of all three
    tries called a tier's cold read slower when, phase by phase, it was faster."""
    c = _comparison(tmp_path, [
        ("s3", "cold", 1.036, 0, 0), ("s3", "warm", 0.558, 0, 0), ("s3", "hot", 0.492, 0, 0),
        ("trino-cache", "cold", 0.618, 0, 17.0), ("trino-cache", "warm", 0.40, 17.0, 0),
        ("trino-cache", "hot", 0.492, 17.0, 0)])
    report = report_of(c)
    row = report.tries_table().iloc[0]
    # medians over the two rounds (× 1 and × 3): 2 × each; the ratio is S3's try over the tier's same try
    assert row["S3 cold (s)"] == round(2 * 1.036, 3) and row["cold (s)"] == round(2 * 0.618, 3)
    assert row["cold: tier vs S3 cold"] == f"{1.036 / 0.618:.2f}× (faster)" == "1.68× (faster)"
    assert row["hot: tier vs S3 hot"] == "1.00× (about the same)"
    [sentence] = [s for s in report.findings().sentences if s.startswith("trino through trino-cache")]
    assert "cold 1.68× the speed of S3's cold try (1 faster, 0 slower" in sentence
    assert "cold: the first read after the tier was emptied" in report.findings().conditions


def test_the_plot_draws_s3_and_each_try_at_their_median_seconds(tmp_path):
    from perfkit import plots

    c = _comparison(tmp_path, [
        ("s3", "cold", 1.0, 0, 0), ("trino-cache", "cold", 2.0, 0, 17.0), ("trino-cache", "warm", 0.5, 17.0, 0),
        ("trino-cache", "hot", 0.25, 17.0, 0)])
    ax = plots.cache_tries(report_of(c).tries_table()).axes[0]
    assert [round(p.get_height(), 3) for p in ax.patches] == [2.0, 4.0, 1.0, 0.5]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["S3 directly", "cold", "warm", "hot"]


def test_a_tier_smaller_than_the_data_is_said_by_the_tier_sized_against_the_s3_tables(monkeypatch):
    from perfkit.tiers import Alluxio

    seen = []
    monkeypatch.setattr(Alluxio, "size_note", lambda self, data_bytes: seen.append(data_bytes) or "too small")
    monkeypatch.setattr(TrinoCache, "size_note", lambda self, data_bytes: None)
    cmp = CacheTierComparison(load_profile("lab"), storages=["s3", "alluxio", "trino-cache"])
    tables = {"s3": {"a": Table("s3a://b/p/a", "orc", [], 2, 300), "b": Table("s3a://b/p/b", "orc", [], 1, 200)}}
    assert cmp.size_notes(TableSet("x", tables)) == {"alluxio": "too small"}
    assert seen == [500]
    with pytest.raises(PerfkitError, match="s3a://b/p/a is not on the S3 bucket the Alluxio tier mounts"):
        with_tiers(TableSet("x", tables), ["s3", "alluxio"], load_profile("lab"))  # the user's table elsewhere
    own = {"s3": {"a": Table("s3a://perfkit-lab/p/a", "orc", [], 2, 300)}}
    tiered = with_tiers(TableSet("x", own), ["s3", "alluxio"], load_profile("lab"))
    assert tiered.tables["alluxio"]["a"].location == f"alluxio://{load_profile('lab').alluxio_master}/perfkit-lab/p/a"


def test_trino_cache_reads_the_shared_s3_table_through_its_catalog_and_a_partitioned_one_is_counted_there():
    """register_tier: the S3 table itself (its shared name: the S3 base and the definition's digest) is registered,
    its rows checked when it is partitioned, and read through the cache's catalog."""
    from perfkit.experiments.query_tables import register_tier
    from perfkit.partitions import Partition, Partitioning

    class Trino:
        name = "trino"

        def __init__(self):
            self.calls = []

        def register_shared_table(self, base, location, file_format, columns, partitioning=None):
            self.calls.append((base, location, partitioning))
            return f"{base}_0123abcd"

        def execute(self, sql, timeout_s=None):
            self.calls.append(sql)
            return [(30,)]

    parts = Partitioning((("year", "int"),), (Partition("year=2024", ("2024",)),), files=1, rows=30)
    flat, partitioned = (Table("s3a://b/p/t", "orc", [("a", "int")], 1, 100, "", p) for p in (None, parts))
    profile = load_profile("lab")
    cache = TrinoCache(profile)
    for table, counted in ((flat, []), (partitioned, ["SELECT count(*) FROM perfkit.taxi_s3_0123abcd"])):
        engine = Trino()
        tiered = with_tiers(TableSet("taxi", {"s3": {DEFAULT_TABLE: table}}), ["s3", "trino-cache"], profile)
        assert register_tier(engine, tiered, "trino-cache", profile) == {
            DEFAULT_TABLE: cache.table("perfkit.taxi_s3_0123abcd")}
        assert engine.calls == [("taxi_s3", "s3a://b/p/t", table.partitioning), *counted]


def test_the_findings_give_each_try_against_s3_and_the_hot_runs_that_missed(tmp_path):
    c = _comparison(tmp_path, [
        ("s3", "cold", 1.0, 0, 0), ("s3", "warm", 1.0, 0, 0), ("s3", "hot", 1.0, 0, 0),
        ("trino-cache", "cold", 2.0, 0, 17.0), ("trino-cache", "warm", 0.5, 17.0, 0),
        ("trino-cache", "hot", 1.0, 8.0, 9.0)])
    found = report_of(c).findings()
    # S3's median is 2.0 s in each try; the tier's medians 4.0, 1.0, 2.0 s
    assert found.sentences[0] == (
        "trino through trino-cache: cold 0.50× the speed of S3's cold try (0 faster, 1 slower, 0 about the same of 1 "
        "query); warm 2.00× the speed of S3's warm try (1 faster, 0 slower, 0 about the same of 1 query); hot 1.00× "
        "the speed of S3's hot try (0 faster, 0 slower, 1 about the same of 1 query).")
    assert found.sentences[1] == "2 hot runs still fetched from S3 (18.0 MB in all): not all from the cache."
    assert found.undecided[0].startswith("2 rounds per query and tier: medians without a spread")
    from perfkit.presenting.cache_tier_report import PHASES

    assert found.conditions.startswith(f"taxi, 200,000 rows in 4 ORC files; 2 rounds of cold, warm and hot ({PHASES}); "
                                       "the embedded lab on this machine")


def test_the_cold_tiers_price_is_what_cold_fetched_against_what_hot_read_and_the_fill_after_the_query(tmp_path):
    c = _comparison(tmp_path, [
        ("s3", "cold", 1.0, 0, 0), ("s3", "warm", 1.0, 0, 0), ("s3", "hot", 1.0, 0, 0),
        ("alluxio", "cold", 5.0, 0, 87.7), ("alluxio", "warm", 1.0, 0.89, 0), ("alluxio", "hot", 0.8, 0.8, 0.09),
        ("trino-cache", "cold", 0.7, 0, 0.9), ("trino-cache", "warm", 0.3, 0.9, 0),
        ("trino-cache", "hot", 0.3, 0.9, 0)])
    c.storages = ["s3", "alluxio", "trino-cache"]
    for record in c.results.records:  # Alluxio filled in the background: 2.6 s, then 1.0 s past the query
        if record.storage == "alluxio" and record.params["try"] == "cold":
            record.params["fill_wait_s"] = (2.6, 1.0)[record.iteration]
    sentences = [s for s in report_of(c).findings().sentences if s.startswith("The cold tier's price")]
    # two rounds: 2 x 87.7 MB fetched cold, 2 x (0.8 + 0.09) MB read hot; 175.4 / 1.78 = 98.5
    assert sentences == [
        "The cold tier's price, trino through alluxio: its cold tries fetched 175.4 MB from S3 for queries that read "
        "1.8 MB when hot (98.5× the bytes read), and it was seen full range 1.0–2.6 s after the query (its background "
        "fill, looked at every 0.5 s).",
        "The cold tier's price, trino through trino-cache: its cold tries fetched 1.8 MB from S3 for queries that read "
        "1.8 MB when hot (1.0× the bytes read), and had nothing left to fill after the query: its warm tries fetched "
        "0.0 MB from S3."]


def test_why_says_what_a_hot_query_asked_of_s3_and_of_alluxio_by_their_own_counters(tmp_path):
    c = _comparison(tmp_path, [("s3", "hot", 0.4, 0, 0), ("alluxio", "hot", 0.5, 0.89, 0),
                               ("trino-cache", "hot", 0.3, 0.9, 0)])
    c.storages = ["s3", "alluxio", "trino-cache"]
    # two rounds; the S3 server's count and the engine's bytes, as accounting keeps them
    for record in c.results.records:
        k = record.iteration  # round 2 asked for more: the medians are the rounds' means
        read_ms = {"s3": (800, 900), "alluxio": (1000, 1400), "trino-cache": (300, 300)}[record.storage][k]
        record.io = {"server": {"s3_get": (32, 34)[k], "s3_head": 0, "s3_list": 1} if record.storage == "s3" else
                     {"s3_get": 0, "s3_head": 0, "s3_list": 0},
                     "engine": {"input_bytes": 887_548, "input_read_ms": read_ms, "cpu_ms": 200, "splits": 8}}
        if record.storage == "alluxio":
            record.params["tier_activity"] = {"master GetStatus": 8, "master getConfiguration": (8, 10)[k],
                                              "master ListStatus": 0, "worker blocks read": 16,
                                              "worker bytes sent": 900_000}
    table = report_of(c).why_table().set_index("storage")
    assert list(table.index) == ["s3", "alluxio", "trino-cache"]  # S3 first, then the tiers
    assert table.loc["s3", ["hot (s)", "MB read", "reading (s)", "CPU (s)", "splits", "S3 GETs", "S3 HEADs, LISTs"]
                     ].tolist() == [0.8, 0.89, 0.85, 0.2, 8.0, 33.0, 1.0]
    # 8 + (8 + 10) / 2 RPCs, ListStatus 0 left out; a client started per getConfiguration
    assert table.loc["alluxio", ["tier metadata RPCs", "of which", "tier blocks read", "tier clients started"]
                     ].tolist() == [17.0, "GetStatus 8, getConfiguration 9", 16.0, 9.0]
    assert pd.isna(table.loc["trino-cache", "tier metadata RPCs"])  # its counters are bytes only
    assert [s for s in report_of(c).findings().sentences if s.startswith("What a hot query asked")] == [
        "What a hot query asked, trino (medians per query): on S3 directly 33 GETs and 1 HEAD or LIST to S3; "
        "through alluxio 17 metadata RPCs to its master (GetStatus 8, getConfiguration 9) and 16 block reads "
        "from its worker, 9 of its clients started for the query (each asks the master for the cluster's "
        "configuration first), none to S3. Trino's own stats, the same queries: its drivers spent 0.85 s reading and "
        "0.20 s of CPU on S3 directly, 1.20 s reading and 0.20 s of CPU through alluxio, 0.30 s reading and 0.20 s "
        "of CPU through trino-cache."]
