"""Where a profile's services run: everything that differs between a cluster and the embedded lab.

Resolving a profile picks the provider (perfkit.config); measurement code asks the provider and never whether it
runs in the lab (PerfKitBenchmarker's providers/ play this part for clouds). This module is the cluster's provider:
the `hadoop`, `gohdfs` and `alluxio` commands on PATH, credentials from the standard AWS chain, the cluster's own
configuration. The lab's provider (lab/provider.py) answers the same questions with its own jars and keys.
"""
from __future__ import annotations

import glob
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from perfkit.errors import PerfkitError

CLUSTER_TESTS_JARS = "/usr/lib/hadoop-mapreduce/hadoop-mapreduce-client-jobclient-*-tests.jar"  # EMR's layout


class Provider:
    """A cluster the profile's addresses point at; subclassed by the lab."""

    name = "cluster"
    # MapReduce jobs (DistCp, TestDFSIO) run inside the tool's own JVM: maps then run one at a time unless told
    local_mapreduce = False

    # -- credentials and what a report must never show -----------------------------------------------------------
    def s3_credentials(self) -> dict[str, str] | None:
        """{'access_key', 'secret_key'} for S3, or None: the standard AWS chain (environment, files, instance role)."""
        return None

    def secrets(self) -> list[str]:
        """Values a rendered report must redact wherever they appear."""
        return []

    # -- tools ---------------------------------------------------------------------------------------------------
    def hadoop_command(self, sub: str, *args: str) -> list[str]:
        """`hadoop SUB ARGS...` (fs, distcp, jar, testdfsio)."""
        hadoop = shutil.which("hadoop")
        if not hadoop:
            raise PerfkitError("the `hadoop` command is not on PATH: run on a cluster node, or use the lab profile")
        return [hadoop, sub, *args]

    def testdfsio_command(self, *args: str) -> list[str]:
        """Hadoop's TestDFSIO benchmark with these arguments (it ships in the jobclient tests jar)."""
        jars = sorted(glob.glob(CLUSTER_TESTS_JARS))
        if not jars:
            raise PerfkitError(f"no TestDFSIO jar matches {CLUSTER_TESTS_JARS}: run on an EMR node, or set the path")
        return self.hadoop_command("jar", jars[-1], "TestDFSIO", *args)

    def gohdfs(self, profile) -> tuple[str, dict[str, str]]:
        """The gohdfs binary and its environment (the cluster's Hadoop configuration names the NameNode)."""
        found = shutil.which("gohdfs")
        if not found:
            raise PerfkitError("gohdfs is not on PATH: go install github.com/colinmarc/hdfs/v2/cmd/hdfs@v2.4.0 "
                               "and put it on PATH as gohdfs")
        return found, {"HADOOP_USER_NAME": profile.hdfs_user}

    def alluxio_shell(self, *args: str) -> list[str]:
        """`alluxio fs ARGS...`."""
        alluxio = shutil.which("alluxio")
        if not alluxio:
            raise PerfkitError("the `alluxio` command is not on PATH: run on a node of the Alluxio cluster, "
                               "or use the lab profile")
        return [alluxio, "fs", *args]

    # -- engines -------------------------------------------------------------------------------------------------
    def spark_conf(self, profile) -> dict[str, str]:
        """What perfkit's own Spark session needs beyond the profile's spark_conf to reach the storages."""
        if profile.metastore_uri:  # the metastore the other engines share; empty: the cluster's own configuration
            return {"spark.sql.catalogImplementation": "hive",
                    "spark.hadoop.hive.metastore.uris": profile.metastore_uri}
        return {}

    def spark_environment(self) -> dict[str, str]:
        """Environment variables set (if unset) before perfkit's Spark session starts."""
        return {}

    def check_spark(self, profile) -> None:
        """Refuse (PerfkitError with the fix) a Spark session that cannot start where the profile says it runs."""

    def notebook_kernel(self) -> tuple[str, dict[str, str]] | None:
        """The Jupyter kernel a report of this profile runs on, when it is not the notebook's own: its name and the
        environment that finds it (JUPYTER_PATH). None: the notebook's kernel."""
        return None

    def cluster(self) -> dict[str, str]:
        """The cluster's shape as far as this provider knows it (nodes, DataNodes, replication, YARN), for every
        record and report: where a run ran matters as much as what ran."""
        return {}

    def conditions(self, profile) -> dict:
        """What a run's verdicts depend on that can change under it (perfkit.experiments.conditions), as the cluster's
        NameNode says it: the DataNodes it hears from (silent for more than STALE_S: not counted) and its
        under-replicated blocks. YARN's NodeManagers are the lab's to add (a cluster's ResourceManager takes minutes
        to call one lost). {} when the NameNode cannot be read."""
        return namenode_conditions(profile.webhdfs_url)

    def after_datanode_loss(self, profile, before: dict, after: dict) -> str:
        """Before the next timing after a DataNode was lost (perfkit.experiments.conditions): wait until HDFS has
        re-replicated its blocks (or say why not), as the NameNode counts them (wait_for_replication)."""
        if not after.get("datanodes"):
            return "no DataNode left to copy its blocks to: runs on HDFS fail until one is back (not waited for)"
        url = profile.webhdfs_url
        if "dead_datanodes" not in before:
            return "the NameNode was not read before the loss: whether HDFS re-replicated its blocks is not known"
        return wait_for_replication(lambda: namenode_replication(url), before["dead_datanodes"],
                                    namenode_dead_after_s(url))

    def empty_trino_cache(self) -> str:
        """Empty Trino's file-system cache; what was done, in words."""
        return "Trino's cache not emptied: its folders are on the cluster's workers (empty them there)"

    def trino_cache_catalog(self, profile) -> str:
        """The Trino catalog that reads through the file-system cache now: the profile's."""
        return profile.trino_cache_catalog

    # -- what to tell the user -----------------------------------------------------------------------------------
    def fix(self, service: str, on_cluster: str) -> str:
        """The fix to print when `service` does not answer: on a cluster, `on_cluster` (which profile settings to
        check); the lab says how to start it."""
        return on_cluster

    def task_logs(self) -> str:
        """Where a failed Hive task's own error is logged."""
        return "the job's task logs: `yarn logs -applicationId ...` on the cluster"

    def more_datanodes(self, count: int) -> str:
        """How to get `count` live DataNodes, as the start of a sentence ending in another fix; '' if not ours."""
        return ""

    def no_nfs_mount(self) -> str:
        """Why there is no NFS mount, beyond the empty profile setting ('' when nothing more is known)."""
        return ""

    def s3_impostor(self, profile) -> tuple[str, str] | None:
        """When S3 refuses: (problem, fix) if another program answers where the provider's own S3 server should."""
        return None

    def s3_clients_elsewhere(self, profile) -> tuple[str, str] | None:
        """(problem, fix) when engines or tools that the provider configures (long-running servers) send their S3
        requests somewhere else than the profile's s3_endpoint: a run would measure another S3 than it records."""
        return None

    # -- where S3 sits ---------------------------------------------------------------------------------------------
    def network(self):
        """The emulated network S3 sits behind (perfkit.network.NetworkProfile), or None: S3 at its real distance."""
        return None

    def use_network(self, network) -> list[str]:
        """Put S3 behind `network` (a NetworkProfile); returns the services that restarted to follow."""
        raise PerfkitError(f"network={network.name!r} emulates a distance between the embedded lab and its S3 server; "
                           "on a cluster S3 is where it is, and perfkit measures that path (the calibration in every "
                           "record). Fix: leave network empty with this profile")

    def direct_s3_endpoint(self, profile) -> str | None:
        """When S3 sits behind an emulated network: the S3 server's own address (the calibration measures both)."""
        return None

    # -- where the data lands on this machine --------------------------------------------------------------------
    def nfs_export(self) -> Path | None:
        """The folder the NFS server exports, when it is on this machine (else the profile's nfs_mount is used)."""
        return None

    def local_disk(self) -> Path | None:
        """The folder on this machine's disk where the storages keep their bytes (S3's objects, HDFS's blocks);
        None when the storages are elsewhere. Room is checked there before writing."""
        return None

    def hdfs_blocks(self) -> Path | None:
        """The folder where the DataNodes keep their blocks, when they run on this machine (its disk is sampled)."""
        return None

    def versions(self) -> dict[str, str]:
        """Versions of what the provider runs that no engine reports (the lab's Hadoop)."""
        return {}

    # -- what the storages count ------------------------------------------------------------------------------
    def s3_request_log(self) -> Path | None:
        """A file where the S3 server logs every request it answers, on this machine (the lab's server); None: on
        AWS the server-side count is CloudWatch's request metrics, per window (s3_request_window)."""
        return None

    def s3_request_window(self, profile) -> dict | None:
        """Where S3's own count of an experiment's requests comes from, per window of its runs (CloudWatch counts per
        minute, not per run: perfkit.accounting.window builds the window): the bucket, prefix, metrics filter and
        region, when the profile asks for it with `s3_request_metrics: true` or names a filter
        (`s3_request_metrics_filter`); else None."""
        if not (profile.s3_request_metrics or profile.s3_request_metrics_filter):
            return None
        return {"bucket": profile.s3_bucket, "prefix": profile.s3_key() + "/",
                "filter_id": profile.s3_request_metrics_filter, "region": profile.s3_region}

    def s3_wire_bytes(self):
        """A callable that returns the bytes S3 has sent to its clients so far ({"s3_bytes_read": n}), counted on the
        way (the lab's network emulator carries every response); None when nothing on the path counts them."""
        return None

    def s3_bytes_not_counted(self) -> str:
        """Why the server's count of a run on S3 has no bytes, where s3_wire_bytes() gives nothing."""
        return "not counted: nothing between the engine and S3 counts the bytes S3 sends"


STALE_S = 30.0  # a DataNode the NameNode has not heard from for longer is not counted: HDFS's own stale interval
REPLICATE_WITHIN_S = 300.0  # after the NameNode calls a DataNode dead: re-replication of a lab's or a test's data
POLL_S = 1.0
HDFS_DEAD_DEFAULTS = {"dfs.namenode.heartbeat.recheck-interval": 300_000, "dfs.heartbeat.interval": 3}  # ms, s


def namenode_replication(namenode_url: str) -> dict:
    """The NameNode's counts a lost DataNode moves: dead DataNodes, under-replicated, pending and missing blocks
    (FSNamesystemState, FSNamesystem); {} when it cannot be read."""
    import requests

    def bean(name: str) -> dict:
        response = requests.get(f"{namenode_url.rstrip('/')}/jmx", params={"qry": name}, timeout=5)
        response.raise_for_status()
        return (response.json().get("beans") or [{}])[0]

    try:
        state, names = bean("Hadoop:service=NameNode,name=FSNamesystemState"), bean(
            "Hadoop:service=NameNode,name=FSNamesystem")
    except (OSError, ValueError, requests.RequestException):
        return {}
    return {"dead": int(state.get("NumDeadDataNodes") or 0),
            "under_replicated": int(names.get("UnderReplicatedBlocks") or 0),
            "pending": int(names.get("PendingReplicationBlocks") or 0),
            "missing": int(names.get("MissingBlocks") or 0)}


def wait_for_replication(read: Callable[[], dict], dead_before: int, dead_within_s: float,
                         replicate_within_s: float = REPLICATE_WITHIN_S, clock: Callable[[], float] = time.monotonic,
                         sleep: Callable[[float], None] = time.sleep) -> str:
    """After a DataNode was lost: wait until the NameNode calls it dead (it waits dead_within_s: 2 x
    dfs.namenode.heartbeat.recheck-interval + 10 x dfs.heartbeat.interval, 630 s at Hadoop's defaults), then until
    it has copied the blocks it held to the others (no under-replicated or pending block); say how it went, in words
    for the run's record. `read()` gives the NameNode's counts: dead, under_replicated, pending, missing ({} when it
    cannot be read)."""
    started = clock()
    state = read()
    while state.get("dead", dead_before) <= dead_before and clock() - started < dead_within_s + 5 * POLL_S:
        sleep(POLL_S)
        state = read()
    if not state:
        return "the NameNode could not be read: whether HDFS re-replicated the lost DataNode's blocks is not known"
    if state.get("dead", dead_before) <= dead_before:
        return (f"the NameNode had not called the DataNode dead after {clock() - started:.0f} s (it waits 2 x "
                "dfs.namenode.heartbeat.recheck-interval + 10 x dfs.heartbeat.interval): not waited for; the runs "
                "after read the lost DataNode's blocks from their other replicas")
    dead_after = clock() - started
    while (state.get("under_replicated", 0) or state.get("pending", 0)) and \
            clock() - started < dead_after + replicate_within_s:
        sleep(POLL_S)
        state = read() or state
    missing = int(state.get("missing", 0) or 0)
    lost = f"; {_blocks(missing)} missing (their only replica was on it): reads of them fail" if missing else ""
    left = int(state.get("under_replicated", 0) or 0) + int(state.get("pending", 0) or 0)
    if left:
        return (f"{_blocks(left)} still under-replicated {clock() - started:.0f} s after the loss (called "
                f"dead after {dead_after:.0f} s): the runs after read them with a replica fewer{lost}")
    return (f"HDFS re-replicated the lost DataNode's blocks {clock() - started:.0f} s after the loss (called dead "
            f"after {dead_after:.0f} s), before the next step{lost}")


def _blocks(n: int) -> str:
    return f"{n} block{'' if n == 1 else 's'}"  # (perfkit.findings.plural needs numpy, which the lab installs later)


def namenode_dead_after_s(namenode_url: str) -> float:
    """How long the NameNode waits before it calls a silent DataNode dead: 2 x dfs.namenode.heartbeat.recheck-interval
    (ms) + 10 x dfs.heartbeat.interval (s), from its own configuration (/conf), Hadoop's defaults where unread."""
    import requests

    found = dict(HDFS_DEAD_DEFAULTS)
    try:
        response = requests.get(f"{namenode_url.rstrip('/')}/conf", params={"format": "json"}, timeout=5)
        response.raise_for_status()
        for entry in response.json().get("properties") or []:
            if entry.get("key") in found:
                found[entry["key"]] = float(str(entry.get("value")).rstrip("s") or found[entry["key"]])
    except (OSError, ValueError, requests.RequestException):
        pass
    return 2 * found["dfs.namenode.heartbeat.recheck-interval"] / 1000 + 10 * found["dfs.heartbeat.interval"]


def namenode_conditions(namenode_url: str) -> dict:
    """{"datanodes": the transfer addresses of the DataNodes heard from within STALE_S, "under_replicated_blocks": n,
    "dead_datanodes": the NameNode's count of DataNodes it called dead} from its JMX (NameNodeInfo's LiveNodes,
    FSNamesystem, FSNamesystemState); {} when it cannot be read."""
    import json

    import requests

    def bean(name: str) -> dict:
        response = requests.get(f"{namenode_url.rstrip('/')}/jmx", params={"qry": name}, timeout=5)
        response.raise_for_status()
        return (response.json().get("beans") or [{}])[0]

    try:
        live = json.loads(bean("Hadoop:service=NameNode,name=NameNodeInfo").get("LiveNodes") or "{}")
        blocks = bean("Hadoop:service=NameNode,name=FSNamesystem").get("UnderReplicatedBlocks")
        dead = bean("Hadoop:service=NameNode,name=FSNamesystemState").get("NumDeadDataNodes")
    except (OSError, ValueError, requests.RequestException):
        return {}
    heard = sorted(node.get("xferaddr", name) for name, node in live.items()
                   if float(node.get("lastContact", 0)) <= STALE_S)
    return {"datanodes": heard, **({"under_replicated_blocks": int(blocks)} if blocks is not None else {}),
            **({"dead_datanodes": int(dead)} if dead is not None else {})}
