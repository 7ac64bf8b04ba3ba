"""Throttled and retried S3 requests counted per run from the engines' own counters, flagged in the record and the
recap, and left out of the verdict unless asked for."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from perfkit import stats
from perfkit.config import load_profile
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.query_report import recap_table
from perfkit.protocol import Step
from perfkit.results import ResultSet
from perfkit.storages import get_storage
from perfkit.presenting import report_of


class CountingEngine:
    """A fake engine whose S3 client the server throttles: each query adds its throttled and retried requests to
    the engine's running totals, as S3A's IOStatistics and Trino's S3FileSystemStats do."""

    def __init__(self, name="spark", per_query=None, counts=True):
        self.name, self.counts = name, counts
        self.per_query = per_query or {}  # table -> (throttled, retried) that a query of it causes
        self.totals = {"s3_throttled": 7, "s3_retried": 2}  # what earlier runs left: only differences count

    def execute(self, sql, timeout_s=None):
        throttled, retried = self.per_query.get(sql.split()[-1], (0, 0))
        self.totals["s3_throttled"] += throttled
        self.totals["s3_retried"] += retried
        return [(1,)]

    def s3_counters(self, storage=None):
        return dict(self.totals) if self.counts else None


class OneQuery:
    id = "q1"

    @staticmethod
    def for_tables(tables, engine=None):
        return f"SELECT * FROM {tables['table']}"


@pytest.fixture(params=[True, False], ids=["accounted", "not-accounted"])
def cmp(tmp_path, request):
    """Both ways a run's throttling is counted: from the run's I/O snapshot (accounting on) or from the engine's
    counters read before and after it (accounting off)."""
    comparison = QueryComparison(load_profile("lab"), engines=["spark"], rows=10, files=1, runs=1, warmup=0,
                                 queries=["q1"], health_interval_s=0.05, accounting=request.param)
    comparison.results = ResultSet("test", {"parameters": comparison.parameters()}, folder=tmp_path)
    comparison.probes = {"s3": lambda: None, "hdfs": lambda: None}
    return comparison


def test_a_throttled_run_stays_ok_and_is_flagged_with_its_counts(cmp):
    engine = CountingEngine(per_query={"t_s3": (3, 1)})
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, "s3"), {"table": "t_s3"})
    record = cmp.results.records[-1]
    assert record.ok and record.params == {"throttled": 3, "retried": 1}
    assert cmp.results.config["s3_throttling_counted"] == {"spark": True}


def test_an_unthrottled_run_and_an_hdfs_run_carry_no_flag(cmp):
    engine = CountingEngine(per_query={"t_hdfs": (5, 5)})  # HDFS reads cause no S3 requests; nothing is asked
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, "s3"), {"table": "t_s3"})
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, "hdfs"), {"table": "t_hdfs"})
    assert [r.params for r in cmp.results.records] == [{}, {}]


def test_an_engine_that_does_not_count_is_recorded_as_not_counted(cmp):
    engine = CountingEngine(name="hive", per_query={"t_s3": (4, 0)}, counts=False)
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, "s3"), {"table": "t_s3"})
    assert cmp.results.records[-1].params == {}
    assert cmp.results.config["s3_throttling_counted"] == {"hive": False}


def test_the_s3_storage_snapshot_is_the_engine_s_counters():
    s3 = get_storage("s3", load_profile("lab"))
    assert s3.snapshot(CountingEngine()) == {"s3_throttled": 7, "s3_retried": 2}
    assert s3.snapshot(CountingEngine(counts=False)) == {}  # not counted: no numbers at all, not zeros
    assert s3.snapshot() == {}


def test_trino_s_cache_tier_adds_the_s3_requests_trino_made_on_misses():
    profile = replace(load_profile("lab"), trino_cache_catalog="hive_cache")
    engine = CountingEngine(name="trino")
    engine.execute = lambda sql, timeout_s=None: [(100, 30)]  # the cache's JMX: bytes read from cache, from S3
    snapshot = get_storage("trino-cache", profile).snapshot(engine)
    assert snapshot == {"cache_bytes": 100, "s3_bytes": 30, "s3_throttled": 7, "s3_retried": 2}
    assert get_storage("trino-cache", profile).snapshot(CountingEngine(name="spark")) == {}  # not read by Spark


def test_hive_and_the_thrift_server_say_they_do_not_count():
    from perfkit.engines import engine_class

    for name in ("hive", "spark-thrift"):
        assert engine_class(name)(load_profile("lab")).s3_counters() is None


def test_trino_sums_the_throttling_of_its_catalogs_from_jmx():
    from perfkit.engines.trino import STATS_COLUMNS, TrinoEngine

    engine = TrinoEngine(replace(load_profile("lab"), trino_catalog="hive", trino_cache_catalog="hive_cache"))
    engine.nodes = 3  # a cluster: the jmx catalog sums every node's counters
    asked = []

    def row(throttled, retried):  # the query's columns: every S3 API's calls and retries, then the two totals
        return [tuple([0] * (len(STATS_COLUMNS) - 2) + [throttled, retried])]

    def fetch(sql):
        asked.append(sql)
        return row(14, 21)

    engine._fetch = fetch
    assert engine.s3_counters() == {"s3_throttled": 14, "s3_retried": 21}
    assert len(asked) == 1 and 'sum("total.throttlingexceptions.totalcount")' in asked[0]
    assert 'name=hive" UNION ALL SELECT' in asked[0] and 'name=hive_cache"' in asked[0]

    def only_hive(sql):  # the cache catalog has no native S3 file system: its table is missing
        if "hive_cache" in sql:
            raise RuntimeError("TABLE_NOT_FOUND")
        return row(1, None)

    engine._fetch = only_hive
    assert engine.s3_counters() == {"s3_throttled": 1, "s3_retried": 0}
    engine._fetch = lambda sql: (_ for _ in ()).throw(RuntimeError("no jmx catalog"))
    assert engine.s3_counters() is None


class JavaMap(dict):
    """A java.util.TreeMap through py4j: its toString() as Java's AbstractMap writes it."""

    def toString(self):
        return "{" + ", ".join(f"{name}={value}" for name, value in self.items()) + "}"


def test_a_java_map_of_counters_is_read_from_its_text():
    from perfkit.engines.spark import java_counters

    assert java_counters(JavaMap({"action_http_get_request": 40, "store_io_retry": 0}).toString()) == {
        "action_http_get_request": 40, "store_io_retry": 0}
    assert java_counters("{}") == {}


def test_spark_reads_s3a_iostatistics_of_the_bucket_in_local_mode(tmp_path, monkeypatch):
    from perfkit.engines.spark import SparkEngine

    asked = {}

    class FileSystem:
        @staticmethod
        def get(uri, conf):
            asked["uri"] = uri
            return SimpleNamespace(getIOStatistics=lambda: SimpleNamespace(counters=lambda: {
                "store_io_throttled": 12, "store_io_retry": 3, "action_http_get_request": 40}))

    jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(hadoop=SimpleNamespace(
        fs=SimpleNamespace(FileSystem=FileSystem)))), java=SimpleNamespace(net=SimpleNamespace(URI=lambda u: u),
                                                                           util=SimpleNamespace(TreeMap=JavaMap)))
    context = SimpleNamespace(_jvm=jvm, _jsc=SimpleNamespace(hadoopConfiguration=lambda: "conf"))
    lab = load_profile("lab")
    engine = SparkEngine(lab)
    assert engine.s3_counters() is None  # no session yet
    engine.spark = SimpleNamespace(sparkContext=context)
    assert engine.s3_counters() == {"s3_throttled": 12, "s3_retried": 3}
    assert asked["uri"] == f"s3a://{lab.s3_bucket}/"
    engine.profile = replace(lab, spark_master="yarn")  # executors' file systems live in other JVMs
    assert engine.s3_counters() is None
    engine.profile = replace(lab, s3_scheme="s3")  # EMRFS: no S3A statistics
    assert engine.s3_counters() is None


def _records(frame_rows):
    return pd.DataFrame([{"subject": "spark", "case": "q1", "phase": "measured", "ok": True, "result_hash": "h",
                          **row} for row in frame_rows])


HDFS = [1.0, 1.1, 0.9, 1.0]
S3 = [2.0, 2.1, 1.9]
S3_THROTTLED = [(9.0, 40), (8.0, 12)]  # retries made these runs slow


@pytest.fixture
def frame():
    rows = [{"storage": "hdfs", "wall_s": w, "params": {}} for w in HDFS]
    rows += [{"storage": "s3", "wall_s": w, "params": {}} for w in S3]
    rows += [{"storage": "s3", "wall_s": w, "params": {"throttled": n, "retried": 1}} for w, n in S3_THROTTLED]
    return _records(rows)


def test_throttled_runs_are_left_out_of_the_verdict(frame):
    row = stats.compare_storages(frame, ["hdfs", "s3"], "hdfs").iloc[0]
    assert row["s3_n"] == 3 and row["s3_median"] == pytest.approx(float(np.median(S3)))  # 2.0
    assert row["speedup_median"] == pytest.approx(2.0 / 1.0)
    assert row["speedup_min"] == pytest.approx(1.9 / 0.9)
    assert row["verdict"] == "HDFS 2.00× faster"  # every S3 run slower than every HDFS run: the CI excludes 1
    assert (row["throttled_runs"], row["throttled_requests"], row["failed_runs"]) == (2, 52, 0)


def test_throttled_runs_count_when_asked_for(frame):
    row = stats.compare_storages(frame, ["hdfs", "s3"], "hdfs", include_throttled=True).iloc[0]
    assert row["s3_n"] == 5 and row["s3_median"] == pytest.approx(2.1)  # median of 1.9, 2.0, 2.1, 8.0, 9.0
    assert row["speedup_median"] == pytest.approx(2.1)
    assert row["verdict"] == "HDFS 2.10× faster"
    assert row["throttled_runs"] == 2 and row["throttled_kept"]


def test_the_recap_names_the_throttled_requests_of_the_cell(frame):
    left_out = recap_table(stats.compare_storages(frame, ["hdfs", "s3"], "hdfs"), {"q1": "count"})
    assert left_out["check"].tolist() == ["throttled: 52 requests (2 runs, left out of the verdict)"]
    kept = recap_table(stats.compare_storages(frame, ["hdfs", "s3"], "hdfs", include_throttled=True), {"q1": "c"})
    # kept, the retried runs make the cell noisy: 1.9 .. 9.0
    assert kept["check"].tolist() == ["noisy (CV > 10%); throttled: 52 requests (2 runs, kept in the verdict)"]
    plain = frame[frame["params"].map(len) == 0]
    assert recap_table(stats.compare_storages(plain, ["hdfs", "s3"], "hdfs"), {"q1": "c"})["check"].tolist() == ["ok"]


def test_the_comparison_follows_its_include_throttled_parameter(cmp):
    for storage, walls in (("hdfs", HDFS), ("s3", S3)):
        for i, wall in enumerate(walls):
            cmp.results.add(subject="spark", storage=storage, case="q1", phase="measured", iteration=i,
                            started_at="2026-11-01T00:00:00+00:00", wall_s=wall, rows=1, result_hash="h")
    for i, (wall, n) in enumerate(S3_THROTTLED):
        cmp.results.add(subject="spark", storage="s3", case="q1", phase="measured", iteration=3 + i,
                        started_at="2026-11-01T00:00:00+00:00", wall_s=wall, rows=1, result_hash="h",
                        params={"throttled": n})
    assert report_of(cmp).comparison().iloc[0]["s3_n"] == 3
    cmp.include_throttled = True
    assert cmp.parameters()["include_throttled"] is True
    cmp.results.config["parameters"] = cmp.parameters()  # as a run with it asked would record it
    assert report_of(cmp).comparison().iloc[0]["s3_n"] == 5
