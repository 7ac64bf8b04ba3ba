"""Batch runs on EMR Notebooks: execute a notebook of an EMR Studio workspace (or EMR notebook) on a running cluster,
wait for it, and keep the executed notebook as a report under reports/<name>/ beside the ones `perfkit report` makes.

The API (StartNotebookExecution and friends, botocore's emr service model):
- the notebook is named by its workspace (EditorId, e-...) and its path inside it (RelativePath);
- NotebookParams is one JSON object (at most 10,280 characters); EMR writes its values into the notebook after the
  cell tagged `parameters`, papermill's convention;
- ServiceRole is required (EMR_Notebooks_DefaultRole is the role the console creates);
- OutputNotebookFormat=HTML asks for an HTML copy beside the executed .ipynb; DescribeNotebookExecution reports
  where the output went (OutputNotebookURI);
- an execution goes START_PENDING, STARTING, RUNNING, FINISHING and ends FINISHED, FAILED or STOPPED.
"""
from __future__ import annotations

import contextlib
import json
import math
import numbers
import re
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from datetime import time as dt_time
from pathlib import Path
from typing import Callable

from perfkit import report
from perfkit.errors import PerfkitError
from perfkit.extras import require
from perfkit.paths import ensure_writable_dir, project_root

DEFAULT_SERVICE_ROLE = "EMR_Notebooks_DefaultRole"
EXECUTED_BY_TAG = "perfkit:executed-by"  # a stand-in's execution names itself in this tag
MAX_PARAMS_CHARS = 10_280  # NotebookParams' length limit in the service model
ENDED = {"FINISHED", "FAILED", "STOPPED"}
DEFAULT_TIMEOUT_S = 6 * 3600
FIRST_POLL_S, MAX_POLL_S = 5.0, 60.0  # DescribeNotebookExecution every 5 s at first, then doubling up to once a minute
FIX_IDS = ("check --editor-id (the workspace's id, e-..., shown in EMR Studio) and --cluster (a running cluster "
           "with Spark, Livy and Jupyter Enterprise Gateway: aws emr list-clusters --active) and the region")


@dataclass
class EmrRun:
    """One execution and where its report went. outcome: ok, failed, stopped, timed out or interrupted."""
    execution_id: str
    status: str
    outcome: str
    notebook: Path | None = None
    html: Path | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class EmrRunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while waiting: the execution was stopped and recorded; `run` says where its report is."""

    def __init__(self, run: EmrRun):
        super().__init__(run.error)
        self.run = run


def aws_client(service: str, region: str | None = None, session=None):
    """A client on the standard credential chain and region chain, with botocore's standard retries (backoff on
    throttling and transient errors)."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import NoRegionError

    try:
        return (session or boto3.session.Session()).client(
            service, region_name=region, config=Config(retries={"mode": "standard"}))
    except NoRegionError:
        raise PerfkitError("no AWS region: pass --region (the cluster's region) or set AWS_DEFAULT_REGION") from None


def run_notebook(notebook: Path | str, editor_id: str, cluster_id: str, parameters: dict | None = None, *,
                 output: str | None = None, relative_path: str | None = None,
                 service_role: str = DEFAULT_SERVICE_ROLE, timeout_s: float = DEFAULT_TIMEOUT_S,
                 region: str | None = None, show_code: bool = False, out_root: Path | None = None,
                 emr=None, s3=None, progress: bool = True,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> EmrRun:
    """Execute NOTEBOOK (a local copy of the workspace's notebook: it names the report and declares the parameters)
    on the cluster, wait, and store the executed notebook and its HTML as a report, marked as run on EMR.

    Everything that can be checked is checked before the execution starts: the parameters (declared, no secret,
    JSON within EMR's limit), the report folder, the output location. A FAILED or STOPPED execution, a timeout
    (the execution is stopped: a forgotten run would hold the cluster) and Ctrl-C (stopped too, then re-raised) are
    recorded with what output EMR wrote; only an execution that finished without any readable output raises."""
    notebook = Path(notebook)
    for module in ("nbformat", "nbconvert"):  # the executed notebook, read and rendered here
        require(module, "perfkit emr run")
    if not notebook.is_file():
        raise PerfkitError(f"notebook {notebook} does not exist: give the local copy of the workspace's notebook, "
                           "e.g. notebooks/hdfs_vs_s3_queries.ipynb")
    params_json, parameters = _check_parameters(notebook, dict(parameters or {}))
    out_dir = report.report_dir(notebook, out_root)
    created = not out_dir.exists()
    ensure_writable_dir(out_dir, "report folder", "make it writable, or set PERFKIT_REPORTS to a writable folder")
    try:
        emr = emr or aws_client("emr", region)
        s3 = s3 or aws_client("s3", region)
        execution_id = _submit(notebook, editor_id, cluster_id, params_json, output, relative_path, service_role,
                               emr, s3)
    except BaseException:
        if created:  # nothing ran: leave no empty report folder behind
            with contextlib.suppress(OSError):
                out_dir.rmdir()
        raise
    started = clock()
    try:
        execution, timed_out = _wait(emr, execution_id, started + timeout_s, progress, sleep, clock)
    except KeyboardInterrupt:
        _stop(emr, execution_id)
        interrupted = _record(out_dir, emr, s3, execution_id, None, "interrupted",
                              f"interrupted (Ctrl-C); execution {execution_id} stopped", parameters, show_code,
                              clock() - started)
        raise EmrRunInterrupted(interrupted) from None
    if timed_out:
        _stop(emr, execution_id)
        outcome, error = "timed out", (f"no end after {timeout_s:g} s (status {execution['Status']}); "
                                       f"execution {execution_id} stopped")
    elif execution["Status"] == "FINISHED":
        outcome, error = "ok", None
    else:
        outcome = execution["Status"].lower()
        reason = execution.get('LastStateChangeReason') or 'EMR gave no reason'
        error = f"{execution['Status']}: {reason}{_known_fix(reason)}"
    return _record(out_dir, emr, s3, execution_id, execution if not timed_out else None, outcome, error, parameters,
                   show_code, clock() - started)


def _submit(notebook: Path, editor_id: str, cluster_id: str, params_json: str, output: str | None,
            relative_path: str | None, service_role: str, emr, s3) -> str:
    """StartNotebookExecution, after checking that the output location can be read back: the execution id."""
    request = {
        "EditorId": editor_id, "RelativePath": relative_path or _relative_path(notebook),
        "NotebookExecutionName": f"perfkit {notebook.stem}", "NotebookParams": params_json,
        "ExecutionEngine": {"Id": cluster_id, "Type": "EMR"}, "ServiceRole": service_role,
        "OutputNotebookFormat": "HTML", "Tags": [{"Key": "perfkit-report", "Value": notebook.stem}],
    }
    if output:
        bucket, prefix = _split_s3(output, "--output")
        _check_readable(s3, bucket, prefix)
        request["OutputNotebookS3Location"] = {"Bucket": bucket, "Key": prefix}
    return _start(emr, request)


def list_executions(editor_id: str | None = None, cluster_id: str | None = None, status: str | None = None,
                    days: float = 30, limit: int = 20, region: str | None = None, emr=None) -> list[dict]:
    """The newest notebook executions (ListNotebookExecutions, every page), newest first."""
    emr = emr or aws_client("emr", region)
    kwargs = {"From": datetime.now(timezone.utc) - timedelta(days=days)}
    for key, value in (("EditorId", editor_id), ("ExecutionEngineId", cluster_id), ("Status", status)):
        if value:
            kwargs[key] = value
    found = []
    with _api_errors("ListNotebookExecutions"):
        for page in emr.get_paginator("list_notebook_executions").paginate(**kwargs):
            found += page.get("NotebookExecutions", [])
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(found, key=lambda e: e.get("StartTime") or epoch, reverse=True)[:limit]


# causes sparkmagic reports in its own words, and what to do about each
KNOWN_FIXES = {
    re.compile(r"Session \d+ did not start up in (\d+) seconds"):
        "the Livy session (the notebook's Spark driver on the cluster) did not start in time. Fix: free YARN capacity "
        "for its driver and executors (other applications, idle Livy sessions), ask for less in the notebook's "
        "%%configure, or raise livy_session_startup_timeout_seconds in sparkmagic's config.json",
}


def _known_fix(reason: str) -> str:
    return "".join(f" ({fix})" for cause, fix in KNOWN_FIXES.items() if cause.search(reason))


def _check_parameters(notebook: Path, parameters: dict) -> tuple[str, dict]:
    """(NotebookParams as sent, the parameters as the notebook gets them), or a PerfkitError before anything starts."""
    report.check_notebook_parameters(notebook, parameters)
    plain = {name: _plain(name, value) for name, value in parameters.items()}
    # non-ASCII text goes as itself, not as \\u escapes: the limit is on the characters EMR receives, so counting
    # the escaped form refused parameters that fit; what is counted here is exactly what is sent
    text = json.dumps(plain, ensure_ascii=False, allow_nan=False)
    size = _emr_length(text)
    if size > MAX_PARAMS_CHARS:
        raise PerfkitError(f"the parameters take {size} characters as JSON; EMR takes at most "
                           f"{MAX_PARAMS_CHARS}: pass long lists through a file the notebook reads (e.g. tables=)")
    return text, plain


def _emr_length(text: str) -> int:
    """The length EMR checks: characters, one beyond U+FFFF counted twice as a Java service does (UTF-16 units)."""
    return len(text.encode("utf-16-le")) // 2


def _plain(where: str, value):
    """`value` as strict JSON carries it to the notebook: a date or time becomes its ISO text (as from the command
    line); NaN, infinity, a set, bytes or any other object is refused, naming the parameter and the fix (json.dumps
    would write NaN, which is not JSON, or raise a bare TypeError)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise PerfkitError(f"parameter {where} is {value}, which JSON cannot carry: give a finite number, or "
                               "leave the parameter out for the notebook's default")
        return float(value)
    if isinstance(value, (date, dt_time)):  # a datetime is a date
        return value.isoformat()
    if isinstance(value, dict):
        return {_plain_key(where, key): _plain(f"{where}.{key}", item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(f"{where}[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        fix = "give a list instead, e.g. sorted(...)"
    elif isinstance(value, (bytes, bytearray)):
        fix = "give text instead, e.g. .decode()"
    else:
        fix = "give text, a number, true or false, a list or a dict"
    raise PerfkitError(f"parameter {where} is a {type(value).__name__}, which JSON cannot carry: {fix}")


def _plain_key(where: str, key) -> str:
    if isinstance(key, str):
        return key
    raise PerfkitError(f"parameter {where} has the key {key!r}, a {type(key).__name__}: JSON keys are text: "
                       "give text keys")


def _relative_path(notebook: Path) -> str:
    """The notebook's path in the workspace, taken as its path in this checkout (the workspace holds a clone)."""
    path = notebook.resolve()
    for root in (project_root().resolve(), Path.cwd().resolve()):
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return notebook.name


def _split_s3(url: str, what: str) -> tuple[str, str]:
    if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
        raise PerfkitError(f"{what} {url!r} is not an S3 location: write s3://BUCKET/PREFIX")
    bucket, _, key = url[5:].partition("/")
    return bucket, key


def _check_readable(s3, bucket: str, prefix: str) -> None:
    """The output location exists and this identity can list it, before any execution starts."""
    from botocore.exceptions import ClientError

    try:
        s3.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1)
    except ClientError as err:
        raise _s3_error(err, bucket, prefix) from None


def _s3_error(err, bucket: str, key: str) -> PerfkitError:
    code = err.response["Error"].get("Code", "")
    where = f"s3://{bucket}/{key}"
    if code == "NoSuchBucket":
        return PerfkitError(f"output location {where}: bucket {bucket} does not exist: "
                            "pass --output s3://AN-EXISTING-BUCKET/PREFIX")
    if code in ("AccessDenied", "403", "AllAccessDisabled"):
        return PerfkitError(f"output location {where}: access denied to your AWS identity: allow it s3:ListBucket "
                            "and s3:GetObject there, or pass --output s3://BUCKET/PREFIX that you can read")
    return PerfkitError(f"output location {where}: {err.response['Error'].get('Message') or code}")


class _api_errors:
    """The API's own message, with the fix, for errors the user can act on (bad ids, no credentials)."""

    def __init__(self, call: str):
        self.call = call

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        from botocore.exceptions import ClientError, NoCredentialsError

        if isinstance(err, NoCredentialsError):
            raise PerfkitError(f"EMR {self.call}: no AWS credentials found: configure the standard AWS chain "
                               "(aws configure, environment variables or an instance profile)") from None
        if isinstance(err, ClientError):
            message = err.response["Error"].get("Message") or err.response["Error"].get("Code", "")
            fix = FIX_IDS if err.response["Error"].get("Code") == "InvalidRequestException" else "see the message"
            raise PerfkitError(f"EMR refused {self.call}: {message.rstrip('.')}. Fix: {fix}") from None
        return False


def _start(emr, request: dict) -> str:
    with _api_errors("StartNotebookExecution"):
        return emr.start_notebook_execution(**request)["NotebookExecutionId"]


def _describe(emr, execution_id: str) -> dict:
    with _api_errors("DescribeNotebookExecution"):
        return emr.describe_notebook_execution(NotebookExecutionId=execution_id)["NotebookExecution"]


def _stop(emr, execution_id: str) -> None:
    with _api_errors("StopNotebookExecution"):
        emr.stop_notebook_execution(NotebookExecutionId=execution_id)


def _wait(emr, execution_id: str, deadline: float, progress: bool, sleep, clock) -> tuple[dict, bool]:
    """Poll until the execution ends or the deadline passes: (last description, timed out)."""
    from tqdm import tqdm

    delay = FIRST_POLL_S
    with tqdm(desc=f"EMR {execution_id}", bar_format="{desc}: {postfix} [{elapsed}]", disable=not progress,
              leave=True) as bar:
        while True:
            try:
                execution = _describe(emr, execution_id)
            except PerfkitError as err:  # the execution goes on without us: say how to stop it
                raise PerfkitError(f"{err} (execution {execution_id} keeps running; stop it with aws emr "
                                   f"stop-notebook-execution --notebook-execution-id {execution_id})") from None
            bar.set_postfix_str(execution["Status"])
            if execution["Status"] in ENDED:
                return execution, False
            left = deadline - clock()
            if left <= 0:
                return execution, True
            sleep(min(delay, left))
            delay = min(delay * 2, MAX_POLL_S)


def _record(out_dir: Path, emr, s3, execution_id: str, execution: dict | None, outcome: str, error: str | None,
            parameters: dict, show_code: bool, seconds: float) -> EmrRun:
    """Fetch what EMR wrote and store it as a report; an execution that was stopped is described once more, for
    the output it left."""
    import nbformat

    if execution is None:
        try:
            execution = _describe(emr, execution_id)
        except PerfkitError as err:  # the run is recorded all the same
            execution = {"NotebookExecutionId": execution_id, "Status": "UNKNOWN"}
            error = f"{error}; {err}"
    notebook_text, emr_html, uri, unreadable = _fetch_output(s3, execution, strict=outcome == "ok")
    if unreadable:
        error = f"{error}; its output could not be fetched: {unreadable}"
    if outcome == "ok" and notebook_text is None:
        raise PerfkitError(f"EMR execution {execution_id} finished but left no executed notebook at "
                           f"{uri or 'any output location'}: look at it with "
                           f"aws emr describe-notebook-execution --notebook-execution-id {execution_id}")
    if notebook_text is not None:
        nb = report.tidy(nbformat.reads(notebook_text, as_version=4))
    else:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
            f"**EMR left no executed notebook** for execution `{execution_id}` ({error})")])
    # an execution a stand-in made (the lab's: perfkit.lab.emr_notebooks_server) says so in its tags, and the
    # report says so first
    executed_by = next((t["Value"] for t in execution.get("Tags") or [] if t.get("Key") == EXECUTED_BY_TAG), None)
    if executed_by:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"**Executed by {executed_by}, not by EMR.**"))
    engine = execution.get("ExecutionEngine", {})
    # the page is perfkit's own rendering (outputs only unless show_code, like every report); EMR's HTML stands in
    # only when it wrote no notebook
    stored = report.store_report(
        out_dir, nb, ok=outcome == "ok", error=error, parameters=parameters, show_code=show_code, seconds=seconds,
        page=emr_html if notebook_text is None else None, status=outcome,
        ran_on={"kind": "emr", "cluster_id": engine.get("Id"), "execution_id": execution_id, "executed_by": executed_by,
                "editor_id": execution.get("EditorId"), "emr_status": execution.get("Status"), "output": uri})
    return EmrRun(execution_id, execution.get("Status", "UNKNOWN"), outcome, stored.notebook, stored.html, error)


def _fetch_output(s3, execution: dict, strict: bool):
    """(executed notebook, EMR's HTML, where, why unreadable) from OutputNotebookURI (the .ipynb or the .html: the
    other is its sibling); a missing file is None. An access error raises when strict (a finished run); otherwise
    it is returned, so that a failed run is still recorded, with the reason its partial output is missing."""
    uri = execution.get("OutputNotebookURI")
    if not uri:
        return None, None, None, None
    bucket, key = _split_s3(uri, "EMR's output")
    stem = key[: -len(Path(key).suffix)] if Path(key).suffix in (".ipynb", ".html") else key
    try:
        return _get(s3, bucket, stem + ".ipynb"), _get(s3, bucket, stem + ".html"), uri, None
    except PerfkitError as err:
        if strict:
            raise
        return None, None, uri, str(err)


def _get(s3, bucket: str, key: str) -> str | None:
    from botocore.exceptions import ClientError

    try:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
    except ClientError as err:
        if err.response["Error"].get("Code") in ("NoSuchKey", "404"):
            return None
        raise _s3_error(err, bucket, key) from None
