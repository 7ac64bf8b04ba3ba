"""`kill` (SIGTERM) during a Spark query: the run ends like Ctrl-C, with no traceback, the run in flight recorded as
interrupted (not a sample) and the run's file saved and marked interrupted."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab

SLOW = "SELECT count(*) FROM {table} a CROSS JOIN {table} b WHERE a.fare_amount < b.fare_amount"


def test_sigterm_during_a_spark_query_records_the_run_in_flight_and_prints_no_traceback(lab, tmp_path):
    suite = tmp_path / "slow"
    suite.mkdir()
    (suite / "pairs.sql").write_text(SLOW)
    results = tmp_path / "results"
    perfkit = Path(sys.executable).with_name("perfkit")
    run = subprocess.Popen([str(perfkit), "queries", "--engines", "spark", "--storages", "hdfs,s3", "--rows", "80000",
                            "--files", "2", "--runs", "3", "--warmup", "0", "--suite", str(suite)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={
                               **__import__("os").environ, "PERFKIT_RESULTS": str(results)})
    said = []
    reader = threading.Thread(target=lambda: said.extend(iter(lambda: run.stderr.read(1).decode(errors="replace"),
                                                              "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    # the bar names the engine and query once the tables are registered, just before the first run, which takes
    # 25-30 s here (a cross join of 80,000 rows): a few seconds later it is in flight. A fixed wait from the start
    # could land in the data's placement, with no run begun.
    while not re.search(r"hdfs_vs_s3_queries:.*spark pairs", "".join(said)):
        assert run.poll() is None and time.monotonic() < deadline, "".join(said)
        time.sleep(0.5)
    time.sleep(8)
    run.send_signal(signal.SIGTERM)
    assert run.wait(120) != 0
    reader.join(10)
    stderr = "".join(said)
    assert "Traceback" not in stderr and "py4j" not in stderr.lower(), stderr[-3000:]
    [saved] = list(results.rglob("*.jsonl"))
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert all(r["config"].get("interrupted") is True for r in lines), lines[0]["config"]
    in_flight = [r for r in lines if str(r.get("error") or "").startswith("interrupted (signal 15)")]
    assert in_flight and in_flight[0]["ok"] is False and in_flight[0]["wall_s"] is None, lines
