from datetime import datetime, timedelta, timezone

import pytest
from botocore.stub import Stubber

from perfkit.errors import PerfkitError
from perfkit.metrics import cloudwatch as cw
from perfkit.metrics import with_throughput

NOW = datetime.now(timezone.utc).replace(second=0, microsecond=0)


def _put(client, volume, metric, points):
    client.put_metric_data(Namespace="AWS/EBS", MetricData=[
        {"MetricName": metric, "Dimensions": [{"Name": "VolumeId", "Value": volume}], "Timestamp": ts, "Value": value}
        for ts, value in points])


def test_metrics_put_are_fetched_back_exactly(aws):
    client = aws("cloudwatch")
    expected = {}
    for v, volume in enumerate(["vol-a1", "vol-b2", "vol-c3"]):
        for metric, scale in (("VolumeReadBytes", 1e6), ("BurstBalance", 1.0)):
            points = [(NOW - timedelta(minutes=30 - 5 * i), scale * (v + 1) * (i + 1)) for i in range(5)]
            _put(client, volume, metric, points)
            expected[(volume, metric)] = points
    frame = cw.fetch_ebs_metrics(["vol-a1", "vol-b2", "vol-c3"], NOW - timedelta(hours=1), NOW, period=300,
                                 metrics=["VolumeReadBytes", "BurstBalance"], client=client)
    assert list(frame.columns) == ["volume", "metric", "timestamp", "value", "unit"]
    for (volume, metric), points in expected.items():
        got = frame[(frame.volume == volume) & (frame.metric == metric)]
        assert [(t.to_pydatetime(), v) for t, v in zip(got.timestamp, got.value)] == points
        assert set(got.unit) == {"Bytes" if metric == "VolumeReadBytes" else "Percent"}
    tput = with_throughput(frame, 300)
    read = tput[(tput.metric == "ReadThroughput") & (tput.volume == "vol-b2")]["value"].tolist()
    assert read == pytest.approx([2e6 * (i + 1) / 300 / 2**20 for i in range(5)])  # Sum / period, in MiB/s


@pytest.mark.parametrize("volumes, window_hours, period, calls", [
    (500, 1, 300, 1),  # 500 queries: one call
    (501, 1, 300, 2),  # one more than fits: two calls
    (1000, 1, 300, 2),
    (25, 24 * 7, 60, 3),  # 10,080 points each: 10 queries per call by the 100,800-point limit
])
def test_queries_are_split_into_the_fewest_calls(aws, volumes, window_hours, period, calls):
    client = aws("cloudwatch")
    start = NOW - timedelta(hours=window_hours)
    cw.fetch_ebs_metrics([f"vol-{i:05d}" for i in range(volumes)], start, NOW, period,
                         metrics=["VolumeReadBytes"], client=client)
    assert aws.calls.count("GetMetricData") == calls


@pytest.mark.parametrize("start, end, period, message", [
    (NOW - timedelta(hours=1), NOW, 45, "must be a multiple of 60 seconds"),
    (NOW - timedelta(hours=1), NOW, 90, "must be a multiple of 60 seconds"),
    (NOW - timedelta(days=20), NOW - timedelta(days=19), 60,
     "older than 15 days is kept only at periods that are multiples of 300 s"),
    (NOW - timedelta(days=70), NOW - timedelta(days=69), 300,
     "older than 63 days is kept only at periods that are multiples of 3600 s"),
    (NOW - timedelta(days=500), NOW - timedelta(days=499), 3600, "keeps metric data for 455 days"),
    (NOW, NOW + timedelta(hours=2), 60, "the window ends in the future"),
    (NOW - timedelta(hours=1), NOW - timedelta(hours=2), 60, "after it ends"),
])
def test_windows_and_periods_cloudwatch_would_reject_are_named(start, end, period, message):
    with pytest.raises(PerfkitError, match=message.replace("(", r"\(")):
        cw.check_window(start, end, period, now=NOW)


def test_an_unknown_volume_is_named(aws):
    with pytest.raises(PerfkitError, match=r"EC2 in us-east-1: .*vol-0123456789abcdef0.*Fix: check the volume ids"):
        cw.describe_volumes(["vol-0123456789abcdef0"], client=aws("ec2"))


def test_missing_credentials_give_one_clear_message(moto_url, monkeypatch):
    import boto3
    from botocore.config import Config

    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    client = boto3.session.Session().client("cloudwatch", region_name="us-east-1", endpoint_url=moto_url,
                          config=Config(retries={"max_attempts": 1}))
    with pytest.raises(PerfkitError, match="CloudWatch: no AWS credentials found"):
        cw.fetch_ebs_metrics(["vol-1"], NOW - timedelta(hours=1), NOW, 300, client=client)


def test_volumes_of_an_emr_cluster_are_found_through_its_instances(aws):
    ec2 = aws("ec2")
    reservation = ec2.run_instances(ImageId="ami-12c6146b", MinCount=2, MaxCount=2, InstanceType="m5.xlarge",
                                    Placement={"AvailabilityZone": "us-east-1a"})
    instances = [i["InstanceId"] for i in reservation["Instances"]]
    attached = []
    for instance in instances:
        for device in ("/dev/sdf", "/dev/sdg"):
            vol = ec2.create_volume(Size=512, VolumeType="st1", AvailabilityZone="us-east-1a")["VolumeId"]
            ec2.attach_volume(VolumeId=vol, InstanceId=instance, Device=device)
            attached.append(vol)
    ec2.create_volume(Size=125, VolumeType="st1", AvailabilityZone="us-east-1a")  # not attached: not listed
    emr = aws("emr")  # moto's EMR lists no EC2 instances: the Stubber answers instead
    with Stubber(emr) as stub:
        stub.add_response("list_instances", {"Instances": [{"Id": f"ci-{i}", "Ec2InstanceId": iid}
                                                           for i, iid in enumerate(instances)]},
                          {"ClusterId": "j-TEST"})
        found = cw.volumes_of_cluster("j-TEST", emr=emr, ec2=ec2)
    mine = found[found.volume.isin(attached)]
    assert sorted(mine.volume) == sorted(attached)
    assert set(mine.size_gib) == {512} and set(mine.type) == {"st1"}
    assert mine.groupby("instance").size().to_dict() == {i: 2 for i in instances}


def test_an_unknown_cluster_is_named(aws):
    emr = aws("emr")
    with Stubber(emr) as stub:
        stub.add_client_error("list_instances", "InvalidRequestException", "Cluster id 'j-NOPE' is not valid.")
        with pytest.raises(PerfkitError, match="EMR cluster j-NOPE in us-east-1: Cluster id 'j-NOPE' is not valid"):
            cw.volumes_of_cluster("j-NOPE", emr=emr, ec2=aws("ec2"))
