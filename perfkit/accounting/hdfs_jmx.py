"""HDFS's own count of what it served, from the JMX servlet of the NameNode and of every live DataNode.

NameNodeActivity: GetBlockLocations (a file opened for reading), GetListingOps; DataNodeActivity-<host>-<port>:
BytesRead, RemoteBytesRead (to a reader on another host), ReadBlockOpNumOps (a rate: its count), BytesWritten.
The DataNodes are found through the NameNode (NameNodeInfo's LiveNodes, each with its HTTP address), so the same
code reads a one-machine lab and a cluster.
Each read is fresh: perfkit.accounting.metrics_period."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import requests

from perfkit.accounting.metrics_period import FreshReads
from perfkit.kept_alive_http import KeptAliveHttp

NAMENODE_ACTIVITY = "Hadoop:service=NameNode,name=NameNodeActivity"
NAMENODE_INFO = "Hadoop:service=NameNode,name=NameNodeInfo"
DATANODE_ACTIVITY = "Hadoop:service=DataNode,name=DataNodeActivity-*"
NAMENODE_COUNTERS = {"hdfs_block_locations": "GetBlockLocations", "hdfs_listings": "GetListingOps"}
# RemoteBytesRead: what a DataNode sent to a reader on another host (a reader whose address is not the DataNode's own)
DATANODE_COUNTERS = {"hdfs_bytes_read": "BytesRead", "hdfs_read_ops": "ReadBlockOpNumOps",
                     "hdfs_bytes_written": "BytesWritten", "hdfs_remote_bytes_read": "RemoteBytesRead"}
TIMEOUT_S = 5.0


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
