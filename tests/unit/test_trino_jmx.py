"""Trino's S3 counters: a one-node Trino answers from its coordinator's JMX resource over HTTP, summed over the
profile's catalogs, under the same names the jmx catalog's query gives."""
import dataclasses

import pytest

from perfkit.config import load_profile
from perfkit.engines.trino import TrinoEngine

BEANS = {  # catalog -> S3FileSystemStats attributes as the resource lists them (a few of its ~800)
    "hive": {"GetObject.Calls.TotalCount": 7, "GetObject.Retries.TotalCount": 1, "HeadObject.Calls.TotalCount": 2,
             "ListObjectsV2.Calls.TotalCount": 3, "Total.ThrottlingExceptions.TotalCount": 1,
             "Total.Retries.TotalCount": 1, "GetObject.Time.AllTime.Avg": 12.5},
    "hive_cache": {"GetObject.Calls.TotalCount": 5, "PutObject.Calls.TotalCount": 4},
}


@pytest.fixture
def coordinator(json_server):
    def bean(path, headers):
        catalog = path.rsplit("name=", 1)[1]
        return 200, {"attributes": [{"name": k, "value": v} for k, v in BEANS[catalog].items()]}

    port, asked = json_server(bean)
    return port, asked


def test_a_one_node_trino_is_counted_from_its_jmx_resource(coordinator):
    port, asked = coordinator
    profile = dataclasses.replace(load_profile("lab"), trino_host="127.0.0.1", trino_port=port)
    engine = TrinoEngine(profile)
    engine.nodes, engine.input_bytes = 1, 99
    found = engine.io_counters()
    # GETs: each call and its retries, both catalogs: 7 + 1 + 5; PUTs from the cache catalog's PutObject
    assert found == {"input_bytes": 99, "s3_get": 13, "s3_head": 2, "s3_list": 3, "s3_put": 4, "s3_delete": 0,
                     "s3_throttled": 1, "s3_retried": 1}
    assert engine.s3_counters() == {"s3_throttled": 1, "s3_retried": 1}
    assert {path.rsplit("name=", 1)[1] for path, _ in asked} == {profile.trino_catalog, profile.trino_cache_catalog}
    assert {headers.get("X-Trino-User") for _, headers in asked} == {profile.trino_user}


def test_a_resource_that_does_not_answer_counts_nothing(coordinator):
    port, _ = coordinator
    engine = TrinoEngine(dataclasses.replace(load_profile("lab"), trino_host="127.0.0.1", trino_port=port + 1 or 1))
    engine.nodes = 1
    assert engine.io_counters() == {"input_bytes": 0} and engine.s3_counters() is None


def test_a_run_reads_the_counters_of_the_catalog_it_reads_through(coordinator):
    port, asked = coordinator
    profile = dataclasses.replace(load_profile("lab"), trino_host="127.0.0.1", trino_port=port)
    engine = TrinoEngine(profile)
    engine.nodes = 1
    assert engine.io_counters("hdfs") == {"input_bytes": 0} and asked == []  # HDFS: no S3 counters read
    assert engine.io_counters("s3")["s3_get"] == 8  # the plain catalog: 7 calls + 1 retry
    assert engine.io_counters("trino-cache")["s3_get"] == 5 and engine.io_counters("trino-cache")["s3_put"] == 4
    assert [path.rsplit("name=", 1)[1] for path, _ in asked] == [profile.trino_catalog] + [
        profile.trino_cache_catalog] * 2


def test_throttled_and_retried_calls_are_those_of_the_catalog_the_run_reads(coordinator):
    port, asked = coordinator
    profile = dataclasses.replace(load_profile("lab"), trino_host="127.0.0.1", trino_port=port)
    engine = TrinoEngine(profile)
    engine.nodes = 1
    assert engine.s3_counters("s3") == {"s3_throttled": 1, "s3_retried": 1}  # the plain catalog's
    assert engine.s3_counters("trino-cache") == {"s3_throttled": 0, "s3_retried": 0}  # the cache catalog's: none
    # one bean per run's snapshot, not both catalogs' (each read is ~6 ms on the lab, and a run pays two)
    assert [path.rsplit("name=", 1)[1] for path, _ in asked] == [profile.trino_catalog, profile.trino_cache_catalog]
