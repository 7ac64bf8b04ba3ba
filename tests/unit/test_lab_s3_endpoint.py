"""Where the lab's S3 clients send requests: one setting every engine, tool and tier is configured from, and a
profile that names another endpoint refused before it could measure another S3 than it records."""
from __future__ import annotations

import dataclasses
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit.storages import s3 as s3_storage
from perfkit.config import load_profile
from perfkit.errors import ServiceError
from perfkit.lab.alluxio import AlluxioServer
from perfkit.lab.settings import LabPorts, lab_s3_endpoint, set_lab_s3_endpoint
from perfkit.lab.spark_conf import lab_spark_conf
from perfkit.lab.trino import TrinoServer

PROXY = "http://127.0.0.1:18474"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "s"}')
    return tmp_path


def configured_endpoints(home) -> dict[str, str]:
    ports = LabPorts()
    return {"spark and the hive/spark-thrift JVMs": lab_spark_conf(ports, {"access_key": "", "secret_key": ""})[
                "spark.hadoop.fs.s3a.endpoint"],
            "trino": TrinoServer(home, ports).config()["catalog/hive.properties"]["s3.endpoint"],
            "alluxio": AlluxioServer(home, ports).site()["alluxio.underfs.s3.endpoint"],
            "the lab profile": load_profile("lab").s3_endpoint}


@pytest.mark.usefixtures("tools_on_paper")
def test_every_client_of_the_lab_follows_one_s3_endpoint_setting(home):
    assert set(configured_endpoints(home).values()) == {"http://127.0.0.1:7070"}  # the S3 server itself
    set_lab_s3_endpoint(PROXY, home)
    assert set(configured_endpoints(home).values()) == {PROXY}
    set_lab_s3_endpoint(None, home)
    assert lab_s3_endpoint(LabPorts(), home) == "http://127.0.0.1:7070"


@pytest.fixture
def answering_s3():
    """An S3 endpoint that answers every request 200 (a proxy in front of S3, as far as a HEAD of the bucket goes)."""
    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.mark.usefixtures("tools_on_paper")
def test_a_profile_whose_endpoint_the_labs_engines_do_not_use_is_refused_with_the_fix(home, tmp_path, answering_s3):
    near = tmp_path / "near.yml"
    near.write_text(f"base: lab\ns3_endpoint: {answering_s3}\n")
    profile = load_profile(str(near))
    with pytest.raises(ServiceError, match=(
            rf"the lab's engines, tools and Alluxio send S3 requests to http://127.0.0.1:7070, not to the profile's "
            rf"s3_endpoint {answering_s3}.*Fix: run `perfkit lab up --s3-endpoint {answering_s3}`")):
        s3_storage.check_s3(profile)
    spark = profile.provider.spark_conf(profile)
    assert spark["spark.hadoop.fs.s3a.endpoint"] == answering_s3  # perfkit's own Spark session follows the profile
    set_lab_s3_endpoint(answering_s3, home)  # `perfkit lab up --s3-endpoint` done: profile and engines agree
    s3_storage.check_s3(profile)


def test_a_cluster_profile_is_never_refused_for_its_endpoint():
    cluster = dataclasses.replace(load_profile("emr", bucket="b"), s3_endpoint=PROXY)
    assert cluster.provider.s3_clients_elsewhere(cluster) is None
