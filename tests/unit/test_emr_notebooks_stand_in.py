"""The lab's stand-in for EMR notebook executions, spoken to by boto3's own EMR client: requests refused as EMR refuses
them, executions described and listed with EMR's fields and statuses, a failure's reason from papermill's account.
Its runs (papermill, sparkmagic, Livy, YARN) are tested on the cluster shape (test_zzz_cluster_shape_lab.py)."""
import threading
from http.server import ThreadingHTTPServer

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from perfkit.emr import EXECUTED_BY_TAG
from perfkit.lab.emr_notebooks_server import (LAB_CLUSTER, STAND_IN_TAG, EmrApi, Execution, Executions,
                                              _failure)


@pytest.fixture
def emr(tmp_path):
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    stub = Stubber(s3)
    stub.activate()
    EmrApi.executions = Executions(s3, "perfkit-lab", tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmrApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = boto3.client("emr", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{server.server_address[1]}",
                          aws_access_key_id="a", aws_secret_access_key="b")
    yield client, stub
    server.shutdown()


def start(client, **changes):
    request = {"EditorId": "e-WORKSPACE", "RelativePath": "nb/q.ipynb", "ServiceRole": "EMR_Notebooks_DefaultRole",
               "ExecutionEngine": {"Id": LAB_CLUSTER, "Type": "EMR"}, **changes}
    return client.start_notebook_execution(**request)


def test_another_cluster_or_a_missing_notebook_is_refused_as_emr_refuses_them(emr):
    client, stub = emr
    with pytest.raises(ClientError, match=r"InvalidRequestException.*Cluster id 'j-OTHER' is not valid"):
        start(client, ExecutionEngine={"Id": "j-OTHER", "Type": "EMR"})
    stub.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404,
                          expected_params={"Bucket": "perfkit-lab", "Key": "emr-studio/e-WORKSPACE/nb/q.ipynb"})
    with pytest.raises(ClientError, match=r"Notebook 'nb/q.ipynb' does not exist in editor e-WORKSPACE"):
        start(client)
    with pytest.raises(ClientError, match=r"InvalidRequestException.*'ex-NOPE' does not exist"):
        client.describe_notebook_execution(NotebookExecutionId="ex-NOPE")


def test_executions_are_described_and_listed_with_emrs_fields_and_the_stand_in_tag(emr):
    client, _ = emr
    done = Execution("ex-1", {"EditorId": "e-A", "RelativePath": "a.ipynb", "NotebookExecutionName": "perfkit a",
                              "ExecutionEngine": {"Id": LAB_CLUSTER, "Type": "EMR"}, "NotebookParams": '{"x": 3}',
                              "Tags": [{"Key": "perfkit-report", "Value": "a"}]})
    done.status, done.end, done.output_uri = "FINISHED", done.start + 5, "s3://perfkit-lab/e-A/executions/ex-1/a.ipynb"
    running = Execution("ex-2", {"EditorId": "e-B", "RelativePath": "b.ipynb",
                                 "ExecutionEngine": {"Id": LAB_CLUSTER, "Type": "EMR"}})
    running.status, running.start = "RUNNING", done.start + 1
    EmrApi.executions.all.update({"ex-1": done, "ex-2": running})
    described = client.describe_notebook_execution(NotebookExecutionId="ex-1")["NotebookExecution"]
    assert (described["Status"], described["OutputNotebookURI"], described["NotebookParams"]) == (
        "FINISHED", "s3://perfkit-lab/e-A/executions/ex-1/a.ipynb", '{"x": 3}')
    assert (described["EndTime"] - described["StartTime"]).total_seconds() == pytest.approx(5, abs=0.01)
    assert described["Tags"] == [{"Key": "perfkit-report", "Value": "a"}, STAND_IN_TAG]
    assert STAND_IN_TAG["Key"] == EXECUTED_BY_TAG  # what perfkit emr run looks for
    listed = client.list_notebook_executions()["NotebookExecutions"]
    assert [e["NotebookExecutionId"] for e in listed] == ["ex-2", "ex-1"]  # newest first
    assert [e["NotebookExecutionId"] for e in client.list_notebook_executions(Status="FINISHED")[
        "NotebookExecutions"]] == ["ex-1"]
    assert [e["EditorId"] for e in client.list_notebook_executions(EditorId="e-B")["NotebookExecutions"]] == ["e-B"]
    client.stop_notebook_execution(NotebookExecutionId="ex-2")
    assert client.describe_notebook_execution(NotebookExecutionId="ex-2")["NotebookExecution"]["Status"] == \
        "STOP_PENDING"


def test_a_failures_reason_names_the_cell_and_its_error():
    log = ('papermill.exceptions.PapermillExecutionError: \n-----\nException encountered at "In [7]":\n'
           "SparkStatementException: division by zero\nTraceback (most recent call last):\n"
           "ZeroDivisionError: division by zero\n")
    assert _failure(log) == "Execution has failed for cell 7: ZeroDivisionError: division by zero"
