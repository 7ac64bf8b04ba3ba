"""The NFS vs HDFS report's findings, against hand-computed aggregates of made-up jobs: the report (ReadReport) is
built from the run's records alone, its parameters, DataNodes and page cache from the config they share."""
from perfkit.drift import NOT_RECORDED
from perfkit.presenting.reads_report import ReadReport
from perfkit.results import ResultSet

# (method, storage): (start, end, MB) of each of 2 jobs
JOBS = {("posix", "nfs"): [(100.0, 101.0, 100), (100.0, 104.0, 100)],  # 200 MB in 4 s: 50 MB/s
        ("libnfs", "nfs"): [(100.0, 102.0, 50), (101.0, 105.0, 50)],  # 100 MB in 5 s: 20 MB/s
        ("webhdfs", "hdfs"): [(100.0, 102.0, 100), (100.0, 110.0, 100)]}  # 200 MB in 10 s: 20 MB/s
PARAMETERS = {"methods": ["posix", "libnfs", "webhdfs", "fuse-hdfs"], "protocols": ["random-files"], "jobs": 2,
              "files_per_job": 4, "files": 48, "mean_mb": 8.0, "large_file_mb": 256, "replicas": 1,
              "cold_cache": True, "seed": 42}


def _report(tmp_path, notes=None) -> ReadReport:
    config = {"profile": {"name": "lab"}, "parameters": PARAMETERS, "datanodes": 1,
              "page_cache": notes or {"random-files/posix": "page cache dropped"}}
    results = ResultSet("nfs_vs_hdfs_reads", config, folder=tmp_path)
    for (name, where), jobs in JOBS.items():
        for j, (start, end, mb) in enumerate(jobs):
            results.add(subject=name, storage=where, case="random-files", phase="measured", iteration=j,
                        started_at="2026-01-01T00:00:00+00:00", wall_s=end - start, bytes=mb * 1_000_000,
                        params={"job": j, "start": start, "end": end, "files": 4})
    results.add_unavailable("fuse-hdfs", "hdfs", "random-files", "no FUSE mount of HDFS here", params={"job": None})
    return ReadReport(results)


def test_findings_rank_the_methods_and_set_nfs_against_hdfs(tmp_path):
    found = _report(tmp_path).findings()
    assert found.sentences == [
        "random-files, 2 jobs: posix 50.0 MB/s, libnfs 20.0 MB/s, webhdfs 20.0 MB/s (aggregate, fastest first).",
        "random-files: NFS 2.50× the MB/s of HDFS, fastest of each (posix 50.0 against webhdfs 20.0 MB/s); "
        "first job done → last job done: posix 1.00 → 4.00 s, webhdfs 2.00 → 10.00 s.",
    ]
    assert found.undecided == [
        "random-files through fuse-hdfs: unavailable: no FUSE mount of HDFS here",
        "Whether the differences are beyond noise: one test per access method, no repeat",
    ]
    assert found.conditions == ("2 jobs, each its own process; random-files: 4 files per job drawn from 48 files of "
                                "8 MB on average; HDFS 1 replica on 1 DataNode; page cache dropped before each test; "
                                "the embedded lab on this machine; " + NOT_RECORDED)


def test_a_cache_that_could_not_be_dropped_is_a_condition(tmp_path):
    kept = "page cache kept (cannot write /proc/sys/vm/drop_caches: Permission denied); reads may be cached"
    assert kept in _report(tmp_path, {"random-files/posix": kept}).findings().conditions
