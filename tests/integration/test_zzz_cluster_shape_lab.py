"""The lab's cluster shape (perfkit.lab.shape), started once for this module and stopped after it: the taxi queries
through Spark 3.5.6 (EMR 7.13's) on YARN and Hive on YARN, on HDFS and on S3; their answers equal Spark 4.3.0's in
local mode; the executors' S3 requests equal the S3 server's, and their bytes of a full scan the table's; the
DataNodes say how local the reads were; `lab down` leaves no process.

It runs after the one-process lab is down (lab_lifecycle, and its name sorts after test_zz_lab_down.py): both shapes
use the lab's default ports. Its lab lives in a home of its own."""
from __future__ import annotations

import ast
import re
import subprocess

import nbformat
import papermill
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
# and what they need: HDFS, S3 and its network's proxy, YARN, the metastore, Livy
SERVICES = ["hiveserver2", "emr-notebooks"]
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
    on_yarn = _spark_356_queries("--engines", "spark,hive", *OPTIONS)
    local = QueryComparison(load_profile("lab"), engines=["spark"], rows=20_000, files=2, runs=1, warmup=0)
    return on_yarn, local.run(progress=False).to_frame()


OPTIONS = ["--rows", "20000", "--files", "2", "--runs", "1", "--warmup", "0"]


def _spark_356_queries(*options: str):
    """`perfkit queries --profile lab-cluster OPTIONS` in Spark 3.5.6's Python (EMR 7.13's Spark, the shape's): its
    records as a frame."""
    command, environment = cluster_spark.perfkit_command("queries", "--profile", "lab-cluster", *options)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=environment)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    saved = re.search(r"^results: (\S+\.jsonl)$", done.stdout, re.M)
    return records_frame(read_result_file(saved.group(1)))


@pytest.fixture(scope="module")
def full_scan(cluster, runs, tmp_path_factory):
    """Every column of every row, through Spark on YARN: what the executors read is the table."""
    suite = tmp_path_factory.mktemp("scan")
    (suite / "all.sql").write_text("SELECT * FROM {table}")
    return _measured(_spark_356_queries("--engines", "spark", "--suite", str(suite), *OPTIONS))


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
    # YARN places the two executors where it has room: both on one node, or one on each
    executors = re.fullmatch(r"2 \((\S+):\d+, (\S+):\d+\), 1 core and 1g each", spark["executors"])
    assert executors and set(executors.groups()) <= {"127.0.0.2", "127.0.0.3"}, spark["executors"]
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


def test_the_executors_count_of_a_full_scan_is_the_tables_bytes_on_both_storages(full_scan):
    """Within 5%, as the one-process lab's check (test_io_accounting_lab): the S3 server logs no bytes for a GET it
    streams, so the table's own size is the independent count."""
    assert sorted(full_scan["storage"]) == ["hdfs", "s3"] and full_scan["ok"].all()
    for r in full_scan.itertuples():
        table_bytes = r.config["dataset"]["bytes"]
        read = r.io["engine"][f"{r.storage}_bytes_read"]
        assert read == pytest.approx(table_bytes, rel=0.05), (r.storage, read, table_bytes)
        assert r.config["versions"]["spark"] == "Spark 3.5.6 (yarn)"


def test_the_datanodes_say_how_much_of_what_they_sent_went_to_a_reader_on_their_node(runs):
    on_yarn, local = runs
    locality = hdfs_locality(on_yarn)
    assert set(locality) == {"spark", "hive"}
    for engine, (near, sent) in locality.items():
        assert 0 <= near <= sent and sent > 0, (engine, near, sent)
    near, sent = hdfs_locality(local)["spark"]
    assert near == 0  # in local mode the reader is perfkit's process, on the master's address: on no node


@pytest.fixture(scope="module")
def emr_kernel(cluster, runs, tmp_path_factory):
    """A notebook run by papermill on sparkmagic's pysparkkernel, through the lab's Livy, after the taxi tables exist:
    each cell runs in a Livy session whose Spark 3.5.6 driver has its executors on YARN."""
    from perfkit.lab import sparkmagic_kernel

    folder = tmp_path_factory.mktemp("emr-kernel")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in (
        "sc.master, spark.version, sc.applicationId",
        "sorted({spark.table('perfkit.' + t.name).count() for t in spark.catalog.listTables('perfkit')})")])
    nb.metadata["kernelspec"] = {"name": "pysparkkernel", "display_name": "PySpark", "language": "python"}
    source = folder / "on_yarn.ipynb"
    nbformat.write(nb, source)
    with pytest.MonkeyPatch.context() as env:
        for name, value in sparkmagic_kernel.install(cluster.home, cluster.service("livy").url).items():
            env.setenv(name, value)
        executed = papermill.execute_notebook(str(source), str(folder / "out.ipynb"), kernel_name="pysparkkernel",
                                              progress_bar=False)
    return executed.cells


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def test_sparkmagics_kernel_runs_each_cell_in_a_livy_session_on_yarn(cluster, emr_kernel):
    assert "SparkSession available as 'spark'." in _printed(emr_kernel[0])
    master, version, application = ast.literal_eval(_printed(emr_kernel[0]).splitlines()[-1])
    assert (master, version) == ("yarn", "3.5.6") and application.startswith("application_")
    assert ast.literal_eval(_printed(emr_kernel[1])) == [20_000]  # every taxi table, through the metastore
    livy = cluster.service("livy")
    assert livy.health() == (True, "0 session(s)")  # sparkmagic ended its session with the run
    apps = cluster.service("yarn")._rest("apps")["apps"]["app"]
    session = next(a for a in apps if a["id"] == application)
    assert (session["name"], session["finalStatus"]) == ("livy-session-0", "SUCCEEDED")


def _notebook(path, *cells: str):
    """A notebook on EMR's kernel: a `parameters` cell (x = 1), then `cells`."""
    parameters = nbformat.v4.new_code_cell("x = 1")
    parameters.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[parameters, *(nbformat.v4.new_code_cell(c) for c in cells)])
    nb.metadata["kernelspec"] = {"name": "pysparkkernel", "display_name": "PySpark", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def emr_runs(cluster, emr_kernel, tmp_path_factory):
    """`perfkit emr run` (perfkit.emr.run_notebook), pointed at the lab's EMR stand-in by boto3's endpoint settings
    alone, on two notebooks of a workspace in the lab's bucket: one that counts on Spark, one whose cell fails."""
    import boto3

    from perfkit.emr import run_notebook
    from perfkit.lab.emr_notebooks_server import LAB_CLUSTER, WORKSPACES
    from perfkit.lab.settings import BUCKET, lab_credentials

    folder = tmp_path_factory.mktemp("workspace")
    notebooks = {"counts": _notebook(folder / "counts.ipynb", "spark.range(x * 10).count()"),
                 "fails": _notebook(folder / "fails.ipynb", "1 / 0", "print('after the failure')")}
    creds = lab_credentials(home=cluster.home)
    s3_url = cluster.service("s3").endpoint
    with pytest.MonkeyPatch.context() as env:
        for name, value in {"AWS_ENDPOINT_URL_EMR": cluster.service("emr-notebooks").url,
                            "AWS_ENDPOINT_URL_S3": s3_url, "AWS_DEFAULT_REGION": "us-east-1",
                            "AWS_ACCESS_KEY_ID": creds["access_key"],
                            "AWS_SECRET_ACCESS_KEY": creds["secret_key"]}.items():
            env.setenv(name, value)
        s3 = boto3.session.Session().client("s3")  # not boto3's default session: it keeps the keys it first found
        for path in notebooks.values():
            s3.put_object(Bucket=BUCKET, Key=f"{WORKSPACES}/e-LABWORKSPACE/{path.name}", Body=path.read_bytes())
        reports = tmp_path_factory.mktemp("emr-reports")
        return {name: run_notebook(path, "e-LABWORKSPACE", LAB_CLUSTER, {"x": 3}, relative_path=path.name,
                                   out_root=reports, progress=False)
                for name, path in notebooks.items()}


def test_perfkit_emr_run_executes_through_the_stand_in_on_sparkmagic_and_yarn(cluster, emr_runs):
    counts = emr_runs["counts"]
    assert (counts.status, counts.outcome) == ("FINISHED", "ok"), counts.error
    executed = nbformat.read(counts.notebook, as_version=4)
    assert executed.cells[0].source == ("**Executed by the lab's stand-in for EMR notebook executions, not by "
                                        "EMR.**")  # the report says first who ran it
    assert executed.metadata["perfkit"]["ran_on"]["cluster_id"] == "j-PERFKITLAB"
    injected = next(c for c in executed.cells if c.source.startswith("# Parameters"))
    assert "x = 3" in injected.source  # NotebookParams, after the parameters cell
    assert _printed(executed.cells[-1]).strip() == "30"  # counted by Spark on YARN, in the Livy session
    assert "(a stand-in, not EMR)" in (counts.notebook.parent.parent / "index.html").read_text()


def test_a_failing_cell_fails_the_execution_with_its_error_and_leaves_no_session(cluster, emr_runs):
    fails = emr_runs["fails"]
    assert (fails.status, fails.outcome) == ("FAILED", "failed")
    assert fails.error.startswith("FAILED: Execution has failed for cell") and "division by zero" in fails.error
    executed = nbformat.read(fails.notebook, as_version=4)
    assert executed.cells[-1].get("outputs") == []  # the cell after the failure never ran
    assert cluster.service("livy").health() == (True, "0 session(s)")


def test_lab_down_leaves_no_process_of_the_shape(cluster, runs, full_scan, emr_kernel, emr_runs):
    home = str(cluster.home)
    stopped = cluster.down()
    assert {"resourcemanager", "nodemanager0", "nodemanager1", "datanode", "datanode1", "datanode2", "livy",
            "emr-notebooks"} <= set(stopped)
    ours = {psutil.Process().pid, *(p.pid for p in psutil.Process().children(recursive=True))}  # this test's Spark
    left = [p.pid for p in psutil.process_iter(["cmdline"])
            if p.pid not in ours and any(home in part for part in p.info["cmdline"] or [])]
    assert left == []  # no daemon, and no YARN container (their folders are under the lab home)
    for field, port in cluster.service("yarn").ports_needed().items():
        for host in (HOST, "127.0.0.2", "127.0.0.3"):
            assert port_owner(host, port) is None, (field, host, port)
