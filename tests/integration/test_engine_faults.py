"""One engine's failure is that engine's record: a dialect Hive refuses, a query past Trino's memory limit."""
import pytest

from perfkit.engines import get_engine
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.storages import storage_probes
from perfkit.protocol import Step
from perfkit.results import ResultSet
from perfkit.suites import Query


@pytest.fixture(scope="module")
def comparison(profile):
    cmp = QueryComparison(profile, engines=["trino", "hive"], rows=5_000, files=2, runs=1, warmup=0, seed=31)
    cmp.prepare(progress=False)
    return cmp


def test_a_query_hives_dialect_rejects_fails_for_hive_only(comparison, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    # count_if() is Trino's (and Spark's); HiveQL has no such function
    monkeypatch.setattr(comparison, "suite_queries",
                        [Query("qx", "count_if", "SELECT count_if(passenger_count > 1) AS n FROM {table}")])
    frame = comparison.run(progress=False).to_frame()
    assert len(frame) == 2 * 2  # both engines, both storages: the run went on past Hive's refusal
    trino, hive = frame[frame.subject == "trino"], frame[frame.subject == "hive"]
    assert trino["ok"].all() and (trino["rows"] == 1).all()
    assert not hive["ok"].any()
    assert hive["error"].str.contains("count_if", case=False).all(), list(hive["error"])
    assert not hive["error"].str.contains("\n").any()  # one line, no Java stack


def test_a_query_past_trinos_memory_limit_is_recorded_with_trinos_message(comparison, tmp_path):
    results = ResultSet("test_trino_memory", {}, folder=tmp_path)
    comparison.probes = storage_probes(comparison.profile, ["hdfs", "s3"])
    # every pair of trips of one cab type, gathered into arrays: millions of values held at once
    self_join = Query("big", "self join", "SELECT a.vendor_id, cardinality(array_agg(b.trip_id)) FROM {table} a "
                                          "JOIN {table} b ON a.cab_type = b.cab_type GROUP BY a.vendor_id")
    with get_engine("trino", comparison.profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        engine.execute("SET SESSION query_max_memory = '1MB'")  # a small node's limit, reached on lab data
        comparison.measure(results, engine, self_join, Step("measured", 0, "hdfs"), tables["hdfs"])
        engine.execute("RESET SESSION query_max_memory")
        comparison.measure(results, engine, comparison.suite_queries[0], Step("measured", 1, "hdfs"), tables["hdfs"])
    failed, after = results.records
    assert not failed.ok
    assert failed.error.startswith("EXCEEDED_GLOBAL_MEMORY_LIMIT: Query exceeded distributed user memory limit of 1MB")
    assert after.ok and after.rows > 0
