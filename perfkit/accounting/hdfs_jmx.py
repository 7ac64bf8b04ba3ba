"""HDFS's own count of what it served, from the JMX servlet of the NameNode and of every live DataNode.

NameNodeActivity: GetBlockLocations (a file opened for reading), GetListingOps; DataNodeActivity-<host>-<port>:
BytesRead, ReadBlockOpNumOps (a rate: its count), BytesWritten. The DataNodes are found through the NameNode
(NameNodeInfo's LiveNodes, each with its HTTP address), so the same code reads a one-machine lab and a cluster.

Hadoop's metrics system refreshes what JMX shows at most once per metrics period (`*.period`, 10 s by default):
but the first read after a period has passed is fresh (MetricsSourceAdapter.updateJmxCache). So each read waits
until a period has passed since the one before: on a cluster at the default 10 s that is up to 10 s between a run's
two snapshots; the lab sets the period to 100 ms."""
from __future__ import annotations

import json
import time

import requests

NAMENODE_ACTIVITY = "Hadoop:service=NameNode,name=NameNodeActivity"
NAMENODE_INFO = "Hadoop:service=NameNode,name=NameNodeInfo"
DATANODE_ACTIVITY = "Hadoop:service=DataNode,name=DataNodeActivity-*"
NAMENODE_COUNTERS = {"hdfs_block_locations": "GetBlockLocations", "hdfs_listings": "GetListingOps"}
DATANODE_COUNTERS = {"hdfs_bytes_read": "BytesRead", "hdfs_read_ops": "ReadBlockOpNumOps",
                     "hdfs_bytes_written": "BytesWritten"}
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
    """Cumulative counters of the NameNode and every live DataNode, summed."""

    name = "HDFS NameNode and DataNode JMX"
    storage = "hdfs"

    def __init__(self, namenode_url: str, period_s: float = 10.0):
        self.namenode_url, self.period_s = namenode_url, period_s
        self.session = requests.Session()  # kept-alive: a snapshot costs round trips, not handshakes
        self._last_read = -float("inf")
        self._datanodes: list[str] | None = None  # found once through the NameNode, again when one does not answer

    def read(self) -> dict[str, float]:
        wait = self._last_read + self.period_s * 1.1 - time.monotonic()  # 10% for the daemons' clocks and timers
        if wait > 0:
            time.sleep(wait)
        try:
            return self._read()
        finally:
            self._last_read = time.monotonic()  # after the last bean came back: its refresh was before

    def _read(self) -> dict[str, float]:
        found: dict[str, float] = {}
        for bean in beans(self.namenode_url, NAMENODE_ACTIVITY, self.session):
            found.update(pick(bean, NAMENODE_COUNTERS))
        try:
            datanodes = self._datanode_beans(self._datanodes or datanode_urls(self.namenode_url, self.session))
        except requests.RequestException:  # a DataNode went or moved: ask the NameNode again
            datanodes = self._datanode_beans(datanode_urls(self.namenode_url, self.session))
        for bean in datanodes:
            for name, value in pick(bean, DATANODE_COUNTERS).items():
                found[name] = found.get(name, 0.0) + value
        return found

    def _datanode_beans(self, urls: list[str]) -> list[dict]:
        found = [bean for url in urls for bean in beans(url, DATANODE_ACTIVITY, self.session)]
        self._datanodes = urls
        return found
