"""The lab's stand-in for EMR's notebook executions (an AWS-only service): the four calls of EMR's API that
`perfkit emr run` makes, over the protocol boto3 speaks to EMR (JSON 1.1, X-Amz-Target: ElasticMapReduce.<call>),
bound to loopback. moto's EMR has no notebook executions, hence a server of perfkit's own.

- StartNotebookExecution: the workspace (EditorId) is the folder emr-studio/<EditorId>/ of the lab's bucket, as an
  EMR Studio keeps a workspace in S3; the notebook is RelativePath inside it; ExecutionEngine.Id must be the lab's
  cluster (LAB_CLUSTER). papermill executes it on the kernel it declares (python3: the master node's Python, on
  the lab's YARN; or sparkmagic's pysparkkernel, against the lab's Livy stand-in), with NotebookParams written
  after the cell tagged `parameters`, and the executed notebook
  (and its HTML, for OutputNotebookFormat=HTML) goes to <output>/executions/<id>/<name>.ipynb, where <output> is
  OutputNotebookS3Location or the workspace.
- DescribeNotebookExecution, StopNotebookExecution, ListNotebookExecutions, with EMR's statuses (START_PENDING,
  STARTING, RUNNING, FINISHING, FINISHED, FAILING, FAILED, STOP_PENDING, STOPPING, STOPPED).

Every execution carries the tag STAND_IN_TAG, so a report made through it says it was not EMR.
Run: python -m perfkit.lab.emr_notebooks_server --port PORT --work FOLDER (S3: the lab's, from the environment)."""
from __future__ import annotations

import argparse
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

from perfkit.lab.json_http import JsonHandler

LAB_CLUSTER = "j-PERFKITLAB"
STAND_IN_TAG = {"Key": "perfkit:executed-by",
                "Value": "the lab's stand-in for EMR notebook executions"}  # emr.EXECUTED_BY_TAG
WORKSPACES = "emr-studio"  # the bucket's folder of workspaces: emr-studio/<EditorId>/...
ENDED = ("FINISHED", "FAILED", "STOPPED")


class ApiError(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Execution:
    def __init__(self, execution_id: str, request: dict):
        self.id, self.request = execution_id, request
        self.status, self.reason = "START_PENDING", None
        self.start, self.end = time.time(), None
        self.output_uri: str | None = None
        self.process: subprocess.Popen | None = None

    def description(self) -> dict:
        r = self.request
        described = {"NotebookExecutionId": self.id, "EditorId": r["EditorId"], "ExecutionEngine": r["ExecutionEngine"],
                     "NotebookExecutionName": r.get("NotebookExecutionName", ""), "Status": self.status,
                     "StartTime": self.start, "Arn": f"arn:aws:elasticmapreduce:us-east-1:000000000000:"
                                                     f"notebook-execution/{self.id}",
                     "NotebookParams": r.get("NotebookParams", ""), "Tags": [*r.get("Tags", []), STAND_IN_TAG],
                     "OutputNotebookFormat": r.get("OutputNotebookFormat", "")}
        for key, value in (("EndTime", self.end), ("LastStateChangeReason", self.reason),
                           ("OutputNotebookURI", self.output_uri)):
            if value is not None:
                described[key] = value
        return described

    def summary(self) -> dict:
        d = self.description()
        return {k: d[k] for k in ("NotebookExecutionId", "EditorId", "NotebookExecutionName", "Status", "StartTime",
                                  "EndTime") if k in d} | {"ExecutionEngineId": d["ExecutionEngine"]["Id"]}


class Executions:
    def __init__(self, s3, bucket: str, work: Path):
        self.s3, self.bucket, self.work = s3, bucket, work
        self.all: dict[str, Execution] = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()

    def start(self, request: dict) -> dict:
        for field in ("EditorId", "RelativePath", "ExecutionEngine", "ServiceRole"):
            if not request.get(field):
                raise ApiError("ValidationException", f"1 validation error detected: {field} must not be null")
        cluster = request["ExecutionEngine"].get("Id")
        if cluster != LAB_CLUSTER:
            raise ApiError("InvalidRequestException", f"Cluster id '{cluster}' is not valid.")
        key = f"{WORKSPACES}/{request['EditorId']}/{request['RelativePath'].lstrip('/')}"
        try:
            notebook = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except self.s3.exceptions.NoSuchKey:
            raise ApiError("InvalidRequestException",
                           f"Notebook '{request['RelativePath']}' does not exist in editor "
                           f"{request['EditorId']}.") from None
        with self.lock:
            execution = Execution(f"ex-PERFKIT{next(self.ids):021d}", request)
            self.all[execution.id] = execution
        threading.Thread(target=self._run, args=(execution, notebook), daemon=True).start()
        return {"NotebookExecutionId": execution.id}

    def get(self, execution_id: str) -> Execution:
        if execution_id not in self.all:
            raise ApiError("InvalidRequestException", f"Notebook execution '{execution_id}' does not exist.")
        return self.all[execution_id]

    def stop(self, execution_id: str) -> None:
        execution = self.get(execution_id)
        if execution.status in ENDED:
            return
        execution.status = "STOP_PENDING"
        if execution.process and execution.process.poll() is None:
            execution.status = "STOPPING"
            execution.process.send_signal(signal.SIGINT)  # papermill stops the kernel; sparkmagic ends its session

    def list(self, request: dict) -> dict:
        listed = [e.summary() for e in self.all.values()
                  if (not request.get("EditorId") or e.request["EditorId"] == request["EditorId"])
                  and (not request.get("Status") or e.status == request["Status"])
                  and (not request.get("ExecutionEngineId")
                       or e.request["ExecutionEngine"]["Id"] == request["ExecutionEngineId"])
                  and (not request.get("From") or e.start >= float(request["From"]))]
        return {"NotebookExecutions": sorted(listed, key=lambda s: -s["StartTime"])}

    def _run(self, execution: Execution, notebook: bytes) -> None:
        request = execution.request
        folder = self.work / execution.id
        folder.mkdir(parents=True)
        name = Path(request["RelativePath"]).name
        source, executed = folder / name, folder / "out" / name
        executed.parent.mkdir()
        source.write_bytes(notebook)
        parameters = folder / "parameters.json"  # papermill reads YAML, of which JSON is a part
        parameters.write_text(request.get("NotebookParams") or "{}")
        if execution.status.startswith("STOP"):
            return self._end(execution, "STOPPED", "Execution was stopped by the user.")
        execution.status = "STARTING"
        execution.process = subprocess.Popen(
            [sys.executable, "-m", "papermill", str(source), str(executed), "-f", str(parameters), "--no-progress-bar"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=folder, preexec_fn=_sigint_stops)
        execution.status = "RUNNING"
        log = execution.process.communicate()[0]
        (folder / "papermill.log").write_text(log)
        stopped = execution.status in ("STOP_PENDING", "STOPPING")
        if not stopped:
            execution.status = "FINISHING" if execution.process.returncode == 0 else "FAILING"
        self._upload(execution, executed)
        if stopped:
            return self._end(execution, "STOPPED", "Execution was stopped by the user.")
        if execution.process.returncode == 0:
            return self._end(execution, "FINISHED", "Execution is finished successfully.")
        return self._end(execution, "FAILED", _failure(log))

    def _upload(self, execution: Execution, executed: Path) -> None:
        if not executed.exists():
            return
        request = execution.request
        place = request.get("OutputNotebookS3Location") or {"Bucket": self.bucket,
                                                             "Key": f"{WORKSPACES}/{request['EditorId']}"}
        key = f"{place['Key'].rstrip('/')}/executions/{execution.id}/{executed.name}"
        self.s3.put_object(Bucket=place["Bucket"], Key=key, Body=executed.read_bytes())
        if request.get("OutputNotebookFormat") == "HTML":
            import nbconvert
            import nbformat

            html, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
            self.s3.put_object(Bucket=place["Bucket"], Key=key[: -len(".ipynb")] + ".html", Body=html.encode())
        execution.output_uri = f"s3://{place['Bucket']}/{key}"

    @staticmethod
    def _end(execution: Execution, status: str, reason: str) -> None:
        execution.status, execution.reason, execution.end = status, reason, time.time()


def _sigint_stops() -> None:
    """In papermill's process, before it starts: SIGINT (how stop() ends it) back to its default. A lab started from
    a background job of a non-interactive shell (CI's) passes SIGINT down ignored, and Python keeps it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _failure(log: str) -> str:
    """EMR-like: the failing cell and its error, from papermill's own account."""
    found = re.search(r'Exception encountered at "In \[(\d+)\]":', log)
    error = [line for line in log.strip().splitlines() if re.match(r"^\w+(Error|Exception)\b", line)]
    where = f"cell {found.group(1)}" if found else "a cell"
    return f"Execution has failed for {where}: {error[-1] if error else log.strip().splitlines()[-1:]}"


class EmrApi(JsonHandler):
    executions: Executions
    content_type = "application/x-amz-json-1.1"

    def do_POST(self):
        target = self.headers.get("X-Amz-Target", "")
        call = target.removeprefix("ElasticMapReduce.")
        body = self.json_body()
        calls = {"StartNotebookExecution": self.executions.start,
                 "DescribeNotebookExecution": lambda r: {
                     "NotebookExecution": self.executions.get(r.get("NotebookExecutionId", "")).description()},
                 "StopNotebookExecution": lambda r: self.executions.stop(r.get("NotebookExecutionId", "")) or {},
                 "ListNotebookExecutions": self.executions.list}
        try:
            if call not in calls:
                raise ApiError("UnknownOperationException", f"the lab's EMR stand-in does not serve {target or '?'}")
            status, answer = 200, calls[call](body)
        except ApiError as err:
            status, answer = 400, {"__type": err.kind, "message": str(err)}
        self.send_json(status, answer)


def main() -> None:
    import boto3

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--bucket", required=True)
    args = parser.parse_args()
    s3 = boto3.client("s3", endpoint_url=os.environ["PERFKIT_EMR_S3_ENDPOINT"], region_name="us-east-1")
    EmrApi.executions = Executions(s3, args.bucket, args.work)
    server = ThreadingHTTPServer((args.host, args.port), EmrApi)
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown, daemon=True).start())
    print(f"EMR notebook-execution stand-in listening on http://{args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
