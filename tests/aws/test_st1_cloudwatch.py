"""The st1 study and its notebook against CloudWatch and EC2 (a moto server), with no code change."""
from datetime import datetime, timedelta, timezone

from perfkit.config import load_profile
from perfkit.experiments.st1_throughput_burst import St1Study
from perfkit.presenting import run_report

END = datetime.now(timezone.utc).replace(second=0, microsecond=0)
START = END - timedelta(minutes=30)


def _volumes_with_metrics(aws):
    ec2, cw = aws("ec2"), aws("cloudwatch")
    ids = [ec2.create_volume(Size=512, VolumeType="st1", AvailabilityZone="us-east-1a")["VolumeId"] for _ in range(2)]
    for n, volume in enumerate(ids):
        cw.put_metric_data(Namespace="AWS/EBS", MetricData=[
            {"MetricName": metric, "Dimensions": [{"Name": "VolumeId", "Value": volume}],
             "Timestamp": START + timedelta(minutes=5 * i), "Value": value * (n + 1)}
            for i in range(6) for metric, value in (("VolumeReadBytes", 60 * 2**20), ("BurstBalance", 90.0 - i))])
    return ids


def test_the_study_reads_cloudwatch_for_its_window(aws, moto_url, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)  # botocore's own setting: the code path is AWS's
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    ids = _volumes_with_metrics(aws)
    study = St1Study(load_profile("lab"), source="cloudwatch", volume_ids=ids, run_testdfsio=False,
                     window_start=START.isoformat(), window_end=END.isoformat(), period=60)
    report = run_report(study)  # CloudWatch read once, at the end of the run, and recorded with it
    metrics = report.metrics()
    read = metrics[(metrics.metric == "ReadThroughput") & (metrics.volume == ids[1])]["value"]
    assert read.tolist() == [2.0] * 6  # 2 x 60 MiB in a 60 s period: 2 MiB/s
    balance = metrics[(metrics.metric == "BurstBalance") & (metrics.volume == ids[0])]["value"]
    assert balance.tolist() == [90.0, 89.0, 88.0, 87.0, 86.0, 85.0]
    assert list(report.table()["source"].str.split().str[0]) == ["modelled"] * 3
    recorded = study.results.config["metrics"]  # what the report reads: no file (nothing measured), the same config
    assert recorded["source"] == "CloudWatch" and len(recorded["rows"]) == 2 * 2 * 6
    assert [v["volume"] for v in study.results.config["volumes"]] == ids


def test_the_notebook_runs_against_cloudwatch_with_parameters_only(aws, moto_url, monkeypatch, tmp_path):
    from perfkit.report import render

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    ids = _volumes_with_metrics(aws)
    params = {"source": "cloudwatch", "volume_ids": ids, "region": "us-east-1", "run_testdfsio": False,
              "window_start": START.isoformat(), "window_end": END.isoformat(), "period": 60}
    report = render("notebooks/st1_throughput_burst.ipynb", params, out_root=tmp_path / "reports")
    assert report.ok, report.error
    page = report.html.read_text()
    assert "BurstBalance: measured by CloudWatch above" in page and "modelled (400 × 4 GB)" in page
