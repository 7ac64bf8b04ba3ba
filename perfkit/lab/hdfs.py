"""A real one-machine HDFS: one NameNode and one DataNode, from the Maven Central jars."""
from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from xml.sax.saxutils import escape

from perfkit.errors import ServiceError
from perfkit.lab import tools
from perfkit.lab.process import Daemon
from perfkit.lab.settings import HOST, LabPorts, lab_credentials
from perfkit.spark_settings import lab_spark_conf

HEAP = "-Xmx512m"


def site_xml(props: dict[str, object]) -> str:
    body = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n" for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


class Hdfs:
    name = "hdfs"

    def __init__(self, home: Path, ports: LabPorts):
        self.home, self.ports = home, ports
        self.conf_dir = home / "hadoop-conf"
        self.namenode = Daemon("namenode", home, "org.apache.hadoop.hdfs.server.namenode.NameNode")
        self.datanode = Daemon("datanode", home, "org.apache.hadoop.hdfs.server.datanode.DataNode")
        self.daemons = [self.namenode, self.datanode]

    @property
    def http(self) -> str:
        return f"http://{HOST}:{self.ports.namenode_http}"

    def addresses(self) -> dict[str, str]:
        return {
            "namenode": f"hdfs://{HOST}:{self.ports.namenode_rpc} (web {self.http})",
            "datanode": f"{HOST}:{self.ports.datanode}",
        }

    def ports_needed(self) -> dict[str, int]:
        p = self.ports
        return {"namenode_rpc": p.namenode_rpc, "namenode_http": p.namenode_http, "datanode": p.datanode,
                "datanode_http": p.datanode_http, "datanode_ipc": p.datanode_ipc}

    def write_config(self) -> None:
        p, data = self.ports, self.home / "hdfs"
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        s3a = {k.removeprefix("spark.hadoop."): v for k, v in lab_spark_conf(p, lab_credentials(home=self.home)).items()
               if k.startswith("spark.hadoop.fs.s3a.")}
        core = self.conf_dir / "core-site.xml"
        core.write_text(site_xml({
            "fs.defaultFS": f"hdfs://{HOST}:{p.namenode_rpc}",
            "hadoop.tmp.dir": self.home / "tmp",
            **s3a,  # the lab's own S3 for `hadoop fs` and DistCp
        }))
        core.chmod(0o600)  # it holds the lab's S3 keys
        (self.conf_dir / "hdfs-site.xml").write_text(site_xml({
            "dfs.namenode.name.dir": data / "name",
            "dfs.datanode.data.dir": data / "data",
            "dfs.replication": 1,  # one DataNode
            "dfs.permissions.enabled": "false",
            "dfs.namenode.safemode.extension": 0,
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.namenode.rpc-address": f"{HOST}:{p.namenode_rpc}",
            "dfs.namenode.http-address": f"{HOST}:{p.namenode_http}",
            "dfs.namenode.secondary.http-address": f"{HOST}:0",
            "dfs.datanode.address": f"{HOST}:{p.datanode}",
            "dfs.datanode.http.address": f"{HOST}:{p.datanode_http}",
            "dfs.datanode.ipc.address": f"{HOST}:{p.datanode_ipc}",
            "dfs.datanode.hostname": HOST,
        }))
        (self.conf_dir / "mapred-site.xml").write_text(site_xml({"mapreduce.framework.name": "local"}))

    def java(self, main_class: str, *args: str) -> list[str]:
        java = tools.java_home() / "bin" / "java"
        classpath = f"{self.conf_dir}:{tools.hadoop_lib()}/*"
        return [str(java), HEAP, f"-Dhadoop.log.dir={self.home / 'logs'}", "-cp", classpath, main_class, *args]

    def start(self) -> None:
        self.write_config()
        if not (self.home / "hdfs" / "name" / "current" / "VERSION").exists():
            run = subprocess.run(
                self.java("org.apache.hadoop.hdfs.server.namenode.NameNode", "-format", "-nonInteractive", "-force"),
                capture_output=True, text=True,
            )
            if run.returncode != 0:
                raise ServiceError("namenode", f"format failed:\n{run.stderr[-1500:]}", "remove the lab home and retry")
        fix = "read the log; `perfkit lab down` then `perfkit lab up` restarts it"
        if self.namenode.pid() is None:
            self.namenode.start(self.java("org.apache.hadoop.hdfs.server.namenode.NameNode"))
        self.namenode.wait_until(lambda: self._namenode_state() is not None, 90, fix)
        if self.datanode.pid() is None:
            self.datanode.start(self.java("org.apache.hadoop.hdfs.server.datanode.DataNode"))
        self.datanode.wait_until(lambda: self.health()[0], 90, fix)

    def stop(self) -> list[str]:
        return [d.name for d in (self.datanode, self.namenode) if d.stop()]

    def _namenode_state(self) -> dict | None:
        try:
            url = f"{self.http}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState"
            with urllib.request.urlopen(url, timeout=2) as resp:
                return json.load(resp)["beans"][0]
        except (OSError, ValueError, IndexError, KeyError):
            return None

    def health(self) -> tuple[bool, str]:
        state = self._namenode_state()
        if state is None:
            return False, "NameNode web endpoint does not answer"
        live = state.get("NumLiveDataNodes", 0)
        if live < 1:
            return False, "no live DataNode"
        if state.get("FSState") != "Operational":
            return False, f"NameNode {state.get('FSState')}"
        return True, f"{live} live DataNode"
