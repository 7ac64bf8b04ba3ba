"""A throttled S3 request gives up in bounded time: the retry settings perfkit gives S3A (Spark, the Thrift Server,
Hive, DistCp) and Trino, checked against the worst-case backoff worked out here by hand."""
from __future__ import annotations

import pytest

from perfkit import s3_retries
from perfkit.config import load_profile
from perfkit.engines import engine_class, get_engine
from perfkit.lab.settings import LabPorts


@pytest.fixture(autouse=True)
def no_tool_fetch(monkeypatch):
    """The lab's Spark settings name jars the lab fetches when it starts: a unit test fetches nothing."""
    from perfkit.lab import alluxio_dist, tools

    monkeypatch.setattr(tools, "s3a_jars", lambda: [])
    monkeypatch.setattr(alluxio_dist, "alluxio_client_jar", lambda: "alluxio-client.jar")


def worst_s3a_wait(retries: int, interval_s: float) -> float:
    # Hadoop's exponentialBackoffRetry: before retry r (0, 1, ...) it sleeps interval * 2^(r+1) * [0.5, 1.5)
    return sum(interval_s * 2 ** (r + 1) * 1.5 for r in range(retries))


def test_worked_example():
    assert worst_s3a_wait(5, 0.5) == 0.75 * (2 + 4 + 8 + 16 + 32) == 46.5
    assert worst_s3a_wait(6, 0.5) == 94.5
    assert s3_retries.s3a_backoff_s(5) == 46.5 and s3_retries.s3a_backoff_s(0) == 0


@pytest.mark.parametrize("timeout_s, throttle, other", [
    (None, 5, 5),  # a minute: 46.5 s <= 60 < 94.5 s
    (120, 5, 5),  # half of 120 s
    (30, 3, 3),  # 15 s: 0.75 * (2 + 4 + 8) = 10.5 <= 15 < 22.5
    (2, 0, 0),  # 1 s: not even one retry (its worst wait is 1.5 s)
    (3600, 10, 7),  # 1800 s: 0.75 * (2^11 - 2) = 1534.5 <= 1800 < 3070.5; the other retries keep S3A's 7 at most
])
@pytest.mark.usefixtures("tools_on_paper")
def test_spark_s3a_retries_fit_half_the_run_time_limit(timeout_s, throttle, other, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LOG_DIR", str(tmp_path))
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "b"}')
    conf = get_engine("spark", load_profile("lab"), timeout_s).conf()
    h = "spark.hadoop.fs.s3a."
    assert conf[f"{h}attempts.maximum"] == "0"  # the SDK makes one attempt per S3A try: S3A sees every throttle
    assert conf[f"{h}input.stream.type"] == "classic"  # the stream whose reads S3A retries and counts
    assert conf[f"{h}retry.throttle.limit"] == str(throttle) and conf[f"{h}retry.limit"] == str(other)
    assert conf[f"{h}retry.throttle.interval"] == conf[f"{h}retry.interval"] == "500ms"
    budget = timeout_s / 2 if timeout_s else 60
    assert worst_s3a_wait(throttle, 0.5) <= budget
    if throttle < 20:
        assert worst_s3a_wait(throttle + 1, 0.5) > budget  # the most that fit


@pytest.mark.usefixtures("tools_on_paper")
def test_a_profile_can_still_choose_its_own_s3a_retries(tmp_path, monkeypatch):
    from dataclasses import replace

    monkeypatch.setenv("PERFKIT_LOG_DIR", str(tmp_path))
    profile = replace(load_profile("emr", bucket="my-bucket"), spark_conf={"spark.hadoop.fs.s3a.retry.limit": "2"})
    conf = engine_class("spark")(profile).conf()
    assert conf["spark.hadoop.fs.s3a.retry.limit"] == "2" and conf["spark.hadoop.fs.s3a.retry.throttle.limit"] == "5"


def test_hive_the_thrift_server_and_distcp_share_the_one_minute_bound(tmp_path):
    from perfkit.lab.hive import HiveServer2
    from perfkit.lab.metastore import s3a_settings
    from perfkit.lab.spark_conf import lab_spark_conf

    spark = lab_spark_conf(LabPorts(), {"access_key": "a", "secret_key": "b"})
    assert spark["spark.hadoop.fs.s3a.retry.throttle.limit"] == "5"
    assert spark["spark.hadoop.fs.s3a.attempts.maximum"] == "0"
    hive = s3a_settings(LabPorts())  # HiveServer2's core-site.xml
    assert hive["fs.s3a.retry.throttle.limit"] == "5" and hive["fs.s3a.retry.limit"] == "5"
    server = HiveServer2(tmp_path, LabPorts())
    server.write_config()
    core = (server.conf_dir / "core-site.xml").read_text()
    assert "<name>fs.s3a.retry.throttle.limit</name><value>5</value>" in core.replace("\n", "").replace(" ", "")


def worst_sdk_wait(retries: int) -> float:
    # AWS SDK v2, legacy mode, throttled: equal jitter under min(20 s, 500 ms * 2^r) before retry r
    return sum(min(20.0, 0.5 * 2 ** r) for r in range(retries))


@pytest.mark.usefixtures("tools_on_paper")
def test_trino_catalog_retries_within_a_minute(tmp_path, monkeypatch):
    from perfkit.lab.trino import CACHE_CATALOG, TrinoServer

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    config = TrinoServer(tmp_path, LabPorts()).config()
    for catalog in ("catalog/hive.properties", f"catalog/{CACHE_CATALOG}.properties"):
        assert config[catalog]["s3.retry-mode"] == "LEGACY"
        assert config[catalog]["s3.max-error-retries"] == "7"
    assert worst_sdk_wait(7) == 51.5 <= 60 < worst_sdk_wait(8) == 71.5
    assert worst_sdk_wait(10) == 111.5  # Trino's default: nearly two minutes per request
