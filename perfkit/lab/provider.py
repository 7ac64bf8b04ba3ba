"""The embedded lab as a provider: its jars and Java for the tools, its S3 keys, its Spark settings, its fixes.

`lab_profile()` builds the lab's Profile with this provider; perfkit.config looks it up by name, and nothing
outside perfkit/lab/ imports it.
Everything is looked up when asked (ports and the lab home from the environment, keys from the lab home), as the
lab may be moved or brought up after the profile was resolved.
"""
from __future__ import annotations

import sys
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools, versions
from perfkit.config import Profile
from perfkit.lab.hdfs import METRICS_PERIOD_MS
from perfkit.lab.s3 import S3Server, s3_access_log
from perfkit.lab.s3_network import current_network
from perfkit.lab.yarn import NODE_MEMORY_MB, NODE_VCORES
from perfkit.lab.settings import (BUCKET, HOST, JAVA_OPTIONS_ENV, LabPorts, extra_java_options, java_options_in_use,
                                  lab_credentials, lab_home, lab_java_options, lab_s3_endpoint)
from perfkit.providers import Provider

# what `hadoop <sub>` runs, for the lab where there is no `hadoop` script, only jars
MAIN_CLASSES = {"fs": "org.apache.hadoop.fs.FsShell", "distcp": "org.apache.hadoop.tools.DistCp",
                "jar": "org.apache.hadoop.util.RunJar",
                "testdfsio": "org.apache.hadoop.fs.TestDFSIO"}  # in the jobclient tests jar


class LabProvider(Provider):
    name = "lab"
    local_mapreduce = True  # DistCp and TestDFSIO run in local MapReduce mode inside the tool's JVM

    def s3_credentials(self) -> dict[str, str]:
        return lab_credentials()

    def secrets(self) -> list[str]:
        try:
            return [lab_credentials()["secret_key"]]
        except (PerfkitError, OSError, ValueError, KeyError):  # no lab yet (or a damaged key file): nothing to hide
            return []

    def hadoop_command(self, sub: str, *args: str) -> list[str]:
        from perfkit.lab.alluxio_dist import alluxio_client_jar

        java = tools.java_home() / "bin" / "java"
        classpath = f"{lab_home() / 'hadoop-conf'}:{tools.hadoop_lib()}/*:{alluxio_client_jar()}"
        return [str(java), "-Xmx512m", *lab_java_options(), "-Dhadoop.root.logger=WARN,stderr", "-cp", classpath,
                MAIN_CLASSES[sub], *args]

    def testdfsio_command(self, *args: str) -> list[str]:
        return self.hadoop_command("testdfsio", *args)

    def gohdfs(self, profile) -> tuple[str, dict[str, str]]:
        return str(tools.gohdfs()), {"HADOOP_USER_NAME": profile.hdfs_user,
                                     "HADOOP_NAMENODE": profile.hdfs_uri.split("://", 1)[1]}

    def alluxio_shell(self, *args: str) -> list[str]:
        from perfkit.lab.alluxio import SHELL_MAIN, AlluxioServer

        server = AlluxioServer(lab_home(), LabPorts.from_env())
        return server.java(SHELL_MAIN, *args, conf_dir=server.client_conf_dir)

    def spark_conf(self, profile) -> dict[str, str]:
        from perfkit.lab.alluxio_dist import alluxio_client_jar
        from perfkit.lab.spark_conf import lab_spark_conf

        ports = LabPorts.from_env()
        s3a_jars, metastore = self._spark_version_jars(ports)
        return {**lab_spark_conf(ports, lab_credentials(), profile.s3_endpoint),
                "spark.jars": ",".join(str(j) for j in [*s3a_jars, alluxio_client_jar()]),
                "spark.driver.memory": "2g",
                # Hive's <session>_resources folder and Spark's block files: under the lab home, not /tmp
                "spark.driver.extraJavaOptions": " ".join(lab_java_options()),
                "spark.local.dir": str(lab_home() / "tmp"),
                "spark.hadoop.hadoop.tmp.dir": str(lab_home() / "tmp"),  # S3A's upload buffers (fs.s3a.buffer.dir)
                # the metastore Hive and Trino share, through a Hive client Spark loads (its built-in 2.3 cannot)
                **metastore}

    @staticmethod
    def _spark_version_jars(ports: LabPorts) -> tuple[list, dict[str, str]]:
        """S3A's jars and the metastore client for the Spark of this process: the lab's own 4.3.0 (Hadoop 3.5.0, Hive
        4.0.1's client) or the cluster shape's 3.5.6, EMR 7.13's (Hadoop 3.3.4, Hive 3.1.3's client)."""
        from perfkit.engines.spark_install import pyspark_version
        from perfkit.lab import cluster_spark
        from perfkit.lab.metastore import spark_metastore_conf

        running = pyspark_version()
        if running == versions.PYSPARK:
            return tools.s3a_jars(), spark_metastore_conf(ports)
        if running == versions.CLUSTER_SPARK:
            return cluster_spark.s3a_jars(), spark_metastore_conf(ports, versions.CLUSTER_HIVE_CLIENT,
                                                                  cluster_spark.metastore_jars())
        raise PerfkitError(f"the lab runs Spark {versions.PYSPARK} (its own) and {versions.CLUSTER_SPARK} (EMR 7.13's, "
                           f"the cluster shape's); this Python has pyspark {running}, whose jars it does not hold. "
                           f"Fix: run perfkit where pyspark is one of those (`make install`: {versions.PYSPARK})")

    def spark_environment(self) -> dict[str, str]:
        return {"SPARK_LOCAL_IP": HOST}  # loopback only, and no warning about it

    def empty_trino_cache(self) -> str:
        """A fresh catalog with an empty cache folder takes over from the one in use (see
        TrinoServer.fresh_cache_catalog: Trino cannot empty a catalog's cache while it runs)."""
        from perfkit.lab.trino import TrinoServer

        server = TrinoServer(lab_home(), LabPorts.from_env())
        previous = server.cache_catalog()
        name, held = server.fresh_cache_catalog()
        return (f"a fresh cache: catalog {name}, the same tables through an empty cache folder, took over from "
                f"{previous} ({held / 1e6:.1f} MB of pages)")

    def trino_cache_catalog(self, profile) -> str:
        """The lab's cache catalog in use (the last fresh one), for the profile's own."""
        from perfkit.lab.trino import CACHE_CATALOG, TrinoServer

        if profile.trino_cache_catalog != CACHE_CATALOG:
            return profile.trino_cache_catalog
        return TrinoServer(lab_home(), LabPorts.from_env()).cache_catalog()

    def fix(self, service: str, on_cluster: str) -> str:
        return f"start it with `perfkit lab up {service}`" if service else "start the lab with `perfkit lab up`"

    def task_logs(self) -> str:
        return str(lab_home() / "logs" / "hiveserver2.log")

    def more_datanodes(self, count: int) -> str:
        return f"start {count} with PERFKIT_LAB_DATANODES={count} perfkit lab up, or "

    def no_nfs_mount(self) -> str:
        return "this machine's kernel has no NFS client; libnfs reads the lab's NFS server"

    def s3_impostor(self, profile) -> tuple[str, str] | None:
        """Who answers on the lab's S3 port while the lab's own S3 server is not running (else None)."""
        from urllib.parse import urlsplit

        from perfkit.lab.process import port_in_use, port_owner
        from perfkit.lab.s3 import S3Server

        parts = urlsplit(profile.s3_endpoint or "")
        if parts.hostname is None or parts.port is None or S3Server(lab_home(), LabPorts.from_env()).daemon.pid():
            return None
        if not port_in_use(parts.hostname, parts.port):
            return None
        owner = port_owner(parts.hostname, parts.port)
        who = f"port {parts.port}, pid {owner[0]}: {owner[1][:120] or 'command line not readable'}" if owner else \
            f"port {parts.port}, by a program this user cannot see"
        return (f"the lab's S3 server is not running, and another program answers on its port ({who})",
                "stop that program, or move the lab with PERFKIT_LAB_PORT_S3=<free port>; then run `perfkit lab up`")

    def s3_clients_elsewhere(self, profile) -> tuple[str, str] | None:
        configured = lab_s3_endpoint(LabPorts.from_env())
        if (profile.s3_endpoint or "").rstrip("/") == configured.rstrip("/"):
            return None
        return (f"the lab's engines, tools and Alluxio send S3 requests to {configured}, not to the profile's "
                f"s3_endpoint {profile.s3_endpoint}: a run would measure another S3 than its record says",
                f"run `perfkit lab up --s3-endpoint {profile.s3_endpoint}` (restarts the lab's S3 clients against "
                "it; `--s3-endpoint direct` goes back), or remove s3_endpoint from the profile")

    def network(self):
        return current_network(lab_home())

    def use_network(self, network) -> list[str]:
        from perfkit.lab import Lab

        return Lab().set_network(network)

    def direct_s3_endpoint(self, profile) -> str | None:
        server = S3Server(lab_home(), LabPorts.from_env())  # behind an emulated network's proxy: a port of its own
        return server.endpoint if (profile.s3_endpoint or "").rstrip("/") != server.endpoint else None

    def nfs_export(self) -> Path:
        return lab_home() / "nfs"  # the folder the lab's NFS server exports

    def local_disk(self) -> Path:
        return lab_home()  # the lab's S3 objects and HDFS blocks all live in the lab home

    def hdfs_blocks(self) -> Path:
        return lab_home() / "hdfs"

    def versions(self) -> dict[str, str]:
        found = {"hadoop (lab)": versions.HADOOP}
        if options := java_options_in_use():  # times measured on JVMs started so (the tests' C1-only) say it
            found["lab JVM options"] = f"{options} ({JAVA_OPTIONS_ENV})"
        return found

    def s3_request_log(self) -> Path:
        return s3_access_log(lab_home())

    def s3_request_window(self, profile) -> None:
        return None  # the lab's S3 server counts every run itself (its access log): no window needed

    def s3_wire_bytes(self):
        from perfkit.lab import Lab
        from perfkit.lab.s3_network import S3Network

        if not current_network(lab_home()).emulated:  # S3 on this machine, no proxy between: its server's log
            return None  # gives no bytes for a GET (versitygw logs the size of bodies it buffers only)
        proxy = Lab().service(S3Network.name)
        return lambda: {"s3_bytes_read": proxy.proxied_bytes()["downstream"]}

    def s3_bytes_not_counted(self) -> str:
        return ("not counted: the lab's S3 server logs no bytes for a GET it streams, and S3 sits on this machine "
                "with no network emulator between to count them on the wire "
                "(`perfkit lab network ec2-s3` puts one there)")


class LabClusterProvider(LabProvider):
    """The lab in its cluster shape (perfkit.lab.shape): Spark's executors and Hive's tasks in YARN containers on the
    lab's nodes, HDFS over three DataNodes. Everything else as the one-process lab."""

    name = "lab-cluster"
    # Spark on YARN: two executors of one core, as small as the lab's NodeManagers hold beside Hive's jobs
    EXECUTORS, EXECUTOR_CORES, EXECUTOR_MEMORY = 2, 1, "1g"

    def spark_conf(self, profile) -> dict[str, str]:
        from perfkit.lab.yarn import Yarn

        yarn = Yarn(lab_home(), LabPorts.from_env())
        # YARN's addresses and HDFS (Spark's staging folder) as settings too: HADOOP_CONF_DIR reaches only a JVM that
        # starts after it is set, and a notebook may have run a local session first
        client = {f"spark.hadoop.{k}": str(v) for k, v in yarn.site().items() if k.startswith("yarn.resourcemanager.")}
        return {**super().spark_conf(profile), **client,
                "spark.hadoop.fs.defaultFS": profile.hdfs_uri,
                "spark.submit.deployMode": "client",  # the driver in perfkit's process, as a notebook's on EMR
                # the executors load Spark's jars from where this pyspark keeps them: every node is this machine
                # (uploading them would copy ~400 MB to HDFS at each session's start)
                "spark.yarn.jars": f"local:{tools.spark_home()}/jars/*",
                "spark.executor.instances": str(self.EXECUTORS),
                "spark.executor.cores": str(self.EXECUTOR_CORES),
                "spark.executor.memory": self.EXECUTOR_MEMORY,
                "spark.yarn.am.memory": "512m",
                "spark.executor.extraJavaOptions": " ".join(["-Duser.timezone=UTC", *extra_java_options()])}

    def spark_environment(self) -> dict[str, str]:
        from perfkit.lab.yarn import Yarn

        # where a newly started Spark JVM finds YARN and the lab's HDFS (Yarn.write_config; spark_conf repeats both),
        # and the executors' Python: the driver's, on every node of this machine (as EMR's spark-env.sh names one;
        # without it they run whatever `python3` is first on the NodeManagers' PATH, and pyspark refuses a mismatch)
        return {**super().spark_environment(), "PYSPARK_PYTHON": sys.executable,
                "HADOOP_CONF_DIR": str(Yarn(lab_home(), LabPorts.from_env()).client_conf_dir)}

    def notebook_kernel(self) -> tuple[str, dict[str, str]]:
        """Spark 3.5.6's Python (EMR 7.13's Spark): the notebook's Spark driver runs where that pyspark is."""
        from perfkit.lab import cluster_spark

        return cluster_spark.KERNEL, {"JUPYTER_PATH": str(cluster_spark.kernel_folder(lab_home()))}

    def check_spark(self, profile) -> None:
        from perfkit.engines.spark_install import pyspark_version
        from perfkit.lab import Lab, cluster_spark

        lab = Lab()
        if not lab.shape.yarn:
            raise PerfkitError(f"profile lab-cluster runs Spark on the lab's YARN, and the lab has the "
                               f"{lab.shape.name} shape. Fix: `perfkit lab down`, then "
                               "`perfkit lab up --shape cluster`")
        healthy, detail = lab.service("yarn").health()
        if not healthy:
            raise PerfkitError(f"profile lab-cluster runs Spark on the lab's YARN, which is not up ({detail}). "
                               "Fix: `perfkit lab up --shape cluster`")
        if pyspark_version() != versions.CLUSTER_SPARK:
            raise PerfkitError(f"profile lab-cluster runs EMR 7.13's Spark {versions.CLUSTER_SPARK}, and this Python "
                               f"has pyspark {pyspark_version()}. Fix: run perfkit with Spark "
                               f"{versions.CLUSTER_SPARK}'s Python, "
                               f"PYTHONPATH={cluster_spark.source_root()} {cluster_spark.python()} -m perfkit ... "
                               "(`perfkit report -p profile=lab-cluster` does: its notebooks run on that Python)")

    def cluster(self) -> dict[str, str]:
        from perfkit.lab import Lab

        lab = Lab()
        hdfs, yarn = lab.service("hdfs"), lab.service("yarn")
        return {"shape": lab.shape.name,
                "datanodes": ", ".join(hdfs.addresses()[d.name] for d in hdfs.datanodes),
                "replication": str(lab.shape.replication),
                "yarn nodemanagers": ", ".join(yarn.node_id(i) for i in range(len(yarn.nodemanagers))),
                "yarn node resources": f"{NODE_MEMORY_MB} MB, {NODE_VCORES} vcores each"}

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "yarn (lab)": versions.HADOOP}

    def conditions(self, profile) -> dict:
        """The NameNode's view with the lab's own: a DataNode or NodeManager whose process is gone is lost at once
        (the NameNode would wait STALE_S, the ResourceManager ten minutes)."""
        from perfkit.lab import Lab

        found = super().conditions(profile)
        lab = Lab()
        hdfs, yarn = lab.service("hdfs"), lab.service("yarn")
        addresses = hdfs.addresses()
        found["datanodes"] = sorted(addresses[d.name] for d in hdfs.datanodes if d.pid())
        found["nodemanagers"] = sorted(yarn.node_id(i) for i, d in enumerate(yarn.nodemanagers) if d.pid())
        return found

    def task_logs(self) -> str:
        return f"{lab_home() / 'yarn'}/nm*/logs (the YARN containers' logs)"


def lab_cluster_profile() -> Profile:
    """The lab in its cluster shape: the lab's addresses, Spark on its YARN."""
    from dataclasses import replace

    return replace(lab_profile(), name="lab-cluster", spark_master="yarn", provider=LabClusterProvider())


def lab_profile() -> Profile:
    """The lab's addresses (ports from the environment) and this provider: what `load_profile("lab")` resolves to."""
    ports = LabPorts.from_env()
    return Profile(
        name="lab",
        hdfs_uri=f"hdfs://{HOST}:{ports.namenode_rpc}",
        webhdfs_url=f"http://{HOST}:{ports.namenode_http}",
        hdfs_user="perfkit",
        s3_bucket=BUCKET,
        s3_scheme="s3a",
        s3_endpoint=lab_s3_endpoint(ports),
        s3_region="us-east-1",
        prefix="perfkit",
        spark_master="local[2]",
        hive_host=HOST,
        hive_port=ports.hiveserver2,
        hive_webui_port=ports.hiveserver2_http,
        spark_thrift_host=HOST,
        spark_thrift_port=ports.spark_thrift,
        trino_host=HOST,
        trino_port=ports.trino,
        trino_cache_catalog="hive_cache",  # perfkit.lab.trino.CACHE_CATALOG
        alluxio_master=f"{HOST}:{ports.alluxio_master}",
        alluxio_master_web=f"{HOST}:{ports.alluxio_master_web}",
        alluxio_s3_mount=f"/{BUCKET}",  # perfkit.lab.alluxio mounts the lab's bucket there
        alluxio_s3_endpoint=f"http://{HOST}:{ports.alluxio_proxy}/api/v1/s3",
        alluxio_rest=f"http://{HOST}:{ports.alluxio_proxy}/api/v1",  # the proxy's v1 service (perfkit.lab.alluxio)
        metastore_uri=f"thrift://{HOST}:{ports.metastore}",
        provider=LabProvider(),
        nfs_url=f"nfs://{HOST}/?nfsport={ports.nfs}&mountport={ports.nfs}&auto-traverse-mounts=0",
        fuse_hdfs_mount=str(lab_home() / "mnt" / "hdfs"),
        hadoop_metrics_period_s=METRICS_PERIOD_MS / 1000,  # the lab writes its daemons' metrics configuration
    )
