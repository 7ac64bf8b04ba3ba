"""The st1 model against the figures of the EBS user guide; the study's parameters and TestDFSIO's failures (its report
from the records: test_st1_report.py)."""
from __future__ import annotations

import math

import pytest

from perfkit.errors import PerfkitError
from perfkit.metrics.st1 import PUBLISHED_CONFIGURATIONS, Configuration, St1Volume, model_table
from perfkit.presenting import report_of, run_report


@pytest.mark.parametrize("gib, baseline, burst", [
    (512, 20, 125),  # 0.5 TiB: the guide's lower bounds, 20 and 125 MiB/s
    (1024, 40, 250),  # 1 TiB: 40 MiB/s fill, 250 MiB/s burst
    (2048, 80, 500),  # burst reaches the 500 MiB/s cap at 2 TiB
    (4096, 160, 500),
    (12.5 * 1024, 500, 500),  # baseline reaches the cap at 12.5 TiB
    (16 * 1024, 500, 500),
])
def test_baseline_and_burst_by_size(gib, baseline, burst):
    v = St1Volume(gib)
    assert v.baseline == pytest.approx(baseline) and v.burst == pytest.approx(burst)


def test_the_bucket_holds_one_tib_of_credits_per_tib():
    assert St1Volume(1024).bucket_mib == 1024 * 1024
    assert St1Volume(512).bucket_mib == 512 * 1024


def test_time_to_drain_a_full_bucket():
    # 1 TiB at full burst: 1,048,576 MiB / (250 - 40) MiB/s
    assert St1Volume(1024).drain_seconds(250) == pytest.approx(1024 * 1024 / 210)
    # demand above burst is served at burst only
    assert St1Volume(1024).drain_seconds(400) == St1Volume(1024).drain_seconds(250)
    assert St1Volume(1024).drain_seconds(30) == math.inf  # below baseline: the bucket never drains


def test_simulation_bursts_then_falls_to_baseline_and_refills():
    v = St1Volume(512)  # burst 125, baseline 20, bucket 524,288 MiB: drains in 4993.2 s at 125 MiB/s
    run = v.simulate([125] * 100 + [0] * 10, step_s=60)
    assert run["delivered_mib_s"].iloc[0] == 125
    assert run["burst_balance_pct"].iloc[0] == pytest.approx(100 * (1 - 105 * 60 / v.bucket_mib))
    drained_at = v.drain_seconds(125)
    step = int(drained_at // 60)
    assert run["delivered_mib_s"].iloc[step] == pytest.approx(
        (125 * (drained_at - step * 60) + 20 * (60 - (drained_at - step * 60))) / 60)
    assert run["delivered_mib_s"].iloc[step + 1] == 20 and run["burst_balance_pct"].iloc[99] == 0
    assert run["burst_balance_pct"].iloc[100] == pytest.approx(100 * 20 * 60 / v.bucket_mib)  # idle refills


def test_seconds_to_move_with_and_without_running_dry():
    v = St1Volume(512)
    assert v.seconds_to_move(1000) == pytest.approx(8.0)  # 1000 MiB at 125 MiB/s
    big = 2_000_000  # more than the bucket can serve at burst
    fast = v.bucket_mib / 105
    assert v.seconds_to_move(big) == pytest.approx(fast + (big - 125 * fast) / 20)


def test_published_configurations_cost_the_same():
    costs = {c.label: round(c.monthly_cost(), 6) for c in PUBLISHED_CONFIGURATIONS}
    assert costs == {"4 × 512 GiB": 460.8, "2 × 1 TiB": 460.8, "1 × 2 TiB": 460.8}  # 10 TiB × 0.045 USD/GB


def test_model_table_divides_the_work_over_every_volume():
    table = model_table([Configuration(2, 1024, nodes=5)], total_mib=10 * 1000, replication=3)
    assert table["read seconds"].item() == pytest.approx(1000 / 250)  # 1000 MiB per volume at 250 MiB/s
    assert table["write seconds"].item() == pytest.approx(3000 / 250)  # three replicas written
    assert table["read MiB/s"].item() == pytest.approx(2500)


def test_a_write_that_drains_the_bucket_leaves_the_read_at_baseline():
    c = Configuration(1, 512, nodes=1)  # burst 125, baseline 20, bucket 524,288 MiB
    write_s, read_s = c.write_then_read(1_000_000, replication=1)
    fast = 512 * 1024 / 105
    assert write_s == pytest.approx(fast + (1_000_000 - 125 * fast) / 20)
    assert read_s == pytest.approx(1_000_000 / 20)  # nothing left to burst with


def test_a_node_cap_shares_the_bandwidth_among_its_volumes():
    c = Configuration(4, 512, nodes=1)
    assert c.write_then_read(4000, replication=1, node_cap_mib_s=200)[1] == pytest.approx(1000 / 50)


def test_sizes_outside_st1_are_refused():
    with pytest.raises(PerfkitError, match="st1 volumes are 125 GiB to 16 TiB"):
        St1Volume(100)


# -- the study: parameters, TestDFSIO failures, tables -------------------------------------------------------------
def _study(**kwargs):
    from perfkit.config import load_profile
    from perfkit.experiments.st1_throughput_burst import St1Study

    return St1Study(load_profile("lab"), **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"nodes": -3}, "nodes=-3: give a whole number >= 1"),
    ({"nodes": 0}, "nodes=0: give a whole number >= 1"),
    ({"workload_files": 0}, "workload_files=0: give a whole number >= 1"),
    ({"replication": 0}, "replication=0: give a whole number >= 1"),
    ({"files": "4"}, "files='4': this is text, not a number: write files=4"),
    ({"file_mb": 8.5}, "file_mb=8.5: give a whole number >= 1"),
    ({"period": 0}, "period=0: give a whole number >= 1"),
    ({"price_per_gb_month": -1}, "price_per_gb_month=-1: give a number of USD >= 0"),
    ({"workload_file_gb": float("nan")}, "workload_file_gb=nan: give a number of GB > 0"),
    ({"node_cap_mib_s": 0}, "node_cap_mib_s=0: give a number of MiB/s > 0, or None for no cap"),
    ({"run_testdfsio": "false"}, "run_testdfsio='false': give true or false"),
    ({"volume_ids": "vol-1"}, "volume_ids='vol-1': one text, not a list: write volume_ids=[vol-1]"),
    ({"source": "cw"}, "source='cw': use one of lab, cloudwatch"),
    ({"configurations": []}, "configurations=[]: give a non-empty list of [volumes per node, GiB per volume] pairs"),
    ({"configurations": "4x512"}, "configurations='4x512': give a non-empty list of"),
    ({"configurations": [[0, 512]]}, "configurations[0]=[0, 512]: give [volumes per node (a whole number >= 1), "
                                     "GiB per volume (125 to 16384, the sizes st1 offers)]"),
    ({"configurations": [[4, 100]]}, "configurations[0]=[4, 100]: give [volumes per node"),
    ({"configurations": [[4, 512], [4]]}, "configurations[1]=[4]: give [volumes per node"),
    ({"window_start": "yesterday", "window_end": "2026-01-01"}, "window_start='yesterday': give an ISO 8601 time"),
    ({"window_start": "2026-01-01"}, "give both window_start and window_end (ISO 8601), or neither"),
    ({"window_start": "2026-01-02", "window_end": "2026-01-01T00:00:00Z"},
     "window_start=2026-01-02T00:00:00+00:00 is not before window_end=2026-01-01T00:00:00+00:00: swap them"),
])
def test_the_study_refuses_bad_parameters_before_anything_runs(kwargs, message):
    import re

    with pytest.raises(PerfkitError, match="^" + re.escape(message)):
        _study(**kwargs)


def test_the_study_takes_yaml_values_in_their_types():
    from datetime import datetime

    study = _study(nodes=5.0, configurations=[(4, 512)], window_start=datetime(2026, 1, 1, 10),
                   window_end="2026-01-01T11:00:00+00:00", source="cloudwatch", volume_ids=["vol-1"],
                   run_testdfsio=False)
    assert study.nodes == 5 and study.configurations == [[4, 512.0]]
    assert study.window_start == "2026-01-01T10:00:00+00:00"


def test_a_huge_workload_is_modelled_in_coarser_steps(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    series = run_report(_study(workload_files=10**9, run_testdfsio=False), progress=False).modelled_series()
    assert series.groupby("configuration").size().max() <= 100_001


class _FakeBench:
    base = "/perfkit/testdfsio/run"

    def __init__(self, *args, fail: str | None = None, **kwargs):
        self.fail = fail

    def run(self, operation):
        from perfkit.testdfsio import DfsioResult

        if operation == self.fail:
            raise PerfkitError(f"TestDFSIO -{operation} failed (exit 1):\nat org.apache.Foo\n"
                               "Caused by: java.net.ConnectException: Connection refused")
        return DfsioResult(operation, 2, 16.0, 10.0, 10.0, 0.0, 2.0), 100.0, 102.0

    def cleanup(self):
        raise ConnectionError("Max retries exceeded with url: /webhdfs/v1/perfkit/testdfsio/run")


def _run_with(monkeypatch, tmp_path, fail):
    import pandas as pd

    from perfkit.experiments import st1_throughput_burst as st1
    from perfkit.metrics import empty_frame

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setattr(st1, "TestDfsio", lambda *a, **k: _FakeBench(fail=fail))
    monkeypatch.setattr(st1, "storage_probes", lambda profile, storages: {})
    # EC2 and CloudWatch, read at the end of the run: two 512 GiB volumes on one instance, no metric yet
    volumes = pd.DataFrame({"volume": ["vol-1", "vol-2"], "instance": ["i-1", "i-1"], "size_gib": [512, 512],
                            "type": ["st1", "st1"]})
    monkeypatch.setattr(st1.cw, "describe_volumes", lambda ids, region: volumes)
    monkeypatch.setattr(st1.cw, "fetch_ebs_metrics", lambda *a, **k: empty_frame())
    study = _study(source="cloudwatch", volume_ids=["vol-1"])
    with pytest.warns(UserWarning, match=r"TestDFSIO's folder /perfkit/testdfsio/run was not removed from HDFS "
                                         r"\(Max retries exceeded.*\): remove it with `hdfs dfs -rm -r "
                                         r"/perfkit/testdfsio/run`"):
        results = study.run(progress=False)
    return study, results


def test_a_failing_testdfsio_is_recorded_and_the_cleanup_error_does_not_hide_it(monkeypatch, tmp_path):
    study, results = _run_with(monkeypatch, tmp_path, fail="read")
    assert [(r.case, r.ok) for r in results.records] == [("write", True), ("read", False)]
    assert results.records[1].error == "TestDFSIO -read failed (exit 1): java.net.ConnectException: Connection refused"
    assert results.path.exists() and list(study.failures()["case"]) == ["read"]
    assert list(report_of(study).failures()["case"]) == ["read"]
    with pytest.raises(PerfkitError, match=r"^1 run failed \(testdfsio: TestDFSIO -read failed \(exit 1\): "
                                           r"java.net.ConnectException: Connection refused\)"):
        study.raise_for_failures()


def test_a_measured_run_is_in_the_table(monkeypatch, tmp_path):
    study, results = _run_with(monkeypatch, tmp_path, fail=None)
    assert all(r.ok for r in results.records) and study.failures().empty
    measured = report_of(study).table().iloc[0]
    assert measured["source"].startswith("measured (cloudwatch") and measured["configuration"] == "2 × 512 GiB (st1)"


def test_without_testdfsio_no_empty_result_file_is_written(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    study = _study(run_testdfsio=False)
    with pytest.raises(PerfkitError, match=r"^st1_throughput_burst: nothing has run yet: call run\(\) first$"):
        report_of(study)
    report = run_report(study, progress=False)
    assert study.results.records == [] and not study.results.path.exists()
    assert report.failures().empty and len(report.table()) == 3 and len(report.model()) == 3  # the model's alone
