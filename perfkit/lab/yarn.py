"""YARN for the cluster shape: a ResourceManager and NodeManagers from the lab's Hadoop jars, each NodeManager on the
loopback address of its node (perfkit.lab.shape), with its own local and log folders under the lab home.

Spark submits its executors here (client mode: the driver stays in perfkit's process) and HiveServer2 its MapReduce
jobs. `client_conf_dir` is the HADOOP_CONF_DIR both use: the ResourceManager and the lab's HDFS (no S3 settings:
each client brings its own).
"""
from __future__ import annotations

import contextlib
import json
import urllib.request
from pathlib import Path

import psutil

from perfkit.lab import tools
from perfkit.lab.hdfs import LOG4J, site_xml
from perfkit.lab.metastore import s3a_env
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options, node_ports, write_private
from perfkit.lab.shape import LabShape, current_shape, node_env

RM_MAIN = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NM_MAIN = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
HEAP = "-Xmx512m"
# what each NodeManager offers its containers: two NodeManagers of 4 GiB hold a MapReduce job (a 512 MiB
# ApplicationMaster and 512 MiB tasks) or Spark's two executors beside the rest of the lab on 24 GiB; the vcores are
# YARN's accounting only (2 cores here: the executors share them, as the lab's other JVMs do)
NODE_MEMORY_MB, NODE_VCORES = 4096, 2
CONTAINER_MB, CONTAINER_HEAP = 512, "-Xmx384m"


class Yarn(Service):
    name = "yarn"
    needs = ("hdfs",)  # staging folders and job history live on HDFS, as on a cluster
    cluster_only = True

    def __init__(self, home: Path, ports: LabPorts, shape: LabShape | None = None):
        super().__init__(home, ports)
        self.shape = shape or current_shape(home)
        self.root = home / "yarn"
        self.client_conf_dir = self.root / "conf"
        self.resourcemanager = Daemon("resourcemanager", home, RM_MAIN, ports={
            "yarn_resourcemanager": ports.yarn_resourcemanager, "yarn_scheduler": ports.yarn_scheduler,
            "yarn_resource_tracker": ports.yarn_resource_tracker, "yarn_admin": ports.yarn_admin,
            "yarn_web": ports.yarn_web})
        self.nodemanagers = [Daemon(f"nodemanager{i}", home, NM_MAIN, ports=self.nodemanager_ports(i))
                             for i in range(max(self.shape.node_managers, 1))]
        self.daemons = [self.resourcemanager, *self.nodemanagers]

    @property
    def web(self) -> str:
        return f"http://{HOST}:{self.ports.yarn_web}"

    def nodemanager_ports(self, i: int) -> dict[str, int]:
        return node_ports(self.ports, ("nodemanager", "nodemanager_localizer", "nodemanager_web",
                                       "nodemanager_shuffle"), i)

    def ports_needed(self) -> dict[str, int]:
        return self.ports_by_daemon()

    def addresses(self) -> dict[str, str]:
        found = {"resourcemanager": f"{HOST}:{self.ports.yarn_resourcemanager} (web {self.web})"}
        for i, daemon in enumerate(self.nodemanagers):
            found[daemon.name] = self.node_id(i)
        return found

    def node_id(self, i: int) -> str:
        """NodeManager i as YARN names it: its node's address and its port."""
        return f"{self.shape.node_host(i)}:{self.nodemanager_ports(i)['nodemanager']}"

    def site(self) -> dict[str, object]:
        """yarn-site.xml of the ResourceManager and every client."""
        p = self.ports
        return {
            "yarn.resourcemanager.hostname": HOST,
            "yarn.resourcemanager.address": f"{HOST}:{p.yarn_resourcemanager}",
            "yarn.resourcemanager.scheduler.address": f"{HOST}:{p.yarn_scheduler}",
            "yarn.resourcemanager.resource-tracker.address": f"{HOST}:{p.yarn_resource_tracker}",
            "yarn.resourcemanager.admin.address": f"{HOST}:{p.yarn_admin}",
            "yarn.resourcemanager.webapp.address": f"{HOST}:{p.yarn_web}",
            "yarn.scheduler.minimum-allocation-mb": 256,
            "yarn.scheduler.maximum-allocation-mb": NODE_MEMORY_MB,
            "yarn.nodemanager.vmem-check-enabled": "false",  # a JVM maps far more virtual memory than it uses
            # a disk fuller than 90% (YARN's default) would mark the node unhealthy: the lab's data is small
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 99,
            "yarn.log-aggregation-enable": "false",  # containers' logs stay in each NodeManager's log folder
            "yarn.nodemanager.delete.debug-delay-sec": 0,
        }

    def nodemanager_site(self, i: int) -> dict[str, object]:
        host, ports, folder = self.shape.node_host(i), self.nodemanager_ports(i), self.root / f"nm{i}"
        return {
            **self.site(),
            "yarn.nodemanager.hostname": host,
            "yarn.nodemanager.address": f"{host}:{ports['nodemanager']}",
            "yarn.nodemanager.localizer.address": f"{host}:{ports['nodemanager_localizer']}",
            "yarn.nodemanager.webapp.address": f"{host}:{ports['nodemanager_web']}",
            "yarn.nodemanager.local-dirs": folder / "local",
            "yarn.nodemanager.log-dirs": folder / "logs",
            "yarn.nodemanager.resource.memory-mb": NODE_MEMORY_MB,
            "yarn.nodemanager.resource.cpu-vcores": NODE_VCORES,
            "yarn.nodemanager.aux-services": "mapreduce_shuffle",
            "yarn.nodemanager.aux-services.mapreduce_shuffle.class": "org.apache.hadoop.mapred.ShuffleHandler",
            # every container on its node's address too (node_address.c), and with the lab's S3 keys in its
            # environment, as a cluster node's containers have its instance profile (the lab's S3A clients take them
            # from there: perfkit.lab.metastore.s3a_settings); the default's one variable kept
            "yarn.nodemanager.admin-env": ",".join(
                f"{k}={v}" for k, v in {**node_env(host), **s3a_env(self.home)}.items())
                                          + ",MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX",
        }

    def mapred_site(self, shuffle_port: int | None = None) -> dict[str, object]:
        """mapred-site.xml: MapReduce on YARN, with this lab's jars and small containers."""
        return {
            "mapreduce.framework.name": "yarn",
            "mapreduce.application.classpath": f"{self.client_conf_dir},{tools.yarn_lib()}/*,{tools.hadoop_lib()}/*",
            "yarn.app.mapreduce.am.staging-dir": "/tmp/hadoop-yarn/staging",
            "yarn.app.mapreduce.am.resource.mb": CONTAINER_MB,
            "yarn.app.mapreduce.am.command-opts": CONTAINER_HEAP,
            "mapreduce.map.memory.mb": CONTAINER_MB, "mapreduce.map.java.opts": CONTAINER_HEAP,
            "mapreduce.reduce.memory.mb": CONTAINER_MB, "mapreduce.reduce.java.opts": CONTAINER_HEAP,
            "mapreduce.task.io.sort.mb": 32,  # within a 384 MiB heap
            "mapreduce.shuffle.port": shuffle_port or self.ports.nodemanager_shuffle,
        }

    def write_config(self) -> None:
        from perfkit.lab.hdfs import Hdfs

        hdfs = Hdfs(self.home, self.ports, shape=self.shape)
        # no S3 settings: every client brings its own (Spark's session, Hive's job configuration), and a JVM that
        # started with this folder on its class path (a notebook's Spark, then in local mode) must not inherit them
        core = {"fs.defaultFS": f"hdfs://{HOST}:{self.ports.namenode_rpc}", "hadoop.tmp.dir": self.home / "tmp"}
        scheduler = {"yarn.scheduler.capacity.root.queues": "default",
                     "yarn.scheduler.capacity.root.default.capacity": 100,
                     # a Hive query's ApplicationMaster and its tasks, or Spark's and its executors, at once
                     "yarn.scheduler.capacity.maximum-am-resource-percent": 0.5}
        folders = [(self.client_conf_dir, self.site(), None),
                   *((self.root / f"nm{i}" / "conf", self.nodemanager_site(i), i)
                     for i in range(len(self.nodemanagers)))]
        for conf, yarn_site, node in folders:
            conf.mkdir(parents=True, exist_ok=True)
            write_private(conf / "yarn-site.xml", site_xml(yarn_site))  # a NodeManager's holds the lab's S3 keys
            shuffle = None if node is None else self.nodemanager_ports(node)["nodemanager_shuffle"]
            (conf / "mapred-site.xml").write_text(site_xml(self.mapred_site(shuffle)))
            (conf / "capacity-scheduler.xml").write_text(site_xml(scheduler))
            (conf / "core-site.xml").write_text(site_xml(core))
            (conf / "hdfs-site.xml").write_text(site_xml(hdfs.client_site()))
            (conf / "log4j.properties").write_text(LOG4J)

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        daemon = daemon or self.resourcemanager
        if daemon is self.resourcemanager:
            conf, main = self.client_conf_dir, RM_MAIN
        else:
            conf, main = self.root / f"nm{self.nodemanagers.index(daemon)}" / "conf", NM_MAIN
        java = tools.java_home() / "bin" / "java"
        return [str(java), HEAP, *lab_java_options(self.home), f"-Dhadoop.log.dir={self.home / 'logs'}",
                "-cp", f"{conf}:{tools.yarn_lib()}/*:{tools.hadoop_lib()}/*", main]

    def env(self, i: int | None) -> dict[str, str]:
        """Node i's NodeManager (None: the ResourceManager, on the master's address) on its node's address; the
        containers' Java is the NodeManager's."""
        return {**node_env(HOST if i is None else self.shape.node_host(i)), "JAVA_HOME": str(tools.java_home())}

    def start(self) -> None:
        self.write_config()
        fix = "read the log; `perfkit lab up` restarts only what died (`perfkit lab down` first for a clean start)"
        if self.resourcemanager.pid() is None:
            self.resourcemanager.start(self.argv(self.resourcemanager), env=self.env(None), cwd=self.root)
        for i, daemon in enumerate(self.nodemanagers):
            if daemon.pid() is None:
                daemon.start(self.argv(daemon), env=self.env(i), cwd=self.root)
        self.nodemanagers[-1].wait_until(lambda: self.health()[0], 120, fix)

    def stop(self) -> list[str]:
        """The NodeManagers (each stops its containers), the ResourceManager; then any container a NodeManager left
        (a container leads a session of its own, out of reach of its NodeManager's process group): found by the
        NodeManager folder on its command line, which only this lab's containers have."""
        stopped = super().stop()
        for proc in psutil.process_iter(["cmdline"]):
            if any(str(self.root) in part for part in proc.info["cmdline"] or []):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
                    stopped.append(f"container {proc.pid}")
        return stopped

    def _rest(self, path: str) -> dict | None:
        try:
            with urllib.request.urlopen(f"{self.web}/ws/v1/cluster/{path}", timeout=3) as resp:
                return json.load(resp)
        except (OSError, ValueError):
            return None

    def health(self) -> tuple[bool, str]:
        info = self._rest("info")
        if info is None:
            return False, "ResourceManager REST API does not answer"
        if info.get("clusterInfo", {}).get("state") != "STARTED":
            return False, f"ResourceManager {info.get('clusterInfo', {}).get('state')}"
        nodes = (self._rest("nodes") or {}).get("nodes") or {}
        running = {n["id"] for n in nodes.get("node", []) if n.get("state") == "RUNNING"}
        missing = [self.node_id(i) for i in range(len(self.nodemanagers)) if self.node_id(i) not in running]
        if missing:
            return False, f"NodeManager {', '.join(missing)} not running in the ResourceManager's view"
        return True, f"{len(running)} NodeManagers running"
