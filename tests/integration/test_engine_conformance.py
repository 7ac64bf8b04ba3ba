"""Every registered engine, on the lab: each taxi query returns the same result on HDFS and on S3, the same
result as every other engine, and the result pandas computes from the same files."""
import numpy as np
import pandas as pd
import pyarrow.orc as orc
import pytest

from perfkit.datasets.placement import staging_dir
from perfkit.engines import REGISTRY, get_engine, result_hash
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

ENGINES = sorted(REGISTRY)


@pytest.fixture(scope="module")
def comparison(profile):
    cmp = QueryComparison(profile, engines=ENGINES, rows=20_000, files=2, runs=1, warmup=0, seed=21)
    cmp.prepare(progress=False)
    return cmp


def expected_results(cmp) -> dict[str, list[tuple]]:
    """The four taxi queries computed by pandas from the local copy of the placed files."""
    folder = staging_dir() / cmp.dataset.name / "orc"
    trips = pd.concat([orc.read_table(p).to_pandas() for p in sorted(folder.glob("*.orc"))])
    year = trips["pickup_datetime"].dt.year
    # SQL's round() takes halves away from zero; pandas' round() takes them to even; distances are >= 0
    distance = np.floor(trips["trip_distance"] + 0.5)
    frames = {
        "q1": trips.groupby("cab_type").size(),
        "q2": trips.groupby("passenger_count")["total_amount"].mean(),
        "q3": trips.groupby(["passenger_count", year]).size(),
        "q4": trips.groupby(["passenger_count", year, distance]).size(),
    }
    return {q: [(*(k if isinstance(k, tuple) else (k,)), v) for k, v in f.items()] for q, f in frames.items()}


def _plain(rows):
    """numpy scalars as Python's, so the hash sees the same text an engine's driver gives."""
    return [tuple(v.item() if hasattr(v, "item") else v for v in row) for row in rows]


@pytest.fixture(scope="module")
def answers(comparison):
    """{(engine, storage, query): rows}: every engine on every storage."""
    found = {}
    for name in ENGINES:
        with get_engine(name, comparison.profile) as engine:
            tables = comparison.register_tables(engine, comparison.tableset)
            for query in comparison.suite_queries:
                for where in comparison.storages:
                    found[name, where, query.id] = engine.execute(query.for_tables(tables[where], engine.name),
                                                                  timeout_s=300)
    return found


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_returns_what_pandas_computes_on_both_storages(engine, comparison, answers):
    expected = {q: result_hash(_plain(rows)) for q, rows in expected_results(comparison).items()}
    for query in comparison.suite_queries:
        for where in comparison.storages:
            got = answers[engine, where, query.id]
            assert result_hash(got) == expected[query.id], (engine, where, query.id, sorted(got)[:3])


def test_every_engine_gives_one_hash_per_query(comparison, answers):
    for query in comparison.suite_queries:
        hashes = {result_hash(rows) for (_, _, q), rows in answers.items() if q == query.id}
        assert len(hashes) == 1, (query.id, hashes)


def test_each_engine_records_its_true_version(comparison):
    labels = {}
    for name in ENGINES:
        with get_engine(name, comparison.profile) as engine:
            labels.update(engine.versions())
    assert labels["spark"].startswith("Spark 4.") and labels["spark-thrift"].startswith("Spark 4.")
    assert labels["spark-thrift"].endswith("(thrift server)")
    assert labels["trino"] == "Trino 476"
    assert labels["hive"] == "Hive 4.0.1 (mr, local)"
