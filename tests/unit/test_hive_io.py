"""Hive's own S3 counts: the S3A metrics sources of HiveServer2's JVM, read from its web UI's JMX servlet, summed
over the file systems of the profile's bucket and named as perfkit names them."""
import dataclasses

import pytest

from perfkit.accounting.hiveserver2_jmx import HiveServer2S3A
from perfkit.config import load_profile
from perfkit.engines.hive import HiveEngine

BEANS = [  # as HiveServer2's /jmx lists them (a few of each source's ~200 attributes)
    {"name": "Hadoop:service=s3a-file-system,name=S3AMetrics1-perfkit-lab", "tag.bucket": "perfkit-lab",
     "action_http_get_request": 32, "action_http_head_request": 18, "object_list_request": 4,
     "object_continue_list_request": 1, "stream_read_total_bytes": 927584, "store_io_throttled": 2,
     "store_io_retry": 3, "tag.Hostname": "lab"},
    {"name": "Hadoop:service=s3a-file-system,name=S3AMetrics2-perfkit-lab", "tag.bucket": "perfkit-lab",
     "action_http_get_request": 8, "object_put_request": 1, "object_put_bytes": 100},
    {"name": "Hadoop:service=s3a-file-system,name=S3AMetrics3-other", "tag.bucket": "other",
     "action_http_get_request": 1000},
]


@pytest.fixture
def hs2_jmx(json_server):
    port, asked = json_server(lambda path, headers: (200, {"beans": BEANS}))
    return port, asked


def test_the_bucket_s_file_systems_are_summed_and_others_left_out(hs2_jmx):
    port, asked = hs2_jmx
    found = HiveServer2S3A(f"http://127.0.0.1:{port}", "perfkit-lab", period_s=0).read()
    assert found["action_http_get_request"] == 40 and found["object_put_request"] == 1
    assert "tag.Hostname" not in found
    assert asked[0][0] == "/jmx?qry=Hadoop%3Aservice%3Ds3a-file-system%2Cname%3DS3AMetrics%2A"


def engine_reading(port) -> HiveEngine:
    engine = HiveEngine(dataclasses.replace(load_profile("lab"), hive_webui_port=port))
    engine.s3a = HiveServer2S3A(f"http://127.0.0.1:{port}", "perfkit-lab", period_s=0)  # as open() makes it
    return engine


def test_hive_names_the_counts_as_perfkit_does(hs2_jmx):
    engine = engine_reading(hs2_jmx[0])
    found = engine.io_counters("s3")
    assert (found["s3_get"], found["s3_head"], found["s3_list"], found["s3_put"]) == (40, 18, 5, 1)
    assert found["s3_bytes_read"] == 927584 and found["s3_bytes_written"] == 100
    assert engine.s3_counters("s3") == {"s3_throttled": 2, "s3_retried": 3}


def test_runs_that_s3a_does_not_serve_are_not_counted(hs2_jmx):
    port, asked = hs2_jmx
    engine = engine_reading(port)
    assert engine.io_counters("hdfs") is None and engine.io_counters("alluxio") is None and asked == []
    engine.s3a = None  # open() found the tasks in YARN containers, or S3 read through EMRFS
    assert engine.io_counters("s3") is None and engine.s3_counters("s3") is None


def test_a_web_ui_that_does_not_answer_is_named_with_the_setting(json_server):
    port, _ = json_server(lambda path, headers: (200, {}))
    engine = engine_reading(port + 1 if port < 65535 else port - 1)
    named = r"HiveServer2's JMX at http://127\.0\.0\.1:\d+/jmx not read .*hive_webui_port"
    with pytest.raises(LookupError, match=named):
        engine.io_counters("s3")
