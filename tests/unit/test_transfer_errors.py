import sys
from pathlib import Path

import pytest
from hdfs.util import HdfsError

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.results import ResultSet, now
from perfkit.transfer import error_line, get_method
from perfkit.hadoop_cli import run_tool, tool_cause
from perfkit.transfer.manifest import Manifest
from perfkit.presenting import report_of

PROFILE = load_profile("lab")
MANIFEST = Manifest("perfkit-lab", "perfkit/datasets/x", (("part-00000.bin", 10),))

JAVA_TRACE = """\
2024-05-01 10:00:00,123 WARN impl.MetricsConfig: Cannot locate configuration: tried hadoop-metrics2.properties
Exception in thread "main" java.io.IOException: Failed on local exception
\tat org.apache.hadoop.ipc.Client.call(Client.java:1457)
\tat org.apache.hadoop.fs.shell.CopyCommands$Put.processArguments(CopyCommands.java:281)
Caused by: java.net.ConnectException: Call From host/127.0.0.1 to 127.0.0.1:9000 failed: Connection refused
\tat sun.nio.ch.Net.pollConnect(Native Method)
\t... 12 more
"""


def _failing(output: str) -> list[str]:
    """A command that writes `output` on stderr and exits 1, like a failed Hadoop tool."""
    return [sys.executable, "-c", f"import sys; sys.stderr.write({output!r}); sys.exit(1)"]


def test_a_java_trace_becomes_one_line_with_its_root_cause():
    with pytest.raises(PerfkitError) as caught:
        run_tool(_failing(JAVA_TRACE), what="hadoop fs -put")
    assert str(caught.value) == ("hadoop fs -put failed (exit 1): java.net.ConnectException: "
                                 "Call From host/127.0.0.1 to 127.0.0.1:9000 failed: Connection refused")


def test_log_lines_ahead_of_a_tool_error_are_not_its_reason():
    assert tool_cause("2024-05-01 10:00:00,123 WARN fs.FileSystem: slow\nput: `/x': No such file or directory\n") \
        == "put: `/x': No such file or directory"
    assert tool_cause("2024-05-01 10:00:00,123 INFO tools.DistCp: starting\n"
                      "2024-05-01 10:00:01,456 ERROR tools.DistCp: Invalid arguments: no source\n") \
        == "tools.DistCp: Invalid arguments: no source"


def test_a_cli_sequential_failure_is_recorded_without_stack_frames(monkeypatch, tmp_path):
    from perfkit.hadoop_cli import HadoopCli
    from perfkit.transfer.cli import AwsCliMixin

    monkeypatch.setattr(AwsCliMixin, "download", lambda self, manifest, name, local, env=None: local.write_bytes(b"x"))
    monkeypatch.setattr(HadoopCli, "command", lambda self, sub, *args: _failing(JAVA_TRACE))
    with pytest.raises(PerfkitError) as caught:
        get_method("cli-sequential", PROFILE).copy(MANIFEST, "/perfkit/transfers/r/d", tmp_path)
    assert str(caught.value) == ("hadoop fs -put failed (exit 1): java.net.ConnectException: "
                                 "Call From host/127.0.0.1 to 127.0.0.1:9000 failed: Connection refused")


class _FailingHdfs:
    def __init__(self, error):
        self.error = error

    def write(self, path, data, overwrite):
        raise self.error


@pytest.mark.parametrize("error, line", [
    (HdfsError(b""), "HdfsError"),
    (HdfsError(b"<html>\n<head><title>Error 500 Server Error</title></head>\n<body>...</body></html>"),
     "HdfsError: Error 500 Server Error"),
    (HdfsError("Failed to find datanode, suggest to check cluster health."),
     "HdfsError: Failed to find datanode, suggest to check cluster health."),
    (RuntimeError("py4j wrapper\n\tat org.X.y(X.java:1)\nCaused by: java.io.EOFException: End of stream"),
     "RuntimeError: py4j wrapper: java.io.EOFException: End of stream"),
    (ConnectionResetError(), "ConnectionResetError"),
])
def test_a_stream_failure_is_one_line_with_its_reason(monkeypatch, tmp_path, error, line):
    from perfkit.storages import hdfs as hdfs_storage
    from perfkit.storages import s3 as s3_storage

    monkeypatch.setattr(s3_storage, "s3_client", lambda profile, config=None: None)
    monkeypatch.setattr(hdfs_storage, "webhdfs_client", lambda profile: _FailingHdfs(error))
    with pytest.raises(PerfkitError) as caught:
        get_method("stream", PROFILE).copy(MANIFEST, "/perfkit/transfers/r/d", tmp_path)
    assert str(caught.value) == line and "\n" not in str(caught.value)
    assert caught.value.__cause__ is error  # the original stays reachable for debugging


def test_ctrl_c_is_not_turned_into_a_copy_error(monkeypatch, tmp_path):
    from perfkit.storages import hdfs as hdfs_storage
    from perfkit.storages import s3 as s3_storage

    monkeypatch.setattr(s3_storage, "s3_client", lambda profile, config=None: None)
    monkeypatch.setattr(hdfs_storage, "webhdfs_client", lambda profile: _FailingHdfs(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        get_method("stream", PROFILE).copy(MANIFEST, "/d", Path(tmp_path))


def test_error_line_keeps_one_line_messages_as_they_are():
    assert error_line(PerfkitError("verification failed: 1 missing ['b']")) == "verification failed: 1 missing ['b']"


def _comparison_with(records):
    cmp = TransferComparison(PROFILE, methods=["stream", "hdfs-cp"], concurrency=[4])
    cmp.results = ResultSet("t", {"profile": {"name": "lab"}, "parameters": cmp.parameters(),
                                  "parallel_methods": ["stream", "hdfs-cp"]}, folder=Path("/nonexistent"), run_id="r1")
    for subject, ok, error in records:
        cmp.results.add(subject=subject, storage="s3→hdfs", case="total", phase="measured", iteration=0,
                        started_at=now(), wall_s=2.0 if ok else None, ok=ok, error=error, bytes=10_000_000,
                        params={"concurrency": 4})
    return cmp


def test_the_recap_shows_why_a_method_failed():
    cmp = _comparison_with([
        ("stream", False, "HdfsError: Failed to find datanode"),
        ("hdfs-cp", True, None),
        ("hdfs-cp", False, "`hadoop fs -cp` failed (exit 1):\n" + JAVA_TRACE),  # a record of an older run
    ])
    recap = report_of(cmp).recap().set_index("Method")
    assert recap.loc["stream (4 at once)", "status"] == "failed: HdfsError: Failed to find datanode"
    assert recap.loc["hdfs-cp (4 at once)", "status"] == (
        "failed 1 of 2: java.net.ConnectException: Call From host/127.0.0.1 to 127.0.0.1:9000 failed: "
        "Connection refused")
    for records in (cmp, report_of(cmp)):  # the experiment's word, and its report's
        with pytest.raises(PerfkitError) as caught:
            records.raise_for_failures()
        assert str(caught.value) == (
            "2 copies failed (hdfs-cp: java.net.ConnectException: Call From host/127.0.0.1 to "
            "127.0.0.1:9000 failed: Connection refused; stream: HdfsError: Failed to find datanode); "
            "the records are in /nonexistent/t/r1.jsonl")
