"""Faults are faults: root causes in one line, health watched around runs, time limits, unequal results."""
import threading
import time

import pytest

from perfkit.config import load_profile
from perfkit.engines import QueryTimeout, run_with_deadline
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.query_report import result_mismatches
from perfkit.health import HealthWatch
from perfkit.storages.hdfs import hdfs_probe
from perfkit.protocol import Step
from perfkit.results import ResultSet
from perfkit.presenting import report_of

PY4J = """An error occurred while calling o125.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)
\tat org.apache.spark.scheduler.DAGScheduler.$anonfun$abortStage$2(DAGScheduler.scala:2834)
Caused by: org.apache.hadoop.fs.s3a.AWSClientIOException: getFileStatus on s3a://perfkit-lab/x: Unable to execute
\tat org.apache.hadoop.fs.s3a.S3AUtils.translateException(S3AUtils.java:215)
Caused by: java.net.ConnectException: Connection refused
\tat java.base/sun.nio.ch.Net.pollConnect(Native Method)
\t... 42 more
"""


def test_root_cause_is_the_innermost_java_cause_in_one_line():
    assert root_cause(PY4J) == "java.net.ConnectException: Connection refused"
    assert root_cause(RuntimeError(PY4J)) == "java.net.ConnectException: Connection refused"


def test_root_cause_without_a_cause_skips_frames_and_py4j_wrappers():
    text = ("An error occurred while calling o7.sql.\n: org.apache.spark.sql.AnalysisException: no table t\n"
            "\tat a.b(C.java:1)")
    assert root_cause(text) == "org.apache.spark.sql.AnalysisException: no table t"
    assert (root_cause("\tat x.y(Z.java:3)\ncp: `/a': No such file or directory")
            == "cp: `/a': No such file or directory")
    assert root_cause(ValueError()) == "ValueError"
    assert len(root_cause("x" * 1000, limit=50)) == 50


def _flaky(fail_after: float):
    """A probe that turns unhealthy `fail_after` seconds after its first call."""
    start = []

    def probe():
        start.append(time.monotonic()) if not start else None
        return "S3 down (Connection refused)" if time.monotonic() - start[0] >= fail_after else None
    return probe


def test_health_watch_catches_an_outage_during_the_run():
    with HealthWatch({"s3": _flaky(0.15)}, interval=0.05) as watch:
        assert watch.problem is None
        time.sleep(0.4)
    assert watch.problem.startswith("S3 down (Connection refused)") and "into the run" in watch.problem


def test_health_watch_catches_an_outage_that_healed_before_the_end():
    calls = []

    def probe():  # down only on the 2nd and 3rd probe: restarted before the run ends
        calls.append(1)
        return "down" if len(calls) in (2, 3) else None

    with HealthWatch({"s3": probe}, interval=0.05) as watch:
        time.sleep(0.4)
    assert watch.problem is not None and len(calls) >= 4


def test_health_watch_of_a_healthy_storage_and_before_the_run():
    with HealthWatch({"hdfs": lambda: None}, interval=0.02) as watch:
        time.sleep(0.1)
    assert watch.problem is None
    with HealthWatch({"hdfs": lambda: "HDFS not reachable"}, interval=0.02) as watch:
        pass
    assert watch.problem == "HDFS not reachable before the run"


def test_hdfs_probe_of_a_closed_port_names_the_address():
    from dataclasses import replace

    profile = replace(load_profile("lab"), webhdfs_url="http://127.0.0.1:1")
    assert hdfs_probe(profile)().startswith("HDFS at http://127.0.0.1:1 not reachable")


def test_deadline_cancels_and_raises_query_timeout():
    cancelled = threading.Event()

    def run():  # a "query" that ends only when cancelled, as Spark's collect() does
        if not cancelled.wait(5):
            return "finished"
        raise RuntimeError("Job 3 cancelled")

    t0 = time.monotonic()
    with pytest.raises(QueryTimeout, match="timed out after 0.1 s"):
        run_with_deadline(run, cancelled.set, 0.1)
    assert time.monotonic() - t0 < 2
    assert run_with_deadline(lambda: 42, cancelled.set, 5) == 42
    assert run_with_deadline(lambda: 43, None, None) == 43


class FakeEngine:
    name = "fake"

    def __init__(self, answers):
        self.answers = answers  # storage table -> rows or an exception

    def execute(self, sql, timeout_s=None):
        answer = self.answers[sql.split()[-1]]
        if isinstance(answer, Exception):
            raise answer
        return answer


def _comparison(tmp_path, probes):
    cmp = QueryComparison(load_profile("lab"), engines=["spark"], rows=10, files=1, runs=1, warmup=0,
                          queries=["q1"], health_interval_s=0.02)
    cmp.results = ResultSet("test", {"parameters": cmp.parameters()}, folder=tmp_path)
    cmp.probes = probes
    return cmp


class OneQuery:
    id = "q1"

    @staticmethod
    def for_tables(tables, engine=None):
        return f"SELECT * FROM {tables['table']}"


def test_a_run_during_an_outage_is_a_failure_not_a_sample(tmp_path):
    engine = FakeEngine({"t_s3": [(1,)]})
    slow = FakeEngine({"t_s3": [(1,)]})
    slow.execute = lambda sql, timeout_s=None: (time.sleep(0.3), [(1,)])[1]  # outage heals before it returns
    calls = []

    def s3():
        calls.append(1)
        return "S3 bucket 'perfkit-lab' not healthy (Connection refused)" if len(calls) == 2 else None

    cmp = _comparison(tmp_path, {"s3": s3})
    cmp.measure(cmp.results, slow, OneQuery, Step("measured", 0, "s3"), {"table": "t_s3"})
    record = cmp.results.records[-1]
    assert not record.ok and "Connection refused" in record.error and "into the run" in record.error
    cmp.probes = {"s3": lambda: None}
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 1, "s3"), {"table": "t_s3"})
    assert cmp.results.records[-1].ok


def test_a_storage_down_before_the_run_is_not_even_started(tmp_path):
    engine = FakeEngine({})  # would raise KeyError if it were asked anything
    cmp = _comparison(tmp_path, {"hdfs": lambda: "HDFS at http://127.0.0.1:9870 not reachable"})
    cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, "hdfs"), {"table": "t_hdfs"})
    record = cmp.results.records[-1]
    assert not record.ok and record.wall_s is None and record.error.endswith("before the run")


def test_engine_errors_are_recorded_with_their_root_cause(tmp_path):
    engine = FakeEngine({"t_s3": RuntimeError(PY4J)})
    cmp = _comparison(tmp_path, {"s3": lambda: None})
    cmp.measure(cmp.results, engine, OneQuery, Step("warmup", 0, "s3"), {"table": "t_s3"})
    assert cmp.results.records[-1].error == "java.net.ConnectException: Connection refused"


def test_results_that_differ_are_failures_and_fail_the_batch(tmp_path):
    engine = FakeEngine({"t_hdfs": [(1, "a")], "t_s3": [(1, "b")]})
    cmp = _comparison(tmp_path, {"hdfs": lambda: None, "s3": lambda: None})
    for where in ("hdfs", "s3"):
        cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, where), {"table": f"t_{where}"})
    assert all(r.ok for r in cmp.results.records)
    differ = result_mismatches(cmp.results.to_frame())
    assert list(differ["case"]) == ["q1"] and differ["error"][0].startswith("not comparable: results differ")
    assert "not comparable" in report_of(cmp).failures()["error"].iloc[-1]
    with pytest.raises(PerfkitError, match=r"fake/q1: not comparable: results differ \(hdfs \w+; s3 \w+\)"):
        report_of(cmp).raise_for_failures()


def test_equal_results_pass_the_batch(tmp_path):
    engine = FakeEngine({"t_hdfs": [(1, "a")], "t_s3": [(1, "a")]})
    cmp = _comparison(tmp_path, {"hdfs": lambda: None, "s3": lambda: None})
    for where in ("hdfs", "s3"):
        cmp.measure(cmp.results, engine, OneQuery, Step("measured", 0, where), {"table": f"t_{where}"})
    assert result_mismatches(cmp.results.to_frame()).empty and report_of(cmp).failures().empty
    report_of(cmp).raise_for_failures()


CHECKSUM = ("Query 20261124_010203_00004_abcde failed: Error opening Hive split hdfs://127.0.0.1:9000/perfkit/datasets/"
            "taxi_1000000_8_42/orc/part-00003.orc (offset=0, length=4194304): " + "x" * 120 + ": Checksum error")


def test_a_long_cause_keeps_its_end_where_the_reason_is(tmp_path):
    """The end of a cause says what went wrong: shortened, a cause keeps its head and its tail."""
    short = root_cause(CHECKSUM, 200)
    assert len(short) == 200 and short.startswith("Query 20261124_010203_00004_abcde failed: Error opening Hive split")
    assert short.endswith("xxx: Checksum error") and " ... " in short
    assert root_cause(CHECKSUM, 2) == "or"  # no room for both ends: the end alone
    cmp = _comparison(tmp_path, {"s3": lambda: None})
    cmp.measure(cmp.results, FakeEngine({"t_s3": RuntimeError(CHECKSUM)}), OneQuery, Step("measured", 0, "s3"),
                {"table": "t_s3"})
    with pytest.raises(PerfkitError, match=r"1 query run failed \(fake: Query 20261124_\S+ failed: Error opening .*"
                                           r" \.\.\. x+: Checksum error\); the records are in "):
        cmp.raise_for_failures()


def test_query_timeout_must_be_positive():
    with pytest.raises(PerfkitError, match="query_timeout_s=0: give a number of seconds > 0"):
        QueryComparison(load_profile("lab"), engines=["spark"], query_timeout_s=0)


def test_read_jobs_during_an_hdfs_outage_are_failures(tmp_path, monkeypatch):
    from dataclasses import replace

    from perfkit.experiments import nfs_vs_hdfs_reads as reads

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    profile = replace(load_profile("lab"), webhdfs_url="http://127.0.0.1:1")  # nothing listens: HDFS is down
    jobs_ran = []
    monkeypatch.setattr(reads, "run_jobs", lambda *a: jobs_ran.append(a) or [])
    cmp = reads.ReadComparison(profile, methods=["webhdfs"], protocols=["large-file"], jobs=2)
    results = cmp.run(progress=False)
    assert not jobs_ran, "no job starts while the storage it reads is down"
    assert [r.ok for r in results.records] == [False, False]
    assert all(r.error.startswith("HDFS at http://127.0.0.1:1 not reachable") for r in results.records)
    with pytest.raises(PerfkitError, match=r"2 read jobs failed \(webhdfs: HDFS at http://127.0.0.1:1 not reachable"):
        cmp.raise_for_failures()


def test_deadline_repeats_the_cancel_until_the_statement_stops():
    cancels = []
    stopped = threading.Event()

    def cancel():  # the first cancel comes before the work is submitted and does nothing
        cancels.append(time.monotonic())
        if len(cancels) == 3:
            stopped.set()

    def run():
        if not stopped.wait(5):
            return "finished"
        raise RuntimeError("Job 7 cancelled")

    with pytest.raises(QueryTimeout):
        run_with_deadline(run, cancel, 0.05, every_s=0.02)
    assert len(cancels) == 3


def test_hdfs_probe_asks_the_files_datanode_and_sees_a_frozen_one(monkeypatch):
    """A fake NameNode and DataNode: the NameNode answers; the DataNode answers until it hangs, as a SIGSTOPped one
    does. The file's DataNodes are looked up once (a lookup is a block lookup the NameNode counts), not per probe."""
    import http.server
    import json
    from dataclasses import replace

    from perfkit import health

    monkeypatch.setattr(health, "PROBE_TIMEOUT_S", 1.0)
    asked, frozen = [], threading.Event()

    class DataNode(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(("datanode", self.path))
            if frozen.is_set():
                time.sleep(2)  # longer than the probe waits
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"beans": []}')

        def log_message(self, *args):
            pass

    datanode = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DataNode)

    class NameNode(DataNode):
        def do_GET(self):
            asked.append(("namenode", self.path))
            located = [{"locations": [{"ipAddr": "127.0.0.1", "infoPort": datanode.server_port}]}]
            body = {"LocatedBlocks": {"locatedBlocks": located}} if "GET_BLOCK_LOCATIONS" in self.path else {}
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

    namenode = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NameNode)
    for server in (namenode, datanode):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        profile = replace(load_profile("lab"), webhdfs_url=f"http://127.0.0.1:{namenode.server_port}")
        probe = hdfs_probe(profile, "/perfkit/datasets/x/part-0.orc")
        assert [probe(), probe(), probe()] == [None, None, None]
        lookups = [path for who, path in asked if "GET_BLOCK_LOCATIONS" in path]
        assert lookups == ["/webhdfs/v1/perfkit/datasets/x/part-0.orc?op=GET_BLOCK_LOCATIONS&offset=0&length=1&"
                           f"user.name={profile.hdfs_user}"]
        assert [path for who, path in asked if who == "datanode"] == [
            "/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo"] * 3
        frozen.set()
        assert hdfs_probe(profile)() is None  # the NameNode alone looks fine
        reason = probe()
        assert reason.startswith(f"HDFS at {profile.webhdfs_url} cannot read /perfkit/datasets/x/part-0.orc: its "
                                 f"DataNode at http://127.0.0.1:{datanode.server_port} does not answer (")
    finally:
        namenode.shutdown()
        datanode.shutdown()


def test_nfs_probe_of_a_server_that_does_not_answer(tmp_path, monkeypatch):
    import socket
    from dataclasses import replace

    from perfkit import health
    from perfkit.storages.mounted import nfs_probe

    monkeypatch.setattr(health, "PROBE_TIMEOUT_S", 1.0)
    listener = socket.socket()  # accepts connections (the kernel does) but never answers, as a frozen server
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        profile = replace(load_profile("lab"), nfs_url=f"nfs://127.0.0.1/?nfsport={port}&mountport={port}")
        reason = nfs_probe(profile)()
        assert reason is not None and reason.startswith("NFS at nfs://127.0.0.1/")
        assert nfs_probe(replace(profile, nfs_url=""))() is None  # no NFS server in this profile: nothing to ask
    finally:
        listener.close()


def test_a_trino_that_dies_mid_query_is_named_with_its_fix_not_the_failed_cancel():
    import dataclasses
    import socket

    import requests

    from perfkit.engines.trino import TrinoEngine
    from perfkit.errors import ServiceError

    with socket.socket() as s:  # a port nothing listens on: the coordinator is gone
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class Cursor:
        def execute(self, sql):
            raise requests.exceptions.ConnectionError("HTTPConnectionPool(host='127.0.0.1'): Max retries exceeded "
                                                      "with url: /v1/statement (Connection refused)")

        def close(self):
            raise Exception("failed to cancel query: Max retries exceeded")

    engine = TrinoEngine(dataclasses.replace(load_profile("lab"), trino_port=port))
    engine.conn = type("Conn", (), {"cursor": lambda self: Cursor()})()
    engine.time_limit_s = 30
    with pytest.raises(ServiceError) as caught:
        engine.execute("SELECT 1", timeout_s=30)
    assert str(caught.value) == (f"Trino at 127.0.0.1:{port}: is not answering (Connection refused). "
                                 "Fix: start it with `perfkit lab up trino`")


def test_a_run_that_got_its_answer_needs_no_probe_after_it_nor_before_the_next():
    calls = []
    probe = lambda: calls.append(1)  # noqa: E731 - healthy: returns None
    with HealthWatch({"s3": probe}, interval=5) as watch:
        watch.answered()
    with HealthWatch({"s3": probe}, interval=5) as watch:  # back to back: the answer stands for its first probe
        pass
    assert len(calls) == 1 + 1 and watch.problem is None  # the first run's before, the second's after (no answer)


def test_a_storage_healthy_a_few_seconds_ago_is_not_probed_again_before_the_next_run(monkeypatch):
    """Runs interleaved across storages: the other storage's run sits between two runs on one."""
    from perfkit import health

    clock = [1000.0]
    monkeypatch.setattr(health.time, "monotonic", lambda: clock[0])
    calls = []
    probe = lambda: calls.append(clock[0])  # noqa: E731 - healthy: returns None
    with HealthWatch({"s3": probe}, interval=1) as watch:
        watch.answered()
    clock[0] += health.RECENT_S - 0.5  # past the probe interval, within the recent window: the answer stands
    with HealthWatch({"s3": probe}, interval=1) as watch:
        watch.answered()
    clock[0] += health.RECENT_S + 0.5  # longer ago: asked again
    with HealthWatch({"s3": probe}, interval=1) as watch:
        watch.answered()
    assert calls == [1000.0, 1000.0 + 2 * health.RECENT_S]
