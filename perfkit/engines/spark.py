"""Spark SQL in a PySpark session: local in the lab, YARN on a cluster."""
from __future__ import annotations

import contextlib
import logging

from perfkit.config import SECRET_NAME
from perfkit.partitions import Partitioning, quoted
from perfkit.engines import DATABASE, OWNER_PROPERTY, SETTLE_S, Engine, run_with_deadline, sql_properties
from perfkit import interrupts
from perfkit.accounting import counters, s3a_statistics
from perfkit.errors import PerfkitError, ServiceError, root_cause
from perfkit.storages import client_of, hadoop_scheme_of
from perfkit.storages.base import HDFS_CLIENT
from perfkit.waiting import WaitTimeout, poll_until


JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# Hadoop's per-scheme file-system statistics of HDFS's client, in this JVM (local mode: the executors' too)
HDFS_CLIENT_COUNTERS = {"hdfs_bytes_read": "bytesRead", "hdfs_bytes_written": "bytesWritten"}


class SparkEngine(Engine):
    name = "spark"

    def __init__(self, profile):
        super().__init__(profile)
        self.spark = None
        self.spark_version = "?"
        self.hadoop_secrets: dict[str, str] = {}
        # the JVM objects whose counters a run's snapshots read, found once per session: each py4j call is a round
        # trip, and a run pays two snapshots
        self._s3a_fs = self._tree_map = self._tracker = None
        self._statistics: dict = {}  # Hadoop's storage statistics by file system scheme (storage_statistics)
        self._plugin = None  # the plugin's class in the driver's JVM, once the session runs with it
        self._with_plugin = False  # whether the session was configured with it (conf())
        self.plugin_problem: str | None = None  # why the executors' I/O is not counted, where they run apart

    def conf(self) -> dict[str, str]:
        from perfkit.engines.spark_settings import driver_log_conf, hive_session_conf
        from perfkit.s3_retries import s3a_retry_conf

        conf = {"spark.app.name": "perfkit", "spark.master": self.profile.spark_master,
                "spark.sql.session.timeZone": "UTC"}
        conf.update(self.profile.provider.spark_conf(self.profile))  # jars, keys and metastore of where it runs
        # S3A's retries bounded by the run's time limit (perfkit.s3_retries). Hadoop caches a FileSystem per bucket
        # in the JVM: a later session in the same Python process keeps the first session's settings
        conf.update({f"spark.hadoop.{k}": v for k, v in s3a_retry_conf(self.query_timeout_s).items()})
        # the driver's log4j output (Java stacks of failed tasks) goes to a log file, not the terminal or a report
        logs = driver_log_conf()
        java_options = " ".join(filter(None, [conf.get(JAVA_OPTIONS), logs.pop(JAVA_OPTIONS)]))
        conf = {**conf, **logs, JAVA_OPTIONS: java_options, **hive_session_conf(), **self.profile.spark_conf}
        conf.update(self._plugin_conf(conf))
        # S3 keys go on the Hadoop configuration once the session runs: every spark.* setting
        # becomes a spark-submit argument, visible to any user in `ps`
        self.hadoop_secrets = {k.removeprefix("spark.hadoop."): conf.pop(k) for k in list(conf)
                               if k.startswith("spark.hadoop.") and SECRET_NAME.search(k)}
        return conf

    def _plugin_conf(self, conf: dict[str, str]) -> dict[str, str]:
        """Where executors run in JVMs of their own (not local mode), perfkit's Spark plugin, which sends the driver
        their storage counters; without a JDK to build it, their I/O is not counted and each run says why."""
        from perfkit.engines import spark_plugin

        self.plugin_problem, self._with_plugin = None, False
        if str(self.profile.spark_master).startswith("local"):
            return {}
        try:
            jar = spark_plugin.plugin_jar()
        except PerfkitError as err:
            self.plugin_problem = f"not counted: the executors' counters need perfkit's Spark plugin ({err})"
            return {}
        if not spark_plugin.loadable_in_this_jvm():
            self.plugin_problem = ("not counted: this Python process started Spark's JVM before (a local session), "
                                   "and a running JVM does not take the plugin's jar into its class path: run the "
                                   "profile in a new process or kernel")
            return {}
        self._with_plugin = True
        bucket = self.profile.s3_bucket if self.profile.s3_scheme == "s3a" else None
        return {**spark_plugin.plugin_conf(bucket),
                "spark.jars": ",".join(filter(None, [conf.get("spark.jars"), str(jar)]))}

    def check(self) -> None:
        """The session starts in this process (not started here: seconds); from outside it needs the metastore, and
        where it runs its executors (the provider says: YARN's ResourceManager)."""
        self.profile.provider.check_spark(self.profile)
        if self.profile.metastore_uri:
            from perfkit.engines.metastore import check_metastore

            check_metastore(self.profile)

    def open(self) -> None:
        import os

        from perfkit.engines.spark_install import import_pyspark

        import_pyspark()  # the installed one, or the cluster's through SPARK_HOME
        from pyspark.sql import SparkSession

        # py4j logs a traceback of its own when a call is interrupted (Ctrl-C, SIGTERM; the session's start too),
        # partly through the root logger; perfkit reports the interruption itself
        logging.getLogger("py4j").setLevel(logging.CRITICAL)
        if _from_py4j not in logging.getLogger().filters:
            logging.getLogger().addFilter(_from_py4j)
        for name, value in self.profile.provider.spark_environment().items():
            os.environ.setdefault(name, value)

        builder = SparkSession.builder
        for key, value in self.conf().items():
            builder = builder.config(key, value)
        self._sigint = interrupts.sigint_handler()  # pyspark installs its own; close() puts this one back
        try:
            self.spark = builder.getOrCreate()
        except Exception as err:  # noqa: BLE001 - py4j/JVM start failures have many types
            raise ServiceError(f"spark ({self.profile.spark_master})", f"session did not start: {root_cause(err)}",
                               "check Java 17+ and the profile's spark_master") from None
        hadoop = self.spark.sparkContext._jsc.hadoopConfiguration()
        for key, value in self.hadoop_secrets.items():
            hadoop.set(key, value)
        self.spark.sparkContext.setLogLevel("ERROR")
        self.spark_version = self.spark.version

    def execute(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        try:
            try:
                return run_with_deadline(lambda: [tuple(row) for row in self.spark.sql(sql).collect()],
                                         self.spark.sparkContext.cancelAllJobs, timeout_s)
            except Exception as err:
                if interrupts.asked():  # the signal's KeyboardInterrupt, turned into a py4j error on the way
                    raise KeyboardInterrupt(interrupts.asked()) from err
                raise
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: stop the jobs too (as pyspark's own Ctrl-C handler does)
            with contextlib.suppress(Exception):
                self.spark.sparkContext.cancelAllJobs()
            raise

    def create_table_sql(self, table, location, file_format, columns, properties, partitioning=None) -> str:
        return spark_ddl(table, location, file_format, columns, partitioning, properties=properties)

    def versions(self) -> dict[str, str]:
        return {self.name: f"Spark {self.spark_version} ({self.profile.spark_master})"}

    def placement(self) -> dict[str, str]:
        """Spark's master; on a cluster manager also its application and its executors as they registered (host,
        cores; memory as asked): what ran the tasks."""
        if self.spark is None:
            return {}
        sc = self.spark.sparkContext
        found = {"master": sc.master}
        if sc.master.startswith("local"):
            return found
        conf = sc.getConf()
        hosts = self._registered_executors(conf)
        cores = conf.get("spark.executor.cores", "1")
        found.update({"application": sc.applicationId,
                      "executors": f"{len(hosts)} ({', '.join(hosts) or 'none registered'}), "
                                   f"{cores} core{'' if cores == '1' else 's'} and "
                                   f"{conf.get('spark.executor.memory', '1g')} each"})
        return found

    def conditions(self) -> dict:
        """Its executors as Spark's scheduler knows them now (host:port; the driver apart), on a cluster manager: one
        that died with its node, or was removed, is gone from the list (perfkit.experiments.conditions). {} in local
        mode (the driver runs the tasks) or before the session opened."""
        if self.spark is None or self.spark.sparkContext.master.startswith("local"):
            return {}
        sc = self.spark.sparkContext
        if self._tracker is None:  # kept: each py4j call is a round trip
            self._tracker = sc._jsc.sc().statusTracker()
        driver = sc.getConf().get("spark.driver.host", "")
        return {"spark_executors": sorted(f"{e.host()}:{e.port()}" for e in self._tracker.getExecutorInfos()
                                          if e.host() != driver)}

    def _registered_executors(self, conf) -> list[str]:
        """The executors' host:port as they registered. Asked right after the session opens, YARN may not have
        started them yet: with a fixed number of executors this waits, as Spark's scheduler does before its first
        job, until they have all registered or spark.scheduler.maxRegisteredResourcesWaitingTime passed."""
        tracker, driver = self.spark.sparkContext._jsc.sc().statusTracker(), conf.get("spark.driver.host", "")
        expected = 0 if conf.get("spark.dynamicAllocation.enabled", "false") == "true" else int(
            conf.get("spark.executor.instances", "0"))
        registered: list[str] = []

        def all_registered() -> bool:
            registered[:] = sorted(f"{e.host()}:{e.port()}" for e in tracker.getExecutorInfos() if e.host() != driver)
            return len(registered) >= expected

        try:
            poll_until(all_registered, _seconds(conf.get("spark.scheduler.maxRegisteredResourcesWaitingTime", "30s")),
                       interval_s=0.2, what="the executors to register")
        except WaitTimeout:
            pass  # the record then says how many had registered
        except Exception:  # noqa: BLE001 - py4j errors of any kind: the placement is then unknown, not wrong
            return []
        return registered

    def s3_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """S3A's statistics of the bucket's file system (IOStatistics counters: store_io_throttled counts the
        throttled tries S3A and the SDK under it saw, store_io_retry the other retries). None where they would not
        say what the queries did: no session, a bucket not read through S3A (EMRFS's s3://), or executors in JVMs of
        their own (not local mode: the driver's file system only lists)."""
        counters = self._s3a_counters()
        return None if counters is None else s3a_statistics.fault_counters(counters)

    def _s3a_counters(self) -> dict[str, int] | None:
        """The IOStatistics counters of the bucket's S3A file system, or None (see s3_counters)."""
        p = self.profile
        if not self._counts_the_tasks() or p.s3_scheme != "s3a":
            return None
        try:
            if self._s3a_fs is None:
                jvm = self.spark.sparkContext._jvm
                conf = self.spark.sparkContext._jsc.hadoopConfiguration()
                self._s3a_fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(f"s3a://{p.s3_bucket}/"),
                                                                       conf)
                self._tree_map = jvm.java.util.TreeMap
            # the map copied in the JVM and read as one text: a py4j round trip per counter took 5-7 ms a snapshot
            # (S3A's map of counters is computed on each get and has no text of its own)
            found = java_counters(self._tree_map(self._s3a_fs.getIOStatistics().counters()).toString())
            # on YARN the driver only lists; the executors read (their sum, through the plugin)
            return counters.total(found, self._executor_counters("s3a."))
        except Exception:  # noqa: BLE001 - py4j errors of any kind: not counted, the run itself goes on
            return None

    def io_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """S3A's request and byte counters of the bucket's file system, and HDFS's client byte counters: what this
        session asked of each storage so far; None where they would not say what the queries did (see s3_counters).
        A run on HDFS reads no S3A counters, and one on S3 or a tier no HDFS ones (`storage`; both when not said): each
        read is a round trip to the JVM, and a run pays two snapshots."""
        found: dict[str, int] = {}
        client = client_of(storage)
        if client != HDFS_CLIENT:
            s3a = self._s3a_counters()
            if s3a is None:
                return None
            found.update(s3a_statistics.io_counters(s3a))
        elif not self._counts_the_tasks():
            return self.plugin_problem
        if storage is None or client == HDFS_CLIENT:
            found.update(self._hdfs_counters())
        if (scheme := hadoop_scheme_of(storage)) and self._driver_runs_the_tasks():  # executors' own: not read
            found["tier_bytes_read"] = self._file_system_bytes_read(scheme)
        return found

    def _file_system_bytes_read(self, scheme: str) -> int:
        """The bytes this JVM's Hadoop file systems of `scheme` read so far (0 before the first is made)."""
        found = self._storage_statistics(scheme)
        return 0 if found is None else int(found.getLong("bytesRead") or 0)

    def _storage_statistics(self, scheme: str):
        """Hadoop's global storage statistics of the file systems of `scheme` in the driver's JVM, or None before the
        first is made; kept once found (each look is a py4j round trip, and a run pays two snapshots)."""
        found = self._statistics.get(scheme)
        if found is None:
            jvm = self.spark.sparkContext._jvm
            found = jvm.org.apache.hadoop.fs.FileSystem.getGlobalStorageStatistics().get(scheme)
            if found is not None:
                self._statistics[scheme] = found
        return found

    def _driver_runs_the_tasks(self) -> bool:
        """A session in local mode: its tasks' storage clients are the driver's, whose counters perfkit reads
        (executors in JVMs of their own read through clients perfkit cannot see)."""
        return self.spark is not None and str(self.profile.spark_master).startswith("local")

    def _counts_the_tasks(self) -> bool:
        """Whether perfkit reads the counters of the clients the tasks read through: the driver's in local mode, the
        executors' through perfkit's plugin elsewhere."""
        return self._driver_runs_the_tasks() or self._executor_plugin() is not None

    def _executor_plugin(self):
        """The plugin's class in the driver's JVM (perfkit.engines.spark_plugin), or None without it."""
        plugin = getattr(self, "_plugin", None)  # (a stand-in session in the tests has none of these)
        if plugin is None and self.spark is not None and getattr(self, "_with_plugin", False):
            plugin = self._plugin = self.spark.sparkContext._jvm.perfkit.spark.IoStatsPlugin
        return plugin

    def _executor_counters(self, prefix: str) -> dict[str, int]:
        """The executors' summed counters whose names start with `prefix` (without it); empty in local mode."""
        plugin = self._executor_plugin()
        if plugin is None:
            return {}
        return {name.removeprefix(prefix): value for name, value in java_counters(plugin.totals()).items()
                if name.startswith(prefix)}

    def _hdfs_counters(self) -> dict[str, int]:
        statistics = self._storage_statistics("hdfs")  # there once the session has used HDFS
        found = {} if statistics is None else {
            name: int(statistics.getLong(key) or 0) for name, key in HDFS_CLIENT_COUNTERS.items()}
        executors = self._executor_counters("hdfs.")
        return counters.total(found, {name: executors.get(key, 0) for name, key in HDFS_CLIENT_COUNTERS.items()}
                              if executors else {})

    def settle(self, timeout_s: float = SETTLE_S) -> str | None:
        """Wait until no task of this session runs. A query can return while tasks it no longer needs still read:
        when adaptive execution finds a join's side empty (TPC-H q17 at small scales), it cancels the stages still
        scanning, and a cancelled task is not interrupted; it reads on, and its GETs belong to the run."""
        if self.spark is None:
            return None
        if self._tracker is None:  # kept: a run settles twice, and each py4j call is a round trip
            self._tracker = self.spark.sparkContext._jsc.sc().statusTracker()
        tracker = self._tracker

        def running_tasks() -> int:
            # the driver is among the executors (local mode's tasks run there); active jobs cover a stage not yet
            # scheduled
            return sum(e.numRunningTasks() for e in tracker.getExecutorInfos()) + len(tracker.getActiveJobIds())

        try:
            poll_until(lambda: running_tasks() == 0, timeout_s, interval_s=0.02, what="the session's running tasks")
        except WaitTimeout:
            return f"{running_tasks()} Spark tasks or jobs still running {timeout_s:g} s after the query returned"
        except Exception:  # noqa: BLE001 - a py4j failure: nothing to wait for that perfkit can see
            return None
        plugin = self._executor_plugin()
        if plugin is None:
            return None
        # an executor sends its counters as each task ends, apart from the task's own report: wait for the last
        try:
            poll_until(lambda: plugin.pending() == 0, timeout_s, interval_s=0.01, what="the executors' counters")
        except WaitTimeout:
            return (f"{plugin.pending()} ended Spark tasks' counters not received {timeout_s:g} s after the query "
                    "returned")
        except Exception:  # noqa: BLE001 - a py4j failure: the counters then say so when read
            return None
        return None

    def io_source(self) -> str:
        whose = " of the driver and its executors (perfkit's Spark plugin)" if self._executor_plugin() else ""
        return f"S3A IOStatistics ({self.input_stream()} input stream); HDFS client statistics{whose}"

    def input_stream(self) -> str:
        """Which S3A input stream this session reads with (its counters are exact with `classic`)."""
        if self.spark is None:
            return ""
        return str(self.spark.sparkContext._jsc.hadoopConfiguration().get("fs.s3a.input.stream.type") or "default")

    def close(self) -> None:
        spark, self.spark = self.spark, None
        # gone with the session and its file systems
        self._s3a_fs = self._tree_map = self._tracker = self._plugin = None
        self._statistics = {}
        if spark is not None:
            # after an interrupted call the gateway may be gone: a failed stop must not replace why the run ended
            with contextlib.suppress(Exception):
                # Hadoop caches a file system per bucket in the JVM, which outlives the session: the next session
                # in this process (another endpoint, other retry settings) would read through this one's
                spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
            with contextlib.suppress(Exception):
                spark.stop()
            # pyspark's Ctrl-C handler outlives its context: pyspark 3.5's then fails with AttributeError instead of
            # raising KeyboardInterrupt, and 4.x's cancels the jobs of a context that is gone
            interrupts.restore_sigint(getattr(self, "_sigint", interrupts.UNSET))


def java_counters(text: str) -> dict[str, int]:
    """A Java Map<String, Long>'s toString(), "{name=1, other=22}", as a dict (counter names hold no ',' or '=')."""
    body = text.strip().removeprefix("{").removesuffix("}")
    pairs = (pair.partition("=") for pair in body.split(",") if pair.strip())
    return {name.strip(): int(value) for name, _, value in pairs}


def _from_py4j(record) -> bool:
    """A logging filter: False for a record py4j's own code logged (by its path, whatever the logger)."""
    return "/py4j/" not in record.pathname.replace("\\", "/")


def spark_ddl(table: str, location: str, file_format: str, columns: list[tuple[str, str]],
              partitioning: Partitioning | None = None, *, properties: dict[str, str] | None = None) -> str:
    """A Spark data-source table over the files, marked as perfkit's own (`properties`, else the owner's mark
    alone); partitioned: its partition columns last, its partitions added after at their folders (Engine's
    add_partitions_sql: not discovered by a scan, the same partitions as every engine)."""
    # the schema is given, not inferred: a bad file then fails the query that reads it, not the setup
    cols = ", ".join(f"`{name}` {typ}" for name, typ in [*columns, *(partitioning.columns if partitioning else ())])
    parts = f" PARTITIONED BY ({', '.join(f'`{k}`' for k in partitioning.keys)})" if partitioning else ""
    return (f"CREATE TABLE {DATABASE}.{table} ({cols}) USING {file_format}{parts} LOCATION '{quoted(location)}' "
            f"TBLPROPERTIES ({sql_properties(properties or {OWNER_PROPERTY: 'true'})})")

def _seconds(duration: str) -> float:
    """A Spark time setting ("30s", "500ms", "2min", or bare seconds) in seconds."""
    number = duration.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = duration[len(number):] or "s"
    return float(number) * {"ms": 0.001, "s": 1, "min": 60, "m": 60, "h": 3600}[unit]
