"""Every S3 client of the lab follows the one S3 endpoint setting: with a counting proxy in front of the lab's S3
server (`perfkit lab up --s3-endpoint`), requests arrive through it from Spark, Trino, Hive, the Spark Thrift
Server, Alluxio's S3 mount, DistCp and the aws cli (each working alone while counted), and a profile that names the
proxy passes the S3 check."""
from __future__ import annotations

import socket
import subprocess
import threading

import pytest

from perfkit.engines import get_engine
from perfkit.config import load_profile
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.hadoop_cli import HadoopCli
from perfkit.health import storage_probes
from perfkit.protocol import Step
from perfkit.results import ResultSet
from perfkit.storage import check_s3
from perfkit.tiers import tier
from perfkit.tiers.alluxio_client import AlluxioClient
from perfkit.transfer import aws_env
from perfkit.transfer.cli import AwsCliMixin

pytestmark = pytest.mark.lab


class CountingProxy:
    """A TCP forwarder on loopback that counts the bytes clients send through it (requests)."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.sent = target, 0
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, peer = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=_pipe, args=(client, upstream, self.count), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    def count(self, data: bytes) -> None:
        with self.lock:
            self.sent += len(data)

    def close(self):
        self.server.close()


def _pipe(src, dst, seen=None):
    try:
        while data := src.recv(65536):
            if seen:
                seen(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_every_s3_client_of_the_lab_goes_through_the_profiles_endpoint(lab, tmp_path):
    direct = load_profile("lab")
    comparison = QueryComparison(direct, engines=["spark"], rows=20_000, files=2, runs=1, warmup=0, seed=23,
                                 queries=["q1"], query_timeout_s=120)
    comparison.prepare(progress=False)  # the data in place before the proxy goes in
    host, port = direct.s3_endpoint.removeprefix("http://").split(":")
    proxy = CountingProxy((host, int(port)))
    try:
        restarted = lab.send_s3_to(proxy.url)
        assert set(restarted) == {"hive-metastore", "hiveserver2", "spark-thrift", "trino", "alluxio"}
        profile = load_profile("lab")
        assert profile.s3_endpoint == proxy.url
        check_s3(profile)  # the profile and the lab's engines agree: no refusal
        comparison.profile = profile
        comparison.results = ResultSet("test_s3_endpoint", {}, folder=lab.home / "test-results")
        comparison.probes = storage_probes(profile, ["s3"])
        query = comparison.suite_queries[0]
        silent = []  # the clients that sent nothing through the proxy while they alone worked

        def through_proxy(client: str, work) -> None:
            before = proxy.sent
            work()
            if proxy.sent == before:
                silent.append(client)

        def query_on(name: str) -> None:
            with get_engine(name, profile) as engine:
                tables = comparison.register_tables(engine, comparison.tableset)
                comparison.measure(comparison.results, engine, query, Step("measured", 0, "s3"), tables["s3"])
            assert comparison.results.records[-1].ok, (name, comparison.results.records[-1].error)

        for name in ("spark", "trino", "hive", "spark-thrift"):
            through_proxy(name, lambda name=name: query_on(name))
        alluxio = tier("alluxio", profile)
        alluxio.empty()  # a cold read: the worker fetches from S3
        s3_key = f"{profile.s3_key('datasets', comparison.placed.name, 'orc')}/{sorted(comparison.placed.files)[0]}"
        through_proxy("alluxio", lambda: AlluxioClient(profile).fs(
            "copyToLocal", f"{alluxio.mount}/{s3_key}", str(tmp_path / "through-alluxio")))
        src = f"s3a://{profile.s3_bucket}/{s3_key}"
        through_proxy("distcp", lambda: HadoopCli(profile).run(
            "distcp", "-overwrite", src, profile.hdfs_url("test-s3-endpoint", "copy")))
        aws = AwsCliMixin()  # the command perfkit's aws-cli transfer methods run, with the profile's endpoint
        aws.profile = profile
        through_proxy("aws cli", lambda: subprocess.run(
            aws.aws("s3", "cp", f"s3://{profile.s3_bucket}/{s3_key}", str(tmp_path / "through-aws")),
            check=True, capture_output=True, env=aws_env(profile), timeout=120))
        assert not silent, f"no request through the proxy from {silent}"
    finally:
        lab.send_s3_to(None)
        proxy.close()
    assert load_profile("lab").s3_endpoint == direct.s3_endpoint
