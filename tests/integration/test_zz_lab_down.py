import re
from dataclasses import fields
from pathlib import Path

import pytest

from perfkit.lab.process import port_owner
from perfkit.lab.settings import DATANODE_PORT_STEP, HOST

MARKERS = ("org.apache.hadoop.hdfs.server", "HiveThriftServer2", "versitygw", "rclone", "HiveMetaStore",
           "org.apache.hive.service.server.HiveServer2", "io.trino.server.TrinoServer", "toxiproxy-server")


def _lab_processes(home: Path) -> list[str]:
    """The lab daemons that name a path under `home` (a lab beside it in /x/lab-2 is not this lab)."""
    under_home = re.compile(re.escape(str(home)) + r"(/|\s|$)")
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmdline for m in MARKERS) and under_home.search(cmdline):
            found.append(f"{proc.name}: {cmdline[:120]}")
    return found


@pytest.mark.lab_lifecycle
def test_lab_down_leaves_no_lab_process(lab):
    assert _lab_processes(lab.home)  # the lab was running
    stopped = lab.down()
    assert set(stopped) >= {"namenode", "datanode", "s3", "nfs", "hive-metastore", "hiveserver2", "spark-thrift",
                            "trino", "fuse-hdfs", "toxiproxy"}
    assert _lab_processes(lab.home) == []
    datanodes = len(lab.services[0].datanodes)
    ports = [getattr(lab.ports, f.name) + (DATANODE_PORT_STEP * i if f.name.startswith("datanode") else 0)
             for f in fields(lab.ports) for i in range(datanodes if f.name.startswith("datanode") else 1)]
    assert {port: port_owner(HOST, port) for port in ports if port_owner(HOST, port)} == {}  # no port left listening
    assert lab.pids() == [] and not any(row.healthy for row in lab.status())
    mounts = Path("/proc/self/mounts").read_text()
    assert str(lab.home / "mnt" / "hdfs") not in mounts  # the FUSE mount is gone too
