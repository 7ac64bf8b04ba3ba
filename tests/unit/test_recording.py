"""The recording every experiment measures in: saved on success and on interruption, marked when interrupted,
cleaned up after, even when the save fails."""
import json

import pytest

from perfkit.experiments.recording import recording
from perfkit.keep import ResultsNotSaved


def _add(results, n: int = 0) -> None:
    results.add(subject="spark", storage="hdfs", case=f"q{n}", phase="measured", iteration=0,
                started_at="2026-11-28T00:00:00+00:00", wall_s=1.0)


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(autouse=True)
def results_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def test_a_finished_run_is_saved_whole_and_not_marked():
    cleaned = []
    with recording("demo", {"parameters": {"runs": 2}}, cleanup=lambda: cleaned.append(True)) as results:
        _add(results, 1)
        _add(results, 2)
    rows = _rows(results.path)
    assert [r["case"] for r in rows] == ["q1", "q2"]
    assert all("interrupted" not in r["config"] for r in rows)
    assert cleaned == [True]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit, RuntimeError])
def test_a_run_stopped_midway_keeps_what_it_measured_marked_interrupted(stop):
    cleaned = []
    with pytest.raises(stop):
        with recording("demo", {}, cleanup=lambda: cleaned.append(True)) as results:
            _add(results, 1)
            raise stop()
    rows = _rows(results.path)
    assert [r["case"] for r in rows] == ["q1"] and rows[0]["config"]["interrupted"] is True
    assert cleaned == [True]


def test_the_run_id_given_names_the_file(results_folder):
    with recording("demo", {}, run_id="20261128T000000Z-abcdef") as results:
        _add(results)
    assert results.path == results_folder / "demo" / "20261128T000000Z-abcdef.jsonl" and results.path.exists()


def test_nothing_recorded_leaves_no_file_when_asked(results_folder):
    with recording("demo", {}, keep_empty=False) as results:
        pass
    assert not results.path.exists()
    with recording("demo", {}) as results:
        pass
    assert results.path.read_text() == ""  # kept: the run happened and recorded nothing


def test_the_cleanup_runs_when_the_save_fails(monkeypatch):
    from perfkit import results as results_module

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results_module.atomic, "write_text", full_disk)
    cleaned = []
    with pytest.raises(ResultsNotSaved):
        with recording("demo", {}, cleanup=lambda: cleaned.append(True)) as results:
            _add(results)
    assert cleaned == [True]


# -- the experiments that once kept their own copy of this, and drifted ---------------------------------------------
def test_the_reads_comparison_stopped_midway_keeps_its_first_test_marked_interrupted(monkeypatch):
    from types import SimpleNamespace

    from perfkit.config import load_profile
    from perfkit.experiments import nfs_vs_hdfs_reads as reads

    method = SimpleNamespace(storage="nfs", unavailable=lambda: None, location=lambda rel: f"/mnt/{rel}")
    monkeypatch.setattr(reads, "get_method", lambda name, profile: method)
    monkeypatch.setattr(reads, "storage_probes", lambda *args: {})
    calls = []

    def run_jobs(name, profile, plan):
        calls.append(name)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return [{"ok": True, "error": None, "start": 100.0, "end": 102.0, "bytes": 8_000_000} for _ in plan]

    monkeypatch.setattr(reads, "run_jobs", run_jobs)
    comparison = reads.ReadComparison(load_profile("lab"), methods=["posix", "webhdfs"], protocols=["random-files"],
                                      jobs=2, files_per_job=1, files=4, mean_mb=1, cold_cache=False)
    monkeypatch.setattr(comparison, "datanodes", lambda: 1)
    with pytest.raises(KeyboardInterrupt):
        comparison.run(progress=False)
    rows = _rows(comparison.results.path)
    first, second = calls  # the methods in the run's order (seeded, recorded)
    assert [(r["subject"], r["iteration"], r["wall_s"]) for r in rows] == [(first, 0, 2.0), (first, 1, 2.0),
                                                                          (second, 0, None)]  # the test in flight
    assert rows[2]["error"].startswith("interrupted (Ctrl-C) after")
    assert rows[2]["storage"] == {"posix": "nfs", "webhdfs": "hdfs"}[second]
    assert all(r["config"]["interrupted"] is True for r in rows)


def test_the_st1_study_keeps_what_testdfsio_recorded_before_a_failure(monkeypatch):
    from perfkit.config import load_profile
    from perfkit.experiments.st1_throughput_burst import St1Study

    study = St1Study(load_profile("lab"), files=2, file_mb=8)
    monkeypatch.setattr(type(study.profile.provider), "hdfs_blocks", lambda self: None)

    def write_then_stop(results):  # the write recorded, then a stop during the read
        if results.records:
            raise KeyboardInterrupt
        _add(results, 1)

    monkeypatch.setattr(study, "attempt", lambda operation: write_then_stop(study.results))
    with pytest.raises(KeyboardInterrupt):
        study.run(progress=False)
    rows = _rows(study.results.path)
    assert [(r["case"], r["ok"]) for r in rows] == [("q1", True), ("read", False)]  # the read in flight: interrupted
    assert rows[1]["error"].startswith("interrupted (Ctrl-C) after") and rows[0]["config"]["interrupted"] is True


def test_the_st1_study_that_measured_nothing_leaves_no_file():
    from perfkit.config import load_profile
    from perfkit.experiments.st1_throughput_burst import St1Study

    study = St1Study(load_profile("lab"), run_testdfsio=False)
    study.run(progress=False)
    assert not study.results.path.exists()
