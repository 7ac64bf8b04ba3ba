"""The NFS vs HDFS reads' report from its records alone (issue 69): hand-made records give the Findings and tables
computed here by hand; the saved file read back gives the report of the run in memory; `perfkit report --from` renders
it where nothing runs; and a run records all its report needs besides the records (DataNodes, page cache, file sets)."""
import ast
import math
from types import SimpleNamespace

import pandas as pd

from perfkit.drift import NOT_RECORDED
import pytest

import perfkit.presenting.reads_report as reads_report
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.presenting.reads_report import ReadReport
from perfkit.results import ResultSet
from perfkit.presenting import report_of, run_report

EXPERIMENT = "nfs_vs_hdfs_reads"
PARAMETERS = {"methods": ["posix", "libnfs", "webhdfs", "hdfs-cli", "fuse-hdfs"],
              "protocols": ["random-files", "large-file"], "jobs": 2, "files_per_job": 4, "files": 48, "mean_mb": 8.0,
              "large_file_mb": 256, "replicas": 1, "cold_cache": True, "seed": 42}
KEPT = "page cache kept (cannot write /proc/sys/vm/drop_caches: Permission denied); reads may be cached"
PLACED = [{"file set": "files-48x8.0MB-s42", "files": 48, "MB": 384.0, "NFS": "/perfkit/filesets/f",
           "HDFS": "/perfkit/filesets/f", "replicas": 1, "verified": "equal"},
          {"file set": "files-1x256MB-s43", "files": 1, "MB": 256.0, "NFS": "/perfkit/filesets/l",
           "HDFS": "/perfkit/filesets/l", "replicas": 1, "verified": "equal"}]
# (test, method, storage): (start, end, MB, error) of each of 2 jobs; a job with an error failed
JOBS = {("random-files", "posix", "nfs"): [(100.0, 101.0, 100, None), (100.0, 104.0, 100, None)],
        ("random-files", "webhdfs", "hdfs"): [(100.0, 102.0, 100, None), (100.0, 110.0, 100, None)],
        ("large-file", "libnfs", "nfs"): [(200.0, 202.0, 256, None), (200.0, 204.0, 256, None)],
        ("large-file", "webhdfs", "hdfs"): [(200.0, 201.0, 256, None), (200.5, 202.0, 256, None)],
        ("large-file", "hdfs-cli", "hdfs"): [(200.0, 208.0, 256, None),
                                             (200.0, 203.0, 0, "hdfs dfs -cat: Connection refused")]}


def _run(folder, failed: bool = True) -> ResultSet:
    """The records and config of a run as ReadComparison saves them (without hdfs-cli's tests when not `failed`)."""
    config = {"versions": {"python": "3.11"}, "host": {"hostname": "h"}, "profile": {"name": "lab"},
              "parameters": PARAMETERS, "datanodes": 1, "placed": PLACED,
              "page_cache": {"random-files/posix": "page cache dropped", "random-files/webhdfs": KEPT}}
    results = ResultSet(EXPERIMENT, config, folder=folder)
    for (test, name, where), jobs in JOBS.items():
        if name == "hdfs-cli" and not failed:
            continue
        for j, (start, end, mb, error) in enumerate(jobs):
            results.add(subject=name, storage=where, case=test, phase="measured", iteration=j,
                        started_at="2026-01-01T00:00:00+00:00", wall_s=None if error else end - start, ok=not error,
                        error=error, bytes=mb * 1_000_000, params={"job": j, "start": start, "end": end, "files": 1})
        if (test, name) == ("random-files", "webhdfs"):
            results.add_unavailable("fuse-hdfs", "hdfs", "random-files", "no FUSE mount of HDFS here",
                                    params={"job": None})
    results.save()
    return results


def _rate(jobs) -> float:
    """Aggregate MB/s by hand: the successful jobs' MB over the last end less the first start."""
    good = [j for j in jobs if j[3] is None]
    return sum(j[2] for j in good) / (max(j[1] for j in good) - min(j[0] for j in good))


def test_the_findings_of_hand_made_records_are_those_computed_by_hand(tmp_path):
    rates = {key[:2]: _rate(jobs) for key, jobs in JOBS.items()}
    assert rates == {("random-files", "posix"): 50.0, ("random-files", "webhdfs"): 20.0,
                     ("large-file", "libnfs"): 128.0, ("large-file", "webhdfs"): 256.0,
                     ("large-file", "hdfs-cli"): 32.0}
    found = ReadReport(_run(tmp_path)).findings()
    assert found.sentences == [
        "large-file, 2 jobs: webhdfs 256.0 MB/s, libnfs 128.0 MB/s, hdfs-cli 32.0 MB/s (aggregate, fastest first).",
        "large-file: HDFS 2.00× the MB/s of NFS, fastest of each (libnfs 128.0 against webhdfs 256.0 MB/s); "
        "first job done → last job done: libnfs 2.00 → 4.00 s, webhdfs 1.00 → 2.00 s.",
        "random-files, 2 jobs: posix 50.0 MB/s, webhdfs 20.0 MB/s (aggregate, fastest first).",
        "random-files: NFS 2.50× the MB/s of HDFS, fastest of each (posix 50.0 against webhdfs 20.0 MB/s); "
        "first job done → last job done: posix 1.00 → 4.00 s, webhdfs 2.00 → 10.00 s.",
    ]
    assert found.undecided == [
        "large-file through hdfs-cli: 1 of 2 jobs failed (listed under Failures)",
        "random-files through fuse-hdfs: unavailable: no FUSE mount of HDFS here",
        "Whether the differences are beyond noise: one test per access method, no repeat",
    ]
    assert found.conditions == (
        "2 jobs, each its own process; random-files: 4 files per job drawn from 48 files of 8 MB on average; "
        f"large-file: one 256 MB file read by every job; HDFS 1 replica on 1 DataNode; {KEPT}; "
        "the embedded lab on this machine; " + NOT_RECORDED)


def test_the_tables_of_hand_made_records_are_those_computed_by_hand(tmp_path):
    report = ReadReport(_run(tmp_path))
    table = report.table()
    assert list(table.columns) == ["test", "MB/s", "data nodes", "replicas", "jobs", "access", "comment"]
    rows = [(r["test"], r["MB/s"], r["access"], r["comment"]) for _, r in table.iterrows()]
    assert rows[:2] + rows[3:] == [
        ("random-files", 50.0, "posix (nfs)", "first done 1.00 s, median 2.50 s, last 4.00 s"),
        ("random-files", 20.0, "webhdfs (hdfs)", "first done 2.00 s, median 6.00 s, last 10.00 s"),
        ("large-file", 128.0, "libnfs (nfs)", "first done 2.00 s, median 3.00 s, last 4.00 s"),
        ("large-file", 256.0, "webhdfs (hdfs)", "first done 1.00 s, median 1.50 s, last 2.00 s"),
        ("large-file", 32.0, "hdfs-cli (hdfs)",
         "first done 8.00 s, median 8.00 s, last 8.00 s; 1 job FAILED: hdfs dfs -cat: Connection refused")]
    test, rate, access, comment = rows[2]  # unavailable: no rate, its reason
    assert (test, access, comment) == ("random-files", "fuse-hdfs", "unavailable: no FUSE mount of HDFS here")
    assert math.isnan(rate)
    assert set(zip(table["data nodes"], table["replicas"], table["jobs"])) == {(1, 1, 2)}

    aggregates = report.aggregates()
    assert [(r.test, r.access, r.storage, r.jobs, r.ok, r.MB) for r in aggregates.itertuples()] == [
        ("large-file", "webhdfs", "hdfs", 2, 2, 512.0), ("large-file", "libnfs", "nfs", 2, 2, 512.0),
        ("large-file", "hdfs-cli", "hdfs", 2, 1, 256.0),
        ("random-files", "posix", "nfs", 2, 2, 200.0), ("random-files", "webhdfs", "hdfs", 2, 2, 200.0)]
    assert list(aggregates["seconds"]) == [2.0, 4.0, 8.0, 4.0, 10.0]

    jobs = report.jobs_frame()  # every started job, unavailable methods' records left out
    assert len(jobs) == 10 and list(jobs["end (s)"] - jobs["start (s)"])[:4] == [1.0, 4.0, 2.0, 10.0]
    assert jobs["start (s)"].min() == 0.0  # seconds from the first job's start, not epoch seconds
    assert report.files_table().to_dict("records") == PLACED
    failures = report.failures()
    assert [(r.subject, r.case, r.error) for r in failures.itertuples()] == [
        ("hdfs-cli", "large-file", "hdfs dfs -cat: Connection refused")]
    with pytest.raises(PerfkitError, match=r"^1 read job failed \(hdfs-cli: hdfs dfs -cat: Connection refused\)"):
        report.raise_for_failures()


def test_the_report_of_the_saved_file_is_the_report_of_the_run(tmp_path):
    results = _run(tmp_path)
    live, stored = ReadReport(results), ReadReport.load(results.path)
    assert run_report(stored) is stored  # a stored run measures nothing
    assert stored.findings() == live.findings()
    for table in ("table", "aggregates", "jobs_frame", "files_table", "environment", "failures"):
        pd.testing.assert_frame_equal(getattr(stored, table)(), getattr(live, table)(), obj=table)


def test_a_run_without_its_file_sets_cache_or_datanodes_says_what_it_does_not_know(tmp_path):
    results = _run(tmp_path, failed=False)
    for key in ("placed", "page_cache", "datanodes"):
        del results.config[key]
    report = ReadReport(results)
    assert report.files_table().empty
    conditions = report.findings().conditions
    assert "; HDFS 1 replica; whether the page cache was dropped is not recorded;" in conditions  # no DataNodes
    assert set(report.table()["data nodes"]) == {-1}


def test_a_file_of_another_experiment_is_named(tmp_path):
    other = ResultSet("s3_to_hdfs_transfer", {"parameters": {"methods": ["stream"]}}, folder=tmp_path)
    other.add(subject="stream", storage="hdfs", case="total", phase="measured", iteration=0,
              started_at="2026-11-29T10:00:00+00:00", wall_s=1.0)
    other.save()
    with pytest.raises(PerfkitError, match=r"s3_to_hdfs_transfer/\S+\.jsonl: its records name no protocols, jobs in "
                                           r"their parameters: give a run of the NFS vs HDFS reads"):
        ReadReport.load(other.path)


def test_perfkit_report_from_a_stored_run_renders_it_with_no_lab_and_records_nothing(tmp_path, report_from):
    """`perfkit report --from RUN.jsonl`: the notebook, its `results` parameter the file, rendered where nothing runs
    (unit tests start no lab), its Findings the records' and no new run recorded."""
    results = _run(tmp_path / "stored", failed=False)  # a failed job ends a batch report with an error
    text = report_from(results.path, EXPERIMENT)
    found = ReadReport(results).findings()
    for sentence in [*found.sentences, *found.undecided, found.conditions]:
        assert sentence in text, sentence
    assert "The files, on NFS and on HDFS" in text and "files-48x8.0MB-s42" in text
    assert "posix (nfs)" in text  # the table in the published shape


def test_a_run_records_what_its_report_needs_beside_the_records(tmp_path, monkeypatch):
    """run_report(ReadComparison): the file sets placed, every test measured (jobs stood in for), and the report of
    its records; the DataNodes, the page cache before each test and the file sets are in the run's config, so the
    saved file's report is the same."""
    from perfkit.experiments import nfs_vs_hdfs_reads as reads

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    storage = {"posix": "nfs", "webhdfs": "hdfs", "fuse-hdfs": "hdfs"}

    def method(name, profile):
        return SimpleNamespace(storage=storage[name], location=lambda rel: f"/mnt/{rel}",
                               unavailable=lambda: "no FUSE mount of HDFS here" if name == "fuse-hdfs" else None)

    def run_jobs(name, profile, plan):
        end = {"posix": 102.0, "webhdfs": 104.0}[name]  # 8 MB a job: 16 MB in 2 s and in 4 s
        return [{"ok": True, "error": None, "start": 100.0, "end": end, "bytes": 8_000_000} for _ in plan]

    monkeypatch.setattr(reads, "get_method", method)
    monkeypatch.setattr(reads, "storage_probes", lambda *args: {})
    monkeypatch.setattr(reads, "run_jobs", run_jobs)
    monkeypatch.setattr(reads, "drop_page_cache", lambda: KEPT)
    comparison = reads.ReadComparison(load_profile("lab"), methods=["posix", "webhdfs", "fuse-hdfs"],
                                      protocols=["random-files"], jobs=2, files_per_job=1, files=4, mean_mb=1)
    monkeypatch.setattr(comparison, "datanodes", lambda: 3)
    monkeypatch.setattr(comparison, "prepare", lambda progress=True: setattr(comparison, "placed",
                                                                             pd.DataFrame(PLACED[:1])))
    report = run_report(comparison, progress=False)
    config = comparison.results.config
    assert config["parameters"] == {**PARAMETERS, "methods": ["posix", "webhdfs", "fuse-hdfs"],
                                    "protocols": ["random-files"], "files_per_job": 1, "files": 4, "mean_mb": 1}
    assert (config["datanodes"], config["placed"]) == (3, PLACED[:1])
    # before each test the page cache's state (an unavailable method reads nothing: no state)
    assert config["page_cache"] == {"random-files/posix": KEPT, "random-files/webhdfs": KEPT}
    found = report.findings()
    assert found.sentences[0] == "random-files, 2 jobs: posix 8.0 MB/s, webhdfs 4.0 MB/s (aggregate, fastest first)."
    assert f"HDFS 1 replica on 3 DataNodes; {KEPT}; the embedded lab on this machine" in found.conditions
    assert ReadReport.load(comparison.results.path).findings() == found


def test_the_report_module_imports_nothing_of_the_experiment():
    """The dependency points from the experiment to its report: the report can move to a presenting package."""
    tree = ast.parse(open(reads_report.__file__, encoding="utf-8").read())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name and "nfs_vs_hdfs_reads" in name}


def test_the_report_before_the_run_says_so():
    from perfkit.experiments.nfs_vs_hdfs_reads import ReadComparison

    with pytest.raises(PerfkitError, match=r"^nfs_vs_hdfs_reads: nothing has run yet: call run\(\) first$"):
        report_of(ReadComparison(load_profile("lab"), jobs=2))
