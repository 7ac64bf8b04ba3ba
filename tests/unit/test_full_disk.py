"""A full disk when results are saved: the runs measured are kept elsewhere, the message names the path, why, where
the records are and the fix, and the CLI prints the recap of what was measured before exiting 1."""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from perfkit import atomic, keep
from perfkit.keep import ResultsNotSaved, mount_point
from perfkit.results import ResultSet, now, read_result_file

REAL_FALLBACK_FOLDERS = keep.fallback_folders


@pytest.fixture
def full(tmp_path, monkeypatch):
    """Writes into the folders in the returned set fail as a full disk would; home and temp are the test's own."""
    monkeypatch.setattr(keep, "fallback_folders", REAL_FALLBACK_FOLDERS)  # conftest's stand-in undone: the real ones
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    folders = {tmp_path / "results"}
    real = atomic.write_text

    def write_text(path, text, mode=atomic.SHARED):
        if any(Path(path).is_relative_to(folder) for folder in folders):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as the kernel says it: no file name
        return real(path, text, mode)

    monkeypatch.setattr(atomic, "write_text", write_text)
    return folders


def _results(tmp_path, n: int = 3) -> ResultSet:
    results = ResultSet("hdfs_vs_s3_queries", {"versions": {"spark": "Spark 4"}}, folder=tmp_path / "results")
    for i in range(n):
        results.add(subject="spark", storage=("hdfs", "s3")[i % 2], case="q1", phase="measured", iteration=i,
                    started_at=now(), wall_s=1.5 + i)
    return results


def _text(results: ResultSet) -> bytes:
    return "".join(json.dumps(asdict(r), default=str) + "\n" for r in results.records).encode()


def test_a_full_disk_keeps_every_record_in_the_home_and_names_path_cause_place_and_fix(tmp_path, full):
    results = _results(tmp_path)
    with pytest.raises(ResultsNotSaved) as caught:
        results.save()
    kept = tmp_path / "home/.local/state/perfkit/results/hdfs_vs_s3_queries" / f"{results.run_id}.jsonl"
    assert str(caught.value) == (
        f"cannot save the results to {results.path}: No space left on device; the 3 records measured are kept in "
        f"{kept}. Fix: free space on {mount_point(results.path)} or set PERFKIT_RESULTS to another folder")
    assert caught.value.kept == kept and os.path.ismount(mount_point(results.path))
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == hashlib.sha256(_text(results)).hexdigest()
    assert read_result_file(kept) == [json.loads(line) for line in _text(results).splitlines()]
    assert not results.path.exists()


def test_with_the_home_full_too_the_records_go_to_the_temporary_folder(tmp_path, full):
    full.add(tmp_path / "home")
    results = _results(tmp_path, 2)
    with pytest.raises(ResultsNotSaved, match=r"the 2 records measured are kept in .*/tmp/perfkit-results/"):
        results.save()
    kept = tmp_path / "tmp/perfkit-results/hdfs_vs_s3_queries" / f"{results.run_id}.jsonl"
    assert kept.read_bytes() == _text(results)


def test_with_nowhere_to_keep_them_the_message_says_so_and_why(tmp_path, full):
    full.update({tmp_path / "home", tmp_path / "tmp"})
    with pytest.raises(ResultsNotSaved, match=re.escape(
            f"could not be kept elsewhere either ({tmp_path}/home/.local/state/perfkit/results: No space left on "
            f"device; {tmp_path}/tmp/perfkit-results: No space left on device). Fix: free space on ")):
        _results(tmp_path).save()


def test_a_folder_that_cannot_be_written_names_that_fix(tmp_path, monkeypatch):
    real = atomic.write_text

    def write_text(path, text, mode=atomic.SHARED):
        if Path(path).is_relative_to(tmp_path / "results"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, text, mode)

    monkeypatch.setattr(atomic, "write_text", write_text)
    results = _results(tmp_path)
    with pytest.raises(ResultsNotSaved, match=re.escape(
            f"cannot save the results to {results.path}: Permission denied; the 3 records measured are kept in ")
            + rf".*\. Fix: make {re.escape(str(results.path.parent))} writable or set PERFKIT_RESULTS to another"):
        results.save()


class FakeEngine:
    name = "spark"

    def __init__(self, *args):
        self.queries = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def versions(self):
        return {"spark": "Spark 4 (fake)"}

    def execute(self, sql, timeout_s=None):
        self.queries.append(sql)
        return [("yellow", 3)]


@pytest.fixture
def comparison_class(monkeypatch):
    """QueryComparison with its data, engine and storages faked: only the measuring loop and the saving are real."""
    from perfkit.experiments import hdfs_vs_s3_queries as module
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.suites import DEFAULT_TABLE

    cleaned = []
    monkeypatch.setattr(module, "get_engine", FakeEngine)
    monkeypatch.setattr(QueryComparison, "prepare", lambda self, progress=True: "tables")
    monkeypatch.setattr(QueryComparison, "config", lambda self: {"versions": {}, "parameters": self.parameters()})
    monkeypatch.setattr(QueryComparison, "watch_storages",
                        lambda self, tableset: setattr(self, "probes", {"hdfs": lambda: None, "s3": lambda: None}))
    monkeypatch.setattr(QueryComparison, "register_tables", lambda self, engine, tableset: {
        where: {DEFAULT_TABLE: f"perfkit.t_{where}"} for where in ("hdfs", "s3")})
    monkeypatch.setattr(QueryComparison, "cleanup", lambda self: cleaned.append(True))
    QueryComparison.cleaned = cleaned
    return QueryComparison


def test_a_save_that_fails_mid_run_stops_the_run_with_every_run_measured_kept(tmp_path, full, comparison_class):
    from perfkit.config import load_profile

    cmp = comparison_class(load_profile("lab"), engines=["spark"], queries=["q1", "q2"], runs=2, warmup=0,
                           health_interval_s=0.01)
    with pytest.raises(ResultsNotSaved) as caught:
        cmp.run(progress=False)  # a save after each step: the first, after q1's first run, finds the disk full
    measured = cmp.results.records
    assert [(r.case, r.ok) for r in measured] == [("q1", True)] and measured[0].storage in ("hdfs", "s3")
    kept = caught.value.kept
    assert kept == tmp_path / "home/.local/state/perfkit/results/hdfs_vs_s3_queries" / f"{cmp.results.run_id}.jsonl"
    rows = read_result_file(kept)
    assert [(r["case"], r["storage"], r["wall_s"]) for r in rows] == [(r.case, r.storage, r.wall_s) for r in measured]
    assert all(r["config"]["interrupted"] is True for r in rows)  # the kept file says the run is incomplete
    assert kept.read_bytes() == _text(cmp.results)
    assert comparison_class.cleaned == [True]  # the run's own writes are still cleaned up


def test_the_cli_prints_the_recap_of_what_was_measured_then_the_error_and_exits_1(tmp_path, full, comparison_class):
    from perfkit.cli import main

    result = CliRunner().invoke(main, ["queries", "--engines", "spark", "--queries", "q1,q2", "--runs", "2",
                                       "--warmup", "0"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    recap = next(i for i, line in enumerate(lines) if line.split()[:2] == ["engine", "version"])
    assert lines[recap - 1] == "perfkit: the results could not be saved; what was measured:"
    assert lines[recap + 1].split()[:3] == ["spark", "Spark", "4"] and "q1" in lines[recap + 1]
    assert re.fullmatch(r"perfkit: cannot save the results to \S+/results/hdfs_vs_s3_queries/\S+\.jsonl: No space "
                        r"left on device; the 1 record measured is kept in \S+/home/\.local/state/perfkit/results/"
                        r"hdfs_vs_s3_queries/\S+\.jsonl\. Fix: free space on \S+ or set PERFKIT_RESULTS to another "
                        r"folder", lines[-1]), lines[-1]
    assert "Traceback" not in result.output
