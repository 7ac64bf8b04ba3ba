"""`perfkit emr run` / `list` and perfkit.emr, through the code path that talks to AWS.

moto implements no notebook execution call (Start/Describe/Stop/ListNotebookExecutions), so EMR answers come from
botocore's Stubber on a real client (the Python API, clients injected) or, for the command line, from a scripted
endpoint speaking EMR's JSON protocol over HTTP (AWS_ENDPOINT_URL_EMR, botocore's own setting). S3 is a moto
server. Sleeping and the clock are injected where the wait is tested: no test waits."""
import json
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import nbformat
import pytest
from botocore.stub import ANY, Stubber
from click.testing import CliRunner

from perfkit import emr as perfkit_emr
from perfkit.cli import main
from perfkit.errors import PerfkitError

CLUSTER, EDITOR, EXECUTION = "j-2QMOV6JAX1TS2", "e-BKTM2DIHXBEDRU44ANWRKIU8N", "ex-IZWZZVR9DKQ9WQ7VZWXJZR29UGHTE"
BUCKET = "perfkit-emr-out"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def study(tmp_path):
    """A local copy of the workspace's notebook: it names the report and declares the parameters."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "lab"\nrows = 10\nengines = ["spark"]')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print(rows)")]
    nb.metadata["kernelspec"] = {"name": "pysparkkernel", "display_name": "PySpark", "language": "python"}
    path = tmp_path / "notebooks" / "study.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


def _executed(rows=20, error=None):
    """The notebook as EMR writes it after the run: the injected parameters and the outputs."""
    nb = nbformat.v4.new_notebook()
    injected = nbformat.v4.new_code_cell(f"rows = {rows}")
    injected.metadata["tags"] = ["injected-parameters"]
    run = nbformat.v4.new_code_cell("print(rows)", outputs=[nbformat.v4.new_output("stream", text=f"{rows}\n")])
    nb.cells = [injected, run]
    if error:
        run.outputs.append(nbformat.v4.new_output("error", ename="RuntimeError", evalue=error, traceback=[]))
    return nbformat.writes(nb)


@pytest.fixture
def s3(aws):
    client = aws("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def emr(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = boto3.client("emr", region_name="us-east-1")
    with Stubber(client) as stub:
        client.stub = stub
        yield client
        stub.assert_no_pending_responses()


def _described(status, reason="", uri=None):
    execution = {"NotebookExecutionId": EXECUTION, "EditorId": EDITOR, "Status": status, "StartTime": T0,
                 "ExecutionEngine": {"Id": CLUSTER, "Type": "EMR"}, "LastStateChangeReason": reason}
    if uri:
        execution["OutputNotebookURI"] = uri
    return {"NotebookExecution": execution}


def _expect_start(emr, **expected):
    emr.stub.add_response("start_notebook_execution", {"NotebookExecutionId": EXECUTION}, {
        "EditorId": EDITOR, "RelativePath": "notebooks/study.ipynb", "NotebookExecutionName": "perfkit study",
        "NotebookParams": ANY, "ExecutionEngine": {"Id": CLUSTER, "Type": "EMR"},
        "ServiceRole": "EMR_Notebooks_DefaultRole", "OutputNotebookFormat": "HTML", "Tags": ANY, **expected})


def _expect_describe(emr, *statuses, **kw):
    for status in statuses:
        emr.stub.add_response("describe_notebook_execution", _described(status, **kw),
                              {"NotebookExecutionId": EXECUTION})


class FakeTime:
    """time.sleep and time.monotonic for the wait: sleeping advances the clock; `interrupt_after` sleeps, Ctrl-C."""

    def __init__(self, interrupt_after=None):
        self.now, self.slept, self.interrupt_after = 0.0, [], interrupt_after

    def sleep(self, seconds):
        if self.interrupt_after is not None and len(self.slept) >= self.interrupt_after:
            raise KeyboardInterrupt
        self.slept.append(seconds)
        self.now += seconds

    def clock(self):
        return self.now


def _run(study, emr, s3, time=None, **kw):
    time = time or FakeTime()
    kw.setdefault("relative_path", "notebooks/study.ipynb")
    return perfkit_emr.run_notebook(study, EDITOR, CLUSTER, kw.pop("parameters", {"rows": 20}), emr=emr, s3=s3,
                                    out_root=study.parent.parent / "reports", progress=False, sleep=time.sleep,
                                    clock=time.clock, **kw)


def _stored(run):
    return nbformat.read(run.notebook, as_version=4)


def test_a_finished_execution_lands_in_reports_and_the_index_marks_it_emr(study, emr, s3):
    key = f"runs/{EXECUTION}/study.ipynb"
    s3.put_object(Bucket=BUCKET, Key=key, Body=_executed(rows=20).encode())
    s3.put_object(Bucket=BUCKET, Key=key.replace(".ipynb", ".html"), Body=b"<html>EMR's page</html>")
    _expect_start(emr, NotebookParams=json.dumps({"rows": 20}),
                  OutputNotebookS3Location={"Bucket": BUCKET, "Key": "runs"})
    _expect_describe(emr, "STARTING", "RUNNING")
    _expect_describe(emr, "FINISHED", uri=f"s3://{BUCKET}/{key}")
    time = FakeTime()
    run = _run(study, emr, s3, time, output=f"s3://{BUCKET}/runs")
    assert run.ok and run.outcome == "ok" and run.execution_id == EXECUTION and run.error is None
    assert time.slept == [5.0, 10.0]  # backoff between the three descriptions
    reports = study.parent.parent / "reports"
    assert {p.name for p in (reports / "study").iterdir()} == {run.notebook.name, run.html.name}
    stored = _stored(run)
    assert stored.cells[1].outputs[0].text == "20\n"  # the executed notebook EMR wrote, outputs and all
    ran_on = stored.metadata.perfkit.ran_on
    assert (ran_on.kind, ran_on.cluster_id, ran_on.execution_id, ran_on.editor_id) == ("emr", CLUSTER, EXECUTION,
                                                                                       EDITOR)
    assert ran_on.output == f"s3://{BUCKET}/{key}" and stored.metadata.perfkit.parameters == {"rows": 20}
    assert "20" in run.html.read_text()  # perfkit's own page: outputs only, like every report
    index = (reports / "index.html").read_text()
    assert f"study/{run.html.name}" in index and f"EMR {CLUSTER}" in index


def test_the_wait_backs_off_to_once_a_minute(study, emr, s3):
    s3.put_object(Bucket=BUCKET, Key="x/study.ipynb", Body=_executed().encode())
    _expect_start(emr)
    _expect_describe(emr, *["RUNNING"] * 7)
    _expect_describe(emr, "FINISHED", uri=f"s3://{BUCKET}/x/study.ipynb")
    time = FakeTime()
    assert _run(study, emr, s3, time).ok
    assert time.slept == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0, 60.0]


def test_a_failed_execution_is_recorded_with_its_reason_and_partial_output(study, emr, s3):
    s3.put_object(Bucket=BUCKET, Key="x/study.ipynb", Body=_executed(error="query 3 died").encode())
    _expect_start(emr)
    _expect_describe(emr, "FAILED", reason="Execution has failed for cluster j-2QMOV6JAX1TS2. Cell 2 raised",
                     uri=f"s3://{BUCKET}/x/study.ipynb")
    run = _run(study, emr, s3)
    assert not run.ok and run.outcome == "failed" and run.status == "FAILED"
    assert run.error == "FAILED: Execution has failed for cluster j-2QMOV6JAX1TS2. Cell 2 raised"
    stored = _stored(run)
    assert stored.cells[1].outputs[-1].evalue == "query 3 died"  # the partial output, kept
    assert stored.metadata.perfkit.ok is False and stored.metadata.perfkit.status == "failed"
    assert "FAILED" in (run.notebook.parent.parent / "index.html").read_text()


def test_a_failed_execution_without_output_is_still_recorded(study, emr, s3):
    _expect_start(emr)
    _expect_describe(emr, "FAILED", reason="Kernel died", uri=f"s3://{BUCKET}/nothing/study.ipynb")
    run = _run(study, emr, s3)
    assert run.error == "FAILED: Kernel died"
    assert "EMR left no executed notebook" in _stored(run).cells[0].source


def test_a_livy_session_that_did_not_start_in_time_is_named_with_the_fix(study, emr, s3):
    _expect_start(emr)
    _expect_describe(emr, "FAILED", reason="Execution has failed for cell 1: LivyClientTimeoutException: Session 3 "
                                           "did not start up in 180 seconds.", uri=f"s3://{BUCKET}/none/study.ipynb")
    run = _run(study, emr, s3)
    assert run.error.startswith("FAILED: Execution has failed for cell 1: LivyClientTimeoutException: Session 3 did "
                                "not start up in 180 seconds. (the Livy session (the notebook's Spark driver on the "
                                "cluster) did not start in time. Fix: free YARN capacity")
    assert run.error.endswith("or raise livy_session_startup_timeout_seconds in sparkmagic's config.json)")


def test_a_timeout_stops_the_execution_and_records_it(study, emr, s3):
    _expect_start(emr)
    _expect_describe(emr, "RUNNING", "RUNNING", "RUNNING")  # at 0 s, 5 s and 12 s: the deadline
    emr.stub.add_response("stop_notebook_execution", {}, {"NotebookExecutionId": EXECUTION})
    _expect_describe(emr, "STOPPING")
    time = FakeTime()
    run = _run(study, emr, s3, time, timeout_s=12)
    assert time.slept == [5.0, 7.0]  # the last sleep ends at the deadline
    assert run.outcome == "timed out" and not run.ok
    assert run.error == f"no end after 12 s (status RUNNING); execution {EXECUTION} stopped"
    assert "TIMED OUT" in (run.notebook.parent.parent / "index.html").read_text()


def test_ctrl_c_stops_the_execution_and_records_it_interrupted(study, emr, s3):
    _expect_start(emr)
    _expect_describe(emr, "RUNNING", "RUNNING")
    emr.stub.add_response("stop_notebook_execution", {}, {"NotebookExecutionId": EXECUTION})
    _expect_describe(emr, "STOP_PENDING")
    with pytest.raises(KeyboardInterrupt) as caught:
        _run(study, emr, s3, FakeTime(interrupt_after=1))
    stored = list((study.parent.parent / "reports" / "study").glob("*.ipynb"))
    assert len(stored) == 1
    assert caught.value.run.notebook == stored[0] and caught.value.run.outcome == "interrupted"
    info = nbformat.read(stored[0], as_version=4).metadata.perfkit
    assert info.status == "interrupted" and info.error == f"interrupted (Ctrl-C); execution {EXECUTION} stopped"
    assert "INTERRUPTED" in (study.parent.parent / "reports" / "index.html").read_text()


def test_an_unknown_editor_id_gives_the_apis_message_and_the_fix(study, emr, s3):
    emr.stub.add_client_error("start_notebook_execution", "InvalidRequestException",
                              "Editor does not exist: e-BKTM2DIHXBEDRU44ANWRKIU8N", 400)
    with pytest.raises(PerfkitError) as caught:
        _run(study, emr, s3)
    assert str(caught.value) == ("EMR refused StartNotebookExecution: Editor does not exist: "
                                 f"{EDITOR}. Fix: {perfkit_emr.FIX_IDS}")
    assert not (study.parent.parent / "reports" / "study").exists()  # nothing ran, nothing left behind


def test_a_secret_parameter_is_refused_before_any_call(study, emr, s3):
    with pytest.raises(PerfkitError, match="parameter 'aws_secret_access_key' looks like a secret"):
        _run(study, emr, s3, parameters={"aws_secret_access_key": "x"})  # the stub has no response queued


def test_an_undeclared_parameter_is_refused_before_any_call(study, emr, s3):
    with pytest.raises(PerfkitError, match="study.ipynb has no parameter nope: its parameters are profile, rows, "
                                           "engines"):
        _run(study, emr, s3, parameters={"nope": 1})


def _declare(study, source: str):
    """The study notebook with more parameters in its tagged cell."""
    nb = nbformat.read(study, as_version=4)
    nb.cells[0].source += "\n" + source
    nbformat.write(nb, study)


@pytest.mark.parametrize("parameters, message", [
    ({"rows": float("nan")}, "parameter rows is nan, which JSON cannot carry: give a finite number, or leave the "
                             "parameter out for the notebook's default"),
    ({"engines": ["spark", float("inf")]}, "parameter engines[1] is inf, which JSON cannot carry"),
    ({"engines": {"spark", "trino"}}, "parameter engines is a set, which JSON cannot carry: give a list instead, "
                                      "e.g. sorted(...)"),
    ({"profile": b"lab"}, "parameter profile is a bytes, which JSON cannot carry: give text instead, e.g. .decode()"),
    ({"profile": {"s3": {1: "x"}}}, "parameter profile.s3 has the key 1, a int: JSON keys are text"),
    ({"profile": object()}, "parameter profile is a object, which JSON cannot carry: give text, a number, true or "
                            "false, a list or a dict"),
])
def test_a_parameter_json_cannot_carry_is_named_before_any_call(study, emr, s3, parameters, message):
    """json.dumps wrote NaN (not JSON, sent to EMR as it was) and raised a bare TypeError for a set or bytes."""
    with pytest.raises(PerfkitError) as caught:
        _run(study, emr, s3, parameters=parameters)  # the stub has no response queued: no call may be made
    assert str(caught.value).startswith(message)


def _finished_run(study, emr, s3, parameters: dict, sent: str):
    """A run of `parameters` that EMR starts only if NotebookParams is exactly `sent`, and that finishes."""
    key = f"runs/{EXECUTION}/study.ipynb"
    s3.put_object(Bucket=BUCKET, Key=key, Body=_executed(rows=20).encode())
    _expect_start(emr, NotebookParams=sent, OutputNotebookS3Location={"Bucket": BUCKET, "Key": "runs"})
    _expect_describe(emr, "FINISHED", uri=f"s3://{BUCKET}/{key}")
    return _run(study, emr, s3, output=f"s3://{BUCKET}/runs", parameters=parameters)


def test_dates_and_times_go_as_iso_text(study, emr, s3):
    from datetime import date, time

    _declare(study, 'day = "2026-03-01"\nwindow_start = "2026-03-01T12:00:00"\nat = "12:30:00"')
    sent = '{"day": "2026-03-01", "window_start": "2026-03-01T12:00:00+00:00", "at": "12:30:00", "rows": 20.0}'
    run = _finished_run(study, emr, s3, {"day": date(2026, 3, 1), "window_start": T0, "at": time(12, 30),
                                         "rows": 20.0}, sent)
    assert run.ok and _stored(run).metadata.perfkit.parameters == json.loads(sent)


def test_non_ascii_text_goes_as_itself(study, emr, s3):
    """EMR's limit is on the characters it receives: 6,000 'é' were counted as 36,000 of \\u00e9 and refused."""
    _declare(study, 'title = ""')
    sent = '{"title": "' + "é" * 6000 + '"}'
    run = _finished_run(study, emr, s3, {"title": "é" * 6000}, sent)
    assert run.ok and _stored(run).metadata.perfkit.parameters == {"title": "é" * 6000}


def test_the_limit_counts_the_text_as_sent(study):
    _declare(study, 'title = ""')
    fits = {"title": "é" * (perfkit_emr.MAX_PARAMS_CHARS - len('{"title": ""}'))}
    text, _ = perfkit_emr._check_parameters(study, fits)
    assert len(text) == perfkit_emr.MAX_PARAMS_CHARS and "\\u" not in text
    with pytest.raises(PerfkitError, match=r"^the parameters take 10281 characters as JSON; EMR takes at most 10280"):
        perfkit_emr._check_parameters(study, {"title": fits["title"] + "x"})
    with pytest.raises(PerfkitError, match=r"^the parameters take 10281 characters"):  # one beyond U+FFFF: two
        perfkit_emr._check_parameters(study, {"title": fits["title"][1:] + "\U0001F600"})


def test_an_output_bucket_that_does_not_exist_is_named_before_the_execution(study, emr, s3):
    with pytest.raises(PerfkitError) as caught:
        _run(study, emr, s3, output="s3://no-such-bucket-here/runs")
    assert str(caught.value) == ("output location s3://no-such-bucket-here/runs: bucket no-such-bucket-here does "
                                 "not exist: pass --output s3://AN-EXISTING-BUCKET/PREFIX")


def test_an_output_the_caller_cannot_read_is_named_with_the_fix(study, emr, monkeypatch):
    s3 = boto3.client("s3", region_name="us-east-1")
    with Stubber(s3) as s3_stub:  # moto grants everything; AccessDenied is S3's answer to a missing permission
        s3_stub.add_client_error("get_object", "AccessDenied", "Access Denied", 403)
        _expect_start(emr)
        _expect_describe(emr, "FINISHED", uri=f"s3://{BUCKET}/ws/{EXECUTION}/study.ipynb")
        with pytest.raises(PerfkitError) as caught:
            _run(study, emr, s3)
    assert str(caught.value) == (f"output location s3://{BUCKET}/ws/{EXECUTION}/study.ipynb: access denied to "
                                 "your AWS identity: allow it s3:ListBucket and s3:GetObject there, or pass "
                                 "--output s3://BUCKET/PREFIX that you can read")


def test_list_reads_every_page_newest_first(emr):
    page1 = [{"NotebookExecutionId": "ex-1", "Status": "FINISHED", "StartTime": T0, "EditorId": EDITOR},
             {"NotebookExecutionId": "ex-3", "Status": "RUNNING", "StartTime": T0 + timedelta(hours=2)}]
    page2 = [{"NotebookExecutionId": "ex-2", "Status": "FAILED", "StartTime": T0 + timedelta(hours=1)}]
    emr.stub.add_response("list_notebook_executions", {"NotebookExecutions": page1, "Marker": "m2"},
                          {"From": ANY, "ExecutionEngineId": CLUSTER})
    emr.stub.add_response("list_notebook_executions", {"NotebookExecutions": page2},
                          {"From": ANY, "ExecutionEngineId": CLUSTER, "Marker": "m2"})
    found = perfkit_emr.list_executions(cluster_id=CLUSTER, emr=emr)
    assert [e["NotebookExecutionId"] for e in found] == ["ex-3", "ex-2", "ex-1"]


# --- the command line, against a scripted EMR endpoint over HTTP -------------------------------------------------

@pytest.fixture
def emr_endpoint(monkeypatch, moto_url):
    """An HTTP endpoint answering EMR's JSON protocol from a script: {operation: [(status, body), ...]}."""
    script, calls = {}, []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            operation = self.headers["X-Amz-Target"].split(".")[-1]
            calls.append((operation, json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")))
            status, body = script[operation].pop(0)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_MAX_ATTEMPTS", "1"),
                        ("AWS_ENDPOINT_URL_EMR", f"http://127.0.0.1:{server.server_port}"),
                        ("AWS_ENDPOINT_URL_S3", moto_url)):
        monkeypatch.setenv(name, value)
    yield script, calls
    server.shutdown()


def _epoch(dt):
    return dt.timestamp()


def test_cli_run_finished_prints_the_report(emr_endpoint, study, s3, monkeypatch, tmp_path):
    script, calls = emr_endpoint
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    s3.put_object(Bucket=BUCKET, Key="o/study.ipynb", Body=_executed(rows=7).encode())
    execution = _described("FINISHED", uri=f"s3://{BUCKET}/o/study.ipynb")["NotebookExecution"]
    script.update({"StartNotebookExecution": [(200, {"NotebookExecutionId": EXECUTION})],
                   "DescribeNotebookExecution": [(200, {"NotebookExecution": {**execution, "StartTime": _epoch(T0)}})]})
    result = CliRunner().invoke(main, ["emr", "run", str(study), "--editor-id", EDITOR, "--cluster", CLUSTER,
                                       "--relative-path", "notebooks/study.ipynb", "-p", "rows=7",
                                       "-p", "engines=[spark, trino]"])
    assert result.exit_code == 0, result.output
    assert "report: " + str(tmp_path / "reports" / "study") in result.output
    start = calls[0][1]
    assert json.loads(start["NotebookParams"]) == {"rows": 7, "engines": ["spark", "trino"]}
    assert start["ExecutionEngine"] == {"Id": CLUSTER, "Type": "EMR"} and start["OutputNotebookFormat"] == "HTML"
    assert f"EMR {CLUSTER}" in (tmp_path / "reports" / "index.html").read_text()


def test_cli_run_failed_exits_1_with_the_reason(emr_endpoint, study, s3, monkeypatch, tmp_path):
    script, _ = emr_endpoint
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    execution = _described("FAILED", reason="Cell 4 raised")["NotebookExecution"]
    script.update({"StartNotebookExecution": [(200, {"NotebookExecutionId": EXECUTION})],
                   "DescribeNotebookExecution": [(200, {"NotebookExecution": {**execution, "StartTime": _epoch(T0)}})]})
    result = CliRunner().invoke(main, ["emr", "run", str(study), "--editor-id", EDITOR, "--cluster", CLUSTER])
    assert result.exit_code == 1
    assert f"perfkit: EMR execution {EXECUTION} failed: FAILED: Cell 4 raised (the report keeps what EMR wrote)" \
        in result.output


def test_cli_run_unknown_cluster_exits_1_with_the_apis_message(emr_endpoint, study, monkeypatch, tmp_path):
    script, _ = emr_endpoint
    monkeypatch.setenv("PERFKIT_REPORTS", str(tmp_path / "reports"))
    script["StartNotebookExecution"] = [(400, {"__type": "InvalidRequestException",
                                               "Message": "Cluster id 'j-NOPE' is not valid."})]
    result = CliRunner().invoke(main, ["emr", "run", str(study), "--editor-id", EDITOR, "--cluster", "j-NOPE"])
    assert result.exit_code == 1
    assert result.output.strip() == ("perfkit: EMR refused StartNotebookExecution: Cluster id 'j-NOPE' is not "
                                     f"valid. Fix: {perfkit_emr.FIX_IDS}")


def test_cli_run_refuses_a_secret_parameter(study):
    result = CliRunner().invoke(main, ["emr", "run", str(study), "--editor-id", EDITOR, "--cluster", CLUSTER,
                                       "-p", "password=hunter2hunter2"])
    assert result.exit_code == 1 and "perfkit: parameter 'password' looks like a secret" in result.output


def test_cli_list_shows_recent_executions(emr_endpoint):
    script, calls = emr_endpoint
    script["ListNotebookExecutions"] = [
        (200, {"NotebookExecutions": [{"NotebookExecutionId": "ex-OLD", "Status": "FINISHED", "StartTime": _epoch(T0),
                                       "EndTime": _epoch(T0 + timedelta(seconds=95)), "EditorId": EDITOR,
                                       "ExecutionEngineId": CLUSTER, "NotebookExecutionName": "perfkit study"}],
               "Marker": "next"}),
        (200, {"NotebookExecutions": [{"NotebookExecutionId": "ex-NEW", "Status": "RUNNING",
                                       "StartTime": _epoch(T0 + timedelta(hours=1)), "EditorId": EDITOR}]})]
    result = CliRunner().invoke(main, ["emr", "list", "--editor-id", EDITOR])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["ex-NEW", "RUNNING", "2026-03-01", "13:00:00", "-", "-", EDITOR]
    assert lines[1].split() == ["ex-OLD", "FINISHED", "2026-03-01", "12:00:00", "95", "s", CLUSTER, EDITOR,
                                "perfkit", "study"]
    assert [c[1].get("Marker") for c in calls] == [None, "next"] and calls[0][1]["EditorId"] == EDITOR
