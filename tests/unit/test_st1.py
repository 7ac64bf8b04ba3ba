"""The st1 model against the figures of the EBS user guide."""
from __future__ import annotations

import math

import pytest

from perfkit.errors import PerfkitError
from perfkit.metrics.st1 import PUBLISHED_CONFIGURATIONS, Configuration, St1Volume, model_table


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


def test_a_huge_workload_is_modelled_in_coarser_steps():
    series = _study(workload_files=10**9).modelled_series()
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
    from perfkit.experiments import st1_throughput_burst as st1

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setattr(st1, "TestDfsio", lambda *a, **k: _FakeBench(fail=fail))
    monkeypatch.setattr(st1, "storage_probes", lambda profile, storages: {})
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
    with pytest.raises(PerfkitError, match=r"^1 runs failed \(testdfsio: TestDFSIO -read failed \(exit 1\): "
                                           r"java.net.ConnectException: Connection refused\)"):
        study.raise_for_failures()


def test_a_measured_run_is_in_the_table(monkeypatch, tmp_path):
    study, results = _run_with(monkeypatch, tmp_path, fail=None)
    assert all(r.ok for r in results.records) and study.failures().empty
    monkeypatch.setattr(study, "_measured_label", lambda: "2 × 512 GiB")  # (asks EC2)
    assert study.table()["source"].iloc[0].startswith("measured (cloudwatch")


def test_without_testdfsio_no_empty_result_file_is_written(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    study = _study(run_testdfsio=False)
    with pytest.raises(PerfkitError, match=r"^st1_throughput_burst: nothing has run yet: call run\(\) first$"):
        study.table()
    assert len(study.model()) == 3  # the model needs no run
    results = study.run(progress=False)
    assert results.records == [] and not results.path.exists()
    assert study.failures().empty and len(study.table()) == 3


def test_findings_give_the_measured_mib_s_say_the_lab_is_no_st1_volume_and_model_each_configuration(tmp_path):
    from perfkit.metrics import MiB
    from perfkit.results import ResultSet

    # 1,000 MiB of workload, one replica, one node: the numbers come out round
    study = _study(configurations=[[1, 1024], [1, 2048]], nodes=1, workload_files=1, workload_file_gb=1.048576,
                   replication=1, price_per_gb_month=0.045)
    study.results = ResultSet("st1_throughput_burst", folder=tmp_path)
    for operation, seconds in (("write", 10.0), ("read", 4.0)):
        study.results.add(subject="testdfsio", storage="hdfs", case=operation, phase="measured", iteration=0,
                          started_at="2026-01-01T00:00:00+00:00", wall_s=seconds, bytes=256 * MiB)
    study.cache_note = "page cache dropped before the read"
    found = study.findings()
    assert found.sentences == [
        "TestDFSIO measured (the lab): write 25.6 MiB/s (256 MiB in 10.0 s), read 64.0 MiB/s (256 MiB in 4.0 s); "
        "cluster throughput = total MiB ÷ execution seconds.",
        "The lab's figures are this machine's disk as /proc/diskstats sees it, not an st1 volume: they say nothing of "
        "st1's baseline, burst or bucket.",
        # 1 TiB: 40 and 250 MiB/s; a bucket of 1,048,576 MiB drains at 250 - 40 MiB/s in 4,993 s; 1,000 MiB at 250
        # MiB/s is 4 s; 1,024 GB × 0.045 USD
        "Modelled 1 × 1 TiB per node on 1 node: 40 MiB/s baseline, 250 MiB/s burst per volume, 83 min of burst from a "
        "full bucket; writes the workload in 4 s and reads it in 4 s (250.0 and 250.0 MiB/s in all); 46.08 USD per "
        "month.",
        # 2 TiB: 80 MiB/s, burst capped at 500; 2,097,152 MiB at 420 MiB/s: 4,993 s; 1,000 MiB at 500 MiB/s: 2 s
        "Modelled 1 × 2 TiB per node on 1 node: 80 MiB/s baseline, 500 MiB/s burst per volume, 83 min of burst from a "
        "full bucket; writes the workload in 2 s and reads it in 2 s (500.0 and 500.0 MiB/s in all); 92.16 USD per "
        "month.",
    ]
    assert found.undecided == ["Whether TestDFSIO's figures are steady: one write and one read, no repeat"]
    assert found.conditions.startswith(
        "TestDFSIO 4 files × 64 MB, one write then one read, page cache dropped before the read; metrics from "
        "/proc/diskstats; modelled workload 1 × 1.04858 GB, 1 replica written, every volume moving its even share; "
        "cost: st1 at 0.045 USD per GB-month (price_per_gb_month, as given); the embedded lab")


def test_without_testdfsio_the_findings_are_the_models_and_say_nothing_was_measured(tmp_path):
    from perfkit.results import ResultSet

    study = _study(run_testdfsio=False)
    study.results = ResultSet("st1_throughput_burst", folder=tmp_path)
    found = study.findings()
    assert found.first.startswith("Modelled 4 × 512 GiB per node on 5 nodes: 20 MiB/s baseline, 125 MiB/s burst")
    assert found.undecided == ["Nothing measured: run_testdfsio is off; the figures below are the model's alone"]
