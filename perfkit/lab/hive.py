"""Real Hive: a Hive 4 HiveServer2 that runs its queries as MapReduce jobs on the shared metastore: in local mode
(inside HiveServer2's JVM), or on YARN in the cluster shape, each query's jobs an application of their own.

MapReduce rather than Tez: the lab's Hadoop jars already hold the local job runner (Tez needs four more jars and
its own settings), and in local mode both run every task inside HiveServer2's JVM, so Tez would change little here.
Tez local mode also works (see LAB-NOTES) if a comparison ever needs it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from perfkit.lab import alluxio, alluxio_dist, hive_jars, hs2, tools
from perfkit.lab.hdfs import site_xml, write_metrics_conf
from perfkit.lab.shape import current_shape, lab_replication
from perfkit.lab.metastore import HIVE_OPENS as OPENS
from perfkit.lab.metastore import LOG4J2, s3a_env, s3a_settings, warehouse
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options
from perfkit.lab.yarn import CONTAINER_HEAP, Yarn

HEAP = "-Xmx1536m"  # every local MapReduce task runs in this JVM (see site())
MAIN = "org.apache.hive.service.server.HiveServer2"


class HiveServer2(Service):
    name = "hiveserver2"
    needs = ("hive-metastore",)  # its tables, and through them HDFS and S3

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.yarn = Yarn(home, ports) if current_shape(home).yarn else None
        if self.yarn:
            self.needs = (*self.needs, Yarn.name)  # its MapReduce jobs run there
        self.root = home / "hive"
        self.conf_dir = self.root / "conf"
        self.staging_root = self.root / "mapred-staging"
        self.daemons = [Daemon(self.name, home, MAIN, ports={"hiveserver2": ports.hiveserver2,
                                                             "hiveserver2_http": ports.hiveserver2_http})]

    def addresses(self) -> dict[str, str]:
        return {self.name: f"{HOST}:{self.ports.hiveserver2} (web http://{HOST}:{self.ports.hiveserver2_http})"}

    def site(self) -> dict[str, object]:
        p, root = self.ports, self.root
        return {
            "hive.server2.thrift.bind.host": HOST,
            "hive.server2.thrift.port": p.hiveserver2,
            # its web UI for its JMX servlet: the S3A statistics of the JVM where the local tasks run
            "hive.server2.webui.host": HOST,
            "hive.server2.webui.port": p.hiveserver2_http,
            "hive.server2.authentication": "NONE",
            "hive.server2.enable.doAs": "false",
            "hive.metastore.uris": f"thrift://{HOST}:{p.metastore}",
            "hive.metastore.warehouse.dir": warehouse(p),
            "hive.metastore.warehouse.external.dir": f"{warehouse(p)}/external",
            "hive.execution.engine": "mr",
            "mapreduce.framework.name": "local",
            # a map join's hash table is built in a child `hadoop jar` process by default: the lab has no such command
            "hive.exec.submit.local.task.via.child": "false",
            "hive.exec.submitviachild": "false",
            "hive.exec.scratchdir": (root / "scratch").as_uri(),
            "hive.exec.local.scratchdir": root / "local-scratch",
            "hive.downloaded.resources.dir": root / "resources" / "${hive.session.id}_resources",
            "hive.querylog.location": root / "querylog",
            "hive.server2.logging.operation.log.location": root / "operation-logs",
            "mapreduce.cluster.local.dir": root / "mapred-local",
            "hive.server2.max.start.attempts": 1,  # exit on a failed start (the default retries for 30 minutes)
            "hive.async.log.enabled": "false",  # log4j2's async loggers want a newer disruptor than Hive brings
            "hive.query.results.cache.enabled": "false",  # a benchmark measures the query, not a cached answer
            "hive.scheduled.queries.executor.enabled": "false",  # no background polling of the metastore
            "hive.server2.materializedviews.registry.impl": "DUMMY",
            # a local MapReduce job ends in well under a second, but Hive looks only at its next poll (1 s by
            # default): a TPC-H query of 5 jobs measured 5 s of polling. 100 ms halved the lab's TPC-H times
            "hive.exec.counters.pull.interval": 100,
            "hive.exec.parallel": "true",  # independent stages of one query run side by side (2 cores here)
            # every map task of every job runs inside HiveServer2's heap: at the defaults (a 100 MB sort
            # buffer per map task, one array G1 must place whole; up to 8 stages at once) TPC-H's q11 and q16 ran out
            # of heap allocating that buffer late in a full test run
            "hive.exec.parallel.thread.number": 2,
            "mapreduce.task.io.sort.mb": 32,
            **(self.on_yarn() if self.yarn else self.local_staging()),
        }

    def local_staging(self) -> dict[str, object]:
        """Each local job's staging folder (its job.xml and splits) in the lab's home, not in /tmp/hadoop: a job
        leaves its parent folder behind, emptied at HiveServer2's next start."""
        return {"mapreduce.jobtracker.staging.root.dir": self.staging_root.as_uri()}

    def on_yarn(self) -> dict[str, object]:
        """MapReduce on the cluster shape's YARN: its ResourceManager, MapReduce's jars and container sizes."""
        # Hive's tasks need HiveServer2's reflection into the JDK (Kryo plans) and its time zone
        task_opts = " ".join([CONTAINER_HEAP, "-Duser.timezone=UTC", *(f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
                                                                        for pkg in OPENS)])
        mapred = self.yarn.mapred_site()
        return {**self.yarn.site(), **mapred,
                # Hive's jars beside Hadoop's on every node, as a cluster installs them (hive-exec alone is not enough)
                "mapreduce.application.classpath": f"{mapred['mapreduce.application.classpath']},{self.task_lib}/*",
                "mapreduce.map.java.opts": task_opts, "mapreduce.reduce.java.opts": task_opts,
                # a small job would otherwise run inside HiveServer2 after all (local mode by size), not on YARN
                "hive.exec.mode.local.auto": "false",
                # a small job's tasks in its ApplicationMaster's container (MapReduce's uber mode), still on YARN: a
                # container per task cost 15-20 s each to launch here, 43 s a job against seconds of work (the
                # cluster shape's taxi queries through Hive: 450 s of its tests). The tasks' JVM options go there.
                "mapreduce.job.ubertask.enable": "true", "yarn.app.mapreduce.am.command-opts": task_opts}

    @property
    def task_lib(self) -> Path:
        return self.root / "task-lib"

    def link_task_lib(self) -> None:
        """Hive's jars for its tasks on YARN, less those the tasks' Hadoop class path already has (by artifact: one
        guava, one commons-lang3) and less Hive's log4j 2 (its log4j 1 bridge breaks the tasks' reload4j logging)."""
        held = {tools.artifact(jar.name) for lib in (tools.hadoop_lib(), tools.yarn_lib()) for jar in lib.glob("*.jar")}
        self.task_lib.mkdir(parents=True, exist_ok=True)
        for link in self.task_lib.glob("*.jar"):
            link.unlink()
        for jar in hive_jars.hive_lib().glob("*.jar"):
            if tools.artifact(jar.name) not in held and not jar.name.startswith(("log4j-", "slf4j-")):
                (self.task_lib / jar.name).symlink_to(jar)

    def write_config(self) -> None:
        if self.yarn:
            self.link_task_lib()
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "hive-site.xml").write_text(site_xml(self.site()))
        (self.conf_dir / "core-site.xml").write_text(site_xml({
            "fs.defaultFS": f"hdfs://{HOST}:{self.ports.namenode_rpc}", "hadoop.tmp.dir": self.home / "tmp",
            "dfs.replication": lab_replication(self.home),  # HiveServer2 does not read the lab's hdfs-site.xml
            **s3a_settings(self.ports), **alluxio.hadoop_conf(self.ports)}))
        write_metrics_conf(self.conf_dir)  # its S3A statistics in JMX, fresh on each read
        for name in ("hive-log4j2.properties", "hive-exec-log4j2.properties"):  # Hive looks these up by name
            (self.conf_dir / name).write_text(LOG4J2)

    def hive_classpath(self) -> str:
        """Hive's jars; with local MapReduce, hive-exec's classes from a folder (hive_jars.hive_exec_classes: no
        83 MB jar copied per stage). On YARN the tasks need the jar submitted with each job."""
        if self.yarn:
            return f"{hive_jars.hive_lib()}/*"
        exec_jar = hive_jars.hive_exec_jar()
        others = sorted(str(jar) for jar in hive_jars.hive_lib().glob("*.jar") if jar != exec_jar)
        return ":".join([str(hive_jars.hive_exec_classes()), *others])

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        classpath = (f"{self.conf_dir}:{self.hive_classpath()}:{tools.hadoop_lib()}/*:"
                     f"{alluxio_dist.alluxio_client_jar()}")
        log4j = (self.conf_dir / "hive-log4j2.properties").as_uri()
        return [str(tools.java_home() / "bin" / "java"), HEAP, *lab_java_options(self.home), "-Duser.timezone=UTC",
                f"-Dlog4j2.configurationFile={log4j}",
                *(f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in OPENS),
                "--add-opens=java.sql/java.sql=ALL-UNNAMED", "-cp", classpath, MAIN]

    def env(self) -> dict[str, str]:
        # Hive strips fs.s3a keys from its configuration (hive.conf.hidden.list): they go in the environment
        return s3a_env(self.home)

    def start(self) -> None:
        if self.daemon.pid() is None:
            shutil.rmtree(self.staging_root, ignore_errors=True)  # the last run's jobs' folders: no job runs now
            self.write_config()
            self.daemon.start(self.argv(), env=self.env(), cwd=self.root)
        # 8-11 s when idle; a busy 2-core machine (Trino, Spark beside it) can take minutes
        self.wait_healthy(self.daemon, 300, "read the log; HiveServer2 (1.5 GiB of heap) needs that "
                          "much free memory and can take minutes on a busy machine: run `perfkit lab up` again")

    def health(self) -> tuple[bool, str]:
        healthy, detail = hs2.select_one(self.ports.hiveserver2, 30)
        if healthy and not port_in_use(HOST, self.ports.hiveserver2_http):  # it starts after the Thrift service
            return False, f"{detail}; web UI not up yet (port {self.ports.hiveserver2_http})"
        return healthy, detail
