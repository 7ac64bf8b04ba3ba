"""HDFS's own count of what it served, from the JMX servlet of the NameNode and of every live DataNode.

NameNodeActivity: GetBlockLocations (a file opened for reading), GetListingOps; DataNodeActivity-<host>-<port>:
BytesRead, RemoteBytesRead (to a reader on another host), ReadBlockOpNumOps (a rate: its count), BytesWritten.
The DataNodes are found through the NameNode (NameNodeInfo's LiveNodes, each with its HTTP address), so the same
code reads a one-machine lab and a cluster.
Each read is fresh: perfkit.jmx_freshness. They are read around each run only where the daemons refresh their JMX
often enough (PER_RUN_PERIOD_S); else over an experiment's window (perfkit.accounting.hdfs_window)."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import requests

from perfkit.jmx_freshness import FreshReads, fresh_after
from perfkit.kept_alive_http import KeptAliveHttp
from perfkit.storages.base import ServerCounting

NAMENODE_ACTIVITY = "Hadoop:service=NameNode,name=NameNodeActivity"
NAMENODE_INFO = "Hadoop:service=NameNode,name=NameNodeInfo"
DATANODE_ACTIVITY = "Hadoop:service=DataNode,name=DataNodeActivity-*"
NAMENODE_COUNTERS = {"hdfs_block_locations": "GetBlockLocations", "hdfs_listings": "GetListingOps"}
# RemoteBytesRead: what a DataNode sent to a reader on another host (a reader whose address is not the DataNode's own)
DATANODE_COUNTERS = {"hdfs_bytes_read": "BytesRead", "hdfs_read_ops": "ReadBlockOpNumOps",
                     "hdfs_bytes_written": "BytesWritten", "hdfs_remote_bytes_read": "RemoteBytesRead"}
TIMEOUT_S = 5.0
# HDFS's own counters are read around each run only where its daemons refresh their JMX at least this often: each
# read must wait a metrics period after the one before (perfkit.jmx_freshness), so at Hadoop's default 10 s a run on
# HDFS would be held up to 10 s by its after read, and the next one by its before read
PER_RUN_PERIOD_S = 0.1


def beans(url: str, query: str, session=requests) -> list[dict]:
    response = session.get(f"{url.rstrip('/')}/jmx", params={"qry": query}, timeout=TIMEOUT_S)
    response.raise_for_status()
    return response.json().get("beans", [])


def datanode_urls(namenode_url: str, session=requests) -> list[str]:
    """The HTTP address of every live DataNode, as the NameNode knows it (infoAddr; the scheme of the NameNode's)."""
    info = beans(namenode_url, NAMENODE_INFO, session)
    live = json.loads(info[0]["LiveNodes"]) if info else {}
    scheme = namenode_url.split("://", 1)[0]
    return sorted(f"{scheme}://{node['infoAddr']}" for node in live.values() if node.get("infoAddr"))


def pick(bean: dict, names: dict[str, str]) -> dict[str, float]:
    return {ours: float(bean[theirs]) for ours, theirs in names.items() if theirs in bean}


class HdfsJmx:
    """Cumulative counters of the NameNode and every live DataNode, summed. The NameNode and the DataNodes are asked
    side by side, over kept-alive connections (perfkit.kept_alive_http): a run pays two snapshots, and each was a
    round trip per daemon one after the other (about 4 ms each on the lab; on a cluster, one per DataNode).
    Only the NameNode keeps its connection: a DataNode's web port is a Netty proxy (SimpleHttpProxyHandler) that
    connects to the DataNode's own Jetty for each request and asks it with `Connection: close`, so each DataNode read
    pays two new connections (on the lab, after 200 ms idle: 2.5 ms, against 1.3 ms for the NameNode)."""

    name = "HDFS NameNode and DataNode JMX"
    storage = "hdfs"
    AT_ONCE = 8  # daemons asked at the same time

    def __init__(self, namenode_url: str, period_s: float = 10.0, new_session=KeptAliveHttp):
        self.namenode_url, self.session = namenode_url, new_session()  # its connections: one per thread and daemon
        self._pool = ThreadPoolExecutor(self.AT_ONCE, thread_name_prefix="hdfs-jmx")  # threads made when first asked
        self._fresh = FreshReads(period_s)
        self._datanodes: list[str] | None = None  # found once through the NameNode, again when one does not answer

    def read(self) -> dict[str, float]:
        return self._fresh(self._read)

    def _read(self) -> dict[str, float]:
        namenode = self._pool.submit(lambda: beans(self.namenode_url, NAMENODE_ACTIVITY, self.session))
        try:
            datanodes = self._datanode_beans(self._datanodes or datanode_urls(self.namenode_url, self.session))
        except requests.RequestException:  # a DataNode went or moved: ask the NameNode again
            datanodes = self._datanode_beans(datanode_urls(self.namenode_url, self.session))
        found: dict[str, float] = {}
        for bean in namenode.result():
            found.update(pick(bean, NAMENODE_COUNTERS))
        for bean in datanodes:
            for name, value in pick(bean, DATANODE_COUNTERS).items():
                found[name] = found.get(name, 0.0) + value
        return found

    def _datanode_beans(self, urls: list[str]) -> list[dict]:
        def ask(url):
            return beans(url, DATANODE_ACTIVITY, self.session)

        # one DataNode (the lab): asked here, while the NameNode is asked on another thread; a hand-off costs more
        answers = self._pool.map(ask, urls) if len(urls) > 1 else [ask(url) for url in urls]
        found = [bean for answer in answers for bean in answer]
        self._datanodes = urls
        return found


def hdfs_server_counting(profile) -> ServerCounting | None:
    """The NameNode's and the DataNodes' JMX, read around each run where the profile's daemons refresh it often
    enough, else why not; None where the profile names no NameNode web address."""
    if not profile.webhdfs_url:
        return None
    period = profile.hadoop_metrics_period_s
    if hdfs_per_run(profile):
        return ServerCounting([HdfsJmx(profile.webhdfs_url, period)])
    return ServerCounting(not_per_run=hdfs_not_per_run(period))


def hdfs_per_run(profile) -> bool:
    """Whether HDFS's own counters are read around each run (else over an experiment's window: hdfs_window)."""
    return profile.hadoop_metrics_period_s <= PER_RUN_PERIOD_S


def hdfs_not_per_run(period_s: float) -> str:
    return (f"not counted per run but over the experiment's window (its HDFS window): HDFS's daemons refresh their "
            f"JMX every {period_s:g} s (the profile's hadoop_metrics_period_s), and a fresh read before and after each "
            f"run would hold it up to {fresh_after(period_s):.3g} s. To count each run, set "
            f"*.periodMillis={PER_RUN_PERIOD_S * 1000:g} in "
            f"hadoop-metrics2.properties on the NameNode and the DataNodes, restart them, and set "
            f"hadoop_metrics_period_s: {PER_RUN_PERIOD_S:g} in the profile")
