"""The lab's cluster shape (perfkit.lab.shape), started once for this module and stopped after it: the taxi queries
through Spark 3.5.6 (EMR 7.13's) on YARN and Hive on YARN, on HDFS and on S3; their answers equal Spark 4.3.0's in
local mode; the executors' S3 requests equal the S3 server's, and their bytes of a full scan the table's; the
DataNodes say how local the reads were; every shipped notebook, run through the EMR stand-in, reports as completely
as it does here; `lab down` leaves no process.

Its lab lives in a home of its own, on ports of its own (PORT_SHIFT above the lab's defaults): `make test-cluster` runs
it beside a one-process lab that is up, or after `make test` stopped it."""
from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import fields
from pathlib import Path

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
from perfkit.lab.settings import HOST, LabPorts
from perfkit.lab.shape import CLUSTER, shape_named
from perfkit.network import PROFILES

pytestmark = pytest.mark.lab_lifecycle
# and what they need: HDFS, S3 and its network's proxy, YARN, the metastore, Livy; Trino and Alluxio for the cache tier
SERVICES = ["hiveserver2", "emr-notebooks", "trino", "alluxio"]
NODES = {"127.0.0.2", "127.0.0.3", "127.0.0.4"}
PORT_SHIFT = 100  # every port of the shape's lab: the default + 100, clear of the one-process lab's (9000-39999)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    home = tmp_path_factory.mktemp("cluster-lab")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PERFKIT_LAB_HOME", str(home))
        env.setenv("PERFKIT_RESULTS", str(tmp_path_factory.mktemp("cluster-results")))
        # its S3 network's lock too (s3_distance moves it): a run on a one-process lab beside it must not block that
        env.setenv("PERFKIT_LOCK_DIR", str(tmp_path_factory.mktemp("cluster-locks")))
        for port in fields(LabPorts):  # read by every perfkit process started from here, the lab's daemons too
            env.setenv(f"PERFKIT_LAB_PORT_{port.name.upper()}", str(port.default + PORT_SHIFT))
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
    """Every column of every row, through Spark on YARN: what the executors read is the table. Run as a user types it,
    from the project's own Python: the CLI runs it again on Spark 3.5.6's."""
    suite = tmp_path_factory.mktemp("scan")
    (suite / "all.sql").write_text("SELECT * FROM {table}")
    command = [sys.executable, "-m", "perfkit", "queries", "--profile", "lab-cluster", "--engines", "spark", "--suite",
               str(suite), *OPTIONS]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"profile lab-cluster: run on Spark 3.5.6's Python, {cluster_spark.python()}" in done.stderr
    saved = re.search(r"^results: (\S+\.jsonl)$", done.stdout, re.M)
    return _measured(records_frame(read_result_file(saved.group(1))))


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
    assert versions["spark"] == "Spark 3.5.6 (yarn)"
    assert versions["hive"] == "Hive 4.0.1 (mr, yarn, small jobs in uber mode)"  # the lab's setting, said
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
    first = LabPorts.from_env().nodemanager  # NodeManager i on port + 10 * i (the module's ports: 8141, 8151)
    assert f"YARN NodeManagers 127.0.0.2:{first}, 127.0.0.3:{first + 10}" in conditions, conditions
    assert spark["application"] in conditions


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


NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# every shipped notebook but one, small; compare_runs compares the two runs before it, s3_distance moves the lab's S3
# (put back after it). Not here: nfs_vs_hdfs_reads without the NFS server and the FUSE mount (this module starts
# neither), the matrix on the taxi suite (TPC-H's data comes from Trino's generator, minutes of Hive on YARN) and
# on Trino alone: Hive on YARN answers in the runs above, Spark on YARN through EMR in the queries report (in the
# matrix too, it was one more Spark application on YARN a side)
SMALL = {"hdfs_vs_s3_queries": {"profile": "lab-cluster", "engines": ["spark"], "rows": 20_000, "files": 2, "runs": 2,
                                "warmup": 0, "queries": ["q1", "q3"], "copy_methods": ["stream"]},
         "compare_runs": {},
         "st1_throughput_burst": {"profile": "lab-cluster", "files": 2, "file_mb": 16},
         "s3_to_hdfs_transfer": {"profile": "lab-cluster", "files": 2, "mean_mb": 1, "concurrency": [2],
                                 "methods": ["cli-sequential", "distcp", "stream"]},
         "nfs_vs_hdfs_reads": {"profile": "lab-cluster", "methods": ["hdfs-cli", "webhdfs", "gohdfs"], "jobs": 2,
                               "files_per_job": 1, "files": 2, "mean_mb": 1, "large_file_mb": 2},
         "engine_storage_matrix": {"profile": "lab-cluster", "engines": ["trino"], "suite": "taxi",
                                   "queries": ["q1", "q3"], "runs": 1},
         "cache_tier": {"profile": "lab-cluster", "engines": ["trino"], "rows": 20_000, "files": 2, "queries": ["q1"],
                        "copy_objects": 2, "copy_object_mb": 1, "promote_newest": 1, "payoff_rtt_ms": [0, 20],
                        "payoff_runs": 1},
         "s3_distance": {"profile": "lab-cluster", "engines": ["trino"], "rtt_ms": [0, 20], "per_connection_mb_s": [40],
                         "rows": 20_000, "files": 2, "runs": 2, "warmup": 0, "queries": ["q1"]}}


@contextlib.contextmanager
def _emr_client_settings(cluster):
    """boto3's endpoint settings to the lab's EMR stand-in and S3, with the lab's keys: all `perfkit emr run` needs."""
    from perfkit.lab.settings import lab_credentials

    creds = lab_credentials(home=cluster.home)
    with pytest.MonkeyPatch.context() as env:
        for name, value in {"AWS_ENDPOINT_URL_EMR": cluster.service("emr-notebooks").url,
                            "AWS_ENDPOINT_URL_S3": cluster.service("s3").endpoint, "AWS_DEFAULT_REGION": "us-east-1",
                            "AWS_ACCESS_KEY_ID": creds["access_key"],
                            "AWS_SECRET_ACCESS_KEY": creds["secret_key"]}.items():
            env.setenv(name, value)
        yield


def _to_workspace(path: Path) -> None:
    import boto3

    from perfkit.lab.emr_notebooks_server import WORKSPACES
    from perfkit.lab.settings import BUCKET

    s3 = boto3.session.Session().client("s3")  # not boto3's default session: it keeps the keys it first found
    s3.put_object(Bucket=BUCKET, Key=f"{WORKSPACES}/e-LABWORKSPACE/{path.name}", Body=path.read_bytes())


def _both_ways(cluster, name: str, reports: Path):
    """A shipped notebook, small, on the cluster shape two ways: `perfkit report` here (the profile's kernel: Spark
    3.5.6's Python) and `perfkit emr run` through the EMR stand-in (papermill on the python3 kernel the notebook
    declares: the master node's Python, which starts its SparkSession on YARN). The two executed notebooks."""
    from perfkit.emr import run_notebook
    from perfkit.lab.emr_notebooks_server import LAB_CLUSTER

    notebook, parameters = NOTEBOOKS / f"{name}.ipynb", SMALL[name]
    local = subprocess.run(
        [sys.executable, "-m", "perfkit", "report", str(notebook),
         *(f"-p{key}={json.dumps(value)}" for key, value in parameters.items())],
        capture_output=True, text=True, timeout=1200, env={**os.environ, "PERFKIT_REPORTS": str(reports)})
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    local_nb = Path(re.search(r"^report: (\S+)\.html$", local.stdout, re.M).group(1) + ".ipynb")
    with _emr_client_settings(cluster):
        _to_workspace(notebook)
        emr = run_notebook(notebook, "e-LABWORKSPACE", LAB_CLUSTER, parameters, relative_path=notebook.name,
                           out_root=reports, progress=False)
    assert (emr.status, emr.outcome) == ("FINISHED", "ok"), emr.error
    return nbformat.read(local_nb, as_version=4), nbformat.read(emr.notebook, as_version=4)


class BothWays(dict):
    """Each notebook of SMALL run both ways when first asked for: {name: (local, through EMR)}. A test of one notebook
    (`-k cache_tier`) runs only what it needs: compare_runs compares the queries' two runs, made just before it."""

    def __init__(self, cluster, reports: Path):
        super().__init__()
        self.cluster, self.reports = cluster, reports

    def __missing__(self, name: str):
        if name == "compare_runs" and list(self)[-1:] != ["hdfs_vs_s3_queries"]:
            self.pop("hdfs_vs_s3_queries", None)
            self["hdfs_vs_s3_queries"] = _both_ways(self.cluster, "hdfs_vs_s3_queries", self.reports)
        self[name] = _both_ways(self.cluster, name, self.reports)
        if name == "s3_distance":  # it leaves the lab's S3 at its last setting
            self.cluster.set_network(PROFILES["local"])
        return self[name]


@pytest.fixture(scope="module")
def reports_both_ways(cluster, tmp_path_factory):
    return BothWays(cluster, tmp_path_factory.mktemp("parity-reports"))


@pytest.mark.parametrize("name", SMALL)
def test_a_report_executed_through_emr_is_as_complete_as_the_local_one(reports_both_ways, name):
    from perfkit.report.outline import outline

    local, emr = reports_both_ways[name]
    assert emr.metadata["kernelspec"]["name"] == "python3"
    assert outline(emr) == outline(local)  # the same findings, tables (columns) and number of plots
    shown = outline(emr)
    assert shown.errors == () and shown.findings and shown.tables, shown


def test_the_queries_report_through_emr_ran_spark_356_on_yarn(reports_both_ways):
    from perfkit.findings import FINDINGS_MIME
    from perfkit.report.outline import outline

    _, emr = reports_both_ways["hdfs_vs_s3_queries"]
    shown = outline(emr)
    assert shown.plots >= 3 and len(shown.tables) >= 8, shown
    findings = next(o["data"][FINDINGS_MIME] for c in emr.cells if c.cell_type == "code"
                    for o in c.get("outputs", []) if FINDINGS_MIME in o.get("data", {}))
    said = findings["sentences"] + findings["undecided"]  # 2 runs a side: too few for a verdict, said why
    assert any(s.startswith("Spark 3.5.6 (yarn)") for s in said), findings  # EMR 7.13's Spark, on YARN
    assert "spark on yarn, application application_" in findings["conditions"]


@pytest.fixture(scope="module")
def interrupted(cluster, tmp_path_factory):
    """`perfkit emr run` of a notebook whose cell runs in a Livy session for minutes, interrupted (SIGINT, as Ctrl-C)
    once the statement runs: its exit, its output, and the execution's id."""
    from perfkit.lab.emr_notebooks_server import LAB_CLUSTER

    folder = tmp_path_factory.mktemp("interrupted")
    notebook = _notebook(folder / "sleeps.ipynb", "import time\ntime.sleep(600)")
    livy = cluster.service("livy")
    with _emr_client_settings(cluster):
        _to_workspace(notebook)
        run = subprocess.Popen([sys.executable, "-m", "perfkit", "emr", "run", str(notebook), "--editor-id",
                                "e-LABWORKSPACE", "--cluster", LAB_CLUSTER, "--relative-path", notebook.name],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=folder,
                               env={**os.environ, "PERFKIT_REPORTS": str(folder / "reports")},
                               # as from a terminal: a runner in the background may pass SIGINT down ignored
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            _wait_for(lambda: _busy_statements(livy) > 0, 300, "the sleeping statement to run in a Livy session")
            run.send_signal(signal.SIGINT)
            output = run.communicate(timeout=120)[0]
        finally:
            if run.poll() is None:
                run.kill()
    return run.returncode, output


def _busy_statements(livy) -> int:
    import json as json_

    with urllib.request.urlopen(f"{livy.url}/sessions", timeout=5) as answer:
        sessions = json_.load(answer)["sessions"]
    return sum(1 for s in sessions if s["state"] == "busy")


def _wait_for(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s"
        time.sleep(1)


def test_ctrl_c_on_perfkit_emr_run_stops_the_execution_and_its_livy_session(cluster, interrupted):
    import boto3

    returncode, output = interrupted
    assert returncode != 0 and "interrupted" in output.lower(), output[-2000:]
    execution_id = re.search(r"(ex-PERFKIT\d+)", output).group(1)
    with _emr_client_settings(cluster):
        emr = boto3.session.Session().client("emr")

        def status() -> str:
            return emr.describe_notebook_execution(NotebookExecutionId=execution_id)["NotebookExecution"]["Status"]

        _wait_for(lambda: status() not in ("STOP_PENDING", "STOPPING"), 120, "end of the stopping execution")
        assert status() == "STOPPED"
    livy = cluster.service("livy")
    _wait_for(lambda: livy.health() == (True, "0 session(s)"), 60, "end of the interrupted run's Livy session")
    apps = cluster.service("yarn")._rest("apps")["apps"]["app"]
    assert not [a["id"] for a in apps if a["state"] in ("NEW", "SUBMITTED", "ACCEPTED", "RUNNING")]


@pytest.fixture(scope="module")
def bootstrapped(cluster, tmp_path_factory):
    """A node's Python as EMR 7 has it (Spark 3.5.6's pyspark, no perfkit), perfkit's wheel installed into it by the
    script `perfkit emr bootstrap` prints; then a Livy session on that Python (spark.pyspark.python, as %%configure
    sets it) asked where perfkit and pyspark come from, in the driver and in executors on YARN."""
    folder = tmp_path_factory.mktemp("bootstrap")
    base = subprocess.run([str(cluster_spark.python()), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    node = folder / "node"
    subprocess.run([base, "-m", "venv", str(node)], check=True)
    python = node / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "pyspark==3.5.6"], check=True, timeout=600)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder),
                    str(cluster_spark.source_root())], check=True, timeout=600)
    wheel = next(folder.glob("perfkit-*.whl"))
    script = folder / "perfkit-bootstrap.sh"
    script.write_text(subprocess.run([sys.executable, "-m", "perfkit", "emr", "bootstrap"], capture_output=True,
                                     text=True, check=True).stdout)
    installed = subprocess.run(["bash", str(script), str(wheel)], capture_output=True, text=True, timeout=1200,
                               env={**os.environ, "PERFKIT_PYTHON": str(python)})
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    livy = cluster.service("livy").url
    session = _livy(f"{livy}/sessions", {"kind": "pyspark", "conf": {"spark.pyspark.python": str(python)}})
    try:
        _wait_for(lambda: _livy(f"{livy}/sessions/{session['id']}")["state"] in ("idle", "dead", "error"), 300,
                  "Livy session on the bootstrapped Python")
        statement = _livy(f"{livy}/sessions/{session['id']}/statements", {"code": (
            "import sys, perfkit, pyspark\n"
            "(sys.executable, sys.version_info[:2], perfkit.__file__, pyspark.__version__, sorted(set(sc.parallelize("
            "range(4), 4).map(lambda _: __import__('perfkit').__file__ + ' ' + __import__('sys').executable)"
            ".collect())))")})
        url = f"{livy}/sessions/{session['id']}/statements/{statement['id']}"
        _wait_for(lambda: _livy(url)["state"] == "available", 300, "answer from the bootstrapped session")
        output = _livy(url)["output"]
    finally:
        _livy(f"{livy}/sessions/{session['id']}", method="DELETE")
    return python, installed.stdout, output


def _livy(url: str, body: dict | None = None, method: str | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method or ("POST" if data else "GET"),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def test_the_bootstrap_script_installs_perfkit_where_livy_sessions_and_executors_import_it(bootstrapped):
    python, printed, output = bootstrapped
    assert output["status"] == "ok", output
    executable, version, driver_perfkit, pyspark_version, on_executors = ast.literal_eval(output["data"]["text/plain"])
    site = next((python.parent.parent / "lib").glob("python3*/site-packages"))
    assert executable == str(python) and driver_perfkit == str(site / "perfkit" / "__init__.py")
    assert pyspark_version == "3.5.6"  # the cluster's, untouched
    assert on_executors == [f"{driver_perfkit} {python}"]  # the executors on YARN run the same Python
    said = rf"perfkit 0\.1\.0 in {re.escape(str(python))} \(Python {version[0]}\.{version[1]}\.\d+\)"
    assert re.fullmatch(said, printed.strip()), printed
    # perfkit alone on a node: no Jupyter, and no aws CLI v1 whose `aws` would shadow the node's own
    found = subprocess.run([str(python), "-c", "import importlib.util as u; print([m for m in ('awscli', 'jupyterlab', "
                            "'papermill', 'duckdb') if u.find_spec(m)])"], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]" and not (python.parent / "aws").exists()


class LosingNodes(QueryComparison):
    """The taxi q1 on Trino over both storages; after its 2nd step a DataNode is stopped (SIGTERM, replication 2: HDFS
    still serves every block), after its 4th a NodeManager killed (SIGKILL): nodes lost in the middle of a run."""

    def attempt(self, step) -> None:
        super().attempt(step)
        self.steps_done = getattr(self, "steps_done", 0) + 1
        lab = Lab()
        if self.steps_done == 2:
            assert lab.service("hdfs").datanodes[1].stop()
        if self.steps_done == 4:
            os.kill(lab.service("yarn").nodemanagers[1].pid(), signal.SIGKILL)


@pytest.fixture(scope="module")
def lost_nodes(cluster):
    """The run that lost a DataNode and a NodeManager, and the two lost; the lab healed after (lab up)."""
    hdfs, yarn = cluster.service("hdfs"), cluster.service("yarn")
    datanode, nodemanager = hdfs.addresses()[hdfs.datanodes[1].name], yarn.node_id(1)
    run = LosingNodes(load_profile("lab-cluster"), engines=["trino"], rows=20_000, files=2, runs=3, warmup=1,
                      queries=["q1"], copy_methods=[])
    try:
        results = run.run(progress=False)
    finally:
        healed = cluster.up(["hdfs", "yarn"])
    assert all(r.healthy for r in healed), [(r.service, r.detail) for r in healed]
    return run, results, datanode, nodemanager


def test_a_datanode_and_a_nodemanager_lost_mid_run_are_on_the_runs_they_touched(lost_nodes):
    from perfkit.presenting import report_of

    run, results, datanode, nodemanager = lost_nodes
    assert all(r.ok for r in results.records)  # two replicas: HDFS served every block from the other one
    watched = results.config["conditions"]
    assert len(watched["start"]["datanodes"]) == 3 and len(watched["start"]["nodemanagers"]) == 2
    assert [(c["after_step"], c["what"]) for c in watched["changes"]] == [
        (2, [f"DataNode {datanode} lost (2 of 3 left)"]), (4, [f"NodeManager {nodemanager} lost (1 of 2 left)"])]
    marks = [(r.params.get("conditions_changed"), r.params.get("after_changes")) for r in results.records]
    assert marks == [(None, None), (f"DataNode {datanode} lost (2 of 3 left)", None), (None, 1),
                     (f"NodeManager {nodemanager} lost (1 of 2 left)", 1), (None, 2), (None, 2), (None, 2), (None, 2)]
    # before step 3 was timed, HDFS called the DataNode dead (20 s in the shape) and copied its blocks to the others
    # (the module's earlier tests leave files of one replica: a block of one on that DataNode is missing, and said)
    assert re.fullmatch(r"HDFS re-replicated the lost DataNode's blocks \d+ s after the loss \(called dead after \d+ "
                        r"s\), before the next step(?:; \d+ blocks? missing \(their only replica was on it\): reads "
                        r"of them fail)?", watched["changes"][0]["then"]), watched["changes"][0]
    assert "then" not in watched["changes"][1]  # a NodeManager lost: nothing for HDFS to do
    undecided = report_of(run).findings().undecided
    assert any(line.startswith(f"The cluster changed during the run: DataNode {datanode} lost (2 of 3 left) (seen "
                               f"after step 2; then HDFS re-replicated the lost DataNode's blocks ") and
               f"NodeManager {nodemanager} lost" in line for line in undecided), undecided


def test_lab_down_leaves_no_process_of_the_shape(cluster, runs, full_scan, emr_kernel, emr_runs,
                                                  reports_both_ways, interrupted, bootstrapped, lost_nodes):
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
