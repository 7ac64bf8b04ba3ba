"""The st1 study's report from its records alone (issue 69): the Findings, tables and plots' frames of a run as the
study records it, read back from its file with no lab and no AWS call, and `perfkit report --from` rendering them."""
from __future__ import annotations

import html
import math
from datetime import datetime, timezone

import pandas as pd
import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments import st1_throughput_burst as st1
from perfkit.drift import NOT_RECORDED
from perfkit.presenting.st1_report import St1Report
from perfkit.metrics import MiB
from perfkit.results import ResultSet
from perfkit.testdfsio import DfsioResult
from perfkit.presenting import run_report

EXPERIMENT = "st1_throughput_burst"
T0 = "2026-01-01T00:00:00+00:00"
LAB_PRICES = ("st1 at 0.045 USD per GB-month: AWS list prices, us-east-1, S3 Standard, USD, as of 2026-01-01 "
              "(the EBS pricing page)")  # as a run recorded it: PriceTable.basis() named S3's class for an EBS price
ST1_PRICES = ("st1 at 0.045 USD per GB-month: AWS list prices, us-east-1, EBS st1 (Throughput Optimized HDD), USD, as "
              "of 2026-01-01 (the EBS pricing page)")  # as its report names it


def _diskstats(write_mib: list[float], read_mib: list[float]) -> dict:
    """The lab's diskstats samples as a run records them: per one-second period, the MiB written and read."""
    rows = []
    for i, (written, read) in enumerate(zip(write_mib, read_mib)):
        at = f"2026-01-01T00:00:0{i}+00:00"
        rows += [["sda", "VolumeReadBytes", at, read * MiB, "Bytes"], ["sda", "VolumeWriteBytes", at, written * MiB,
                                                                        "Bytes"]]
    return {"source": "/proc/diskstats (sda)", "period": 1, "columns": ["volume", "metric", "timestamp", "value",
                                                                         "unit"], "rows": rows}


def _stored(folder, operations=(("write", 10.0), ("read", 4.0)), config=None, **params) -> ResultSet:
    """A run of the st1 study as it records one, made by hand: its parameters (the experiment's own names), what it
    notes besides (the price basis, the read's page-cache note, the lab's diskstats), one record per operation."""
    parameters = st1.St1Study(load_profile("lab"), **params).parameters()
    recorded = {"versions": {"hadoop": "3.4.1"}, "profile": {"name": "lab"}, "parameters": parameters,
                "price_basis": LAB_PRICES, "cache_note": "page cache dropped before the read",
                "metrics": _diskstats([10.0, 20.0], [0.0, 5.0]), **(config or {})}
    results = ResultSet(EXPERIMENT, recorded, folder=folder)
    for operation, seconds in operations:
        if seconds is None:
            results.add(subject="testdfsio", storage="hdfs", case=operation, phase="measured", iteration=0,
                        started_at=T0, wall_s=None, ok=False, error="HDFS unhealthy: the NameNode did not answer")
        else:
            results.add(subject="testdfsio", storage="hdfs", case=operation, phase="measured", iteration=0,
                        started_at=T0, wall_s=seconds, bytes=256 * MiB, params={"files": 4})
    results.save()
    return results


# 1,000 MiB of workload (1 × 1.048576 GB), one replica, one node: the model's numbers come out round
ROUND = dict(configurations=[[1, 1024], [1, 2048]], nodes=1, workload_files=1, workload_file_gb=1.048576,
             replication=1, price_per_gb_month=0.045)


def test_the_report_of_hand_made_records_finds_what_the_study_found(tmp_path):
    report = St1Report(_stored(tmp_path, **ROUND))
    found = report.findings()
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
    assert found.conditions == (
        "TestDFSIO 4 files × 64 MB, one write then one read, page cache dropped before the read; metrics from "
        "/proc/diskstats; modelled workload 1 × 1.04858 GB, 1 replica written, every volume moving its even share; "
        f"cost: {ST1_PRICES}; the embedded lab on this machine; {NOT_RECORDED}")
    assert report.price_basis() == ST1_PRICES and run_report(report) is report


def test_the_table_has_the_published_shape_measured_then_modelled(tmp_path):
    table = St1Report(_stored(tmp_path, **ROUND)).table()
    nan = math.nan
    expected = pd.DataFrame([
        # 256 MiB in 10 s and 4 s
        ["measured (lab, TestDFSIO 4 × 64 MB)", "lab: one local disk", nan, "", 4.0, 10.0, 64.0, 25.6, nan],
        # 1,000 MiB on one volume at its burst (250, 500 MiB/s); 1,024 and 2,048 GB × 0.045 USD
        ["modelled (1 × 1.04858 GB)", "1 × 1 TiB", 1.0, "1 node, 1 TiB", 4.0, 4.0, 250.0, 250.0, 46.1],
        ["modelled (1 × 1.04858 GB)", "1 × 2 TiB", 1.0, "1 node, 2 TiB", 2.0, 2.0, 500.0, 500.0, 92.2],
    ], columns=["source", "configuration", "volumes per node", "cluster size", "read time (s)", "write time (s)",
                "read MiB/s", "write MiB/s", "cost per month (USD)"])
    pd.testing.assert_frame_equal(table, expected)


def test_the_plots_frames_are_the_recorded_samples(tmp_path):
    report = St1Report(_stored(tmp_path, **ROUND))
    metrics = report.metrics()
    write = metrics[metrics["metric"] == "WriteThroughput"]
    assert write["value"].tolist() == [10.0, 20.0] and set(write["volume"]) == {"sda"}  # MiB in a 1 s period
    assert metrics[metrics["metric"] == "ReadThroughput"]["value"].tolist() == [0.0, 5.0]
    assert write["timestamp"].tolist() == [pd.Timestamp("2026-01-01T00:00:00Z"), pd.Timestamp("2026-01-01T00:00:01Z")]
    series = report.modelled_series()
    assert list(dict.fromkeys(series["configuration"])) == ["1 × 1 TiB", "1 × 2 TiB"]
    # 4 s of work at 250 MiB/s, then ten idle minutes, in 10 s steps: one busy step, 60 idle
    one = series[series["configuration"] == "1 × 1 TiB"]
    assert len(one) == 61 and one["delivered_mib_s"].iloc[0] == 250.0 and one["delivered_mib_s"].iloc[1:].eq(0).all()
    assert report.environment().set_index("setting").loc["version: hadoop", "value"] == "3.4.1"


def test_a_failed_read_and_no_testdfsio_say_what_was_not_decided(tmp_path):
    failed = St1Report(_stored(tmp_path / "failed", operations=(("write", 10.0), ("read", None)), **ROUND))
    assert failed.findings().sentences[0] == ("TestDFSIO measured (the lab): write 25.6 MiB/s (256 MiB in 10.0 s); "
                                              "cluster throughput = total MiB ÷ execution seconds.")
    assert failed.findings().undecided == ["TestDFSIO read: HDFS unhealthy: the NameNode did not answer",
                                           "Whether TestDFSIO's figures are steady: one write and one read, no repeat"]
    row = failed.table().iloc[0]
    assert math.isnan(row["read time (s)"]) and row["write MiB/s"] == 25.6
    assert list(failed.failures()["case"]) == ["read"]
    nothing = St1Report(ResultSet(EXPERIMENT, {"parameters": st1.St1Study(load_profile("lab"), run_testdfsio=False)
                                               .parameters(), "profile": {"name": "lab"}}, folder=tmp_path))
    found = nothing.findings()
    assert found.first.startswith("Modelled 4 × 512 GiB per node on 5 nodes: 20 MiB/s baseline, 125 MiB/s burst")
    assert found.undecided == ["Nothing measured: run_testdfsio is off; the figures below are the model's alone"]
    assert found.conditions.startswith("no TestDFSIO run; metrics from /proc/diskstats;")
    assert nothing.metrics().empty and len(nothing.table()) == 3


def test_cloudwatch_s_volumes_and_an_unread_metric_are_the_records(tmp_path):
    volumes = [{"volume": f"vol-{i}", "instance": f"i-{i // 2}", "size_gib": 512, "type": "st1"} for i in range(4)]
    config = {"volumes": volumes, "cache_note": "page cache kept: a cluster's nodes are not this machine",
              "metrics": {"source": "CloudWatch", "error": "EC2: no AWS credentials found"}}
    report = St1Report(_stored(tmp_path, config=config, source="cloudwatch", cluster_id="j-1", **ROUND))
    assert report.table()["configuration"].iloc[0] == "2 × 512 GiB (st1)"  # two volumes on each instance
    found = report.findings()
    assert found.sentences[0].startswith("TestDFSIO measured (cluster j-1): write 25.6 MiB/s")
    assert "The volumes' metrics over the run: not read from CloudWatch (EC2: no AWS credentials found)" in \
        found.undecided
    assert "metrics from CloudWatch (us-east-1, 60 s periods)" in found.conditions
    assert report.metrics().empty
    assert report.failures()[["subject", "case"]].values.tolist() == [["cloudwatch", "metrics"]]
    with pytest.raises(PerfkitError, match=r"^cloudwatch/metrics: the volumes' metrics were not read: EC2: no AWS "
                                           r"credentials found; the records are in "):
        report.raise_for_failures()


def test_a_run_of_another_experiment_is_refused_by_name(tmp_path):
    other = ResultSet("s3_to_hdfs_transfer", {"parameters": {"methods": ["stream"]}}, folder=tmp_path)
    other.add(subject="stream", storage="hdfs", case="total", phase="measured", iteration=0, started_at=T0, wall_s=1.0)
    other.save()
    with pytest.raises(PerfkitError, match=r"s3_to_hdfs_transfer/\S+\.jsonl: its records name no source, "
                                           r"configurations, .* in their parameters: give a run of st1_throughput"):
        St1Report.load(other.path)


# -- the study's own records: saved, loaded back, the same report ----------------------------------------------------
class _Bench:
    """TestDFSIO, as the study drives it: 2 files of 8 MiB, written in 2 s and read in 1 s."""
    base = "/perfkit/testdfsio/run"

    def __init__(self, *args, **kwargs):
        pass

    def run(self, operation):
        seconds = 2.0 if operation == "write" else 1.0
        return DfsioResult(operation, 2, 16.0, 8.0, 8.0, 0.0, seconds), 1_767_225_600.0, 1_767_225_600.0 + seconds

    def cleanup(self):
        pass


class _Sampler:
    """The lab's diskstats sampler: two one-second periods of this machine's counters, as deltas_to_frame makes them
    (numpy values, pandas times)."""
    device, period = "nvme0n1", 1

    def __init__(self, path, period):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def frame(self):
        from perfkit.metrics.diskstats import deltas_to_frame

        at = [datetime(2026, 1, 1, 0, 0, s, 250_000, tzinfo=timezone.utc) for s in range(3)]
        counters = [[0] * 11, [10, 0, 2048, 0, 20, 0, 65536, 0, 0, 0, 30], [30, 0, 8192, 0, 50, 0, 262144, 0, 0, 0, 45]]
        return deltas_to_frame(self.device, [(t, float(i), c) for i, (t, c) in enumerate(zip(at, counters))], 1)


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """The study's run with TestDFSIO, HDFS's probes, the page cache and the samplers (diskstats, or EC2 and
    CloudWatch) stood in for: what it records is its own."""
    from perfkit.metrics import diskstats

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(st1, "TestDfsio", _Bench)
    monkeypatch.setattr(st1, "storage_probes", lambda profile, storages: {})
    monkeypatch.setattr(st1, "drop_page_cache", lambda: "page cache dropped")
    monkeypatch.setattr(diskstats, "DiskStatsSampler", _Sampler)
    volumes = pd.DataFrame({"volume": ["vol-a", "vol-b"], "instance": ["i-1", "i-1"], "size_gib": [1024, 1024],
                            "type": ["st1", "st1"]})
    asked = []

    def fetch(ids, start, end, period, region):
        asked.append((ids, start, end, period))
        t = pd.to_datetime(["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"], utc=True)
        return pd.concat([pd.DataFrame({"volume": v, "metric": m, "timestamp": t, "value": values, "unit": u})
                          for v in ids for m, values, u in (("VolumeWriteBytes", [60.0 * MiB, 120.0 * MiB], "Bytes"),
                                                            ("BurstBalance", [99.0, 98.5], "Percent"))],
                         ignore_index=True)

    monkeypatch.setattr(st1.cw, "describe_volumes", lambda ids, region: volumes)
    monkeypatch.setattr(st1.cw, "fetch_ebs_metrics", fetch)

    def run(**params):
        profile = load_profile("lab")
        monkeypatch.setattr(type(profile.provider), "hdfs_blocks", lambda self: str(tmp_path))
        study = st1.St1Study(profile, files=2, file_mb=8, **params)
        return study, run_report(study, progress=False), asked

    return run


def _same(one: St1Report, other: St1Report) -> None:
    assert one.findings() == other.findings()
    for frame in ("table", "model", "metrics", "modelled_series", "failures", "environment", "volumes"):
        pd.testing.assert_frame_equal(getattr(one, frame)(), getattr(other, frame)(), obj=frame)
    assert one.price_basis() == other.price_basis()


def test_a_lab_run_s_report_is_the_same_from_its_file(measured):
    study, report, _ = measured()
    loaded = St1Report.load(study.results.path)
    _same(report, loaded)
    metrics = loaded.metrics()
    write = metrics[metrics["metric"] == "WriteThroughput"]["value"].tolist()
    assert write == [32.0, 96.0]  # 65,536 and 196,608 sectors of 512 bytes in one-second periods, in MiB/s
    found = loaded.findings()
    assert found.sentences[0] == ("TestDFSIO measured (the lab): write 8.0 MiB/s (16 MiB in 2.0 s), read 16.0 MiB/s "
                                  "(16 MiB in 1.0 s); cluster throughput = total MiB ÷ execution seconds.")
    assert "one write then one read, page cache dropped before the read;" in found.conditions
    assert loaded.price_basis().startswith("st1 at 0.045 USD") and "S3 Standard" not in loaded.price_basis()
    assert "EBS st1 (Throughput Optimized HDD)" in loaded.price_basis() and "s3/pricing" not in loaded.price_basis()


def test_a_cloudwatch_run_records_what_it_fetched_and_its_report_asks_aws_nothing(measured, monkeypatch):
    study, report, asked = measured(source="cloudwatch", volume_ids=["vol-a", "vol-b"], period=60)
    [(ids, start, end, period)] = asked  # once, at the end of the run: the window widened to whole periods
    assert ids == ["vol-a", "vol-b"] and period == 60 and start.timestamp() % 60 == 0
    for name in ("describe_volumes", "fetch_ebs_metrics", "volumes_of_cluster"):
        monkeypatch.setattr(st1.cw, name, lambda *a, **k: pytest.fail("the report asked AWS"))
    loaded = St1Report.load(study.results.path)
    _same(report, loaded)
    assert loaded.table()["configuration"].iloc[0] == "2 × 1024 GiB (st1)"
    balance = loaded.metrics().query("metric == 'BurstBalance' and volume == 'vol-b'")["value"].tolist()
    assert balance == [99.0, 98.5]
    written = loaded.metrics().query("metric == 'WriteThroughput' and volume == 'vol-a'")["value"].tolist()
    assert written == [1.0, 2.0]  # 60 and 120 MiB in 60 s periods
    assert "page cache kept: a cluster's nodes are not this machine" in loaded.findings().conditions


def test_a_cloudwatch_run_that_cannot_read_aws_keeps_testdfsio_s_figures_and_says_why(measured, monkeypatch):
    def refused(ids, region):
        raise PerfkitError("EC2: no AWS credentials found. Fix: configure the standard AWS chain")

    monkeypatch.setattr(st1.cw, "describe_volumes", refused)
    study, report, _ = measured(source="cloudwatch", volume_ids=["vol-a"])
    assert [r.ok for r in study.results.records] == [True, True]
    loaded = St1Report.load(study.results.path)
    _same(report, loaded)
    assert list(loaded.failures()["case"]) == ["metrics"] and loaded.metrics().empty
    assert loaded.table()["configuration"].iloc[0] == "volumes not described (see Failures)"


# -- `perfkit report --from RUN.jsonl` --------------------------------------------------------------------------------
def test_perfkit_report_from_a_stored_run_renders_its_findings_with_no_lab_and_records_nothing(tmp_path, report_from):
    results = _stored(tmp_path / "stored")
    text = report_from(results.path, EXPERIMENT)
    found = St1Report(results).findings()
    for sentence in [*found.sentences, *found.undecided]:
        assert html.escape(sentence) in text or sentence in text, sentence
    for shown in ("measured (lab, TestDFSIO 4 × 64 MB)", "modelled (400 × 4 GB)", "4 × 512 GiB", ST1_PRICES,
                  "data:image/png;base64", "No run failed."):
        assert html.escape(shown) in text or shown in text, shown
    assert [p.name for p in (tmp_path / "stored" / EXPERIMENT).iterdir()] == [results.path.name]
