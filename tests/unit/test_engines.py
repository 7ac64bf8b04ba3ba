from decimal import Decimal
from types import SimpleNamespace

import pytest

from perfkit.config import load_profile
from perfkit.engines import REGISTRY, Engine, engine_class, hive_ddl, result_hash, stable_number
from perfkit.errors import PerfkitError, ServiceError
from perfkit.suites import load_suite


def test_unknown_engine_is_named_with_the_choices():
    with pytest.raises(PerfkitError, match="unknown engine 'presto': choose from hive, spark, spark-thrift, trino"):
        engine_class("presto")


def test_registry_loads_each_engine_lazily():
    for name in REGISTRY:
        assert engine_class(name).name == name


def test_result_hash_ignores_row_order_and_float_noise():
    a = [("yellow", 3, 1.2345678901234), ("green", 2, 0.1)]
    b = [("green", 2, 0.1 + 1e-15), ("yellow", 3, 1.2345678901234001)]
    assert result_hash(a) == result_hash(b)
    assert result_hash(a) != result_hash([("yellow", 4, 1.2345678901234), ("green", 2, 0.1)])
    assert result_hash([(Decimal("2.5"),)]) == result_hash([(2.5,)])


def test_hive_ddl_is_an_external_table_over_the_location_marked_as_perfkits():
    create = hive_ddl("t_s3", "s3a://b/p", "orc", [("a", "bigint"), ("b", "string")])
    assert create == ("CREATE EXTERNAL TABLE perfkit.t_s3 (`a` bigint, `b` string) STORED AS ORC "
                      "LOCATION 's3a://b/p' TBLPROPERTIES ('perfkit.created'='true')")


class _Catalog(Engine):
    """An engine whose catalog is a dict: table -> properties."""

    name = "catalog"

    def __init__(self, tables):
        self.tables, self.statements = tables, []

    def open(self):
        pass

    def create_table_sql(self, table, *args):
        return f"CREATE TABLE perfkit.{table}"

    def execute(self, sql, timeout_s=None):
        self.statements.append(sql)
        if sql.startswith("SHOW TABLES IN perfkit"):
            return [("perfkit", name, False) for name in self.tables]
        if sql.startswith("SHOW TBLPROPERTIES perfkit."):
            return list(self.tables[sql.rsplit(".", 1)[1]].items())
        return []


def test_perfkit_drops_its_own_table_and_refuses_anyone_elses():
    engine = _Catalog({"taxi_orc_hdfs": {"perfkit.created": "true"}, "mine": {"transient_lastDdlTime": "1"}})
    engine.drop_own_table("taxi_orc_hdfs")
    assert engine.statements[0] == "CREATE DATABASE IF NOT EXISTS perfkit"
    assert engine.statements[-1] == "DROP TABLE perfkit.taxi_orc_hdfs"
    with pytest.raises(PerfkitError, match=r"table perfkit.mine exists and was not created by perfkit: perfkit "
                                           r"drops only its own tables. Fix: rename or drop that table yourself"):
        engine.drop_own_table("mine")
    assert "DROP TABLE perfkit.mine" not in engine.statements
    engine.drop_own_table("new_table")  # absent: nothing to drop
    assert not any(s.endswith("new_table") for s in engine.statements if s.startswith("DROP"))


def test_unreachable_hiveserver2_gives_one_clear_message():
    from dataclasses import replace

    engine = engine_class("hive")(replace(load_profile("lab"), hive_port=1))
    with pytest.raises(ServiceError, match=r"HiveServer2 at 127.0.0.1:1: not reachable .* "
                                           r"Fix: start it with `perfkit lab up hiveserver2`"):
        engine.open()


def test_taxi_suite_has_the_four_queries():
    queries = load_suite("taxi")
    assert [q.id for q in queries] == ["q1", "q2", "q3", "q4"]
    assert "GROUP BY cab_type" in queries[0].for_table("t")
    assert "ORDER BY trip_year, trips DESC" in queries[3].sql
    assert all("{table}" in q.sql for q in queries)


def test_unknown_query_and_suite_are_named():
    with pytest.raises(PerfkitError, match="unknown query q7 in suite 'taxi'"):
        load_suite("taxi", ["q1", "q7"])
    with pytest.raises(PerfkitError, match="unknown query suite 'tpcz'"):
        load_suite("tpcz")


def test_a_registry_takes_new_plugins_by_name():
    from perfkit.registry import Registry

    reg = Registry("widget", {"json": "json:JSONDecoder"})
    reg.register("ordered", "collections:OrderedDict")
    assert reg.load("ordered").__name__ == "OrderedDict" and list(reg) == ["json", "ordered"]
    with pytest.raises(PerfkitError, match="widget 'nope' needs nope, which is not installed"):
        Registry("widget", {"nope": "nope.module:Thing"}).load("nope")


@pytest.mark.usefixtures("tools_on_paper")
def test_spark_keeps_s3_keys_off_the_command_line(tmp_path, monkeypatch):
    from dataclasses import replace

    monkeypatch.setenv("PERFKIT_LOG_DIR", str(tmp_path))
    profile = replace(load_profile("emr", bucket="my-bucket"),
                      spark_conf={"spark.hadoop.fs.s3a.secret.key": "shh-" + "x" * 8, "spark.executor.memory": "2g"})
    engine = engine_class("spark")(profile)
    conf = engine.conf()  # what pyspark turns into spark-submit arguments
    assert "spark.hadoop.fs.s3a.secret.key" not in conf and conf["spark.executor.memory"] == "2g"
    assert engine.hadoop_secrets == {"fs.s3a.secret.key": "shh-" + "x" * 8}  # set after the session starts


@pytest.mark.usefixtures("tools_on_paper")
def test_spark_on_a_cluster_uses_the_metastore_the_profile_names(tmp_path, monkeypatch):
    from dataclasses import replace

    monkeypatch.setenv("PERFKIT_LOG_DIR", str(tmp_path))
    emr = load_profile("emr", bucket="my-bucket", master="m.internal")
    assert "spark.hadoop.hive.metastore.uris" not in engine_class("spark")(emr).conf()  # the cluster's own setting
    conf = engine_class("spark")(replace(emr, metastore_uri="thrift://hms.internal:9083")).conf()
    assert conf["spark.hadoop.hive.metastore.uris"] == "thrift://hms.internal:9083"
    assert conf["spark.sql.catalogImplementation"] == "hive"


def test_a_sum_whose_exact_value_ends_in_5_hashes_alike_from_either_side():
    # TPC-H q9's profit sums arrive as ...4434999998 from one engine and ...4435 from another
    assert result_hash([("BRAZIL", 152546.44349999998)]) == result_hash([("BRAZIL", 152546.4435)]) \
        == result_hash([("BRAZIL", 152546.44350000002)])
    assert result_hash([(0.1 + 0.2,)]) == result_hash([(0.3,)])
    assert result_hash([(-0.0,)]) == result_hash([(0.0,)])
    assert result_hash([(152546.444,)]) != result_hash([(152546.443,)])  # a real difference stays one
    assert stable_number(1234567891234.5) == "1.23456789e+12" and stable_number(float("nan")) == "nan"


def test_a_row_hashes_as_the_sha256_of_its_values_text_whatever_their_kind():
    import hashlib
    from datetime import date
    from decimal import Decimal

    import numpy as np

    row = (float("nan"), np.float64(1.5), 2.5, Decimal("0.1"), True, None, 7, "x", date(2024, 1, 2), 1234567891234.5)
    text = "\x1f".join(["nan", "1.5", "2.5", "0.1", "True", "None", "7", "x", "2024-01-02", "1.23456789e+12"])
    for _ in range(2):  # the second time, each number's text comes from what the first kept
        assert result_hash([row, (1,)]) == hashlib.sha256(f"1\n{text}".encode()).hexdigest()[:16]


def test_a_hive_statement_that_fails_while_polled_raises_the_servers_cause_not_the_fetch_error():
    from types import SimpleNamespace

    from TCLIService.ttypes import TOperationState

    from perfkit.engines.hive import HiveServer2Engine, QueryError

    class FailingCursor:  # the states HiveServer2 reports for a statement whose MapReduce job failed
        def __init__(self, states, message):
            self.states, self.message = list(states), message

        def execute(self, sql, async_=False):
            assert async_

        def poll(self):
            return SimpleNamespace(operationState=self.states.pop(0), errorMessage=self.message)

    cursor = FailingCursor([TOperationState.RUNNING_STATE, TOperationState.ERROR_STATE],
                           "Error while processing statement: FAILED: Execution Error, return code 2 from "
                           "org.apache.hadoop.hive.ql.exec.mr.MapRedTask")
    with pytest.raises(QueryError, match=r"^Error while processing statement: FAILED: Execution Error, return code 2"):
        HiveServer2Engine._wait(cursor, "SELECT 1", timeout_s=60)
    silent = FailingCursor([TOperationState.CANCELED_STATE], None)
    with pytest.raises(QueryError, match="^the statement ended in state CANCELED$"):
        HiveServer2Engine._wait(silent, "SELECT 1", timeout_s=60)


def test_a_failed_hive_task_says_where_its_cause_is_logged():
    from perfkit.lab.settings import lab_home

    failed = ("Error while compiling statement: FAILED: Execution Error, return code 2 from "
              "org.apache.hadoop.hive.ql.exec.mr.MapRedTask")
    on_lab = engine_class("hive")(load_profile("lab"))
    assert on_lab.with_task_logs(failed) == (f"{failed} (the task's cause is in "
                                             f"{lab_home() / 'logs' / 'hiveserver2.log'})")
    on_emr = engine_class("hive")(load_profile("emr", bucket="b"))
    assert on_emr.with_task_logs(failed).endswith("(the task's cause is in the job's task logs: "
                                                  "`yarn logs -applicationId ...` on the cluster)")
    refused = "Error while compiling statement: FAILED: SemanticException [Error 10011]: Invalid function count_if"
    assert on_lab.with_task_logs(refused) == refused  # the message is the cause already
    assert engine_class("spark-thrift")(load_profile("lab")).with_task_logs(failed) == failed


@pytest.mark.usefixtures("tools_on_paper")
def test_each_spark_session_gives_hive_its_own_session_id_so_hive_prints_none():
    from perfkit.config import load_profile as load
    from perfkit.engines.spark import SparkEngine

    ids = {SparkEngine(load("emr", bucket="b")).conf()["spark.hadoop.hive.session.id"] for _ in range(3)}
    assert len(ids) == 3 and all(len(i) == 36 for i in ids)


def test_what_py4j_itself_logs_is_kept_out_of_the_terminal_whatever_its_logger():
    import logging

    from perfkit.engines.spark import _from_py4j

    def record(path):
        return logging.LogRecord("root", logging.ERROR, path, 1038, "KeyboardInterrupt while sending command.",
                                 None, None)

    assert not _from_py4j(record("/v/lib/python3.11/site-packages/py4j/java_gateway.py"))
    assert _from_py4j(record("/work/perfkit/experiments/hdfs_vs_s3_queries.py"))


@pytest.mark.usefixtures("tools_on_paper")
def test_the_providers_driver_java_options_and_the_log_settings_are_both_kept(monkeypatch):
    from perfkit.config import load_profile as load
    from perfkit.engines.spark import SparkEngine

    cluster = load("emr", bucket="b")
    monkeypatch.setattr(type(cluster.provider), "spark_conf",
                        lambda self, profile: {"spark.driver.extraJavaOptions": "-Djava.io.tmpdir=/lab/tmp"})
    options = SparkEngine(cluster).conf()["spark.driver.extraJavaOptions"]
    assert options.startswith("-Djava.io.tmpdir=/lab/tmp -Dlog4j2.configurationFile=file:")


class _Tracker:
    """SparkStatusTracker's answers as a run's tasks end: running tasks per executor, then active jobs."""

    def __init__(self, running: list[int]):
        self.running = running

    def getExecutorInfos(self):
        n = self.running.pop(0) if len(self.running) > 1 else self.running[0]
        return [type("Info", (), {"numRunningTasks": lambda self, n=n: n})()]

    def getActiveJobIds(self):
        return []


def _spark_with(tracker):
    from types import SimpleNamespace

    from perfkit.engines.spark import SparkEngine

    engine = SparkEngine.__new__(SparkEngine)
    sc = SimpleNamespace(_jsc=SimpleNamespace(sc=lambda: SimpleNamespace(statusTracker=lambda: tracker)))
    engine.spark, engine._tracker = SimpleNamespace(sparkContext=sc), None
    return engine


def test_spark_settles_once_the_tasks_a_query_left_running_end():
    tracker = _Tracker([2, 1, 0])
    assert _spark_with(tracker).settle(timeout_s=5) is None and tracker.running == [0]


def test_spark_that_does_not_settle_says_what_still_runs():
    assert _spark_with(_Tracker([3])).settle(timeout_s=0.05) == \
        "3 Spark tasks or jobs still running 0.05 s after the query returned"


class _JvmCounters:
    """Spark's JVM-side counters as io_counters reads them, each read counted (a py4j round trip on a real session)."""

    def __init__(self):
        self.asked: list[str] = []

    def s3a(self):
        self.asked.append("s3a")
        return {"action_http_get_request": 4, "stream_read_total_bytes": 4096}

    def getLong(self, key):  # HDFS's client statistics
        self.asked.append(key)
        return {"bytesRead": 1000, "bytesWritten": 0}[key]


def _spark_counting(master: str = "local[2]"):
    import dataclasses
    from types import SimpleNamespace

    from perfkit.engines.spark import SparkEngine

    engine = SparkEngine(dataclasses.replace(load_profile("lab"), spark_master=master))
    jvm = _JvmCounters()
    engine.spark, engine._statistics = SimpleNamespace(), {"hdfs": jvm}
    engine._s3a_counters = jvm.s3a if master.startswith("local") else lambda: None
    return engine, jvm


def test_spark_reads_only_the_counters_of_the_storage_a_run_reads():
    engine, jvm = _spark_counting()
    on_hdfs = engine.io_counters("hdfs")
    assert on_hdfs == {"hdfs_bytes_read": 1000, "hdfs_bytes_written": 0} and "s3a" not in jvm.asked
    jvm.asked.clear()
    on_s3 = engine.io_counters("s3")
    assert (on_s3["s3_get"], on_s3["s3_bytes_read"]) == (4, 4096) and "hdfs_bytes_read" not in on_s3
    assert jvm.asked == ["s3a"]
    jvm.asked.clear()
    both = engine.io_counters()
    assert both == {**on_s3, **on_hdfs} and jvm.asked == ["s3a", "bytesRead", "bytesWritten"]


def test_spark_through_alluxio_counts_what_its_hadoop_client_read_in_this_jvm():
    from types import SimpleNamespace

    engine, jvm = _spark_counting()
    statistics = {}  # Hadoop's global storage statistics, by scheme: alluxio's once a read made one
    looks = []
    file_system = SimpleNamespace(getGlobalStorageStatistics=lambda: looks.append(1) or SimpleNamespace(
        get=statistics.get))
    engine.spark = SimpleNamespace(sparkContext=SimpleNamespace(_jvm=SimpleNamespace(org=SimpleNamespace(
        apache=SimpleNamespace(hadoop=SimpleNamespace(fs=SimpleNamespace(FileSystem=file_system)))))))
    assert engine.io_counters("alluxio")["tier_bytes_read"] == 0  # no alluxio:// file system made yet in this JVM
    statistics["alluxio"] = jvm
    through = engine.io_counters("alluxio")
    assert through["tier_bytes_read"] == 1000 and "hdfs_bytes_read" not in through
    assert all("tier_bytes_read" not in engine.io_counters(where) for where in ("trino-cache", "s3"))
    engine.io_counters("alluxio")
    assert len(looks) == 2  # the statistics kept once found: no look for them on each snapshot


def test_spark_with_executors_elsewhere_counts_nothing_on_either_storage():
    engine, jvm = _spark_counting("yarn")
    assert engine.io_counters("hdfs") is None and engine.io_counters("s3") is None and jvm.asked == []


class _Plugin:
    """perfkit's Spark plugin as the driver's JVM shows it: the executors' summed counters and what is pending."""

    def __init__(self, pending):
        self._pending = list(pending)

    def totals(self):
        return ("{hdfs.bytesRead=700, hdfs.bytesWritten=0, s3a.action_http_get_request=6, "
                "s3a.stream_read_total_bytes=512}")

    def pending(self):
        return self._pending.pop(0) if len(self._pending) > 1 else self._pending[0]


def test_spark_on_yarn_counts_the_driver_and_its_executors_through_the_plugin():
    engine, jvm = _spark_counting("yarn")
    engine._with_plugin, engine._plugin = True, _Plugin([0])
    driver = {"action_http_get_request": 1, "object_list_request": 2}  # the driver lists; the executors read
    engine._s3a_fs, engine._tree_map = (
        SimpleNamespace(getIOStatistics=lambda: SimpleNamespace(counters=lambda: driver)),
        lambda counters: SimpleNamespace(
            toString=lambda: "{" + ", ".join(f"{k}={v}" for k, v in counters.items()) + "}"))
    del engine._s3a_counters  # the engine's own reading, over the stand-in JVM objects
    engine.spark = SimpleNamespace(sparkContext=SimpleNamespace(_jsc=None))
    on_s3 = engine.io_counters("s3")
    assert (on_s3["s3_get"], on_s3["s3_list"], on_s3["s3_bytes_read"]) == (7, 2, 512)
    assert engine.io_counters("hdfs") == {"hdfs_bytes_read": 1700, "hdfs_bytes_written": 0}  # driver 1000 + 700


def test_spark_on_yarn_without_the_plugin_says_why_the_executors_are_not_counted():
    engine, _ = _spark_counting("yarn")
    engine.plugin_problem = "not counted: the executors' counters need perfkit's Spark plugin (no javac)"
    assert engine.io_counters("hdfs") == engine.plugin_problem


def test_spark_settles_once_every_ended_task_of_its_executors_has_reported():
    engine = _spark_with(_Tracker([0]))
    engine._with_plugin, engine._plugin = True, _Plugin([3, 1, 0])
    assert engine.settle(timeout_s=5) is None
    engine._plugin = _Plugin([2])
    assert engine.settle(timeout_s=0.05) == "2 ended Spark tasks' counters not received 0.05 s after the query returned"


def test_the_plugin_builds_once_against_the_sessions_own_spark(tmp_path, monkeypatch):
    import zipfile

    from perfkit.engines import spark_plugin

    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))
    jar = spark_plugin.plugin_jar()
    assert spark_plugin.plugin_jar() == jar and jar.parent == tmp_path / "spark-plugin"
    names = zipfile.ZipFile(jar).namelist()
    assert "perfkit/spark/IoStatsPlugin.class" in names and "perfkit/spark/IoStatsPlugin$Executor.class" in names
    with pytest.raises(PerfkitError, match=r"Spark's jars are not at .*nowhere/jars: set SPARK_HOME to the Spark"):
        spark_plugin.plugin_jar(tmp_path / "nowhere")


def test_spark_puts_back_the_ctrl_c_handler_pyspark_leaves_behind(monkeypatch):
    """pyspark's SparkContext installs a SIGINT handler that outlives it: 3.5's then raises AttributeError, not
    KeyboardInterrupt. The engine restores the handler it found."""
    import signal

    from pyspark.sql import SparkSession

    from perfkit.engines.spark import SparkEngine

    def left_by_pyspark(signum, frame):
        raise AttributeError("'NoneType' object has no attribute 'sc'")  # pyspark 3.5's, once its context stopped

    class Builder:
        def config(self, *args):
            return self

        def getOrCreate(self):
            signal.signal(signal.SIGINT, left_by_pyspark)
            return SimpleNamespace(version="3.5.6", stop=lambda: None, sparkContext=SimpleNamespace(
                _jsc=SimpleNamespace(hadoopConfiguration=lambda: SimpleNamespace(set=lambda k, v: None)),
                setLogLevel=lambda level: None))

    monkeypatch.setattr(SparkSession, "builder", Builder())
    engine = SparkEngine(load_profile("lab"))
    monkeypatch.setattr(engine, "conf", lambda: {})
    before = signal.getsignal(signal.SIGINT)
    engine.open()
    assert signal.getsignal(signal.SIGINT) is left_by_pyspark and engine.spark_version == "3.5.6"
    engine.close()
    assert signal.getsignal(signal.SIGINT) is before


def test_hive_on_yarn_says_why_its_s3_requests_are_not_counted():
    from perfkit.engines.hive import TASKS_ELSEWHERE, HiveEngine

    engine = HiveEngine(load_profile("lab"))
    engine.execution = ("mr", "yarn")
    assert engine.io_counters("s3") == TASKS_ELSEWHERE and "YARN containers" in TASKS_ELSEWHERE
    assert engine.io_counters("hdfs") is None  # as in local mode: HiveServer2 shows no HDFS client counts


def test_hive_says_where_its_jobs_run_and_uber_mode_when_it_is_set():
    from perfkit.engines.hive import HiveEngine

    class Answers(HiveEngine):  # HiveServer2's answers to SET, without a server
        def __init__(self, settings):
            self.settings, self.execution = settings, None

        def setting(self, name):
            return self.settings.get(name, "?")

        def server_version(self):
            return "4.0.1"

    yarn = {"hive.execution.engine": "mr", "mapreduce.framework.name": "yarn"}
    assert Answers({**yarn, "mapreduce.framework.name": "local"}).versions() == {"hive": "Hive 4.0.1 (mr, local)"}
    assert Answers(yarn).versions() == {"hive": "Hive 4.0.1 (mr, yarn)"}
    assert Answers({**yarn, "mapreduce.job.ubertask.enable": "true"}).versions() == {
        "hive": "Hive 4.0.1 (mr, yarn, small jobs in uber mode)"}
