"""The lab's Livy, a stand-in (perfkit.lab.livy_server: Apache Livy cannot be installed here), in the cluster shape
only: sparkmagic's PySpark kernel sends each notebook cell there, and a session runs it beside a Spark 3.5.6 driver on
the lab's YARN, as EMR's Livy does."""
from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

from perfkit.lab import cluster_spark, versions
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts


class Livy(Service):
    name = "livy"
    needs = ("yarn", "hive-metastore")  # a session's Spark runs on YARN and reads the tables the metastore keeps
    cluster_only = True

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.daemons = [Daemon("livy", home, "perfkit.lab.livy_server", ports={"livy": ports.livy})]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.ports.livy}"

    def addresses(self) -> dict[str, str]:
        return {"livy": f"{self.url} (a stand-in for Apache Livy's REST API: pyspark sessions, Spark "
                        f"{versions.CLUSTER_SPARK} on YARN)"}

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return [sys.executable, "-m", "perfkit.lab.livy_server", "--host", HOST, "--port", str(self.ports.livy),
                "--logs", str(self.home / "logs"), "--yarn", f"http://{HOST}:{self.ports.yarn_web}"]

    def start(self) -> None:
        if self.daemon.pid() is None:
            self.daemon.start(self.argv(), env={"PERFKIT_LIVY_PYTHON": str(cluster_spark.python()),
                                                "PYTHONPATH": str(cluster_spark.source_root()),
                                                "PERFKIT_LAB_HOME": str(self.home)})
        self.wait_healthy(self.daemon, 30, "read the log; is another program on the Livy port (PERFKIT_LAB_PORT_LIVY)?")

    def health(self) -> tuple[bool, str]:
        try:
            with urllib.request.urlopen(f"{self.url}/sessions", timeout=5) as answer:
                sessions = json.load(answer)
        except (OSError, urllib.error.URLError, ValueError) as err:
            return False, f"GET /sessions failed: {str(err)[:80]}"
        return True, f"{sessions['total']} session(s)"
