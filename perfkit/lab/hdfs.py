"""A real one-machine HDFS from the Maven Central jars: one NameNode and one DataNode, or, in the cluster shape, a
DataNode on each node's loopback address (perfkit.lab.shape)."""
from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from xml.sax.saxutils import escape

from perfkit.errors import ServiceError
from perfkit.lab import alluxio, tools
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options, lab_credentials, node_ports
from perfkit.lab.shape import LabShape, current_shape, node_env
from perfkit.lab.spark_conf import lab_spark_conf

HEAP = "-Xmx512m"


def site_xml(props: dict[str, object]) -> str:
    body = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n" for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


# logs go to stderr, never stdout: `hadoop fs -cat` writes file bytes to stdout
LOG4J = """hadoop.root.logger=INFO,stderr
log4j.rootLogger=${hadoop.root.logger}
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""
PROBE_FILE, PROBE_BYTES = "/.perfkit-lab/probe", b"perfkit lab probe"  # the lab's own file


NAMENODE_MAIN = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_MAIN = "org.apache.hadoop.hdfs.server.datanode.DataNode"
METRICS_PERIOD_MS = 10  # a Hadoop daemon's JMX is refreshed when read, if this old (no sink: nothing else runs)


def write_metrics_conf(conf_dir: Path) -> None:
    """What JMX shows is refreshed at most once a metrics period (10 s by default): a run's reads would show seconds
    late; 10 ms lets perfkit read each run's own (perfkit.jmx_freshness). For HDFS and HiveServer2."""
    (conf_dir / "hadoop-metrics2.properties").write_text(f"*.periodMillis={METRICS_PERIOD_MS}\n")


class Hdfs(Service):
    name = "hdfs"

    def __init__(self, home: Path, ports: LabPorts, datanodes: int | None = None, shape: LabShape | None = None):
        super().__init__(home, ports)
        self.conf_dir = home / "hadoop-conf"
        self.shape = shape or current_shape(home)
        self.datanode_count = datanodes or self.shape.datanodes
        self.namenode = Daemon("namenode", home, NAMENODE_MAIN,
                               ports={"namenode_rpc": ports.namenode_rpc, "namenode_http": ports.namenode_http})
        # the first DataNode keeps its historical name; the others are numbered
        self.datanodes = [Daemon("datanode" if i == 0 else f"datanode{i}", home, DATANODE_MAIN,
                                 ports=self.datanode_ports(i))
                          for i in range(self.datanode_count)]
        self.daemons = [self.namenode, *self.datanodes]

    @property
    def http(self) -> str:
        return f"http://{HOST}:{self.ports.namenode_http}"

    def datanode_ports(self, i: int) -> dict[str, int]:
        return node_ports(self.ports, ("datanode", "datanode_http", "datanode_ipc"), i)

    def addresses(self) -> dict[str, str]:
        found = {"namenode": f"hdfs://{HOST}:{self.ports.namenode_rpc} (web {self.http})"}
        for i, daemon in enumerate(self.datanodes):
            found[daemon.name] = f"{self.shape.node_host(i)}:{self.datanode_ports(i)['datanode']}"
        return found

    def ports_needed(self) -> dict[str, int]:
        return self.ports_by_daemon()  # every DataNode has the same fields: the daemon's name keeps them apart

    def datanode_conf_dir(self, i: int) -> Path:
        return self.conf_dir if i == 0 else self.home / f"hadoop-conf-dn{i}"

    def client_site(self) -> dict[str, object]:
        """hdfs-site.xml for a client of this HDFS (the engines' servers, YARN's containers)."""
        return {"dfs.replication": self.shape.replication,
                # a client reaches the DataNodes by the addresses they registered (the nodes' loopback addresses)
                "dfs.client.use.datanode.hostname": "false"}

    def write_config(self) -> None:
        p, data = self.ports, self.home / "hdfs"
        s3a = {k.removeprefix("spark.hadoop."): v for k, v in lab_spark_conf(p, lab_credentials(home=self.home)).items()
               if k.startswith("spark.hadoop.fs.s3a.")}
        for i in range(self.datanode_count):
            conf = self.datanode_conf_dir(i)
            conf.mkdir(parents=True, exist_ok=True)
            dn, host = self.datanode_ports(i), self.shape.node_host(i)
            core = conf / "core-site.xml"
            core.write_text(site_xml({
                "fs.defaultFS": f"hdfs://{HOST}:{p.namenode_rpc}",
                "hadoop.tmp.dir": self.home / "tmp",
                **s3a,  # the lab's own S3 for `hadoop fs` and DistCp
                **alluxio.hadoop_conf(p),  # alluxio:///<bucket>/... (perfkit.hadoop_cli adds the client jar)
            }))
            core.chmod(0o600)  # it holds the lab's S3 keys
            (conf / "hdfs-site.xml").write_text(site_xml({
                "dfs.namenode.name.dir": data / "name",
                "dfs.datanode.data.dir": data / ("data" if i == 0 else f"data{i}"),
                "dfs.replication": self.shape.replication,
                "dfs.permissions.enabled": "false",
                "dfs.namenode.safemode.extension": 0,
                "dfs.namenode.datanode.registration.ip-hostname-check": "false",
                "dfs.namenode.rpc-address": f"{HOST}:{p.namenode_rpc}",
                "dfs.namenode.http-address": f"{HOST}:{p.namenode_http}",
                "dfs.namenode.secondary.http-address": f"{HOST}:0",
                "dfs.datanode.address": f"{host}:{dn['datanode']}",
                "dfs.datanode.http.address": f"{host}:{dn['datanode_http']}",
                "dfs.datanode.ipc.address": f"{host}:{dn['datanode_ipc']}",
                "dfs.datanode.hostname": host,
                **self.dead_after(),
            }))
            # the tools' local jobs (DistCp, TestDFSIO) stage under the lab's home, not /tmp/hadoop
            (conf / "mapred-site.xml").write_text(site_xml({
                "mapreduce.framework.name": "local",
                "mapreduce.jobtracker.staging.root.dir": (self.home / "tmp" / "mapred-staging").as_uri()}))
            (conf / "log4j.properties").write_text(LOG4J)
            write_metrics_conf(conf)

    def dead_after(self) -> dict[str, int]:
        """With more than one DataNode, the NameNode calls a silent one dead after 2 x 5 s + 10 x 1 s = 20 s, not
        Hadoop's 630 s: a run that lost one then waits for HDFS to re-replicate its blocks before its next timing
        (perfkit.experiments.conditions), which HDFS starts only once it has called the DataNode dead."""
        if self.datanode_count < 2:
            return {}
        return {"dfs.namenode.heartbeat.recheck-interval": 5000, "dfs.heartbeat.interval": 1}

    def java(self, main_class: str, *args: str, conf_dir: Path | None = None) -> list[str]:
        java = tools.java_home() / "bin" / "java"
        classpath = f"{conf_dir or self.conf_dir}:{tools.hadoop_lib()}/*"
        return [str(java), HEAP, *lab_java_options(self.home), f"-Dhadoop.log.dir={self.home / 'logs'}",
                "-cp", classpath, main_class, *args]

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        if daemon is None or daemon is self.namenode:
            return self.java(NAMENODE_MAIN)
        return self.java(DATANODE_MAIN, conf_dir=self.datanode_conf_dir(self.datanodes.index(daemon)))

    def start(self) -> None:
        self.write_config()
        if not (self.home / "hdfs" / "name" / "current" / "VERSION").exists():
            run = subprocess.run(
                self.java(NAMENODE_MAIN, "-format", "-nonInteractive", "-force"),
                capture_output=True, text=True,
            )
            if run.returncode != 0:
                raise ServiceError("namenode", f"format failed:\n{run.stderr[-1500:]}", "remove the lab home and retry")
        fix = "read the log; `perfkit lab up` restarts only what died (`perfkit lab down` first for a clean start)"
        if self.namenode.pid() is None:
            self.namenode.start(self.argv(self.namenode))
        self.namenode.wait_until(lambda: self._namenode_state() is not None, 90, fix)
        for i, daemon in enumerate(self.datanodes):
            if daemon.pid() is None:  # in the cluster shape, on its node's address (perfkit.lab.shape)
                daemon.start(self.argv(daemon), env=node_env(self.shape.node_host(i)) if self.shape.yarn else None)
        # healthy, and a write and a read through a DataNode work: after a NameNode restart a surviving
        # DataNode's first call to it can fail (EOFException on its stale connection)
        self.datanodes[-1].wait_until(lambda: self.health()[0] and self._round_trip(), 90, fix)

    def _round_trip(self) -> bool:
        from hdfs import HdfsError, InsecureClient
        from requests import RequestException

        client = InsecureClient(self.http, user="perfkit", timeout=5)
        try:
            client.write(PROBE_FILE, data=PROBE_BYTES, overwrite=True)
            with client.read(PROBE_FILE) as reader:
                return reader.read() == PROBE_BYTES
        except (HdfsError, RequestException):
            return False

    def stop(self) -> list[str]:
        """Every DataNode this lab home ever started (even beyond today's count), then the NameNode."""
        extra = [Daemon(p.stem, self.home, DATANODE_MAIN) for p in sorted((self.home / "pids").glob("datanode*.pid"))]
        return [d.name for d in (*extra, self.namenode) if d.stop()]

    def _jmx(self, http: str, query: str) -> dict | None:
        try:
            with urllib.request.urlopen(f"{http}/jmx?qry={query}", timeout=2) as resp:
                return json.load(resp)["beans"][0]
        except (OSError, ValueError, IndexError, KeyError):
            return None

    def _namenode_state(self) -> dict | None:
        return self._jmx(self.http, "Hadoop:service=NameNode,name=FSNamesystemState")

    def _datanode_problem(self, i: int) -> str | None:
        """Why DataNode i is not serving, from its own web endpoint, or None.

        The NameNode alone cannot tell: it counts a killed DataNode as live for ~10 minutes, and a
        restarted one before it has registered again.
        """
        name = self.datanodes[i].name
        info = self._jmx(f"http://{self.shape.node_host(i)}:{self.datanode_ports(i)['datanode_http']}",
                         "Hadoop:service=DataNode,name=DataNodeInfo")
        if info is None:
            return f"{name} web endpoint does not answer"
        try:
            states = sorted({str(actor.get("ActorState")) for actor in json.loads(info["BPServiceActorInfo"])})
        except (KeyError, TypeError, ValueError, AttributeError):
            states = []
        if states != ["RUNNING"]:
            return f"{name} not registered with the NameNode ({', '.join(states) or 'starting'})"
        return None

    def health(self) -> tuple[bool, str]:
        state = self._namenode_state()
        if state is None:
            return False, "NameNode web endpoint does not answer"
        live = state.get("NumLiveDataNodes", 0)
        if live < self.datanode_count:
            return False, f"{live} of {self.datanode_count} DataNodes live"
        if state.get("FSState") != "Operational":
            return False, f"NameNode {state.get('FSState')}"
        problems = [p for i in range(self.datanode_count) if (p := self._datanode_problem(i))]
        if problems:
            return False, "; ".join(problems)
        return True, f"{live} live DataNode{'s' if live > 1 else ''}"
