"""The lab's cluster shape (perfkit.lab.shape), started once for this module and stopped after it: the taxi queries
through Spark on YARN and Hive on YARN, on HDFS and on S3; their answers equal Spark's in local mode; the executors'
S3 requests equal the S3 server's; the DataNodes say how local the reads were; `lab down` leaves no process.

It runs after the one-process lab is down (lab_lifecycle, and its name sorts after test_zz_lab_down.py): both shapes
use the lab's default ports. Its lab lives in a home of its own."""
from __future__ import annotations

import re
import subprocess

import psutil
import pytest

from perfkit.accounting.table import EXACT, hdfs_locality
from perfkit.config import load_profile
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.findings import where
from perfkit.results import read_result_file, records_frame
from perfkit.lab import Lab, cluster_spark
from perfkit.lab.process import port_owner
from perfkit.lab.settings import HOST
from perfkit.lab.shape import CLUSTER, shape_named

pytestmark = pytest.mark.lab_lifecycle
SERVICES = ["hiveserver2"]  # and what it needs: HDFS, S3 and its network's proxy, YARN, the metastore
NODES = {"127.0.0.2", "127.0.0.3", "127.0.0.4"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    home = tmp_path_factory.mktemp("cluster-lab")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PERFKIT_LAB_HOME", str(home))
        env.setenv("PERFKIT_RESULTS", str(tmp_path_factory.mktemp("cluster-results")))
        lab = Lab()
        try:
            rows = lab.up(SERVICES, shape=shape_named(CLUSTER))
            assert all(r.healthy for r in rows), [(r.service, r.detail) for r in rows if not r.healthy]
            yield lab
        finally:
            lab.down()


@pytest.fixture(scope="module")
def runs(cluster):
    """The taxi queries through Spark and Hive on the cluster shape, from a process of their own as a user runs them
    (`perfkit queries` in Spark 3.5.6's Python, EMR 7.13's Spark: what the cluster shape runs); then Spark 4.3.0 in
    local mode here, on the same files. The records of both, as frames."""
    command, environment = cluster_spark.perfkit_command("queries", "--profile", "lab-cluster", "--engines",
                                                         "spark,hive", *OPTIONS)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=environment)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    saved = re.search(r"^results: (\S+\.jsonl)$", done.stdout, re.M)
    on_yarn = records_frame(read_result_file(saved.group(1)))
    local = QueryComparison(load_profile("lab"), engines=["spark"], rows=20_000, files=2, runs=1, warmup=0)
    return on_yarn, local.run(progress=False).to_frame()


OPTIONS = ["--rows", "20000", "--files", "2", "--runs", "1", "--warmup", "0"]


def _measured(frame):
    return frame[frame["phase"] == "measured"]


def test_the_shape_puts_each_node_on_its_own_address(cluster):
    hdfs, yarn = cluster.service("hdfs"), cluster.service("yarn")
    assert {a.split(":")[0] for name, a in hdfs.addresses().items() if name != "namenode"} == NODES
    assert hdfs.health() == (True, "3 live DataNodes") and yarn.health() == (True, "2 NodeManagers running")
    for service in cluster.select(SERVICES):  # nothing of the shape listens beyond loopback
        for pid in filter(None, service.pids().values()):
            for conn in psutil.Process(pid).net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    assert conn.laddr.ip.removeprefix("::ffff:").startswith("127."), (service.name, conn.laddr)


def _answers(frame, engine) -> dict:
    return {(r.case, r.storage): r.result_hash for r in _measured(frame).itertuples() if r.subject == engine}


def test_spark_and_hive_on_yarn_answer_as_spark_in_local_mode_on_both_storages(runs):
    on_yarn, local = runs
    measured = _measured(on_yarn)
    assert len(measured) == 2 * 2 * 4 and measured["ok"].all(), measured[~measured["ok"]][["subject", "case", "error"]]
    expected = _answers(local, "spark")
    assert len(expected) == 8 and None not in expected.values()
    assert _answers(on_yarn, "spark") == expected and _answers(on_yarn, "hive") == expected
    versions = on_yarn["config"].iloc[0]["versions"]
    assert versions["spark"] == "Spark 3.5.6 (yarn)" and versions["hive"] == "Hive 4.0.1 (mr, yarn)"
    assert versions["pyspark"] == "3.5.6"  # EMR 7.13's Spark on YARN, and the lab's own locally: the same answers
    assert local["config"].iloc[0]["versions"]["spark"] == "Spark 4.3.0 (local[2])"


def test_the_records_say_where_the_runs_ran(runs):
    on_yarn, local = runs
    config = on_yarn["config"].iloc[0]
    cluster, spark = config["cluster"], config["placement"]["spark"]
    assert cluster["shape"] == "cluster" and cluster["replication"] == "2"
    assert {a.split(":")[0] for a in cluster["datanodes"].split(", ")} == NODES
    assert spark["master"] == "yarn" and spark["application"].startswith("application_")
    assert spark["executors"].startswith("2 (127.0.0.2:") and "127.0.0.3:" in spark["executors"]
    assert "cluster" not in local["config"].iloc[0]  # the one-process profile claims no cluster
    conditions = where(load_profile("lab-cluster"), None, config)
    assert "YARN NodeManagers 127.0.0.2:8041, 127.0.0.3:8051" in conditions and spark["application"] in conditions


def test_the_executors_count_the_s3_requests_the_server_saw_on_every_run(runs):
    on_yarn, _ = runs
    spark = [r for r in _measured(on_yarn).itertuples() if r.subject == "spark"]
    on_s3 = [r for r in spark if r.storage == "s3"]
    assert on_s3 and all("perfkit's Spark plugin" in r.io["sources"]["engine"] for r in on_s3)
    for r in on_s3:
        server, engine = r.io["server"], r.io["engine"]
        assert r.io["attributable"] and server["s3_get"] > 0 and engine["s3_bytes_read"] > 0, (r.case, r.io)
        assert {n: server.get(n, 0) for n in EXACT} == {n: engine.get(n, 0) for n in EXACT}, f"{r.case}: {r.io}"
    for r in (r for r in spark if r.storage == "hdfs"):
        # the executors' HDFS client read what the DataNodes sent, less the checksums and packet headers they add
        sent, read = r.io["server"]["hdfs_bytes_read"], r.io["engine"]["hdfs_bytes_read"]
        assert 0.8 * sent <= read <= sent, (r.case, r.io)


def test_the_datanodes_say_how_much_of_what_they_sent_went_to_a_reader_on_their_node(runs):
    on_yarn, local = runs
    locality = hdfs_locality(on_yarn)
    assert set(locality) == {"spark", "hive"}
    for engine, (near, sent) in locality.items():
        assert 0 <= near <= sent and sent > 0, (engine, near, sent)
    near, sent = hdfs_locality(local)["spark"]
    assert near == 0  # in local mode the reader is perfkit's process, on the master's address: on no node


def test_lab_down_leaves_no_process_of_the_shape(cluster, runs):
    home = str(cluster.home)
    stopped = cluster.down()
    assert {"resourcemanager", "nodemanager0", "nodemanager1", "datanode", "datanode1", "datanode2"} <= set(stopped)
    ours = {psutil.Process().pid, *(p.pid for p in psutil.Process().children(recursive=True))}  # this test's Spark
    left = [p.pid for p in psutil.process_iter(["cmdline"])
            if p.pid not in ours and any(home in part for part in p.info["cmdline"] or [])]
    assert left == []  # no daemon, and no YARN container (their folders are under the lab home)
    for field, port in cluster.service("yarn").ports_needed().items():
        for host in (HOST, "127.0.0.2", "127.0.0.3"):
            assert port_owner(host, port) is None, (field, host, port)
