"""Each engine names its own endpoint, the profile settings that place it, and the lab service that serves it."""
import os
import socket
from dataclasses import replace

import pytest

from perfkit.config import load_profile
from perfkit.engines import engine_class
from perfkit.engines.trino import trino_type
from perfkit.errors import ServiceError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


@pytest.mark.parametrize("engine, setting, what, service", [
    ("hive", "hive_port", "HiveServer2", "hiveserver2"),
    ("spark-thrift", "spark_thrift_port", "Spark Thrift Server", "spark-thrift"),
    ("trino", "trino_port", "Trino", "trino"),
])
def test_an_engine_whose_service_is_down_names_service_address_and_fix(engine, setting, what, service):
    port = _closed_port()
    with pytest.raises(ServiceError) as caught:
        engine_class(engine)(replace(load_profile("lab"), **{setting: port})).open()
    text = str(caught.value)
    assert text.startswith(f"{what} at 127.0.0.1:{port}: not ")
    assert "Connection refused" in text and "\n" not in text
    assert text.endswith(f"Fix: start it with `perfkit lab up {service}`")


def test_on_a_cluster_the_fix_names_the_profile_settings():
    profile = load_profile("emr", bucket="b", master="127.0.0.1")
    with pytest.raises(ServiceError, match=r"Fix: check trino_host/trino_port in the profile$"):
        engine_class("trino")(replace(profile, trino_port=_closed_port())).open()
    with pytest.raises(ServiceError, match=r"Fix: check spark_thrift_host/spark_thrift_port in the profile$"):
        engine_class("spark-thrift")(replace(profile, spark_thrift_port=_closed_port())).open()


def test_profiles_place_each_engine(monkeypatch):
    for var in [v for v in os.environ if v.startswith("PERFKIT_LAB_PORT_")]:
        monkeypatch.delenv(var)  # the default ports, whatever this shell moved
    lab = load_profile("lab")
    assert (lab.hive_port, lab.spark_thrift_port, lab.trino_port) == (10000, 10001, 8889)
    assert lab.metastore_uri == "thrift://127.0.0.1:9083"
    emr = load_profile("emr", bucket="b", master="m.internal")
    assert (emr.trino_host, emr.trino_port, emr.trino_user) == ("m.internal", 8889, "hadoop")  # EMR's Trino port
    assert (emr.hive_host, emr.hive_port, emr.spark_thrift_port) == ("m.internal", 10000, 10001)
    assert emr.metastore_uri == ""  # the cluster's own metastore configuration (or Glue) stays in charge


def test_hive_types_become_trino_types():
    assert [trino_type(t) for t in ("string", "int", "bigint", "double", "timestamp", "smallint", "STRING")] == \
        ["varchar", "integer", "bigint", "double", "timestamp", "smallint", "varchar"]


@pytest.mark.parametrize("engine", ["spark", "trino", "hive", "spark-thrift"])
def test_a_metastore_that_is_down_is_named_before_an_engine_is_used(engine):
    port = _closed_port()
    profile = replace(load_profile("lab"), metastore_uri=f"thrift://127.0.0.1:{port}")
    with pytest.raises(ServiceError) as caught:
        engine_class(engine)(profile).check()
    assert str(caught.value) == (f"Hive metastore at 127.0.0.1:{port}: not reachable (Connection refused). "
                                 "Fix: start it with `perfkit lab up hive-metastore`")
