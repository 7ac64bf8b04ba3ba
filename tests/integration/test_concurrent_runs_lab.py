"""Two `perfkit queries` at once on a dataset not yet generated, on the real lab: both finish, the data is placed
once (the second waits for the first, then reuses it), and they read one shared table per storage."""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

import perfkit
from perfkit.engines import get_engine

pytestmark = pytest.mark.lab
ROOT = Path(perfkit.__file__).parents[1]


def _queries(rows: int, results: Path) -> subprocess.Popen:
    env = {**os.environ, "PERFKIT_RESULTS": str(results), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", "from perfkit.cli import main; main()", "queries",
                             "--engines", "trino", "--rows", str(rows), "--files", "2", "--runs", "1", "--warmup", "0",
                             "--queries", "q1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_runs_at_once_on_new_data_both_finish_and_share_the_placed_data_and_tables(profile, tmp_path):
    rows = 20_000 + secrets.randbelow(10_000)  # a dataset no earlier run placed
    runs = [_queries(rows, tmp_path / name) for name in ("a", "b")]
    outputs = [run.communicate(timeout=1800) for run in runs]
    for run, (_out, err) in zip(runs, outputs):
        assert run.returncode == 0, err[-3000:]
        assert "FileNotFoundError" not in err and "Traceback" not in err
    waited = [err for _, err in outputs if "waiting for it to finish, then its data is reused" in err]
    assert len(waited) == 1, [err[-2000:] for _, err in outputs]  # one placed it, the other waited for it
    records = [json.loads(line) for name in ("a", "b")
               for path in (tmp_path / name / "hdfs_vs_s3_queries").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    assert len(records) == 4 and all(r["ok"] for r in records)  # q1 on hdfs and s3, in each run
    assert {r["result_hash"] for r in records} == {records[0]["result_hash"]}
    with get_engine("trino", profile) as trino:
        names = [n for n in trino.table_names() if n.startswith("taxi_orc_")]
        # one table per storage for this dataset: its name's digest covers the location, which names the rows
        ddl = {n: str(trino.execute(f"SHOW CREATE TABLE perfkit.{n}")[0][0]) for n in names}
    mine = [n for n, text in ddl.items() if f"/taxi_r{rows}_f2_s42/orc" in text]
    assert len(mine) == 2, mine
