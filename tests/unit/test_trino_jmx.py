"""Trino's S3 counters: a one-node Trino answers from its coordinator over HTTP, the counters by name from its
OpenMetrics resource (else its bean's JMX resource), summed over the profile's catalogs, under the same names the jmx
catalog's query gives."""
import dataclasses
import urllib.parse

import pytest

from perfkit.config import load_profile
from perfkit.engines.trino import TrinoEngine
from perfkit.engines.trino_s3_stats import counters_from_metrics

BEANS = {  # catalog -> S3FileSystemStats attributes as the resource lists them (a few of its ~800)
    "hive": {"GetObject.Calls.TotalCount": 7, "GetObject.Retries.TotalCount": 1, "HeadObject.Calls.TotalCount": 2,
             "ListObjectsV2.Calls.TotalCount": 3, "Total.ThrottlingExceptions.TotalCount": 1,
             "Total.Retries.TotalCount": 1, "GetObject.Time.AllTime.Avg": 12.5},
    "hive_cache": {"GetObject.Calls.TotalCount": 5, "PutObject.Calls.TotalCount": 4},
}


# a session that ran no query: its query stats, summed, are all 0
NO_QUERY_READ = {"input_bytes": 0, "input_read_ms": 0, "cpu_ms": 0, "splits": 0}

def exposition(names: list[str], beans: dict) -> str:
    """What airlift's OpenMetrics resource answers to name[]=JMX_...: for each name, the bean's attribute it names
    (the domain's and the attribute's dots written as underscores), as a gauge with the node's labels."""
    lines = []
    for name in names:
        rest = name.removeprefix("JMX_")
        domain, rest = rest.split("_NAME_", 1)
        catalog, rest = rest.split("_TYPE_", 1)
        kind, attribute = rest.split("_ATTRIBUTE_", 1)
        assert (domain, kind) == ("io_trino_filesystem_s3", "S3FileSystemStats")
        value = beans.get(catalog, {}).get(attribute.replace("_", "."))
        if value is not None:
            lines += [f"# TYPE {rest} gauge", f'{name.removeprefix("JMX_")}{{node="n1"}} {float(value)}']
    return "\n".join([*lines, "# EOF", ""])


def catalogs_asked(asked) -> list[list[str]]:
    """Per request, the catalogs it asked for, in order."""
    found = []
    for path, _ in asked:
        if path.startswith("/metrics?"):
            names = urllib.parse.parse_qs(path.split("?", 1)[1])["name[]"]
            found.append(list(dict.fromkeys(n.split("_NAME_", 1)[1].split("_TYPE_", 1)[0] for n in names)))
        else:
            found.append([urllib.parse.unquote(path).rsplit("name=", 1)[1]])
    return found


@pytest.fixture
def coordinator(json_server):
    """A coordinator whose /metrics answers as `coordinator.metrics` says: "jmx" (names looked up in JMX, as Trino
    476), "unknown" (an older resource: it knows no JMX_ names and gives nothing), "absent" (404) or "busy once" (503,
    then as "jmx")."""

    def answer(path, headers):
        if path.startswith("/metrics"):
            if state["metrics"] == "absent":
                return 404, {"message": "Not Found"}
            if state["metrics"] == "busy once":  # a coordinator short of threads for a moment
                state["metrics"] = "jmx"
                return 503, {"message": "Service Unavailable"}
            names = urllib.parse.parse_qs(path.split("?", 1)[1])["name[]"]
            return 200, exposition(names, BEANS if state["metrics"] == "jmx" else {})
        catalog = urllib.parse.unquote(path).rsplit("name=", 1)[1]
        if catalog not in BEANS:
            return 404, {"message": "Not Found"}
        return 200, {"attributes": [{"name": k, "value": v} for k, v in BEANS[catalog].items()]}

    state = {"metrics": "jmx"}
    port, asked = json_server(answer)
    return port, asked, state


def one_node_trino(port: int) -> TrinoEngine:
    engine = TrinoEngine(dataclasses.replace(load_profile("lab"), trino_host="127.0.0.1", trino_port=port))
    engine.nodes = 1
    return engine


def test_a_one_node_trino_is_counted_from_its_metrics_resource_in_one_request(coordinator):
    port, asked, _ = coordinator
    engine = one_node_trino(port)
    engine.query_totals.update(input_bytes=99, input_read_ms=7)
    found = engine.io_counters()
    # GETs: each call and its retries, both catalogs: 7 + 1 + 5; PUTs from the cache catalog's PutObject
    assert found == {"input_bytes": 99, "input_read_ms": 7, "cpu_ms": 0, "splits": 0, "s3_get": 13, "s3_head": 2,
                     "s3_list": 3, "s3_put": 4, "s3_delete": 0, "s3_throttled": 1, "s3_retried": 1}
    assert engine.s3_counters() == {"s3_throttled": 1, "s3_retried": 1}
    profile = engine.profile
    assert catalogs_asked(asked) == [[profile.trino_catalog, profile.trino_cache_catalog]] * 2
    assert all(path.startswith("/metrics?") for path, _ in asked)
    assert {headers.get("X-Trino-User") for _, headers in asked} == {profile.trino_user}


@pytest.mark.parametrize("metrics", ["unknown", "absent"])
def test_a_trino_whose_metrics_resource_does_not_give_them_is_read_through_its_bean_from_then_on(coordinator, metrics):
    port, asked, state = coordinator
    state["metrics"] = metrics
    engine = one_node_trino(port)
    assert engine.io_counters("s3")["s3_get"] == 8 and engine.io_counters("s3")["s3_head"] == 2
    assert [path.split("?")[0].split("/")[1] for path, _ in asked] == ["metrics", "v1", "v1"]  # /metrics once
    assert catalogs_asked(asked) == [[engine.profile.trino_catalog]] * 3


def test_a_metrics_resource_that_failed_for_a_moment_is_asked_again(coordinator):
    port, asked, state = coordinator
    state["metrics"] = "busy once"
    engine = one_node_trino(port)
    assert engine.io_counters("s3")["s3_get"] == 8 and engine.io_counters("s3")["s3_get"] == 8
    # the 503, the bean in its place, then /metrics again: a moment's failure does not cost every read the bean's
    # 193 KB from then on
    assert [path.split("?")[0].split("/")[1] for path, _ in asked] == ["metrics", "v1", "metrics"]


def test_a_catalog_without_s3_counters_counts_nothing(coordinator):
    port, _, _ = coordinator
    engine = one_node_trino(port)
    engine.profile = dataclasses.replace(engine.profile, trino_catalog="hive_hdfs_only")
    assert engine.io_counters("s3") == NO_QUERY_READ and engine.s3_counters("s3") is None


def test_a_resource_that_does_not_answer_counts_nothing(coordinator):
    port, _, _ = coordinator
    engine = one_node_trino(port + 1 or 1)
    assert engine.io_counters() == NO_QUERY_READ and engine.s3_counters() is None


def test_a_run_reads_the_counters_of_the_catalog_it_reads_through(coordinator):
    port, asked, _ = coordinator
    engine = one_node_trino(port)
    profile = engine.profile
    assert engine.io_counters("hdfs") == NO_QUERY_READ and asked == []  # HDFS: no S3 counters read
    assert engine.io_counters("s3")["s3_get"] == 8  # the plain catalog: 7 calls + 1 retry
    assert engine.io_counters("trino-cache")["s3_get"] == 5 and engine.io_counters("trino-cache")["s3_put"] == 4
    assert catalogs_asked(asked) == [[profile.trino_catalog]] + [[profile.trino_cache_catalog]] * 2


def test_throttled_and_retried_calls_are_those_of_the_catalog_the_run_reads(coordinator):
    port, asked, _ = coordinator
    engine = one_node_trino(port)
    assert engine.s3_counters("s3") == {"s3_throttled": 1, "s3_retried": 1}  # the plain catalog's
    assert engine.s3_counters("trino-cache") == {"s3_throttled": 0, "s3_retried": 0}  # the cache catalog's: none
    # one catalog per run's snapshot, not both (each read is a round trip, and a run pays two)
    assert catalogs_asked(asked) == [[engine.profile.trino_catalog], [engine.profile.trino_cache_catalog]]


def test_the_metrics_answer_is_read_by_name_with_or_without_labels_and_in_any_number_notation():
    name = "io_trino_filesystem_s3_NAME_hive_TYPE_S3FileSystemStats_ATTRIBUTE_GetObject_Calls_TotalCount"
    text = (f"# TYPE {name} gauge\n{name} 1.2345678E7\n"
            f"{name.replace('GetObject', 'HeadObject')}{{node=\"a\",env=\"b c\"}} 3.0\n# EOF\n")
    assert counters_from_metrics(text, ["hive"]) == {"getobject.calls.totalcount": 12345678.0,
                                                     "headobject.calls.totalcount": 3.0}
    with pytest.raises(LookupError, match="no S3FileSystemStats of catalog hive_cache"):
        counters_from_metrics(text, ["hive", "hive_cache"])


def test_a_run_on_a_new_storage_reads_the_counters_of_the_client_the_storage_names_not_of_its_name(coordinator,
                                                                                                  monkeypatch):
    from perfkit import storages
    from perfkit.storages.base import HDFS_CLIENT, S3_CLIENT

    class ObjectStore(storages.Storage):  # read by Trino's S3 file system, as S3 is
        name, engine_client = "object-store", S3_CLIENT

    class BlockStore(storages.Storage):  # read by Hadoop's HDFS client, as HDFS is
        name, engine_client = "block-store", HDFS_CLIENT

    monkeypatch.setitem(storages.REGISTRY, "object-store", ObjectStore)
    monkeypatch.setitem(storages.REGISTRY, "block-store", BlockStore)
    port, asked, _ = coordinator
    engine = one_node_trino(port)
    assert engine.io_counters("block-store") == NO_QUERY_READ and asked == []
    assert engine.io_counters("object-store")["s3_get"] == 8  # the plain catalog, as for s3
    assert catalogs_asked(asked) == [[engine.profile.trino_catalog]]
