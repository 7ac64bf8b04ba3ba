"""Metrics from CloudWatch through GetMetricData (EBS volumes; the batched fetch serves S3 request metrics too):
batched, paginated, with the period checked first.

CloudWatch rules (GetMetricData / MetricStat documentation):
- at most 500 metrics and 100,800 data points per GetMetricData call;
- EBS metrics are regular resolution: the period is a multiple of 60 seconds;
- data older than 3 hours, 15 days and 63 days is kept only at 60 s, 300 s and 3600 s periods;
  nothing is kept beyond 455 days.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import boto3
import pandas as pd
from botocore.config import Config
from botocore.exceptions import ClientError, NoCredentialsError

from perfkit.errors import PerfkitError
from perfkit.metrics import EBS_METRICS, SCHEMA, empty_frame

MAX_QUERIES_PER_CALL = 500
MAX_POINTS_PER_CALL = 100_800
RETENTION = [  # (data older than this, needs a period that is a multiple of)
    (timedelta(days=63), 3600),
    (timedelta(days=15), 300),
    (timedelta(hours=3), 60),
]
KEPT_FOR = timedelta(days=455)
STANDARD_RETRIES = Config(retries={"mode": "standard", "max_attempts": 10})


def aws_client(service: str, region: str, endpoint_url: str | None = None, session=None):
    return (session or boto3.session.Session()).client(service, region_name=region, endpoint_url=endpoint_url,
                                                       config=STANDARD_RETRIES)


def check_window(start: datetime, end: datetime, period: int, now: datetime | None = None) -> None:
    """Raise with CloudWatch's rule when it would reject (or silently return nothing for) this window."""
    now = now or datetime.now(timezone.utc)
    if start.tzinfo is None or end.tzinfo is None:
        raise PerfkitError("the window's start and end need a time zone: use UTC datetimes")
    if end > now + timedelta(minutes=5):
        raise PerfkitError(f"the window ends in the future ({end.isoformat()}; "
                           f"now {now.isoformat(timespec='seconds')}): end it now or earlier")
    if start >= end:
        raise PerfkitError(f"the window starts ({start.isoformat()}) after it ends ({end.isoformat()}): swap them")
    if now - start > KEPT_FOR:
        raise PerfkitError("CloudWatch keeps metric data for 455 days: start the window later")
    if period < 60 or period % 60:
        raise PerfkitError(f"period {period} s: EBS metrics are regular resolution, so the period must be a "
                           "multiple of 60 seconds")
    for age, multiple in RETENTION:
        if now - start > age and period % multiple:
            raise PerfkitError(f"period {period} s: data older than {_words(age)} is kept only at periods that are "
                               f"multiples of {multiple} s; use period={multiple * max(1, round(period / multiple))}")


def points(start: datetime, end: datetime, period: int) -> int:
    return math.ceil((end - start).total_seconds() / period)


def batches(n_queries: int, points_per_query: int) -> list[range]:
    """Split the queries into the fewest GetMetricData calls the API's two limits allow."""
    per_call = max(1, min(MAX_QUERIES_PER_CALL, MAX_POINTS_PER_CALL // max(points_per_query, 1)))
    return [range(i, min(i + per_call, n_queries)) for i in range(0, n_queries, per_call)]


def fetch_ebs_metrics(volume_ids: list[str], start: datetime, end: datetime, period: int = 300,
                      metrics: list[str] | None = None, region: str = "us-east-1", client=None) -> pd.DataFrame:
    """Every (volume, metric) series over the window, as one tidy frame (see perfkit.metrics.SCHEMA)."""
    from perfkit.metrics import DEFAULT_METRICS

    metrics = metrics or DEFAULT_METRICS
    unknown = [m for m in metrics if m not in EBS_METRICS]
    if unknown:
        raise PerfkitError(f"unknown EBS metric {', '.join(unknown)}: choose from {', '.join(EBS_METRICS)}")
    if not volume_ids:
        raise PerfkitError("no volume to fetch: give volume ids, a cluster id or a tag")
    check_window(start, end, period)
    client = client or aws_client("cloudwatch", region)
    pairs = [(v, m) for v in volume_ids for m in metrics]
    queries = [{"Id": f"q{i}", "Label": f"{v} {m}",
                "MetricStat": {"Metric": {"Namespace": "AWS/EBS", "MetricName": m,
                                          "Dimensions": [{"Name": "VolumeId", "Value": v}]},
                               "Period": period, "Stat": EBS_METRICS[m][0]},
                "ReturnData": True} for i, (v, m) in enumerate(pairs)]
    rows = []
    for query_id, series in metric_data(queries, start, end, period, client).items():
        volume, metric = pairs[int(query_id[1:])]
        rows += [(volume, metric, ts, value, EBS_METRICS[metric][1]) for ts, value in series]
    if not rows:
        return empty_frame()
    frame = pd.DataFrame(rows, columns=SCHEMA)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame.sort_values(["volume", "metric", "timestamp"], ignore_index=True)


def metric_data(queries: list[dict], start: datetime, end: datetime, period: int,
                client) -> dict[str, list[tuple[datetime, float]]]:
    """Each GetMetricData query's data points, oldest first, by its Id: fetched in the fewest calls the API's two
    limits allow, every page followed (EBS volumes here, S3 request metrics in perfkit.accounting.cloudwatch_s3)."""
    found: dict[str, list[tuple[datetime, float]]] = {query["Id"]: [] for query in queries}
    paginator = client.get_paginator("get_metric_data")
    for batch in batches(len(queries), points(start, end, period)):
        try:
            for page in paginator.paginate(MetricDataQueries=[queries[i] for i in batch], StartTime=start,
                                           EndTime=end, ScanBy="TimestampAscending"):
                for result in page["MetricDataResults"]:
                    found[result["Id"]] += zip(result["Timestamps"], result["Values"])
        except NoCredentialsError:
            raise PerfkitError("CloudWatch: no AWS credentials found. Fix: configure the standard AWS chain "
                               "(aws configure, environment variables or an instance profile)") from None
        except ClientError as err:
            raise PerfkitError("CloudWatch refused GetMetricData: "
                               f"{err.response['Error'].get('Message', err)}") from None
    return found


def describe_volumes(volume_ids: list[str] | None = None, filters: list[dict] | None = None,
                     region: str = "us-east-1", client=None) -> pd.DataFrame:
    """volume, instance, size_gib, type of the given volumes (or those matching EC2 filters)."""
    client = client or aws_client("ec2", region)
    kwargs = {"VolumeIds": volume_ids} if volume_ids else {"Filters": filters or []}
    rows = []
    try:
        for page in client.get_paginator("describe_volumes").paginate(**kwargs):
            for v in page["Volumes"]:
                instance = v["Attachments"][0]["InstanceId"] if v.get("Attachments") else None
                rows.append({"volume": v["VolumeId"], "instance": instance, "size_gib": v["Size"],
                             "type": v["VolumeType"]})
    except NoCredentialsError:
        raise PerfkitError("EC2: no AWS credentials found. Fix: configure the standard AWS chain") from None
    except ClientError as err:
        code = err.response["Error"].get("Code", "")
        if code.startswith("InvalidVolume"):
            raise PerfkitError(f"EC2 in {region}: {err.response['Error'].get('Message', code)}. "
                               "Fix: check the volume ids and the region") from None
        raise PerfkitError(f"EC2 refused DescribeVolumes: {err.response['Error'].get('Message', code)}") from None
    return pd.DataFrame(rows, columns=["volume", "instance", "size_gib", "type"])


def volumes_of_cluster(cluster_id: str, region: str = "us-east-1", emr=None, ec2=None) -> pd.DataFrame:
    """The EBS volumes attached to the instances of an EMR cluster."""
    emr = emr or aws_client("emr", region)
    try:
        instances = [i["Ec2InstanceId"] for page in emr.get_paginator("list_instances").paginate(ClusterId=cluster_id)
                     for i in page["Instances"] if i.get("Ec2InstanceId")]
    except NoCredentialsError:
        raise PerfkitError("EMR: no AWS credentials found. Fix: configure the standard AWS chain") from None
    except ClientError as err:
        raise PerfkitError(f"EMR cluster {cluster_id} in {region}: {err.response['Error'].get('Message', err)}. "
                           "Fix: check the cluster id and the region") from None
    if not instances:
        raise PerfkitError(f"EMR cluster {cluster_id} has no instances: is it running?")
    return describe_volumes(filters=[{"Name": "attachment.instance-id", "Values": instances}], region=region,
                            client=ec2)


def volumes_by_tag(key: str, value: str, region: str = "us-east-1", client=None) -> pd.DataFrame:
    return describe_volumes(filters=[{"Name": f"tag:{key}", "Values": [value]}], region=region, client=client)


def _words(age: timedelta) -> str:
    return f"{age.days} days" if age.days else f"{int(age.total_seconds() // 3600)} hours"
