"""TestDFSIO on the lab: the parser against the log it really writes, and the diskstats it causes."""
from pathlib import Path

import pandas as pd

from perfkit.storages import hdfs as hdfs_storage
from perfkit.presenting.st1_report import St1Report
from perfkit.experiments.st1_throughput_burst import St1Study
from perfkit.testdfsio import TestDfsio, parse_log
from perfkit.presenting import run_report


def test_testdfsio_runs_and_its_real_log_parses(profile, tmp_path):
    bench = TestDfsio(profile, files=2, size_mb=4, workdir=tmp_path, run_id="test")
    try:
        write, start, end = bench.run("write")
        read, _, _ = bench.run("read")
    finally:
        bench.cleanup()
    assert (write.operation, write.files, write.total_mb) == ("write", 2, 8.0)
    assert (read.operation, read.files, read.total_mb) == ("read", 2, 8.0)
    assert 0 < write.exec_seconds <= end - start
    logged = parse_log(Path(tmp_path, "TestDFSIO_read.log").read_text())
    assert logged == [read]
    assert not hdfs_storage.webhdfs_client(profile).status(bench.base, strict=False)  # its folder removed


def test_the_lab_study_measures_and_models(profile, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    study = St1Study(profile, files=2, file_mb=8)
    report = run_report(study)
    results = study.results
    table = report.table()
    assert list(table["source"].str.split().str[0]) == ["measured", "modelled", "modelled", "modelled"]
    measured = table.iloc[0]
    assert measured["write MiB/s"] == round(16 / study.dfsio["write"].exec_seconds, 1)
    metrics = report.metrics()
    assert {"VolumeReadBytes", "VolumeWriteBytes", "ReadThroughput", "WriteThroughput"} <= set(metrics["metric"])
    written = metrics.query("metric == 'VolumeWriteBytes'")["value"].sum()
    assert written > 0  # the run's writes reached the disk (flushed inside the sampled window)
    assert [r.case for r in results.records] == ["write", "read"]
    stored = St1Report.load(results.path)  # the diskstats samples recorded with the run: the same report again
    assert stored.findings() == report.findings()
    pd.testing.assert_frame_equal(stored.metrics(), metrics)
    pd.testing.assert_frame_equal(stored.table(), table)
