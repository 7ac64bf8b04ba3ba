"""The lab's shape: one process (Spark local, MapReduce local, one DataNode), or a cluster's (YARN with two
NodeManagers, three DataNodes holding two replicas of each block, every node on a loopback address of its own).

The shape is kept in the lab home, as the S3 network is, and changes only while the lab is down: a running HDFS
cannot trade its DataNodes for others, nor a running Hive its MapReduce.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from perfkit import atomic
from perfkit.errors import PerfkitError
from perfkit.lab.settings import HOST, checked_home, datanode_count

SHAPE_FILE = "shape.json"  # in the lab home
ONE_PROCESS, CLUSTER = "one-process", "cluster"
# Linux routes all of 127.0.0.0/8 to the loopback interface: node i of the cluster shape is 127.0.0.(i + 2), so HDFS
# and YARN see distinct hosts, and a reader on one node is local to that node's DataNode only
FIRST_NODE = 2


@dataclass(frozen=True)
class LabShape:
    name: str
    datanodes: int
    replication: int  # what the lab's engines and tools write (dfs.replication)
    node_managers: int  # YARN NodeManagers; 0: no YARN (Spark local, MapReduce local)

    @property
    def yarn(self) -> bool:
        return self.node_managers > 0

    def node_host(self, i: int) -> str:
        """The loopback address of node i (its DataNode, and its NodeManager if it has one)."""
        return f"127.0.0.{FIRST_NODE + i}" if self.yarn else HOST

    def describe(self) -> str:
        if not self.yarn:
            return f"{self.name} (Spark local, MapReduce local, {self.datanodes} DataNode{'s' * (self.datanodes > 1)})"
        nodes = ", ".join(self.node_host(i) for i in range(self.datanodes))
        return (f"{self.name} (YARN: {self.node_managers} NodeManagers; HDFS: {self.datanodes} DataNodes, "
                f"replication {self.replication}; nodes {nodes})")


def shape_named(name: str) -> LabShape:
    if name == ONE_PROCESS:
        return LabShape(ONE_PROCESS, datanodes=datanode_count(), replication=1, node_managers=0)
    if name == CLUSTER:
        return LabShape(CLUSTER, datanodes=3, replication=2, node_managers=2)
    raise PerfkitError(f"lab shape {name!r} is not known: give {ONE_PROCESS} (the default) or {CLUSTER}")


def current_shape(home: Path | None = None) -> LabShape:
    """The shape the lab has (one-process when none was set)."""
    path = checked_home(home) / SHAPE_FILE
    if not path.is_file():
        return shape_named(ONE_PROCESS)
    try:
        name = json.loads(path.read_text(encoding="utf-8"))["name"]
    except (ValueError, KeyError, TypeError) as err:
        raise PerfkitError(f"lab: the shape setting {path} is unreadable ({err}). Fix: `perfkit lab down`, then "
                           "`perfkit lab up --shape one-process` (or cluster)") from None
    return shape_named(name)


def node_env(host: str) -> dict[str, str]:
    """The environment that puts a process on its node's loopback address `host`: its wildcard binds there, its
    connections leaving from there (node_address.c, preloaded)."""
    from perfkit.lab import tools

    return {"LD_PRELOAD": str(tools.node_address_library()), "PERFKIT_BIND_HOST": host}


def lab_replication(home: Path | None = None) -> int:
    """The replication what the lab's engines and tools write gets: one replica in the one-process shape, two of
    three DataNodes in the cluster shape; a read experiment may ask for more per file."""
    return current_shape(home).replication


def save_shape(shape: LabShape, home: Path | None = None) -> None:
    path = checked_home(home) / SHAPE_FILE
    if shape.name == ONE_PROCESS:
        path.unlink(missing_ok=True)  # the default: a lab home without the file has it
    else:
        atomic.write_text(path, json.dumps(asdict(shape)) + "\n")
