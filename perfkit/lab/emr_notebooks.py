"""The lab's stand-in for EMR notebook executions (perfkit.lab.emr_notebooks_server), cluster shape only: `perfkit emr
run` reaches it through boto3's endpoint settings (AWS_ENDPOINT_URL_EMR, AWS_ENDPOINT_URL_S3) with the lab's keys, and
it executes the workspace's notebook with papermill on the kernel the notebook declares, as EMR Studio offers them:
`python3`, the master node's Python (Spark 3.5.6's, which starts its SparkSession on the lab's YARN itself), or
sparkmagic's `pysparkkernel`, whose cells run in a session of the lab's Livy."""
from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

from perfkit.lab import cluster_spark, sparkmagic_kernel, versions
from perfkit.lab.emr_notebooks_server import LAB_CLUSTER, WORKSPACES
from perfkit.lab.livy import Livy
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import BUCKET, HOST, LabPorts, lab_credentials, lab_s3_endpoint


class EmrNotebooks(Service):
    name = "emr-notebooks"
    needs = ("livy", "s3")
    cluster_only = True

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.daemons = [Daemon("emr-notebooks", home, "perfkit.lab.emr_notebooks_server",
                               ports={"emr_notebooks": ports.emr_notebooks})]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.ports.emr_notebooks}"

    def addresses(self) -> dict[str, str]:
        return {"emr-notebooks": f"{self.url} (a stand-in for EMR's notebook executions: cluster {LAB_CLUSTER}, "
                                 f"workspaces in s3://{BUCKET}/{WORKSPACES}/<editor id>/)"}

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return [sys.executable, "-m", "perfkit.lab.emr_notebooks_server", "--host", HOST,
                "--port", str(self.ports.emr_notebooks), "--work", str(self.home / "emr-notebooks"), "--bucket", BUCKET]

    def start(self) -> None:
        if self.daemon.pid() is None:
            creds = lab_credentials(home=self.home)
            kernel = sparkmagic_kernel.install(self.home, Livy(self.home, self.ports).url)
            cluster_spark.write_kernel(Path(kernel["JUPYTER_PATH"]), "python3",
                                       f"Python 3 (the master node's, Spark {versions.CLUSTER_SPARK})")
            self.daemon.start(self.argv(), env={
                **kernel, "PERFKIT_EMR_S3_ENDPOINT": lab_s3_endpoint(self.ports, self.home),
                "AWS_ACCESS_KEY_ID": creds["access_key"], "AWS_SECRET_ACCESS_KEY": creds["secret_key"]})
        self.wait_healthy(self.daemon, 30,
                          "read the log; is another program on its port (PERFKIT_LAB_PORT_EMR_NOTEBOOKS)?")

    def health(self) -> tuple[bool, str]:
        request = urllib.request.Request(self.url, data=b"{}", method="POST", headers={
            "X-Amz-Target": "ElasticMapReduce.ListNotebookExecutions", "Content-Type": "application/x-amz-json-1.1"})
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                listed = json.load(answer)["NotebookExecutions"]
        except (OSError, ValueError, KeyError) as err:
            return False, f"ListNotebookExecutions failed: {str(err)[:80]}"
        return True, f"{len(listed)} execution(s)"
