"""Engines behind a HiveServer2 endpoint, through PyHive: real Hive, and the Spark Thrift Server (spark_thrift.py)."""
from __future__ import annotations

import logging
import re
import time
from contextlib import contextmanager
from dataclasses import replace

from perfkit.accounting import s3a_statistics
from perfkit.accounting.hiveserver2_jmx import HiveServer2S3A
from perfkit.engines import DATABASE, Engine, QueryTimeout, close_quietly, hive_ddl
from perfkit.errors import ServiceError, root_cause
from perfkit.storages import client_of
from perfkit.storages.base import HDFS_CLIENT, S3_CLIENT

TASK_FAILED = re.compile(r"return code -?\d+ from \S+Task")
POLL_S = 0.01  # with a time limit the statement runs asynchronously and is polled this often


# thrift logs "Could not connect to any of [...]" (a traceback for an unknown host) before it raises;
# Python's last-resort handler prints that on stderr, ahead of perfkit's own message with the fix
THRIFT_LOGGER = "thrift.transport.TSocket"


@contextmanager
def _quiet(logger_name: str):
    logger = logging.getLogger(logger_name)
    was, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = was


class QueryError(Exception):
    """A statement HiveServer2 refused, with its message and without the Java stack."""


def _server_message(err) -> str:
    status = getattr(err.args[0], "status", None) if err.args else None
    return root_cause(getattr(status, "errorMessage", None) or str(err), 500)


class HiveServer2Engine(Engine):
    """A HiveServer2 endpoint: subclasses say where it is and what runs behind it."""

    service = "?"  # the lab service that serves it
    endpoint_name = "HiveServer2"

    def __init__(self, profile):
        super().__init__(profile)
        self.conn = None

    def address(self) -> tuple[str, int]:
        raise NotImplementedError

    def settings(self) -> str:
        """The profile settings that say where the endpoint is, for messages."""
        raise NotImplementedError

    def open(self) -> None:
        from pyhive import hive

        host, port = self.address()
        try:
            with _quiet(THRIFT_LOGGER):
                self.conn = hive.connect(host, port=port, username=self.profile.hive_user, auth="NONE")
        except Exception as err:  # noqa: BLE001 - thrift raises transport errors of several types
            fix = self.profile.provider.fix(self.service, f"check {self.settings()} in the profile")
            why = getattr(err, "inner", None) or err  # thrift keeps the socket error (refused, unknown host) inside
            raise ServiceError(f"{self.endpoint_name} at {host}:{port}",
                               f"not reachable ({type(err).__name__}: {root_cause(why)})", fix) from None

    def execute(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        from pyhive.exc import OperationalError

        cursor = self.conn.cursor()
        try:
            if timeout_s:
                self._wait(cursor, sql, timeout_s)
            else:
                cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        except OperationalError as err:
            raise QueryError(self.with_task_logs(_server_message(err))) from None
        except QueryError as err:
            raise QueryError(self.with_task_logs(str(err))) from None
        finally:
            cursor.close()

    def with_task_logs(self, message: str) -> str:
        """The message, and where to read the cause when it is only a failed task's return code."""
        return message

    @staticmethod
    def _wait(cursor, sql: str, timeout_s: float) -> None:
        """Run asynchronously and poll: the thrift connection cannot be used from a second thread."""
        from TCLIService.ttypes import TOperationState

        running = (TOperationState.INITIALIZED_STATE, TOperationState.PENDING_STATE, TOperationState.RUNNING_STATE)
        deadline = time.monotonic() + timeout_s
        cursor.execute(sql, async_=True)
        while (status := cursor.poll()).operationState in running:
            if time.monotonic() > deadline:
                cursor.cancel()
                raise QueryTimeout(timeout_s)
            time.sleep(POLL_S)
        if time.monotonic() > deadline:  # the server may answer only when done: past the limit all the same
            raise QueryTimeout(timeout_s)
        if status.operationState != TOperationState.FINISHED_STATE:
            # the status holds the failure's cause; fetching would only say "Expected states: [...], but found ERROR"
            state = TOperationState._VALUES_TO_NAMES.get(status.operationState, "?").removesuffix("_STATE")
            raise QueryError(root_cause(status.errorMessage or f"the statement ended in state {state}", 500))

    def create_table_sql(self, table, location, file_format, columns, properties, partitioning=None) -> str:
        return hive_ddl(table, location, file_format, columns, partitioning, properties=properties)

    def server_version(self) -> str:
        """The version the server reports ("4.0.1 r<git id>" from Hive and from Spark), or "?"."""
        try:
            return str(self.execute("SELECT version()")[0][0]).split()[0]
        except Exception:  # noqa: BLE001 - not every HiveServer2 has version()
            return "?"

    def setting(self, name: str) -> str:
        """A server-side setting's value (`SET name` answers "name=value")."""
        try:
            return str(self.execute(f"SET {name}")[0][0]).partition("=")[2] or "?"
        except Exception:  # noqa: BLE001 - a server may refuse SET
            return "?"

    def close(self) -> None:
        self.conn = close_quietly(self.conn)


# Hive's S3 requests on YARN: its tasks' S3A statistics stay in their containers; the MapReduce job's file-system
# counters (bytes by scheme, no request types) would need its JobHistory server
TASKS_ELSEWHERE = ("not counted: Hive's tasks run in YARN containers, and perfkit reads only HiveServer2's own S3A "
                   "statistics (the S3 server's count is the run's)")


class HiveEngine(HiveServer2Engine):
    """Real Hive: HiveQL compiled into MapReduce (or Tez) jobs by HiveServer2."""

    name = "hive"
    service = "hiveserver2"

    def __init__(self, profile):
        super().__init__(profile)
        self.s3a: HiveServer2S3A | None = None  # HiveServer2's S3A statistics, where they are the queries' own
        self.execution: tuple[str, str] | None = None  # runs_where(), asked once per connection

    def open(self) -> None:
        super().open()
        p = self.profile
        self.execution = self.runs_where()
        if p.s3_scheme == "s3a" and self.execution[1] == "local":  # tasks read S3 in HiveServer2's JVM, by S3A
            self.s3a = HiveServer2S3A(f"http://{p.hive_host}:{p.hive_webui_port}", p.s3_bucket,
                                      p.hadoop_metrics_period_s)

    def runs_where(self) -> tuple[str, str]:
        """What executes the queries (mr, tez) and where (local: inside HiveServer2's JVM; yarn)."""
        runner = self.setting("hive.execution.engine")
        where = self.setting("tez.local.mode" if runner == "tez" else "mapreduce.framework.name")
        return runner, {"true": "local", "false": "yarn"}.get(where, where)

    def s3_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """Throttled and retried S3 requests, from HiveServer2's S3A statistics (io_counters says where)."""
        found = self._s3a_statistics(storage)
        return None if found is None else s3a_statistics.fault_counters(found)

    def io_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """S3 requests by type and bytes from the S3A statistics of HiveServer2's JVM, where the local tasks run:
        every S3 request of the session's queries (planning included). None where they would not say it: S3 not
        read through S3A (EMRFS), tasks in YARN containers, a run on HDFS (HiveServer2 shows no HDFS client counts)
        or through a tier. A web UI that does not answer raises: the run's engine side is missing, with why."""
        if client_of(storage) != HDFS_CLIENT and self.execution is not None and self.execution[1] != "local":
            return TASKS_ELSEWHERE  # a blank that says why
        found = self._s3a_statistics(storage)
        return None if found is None else s3a_statistics.io_counters(found)

    def _s3a_statistics(self, storage: str | None) -> dict[str, float] | None:
        if self.s3a is None or (storage is not None and client_of(storage) != S3_CLIENT):
            return None
        return self.s3a.read()

    def io_source(self) -> str:
        return "HiveServer2's S3A statistics (its JMX; the local tasks run in its JVM)"

    def address(self) -> tuple[str, int]:
        return self.profile.hive_host, self.profile.hive_port

    def settings(self) -> str:
        return "hive_host/hive_port"

    def add_partitions_sql(self, table, location, partitioning) -> list[str]:
        """ADD PARTITION for each partition found, but Hive refuses to name its partition of nulls in DDL ("Partition
        value contains a reserved substring"): MSCK REPAIR TABLE finds that one in its folder."""
        nulls = [p for p in partitioning.partitions if None in p.values]  # None: the partition of nulls
        if not nulls:
            return super().add_partitions_sql(table, location, partitioning)
        others = replace(partitioning, partitions=tuple(p for p in partitioning.partitions if p not in nulls))
        named = super().add_partitions_sql(table, location, others) if others.partitions else []
        return [*named, f"MSCK REPAIR TABLE {DATABASE}.{table}"]

    def with_task_logs(self, message: str) -> str:
        # "FAILED: Execution Error, return code 2 from ...MapRedTask": the task's own error is only in the logs
        if not TASK_FAILED.search(message):
            return message
        return f"{message} (the task's cause is in {self.profile.provider.task_logs()})"

    def versions(self) -> dict[str, str]:
        # "Hive 4.0.1 (mr, local)": what executes the queries, and where (local mode in the lab, yarn on a cluster)
        runner, where = self.execution or self.runs_where()
        if runner == "mr" and where == "yarn" and self.setting("mapreduce.job.ubertask.enable") == "true":
            where += ", small jobs in uber mode"  # their tasks inside the job's ApplicationMaster: it changes times
        return {self.name: f"Hive {self.server_version()} ({runner}, {where})"}
