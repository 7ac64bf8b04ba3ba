"""S3's own count of the requests on perfkit's prefix over a window: CloudWatch's S3 request metrics.

S3 publishes request metrics only under a metrics configuration (a "filter", here on the profile's prefix): namespace
AWS/S3, dimensions BucketName and FilterId, a data point per minute that had requests (statistic Sum). They count per
minute, not per run, so on a cluster they count an experiment's window, beside the per-run snapshots of run_io.
AWS delivers them best effort and minutes late, and publishes a new filter's only ~15 minutes after it is made: a
window waits, a bounded time, for CloudWatch to publish its last S3 minute; past that its counts are missing, with why.

perfkit creates the filter `perfkit-<run id>` and deletes it after (never one it did not create), or uses an existing
filter the profile names (`s3_request_metrics_filter`), which it checks and never removes."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pandas as pd
from botocore.exceptions import ClientError, NoCredentialsError

from perfkit.accounting.counted_window import started
from perfkit.errors import PerfkitError
from perfkit.storages import backing_of
from perfkit.storages.s3 import S3
from perfkit.metrics.cloudwatch import aws_client, check_window, metric_data

# CloudWatch metric -> perfkit counter (perfkit.accounting.counters); metrics sharing a counter add up
REQUEST_METRICS = {
    "GetRequests": "s3_get", "HeadRequests": "s3_head", "ListRequests": "s3_list",
    "PutRequests": "s3_put",  # CopyObject is a PUT to CloudWatch: it keeps no count of copies (no s3_copy here)
    "PostRequests": "s3_put",  # Create/CompleteMultipartUpload: PUT-class requests, as the lab's access log counts them
    "DeleteRequests": "s3_delete",  # DeleteObjects too
    "BytesDownloaded": "s3_bytes_read", "BytesUploaded": "s3_bytes_written",
    "4xxErrors": "s3_errors", "5xxErrors": "s3_errors",
}
PERIOD_S = 60
COUNTED = S3.name  # the storage whose requests the request metrics count (a tier's fetches land there too)
NEW_FILTER_DELAY = timedelta(minutes=15)  # S3 publishes a new filter's metrics ~15 minutes after it is made
PUT_ACTION = "s3:PutMetricsConfiguration"  # the IAM action of PutBucketMetricsConfiguration and of Delete...
GET_ACTION = "s3:GetMetricsConfiguration"
NAME_ONE = "name an existing filter with the profile's `s3_request_metrics_filter`"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def floor_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def ceil_minute(moment: datetime) -> datetime:
    floor = floor_minute(moment)
    return floor if floor == moment else floor + timedelta(minutes=1)


class RequestMetricsFilter:
    """The bucket's metrics configuration the window's requests are counted under: created by perfkit (and then
    removed by it), or the user's (checked to exist, never touched)."""

    def __init__(self, s3, bucket: str, prefix: str, run_id: str = "", named: str = ""):
        self.s3, self.bucket, self.prefix, self.named = s3, bucket, prefix, named
        self.filter_id = named or f"perfkit-{run_id}"
        self.created_at: datetime | None = None  # set only when perfkit made it: only then is it removed

    def open(self) -> None:
        exists = self._exists()
        if self.named:
            if not exists:
                raise PerfkitError(f"S3 bucket {self.bucket} has no metrics filter {self.named!r}. Fix: name one "
                                   "of the bucket's filters (aws s3api list-bucket-metrics-configurations --bucket "
                                   f"{self.bucket}), or set s3_request_metrics: true to let perfkit make one")
            return
        if exists:  # a Put would replace it, and perfkit would then delete what it did not create
            raise PerfkitError(f"S3 bucket {self.bucket} already has a metrics filter {self.filter_id!r}, not "
                               f"perfkit's to replace or remove. Fix: {NAME_ONE}, or run again (a new run id)")
        configuration = {"Id": self.filter_id, "Filter": {"Prefix": self.prefix}}
        self._call("put_bucket_metrics_configuration", MetricsConfiguration=configuration)
        self.created_at = utc_now()

    def close(self) -> str | None:
        """Remove the filter if perfkit created it; what went wrong, with the command that removes it, or None."""
        if self.created_at is None:
            return None
        try:
            self._call("delete_bucket_metrics_configuration")
        except _NoSuchFilter:
            pass  # someone removed it already: nothing of perfkit's is left
        except PerfkitError as err:
            return (f"{err} The filter stays: remove it with aws s3api delete-bucket-metrics-configuration "
                    f"--bucket {self.bucket} --id {self.filter_id}")
        self.created_at = None
        return None

    def counted_from(self) -> datetime | None:
        """When S3 starts publishing this filter's metrics: ~15 minutes after perfkit made it (None: the user's)."""
        return None if self.created_at is None else self.created_at + NEW_FILTER_DELAY

    def _exists(self) -> bool:
        try:
            self._call("get_bucket_metrics_configuration")
        except _NoSuchFilter:
            return False
        return True

    def _call(self, operation: str, **params):
        try:
            return getattr(self.s3, operation)(Bucket=self.bucket, Id=self.filter_id, **params)
        except NoCredentialsError:
            raise PerfkitError("S3: no AWS credentials found. Fix: configure the standard AWS chain") from None
        except ClientError as err:
            code, message = err.response["Error"].get("Code", ""), err.response["Error"].get("Message", "")
            if code in ("NoSuchConfiguration", "404"):
                raise _NoSuchFilter from None
            if code == "AccessDenied":
                raise PerfkitError(f"S3 refused {_api_name(operation)} on bucket {self.bucket}: AccessDenied. "
                                   f"perfkit needs {self._permissions()}") from None
            if code == "TooManyConfigurations":
                raise PerfkitError(f"S3 bucket {self.bucket} has 1,000 metrics filters, S3's limit. Fix: delete "
                                   f"unused ones, or {NAME_ONE}") from None
            raise PerfkitError(f"S3 refused {_api_name(operation)} on bucket {self.bucket}: {code} {message}") from None

    def _permissions(self) -> str:
        """The IAM actions this filter needs, and the fix when they are not granted."""
        where = f"arn:aws:s3:::{self.bucket}"
        if self.named:
            return f"the IAM action {GET_ACTION} on {where} to check the filter the profile names. Fix: grant it"
        return (f"the IAM actions {GET_ACTION} and {PUT_ACTION} (which covers the delete too) on {where} to make the "
                f"run's metrics filter and remove it after. Fix: grant them, or {NAME_ONE}")


class _NoSuchFilter(Exception):
    pass


def _api_name(operation: str) -> str:
    return "".join(part.title() for part in operation.split("_"))


@dataclass
class WindowCounts:
    """What S3 counted on the filter's prefix from `start` to `end` (whole minutes): `totals` under perfkit's counter
    names, `per_minute` (timestamp, metric, counter, value), or `missing` with why (then no totals: never zeros)."""

    bucket: str
    filter_id: str
    start: datetime
    end: datetime
    totals: dict[str, float] = field(default_factory=dict)
    per_minute: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PER_MINUTE))
    missing: str | None = None
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict:
        """A JSON-ready summary for a run's config."""
        return {"source": f"CloudWatch S3 request metrics, bucket {self.bucket}, filter {self.filter_id}",
                "window": [self.start.isoformat(), self.end.isoformat()], "totals": self.totals,
                "missing": self.missing, "notes": self.notes}


PER_MINUTE = ["timestamp", "metric", "counter", "value"]


def fetch_request_counts(cloudwatch, bucket: str, filter_id: str, start: datetime, end: datetime,
                         last_request_at: datetime | None = None, wait_s: float = 0.0, poll_s: float = 60.0,
                         sleep=time.sleep, clock=utc_now) -> WindowCounts:
    """The filter's request metrics over the window widened to whole minutes, once CloudWatch has published the
    minute of `last_request_at` (the last request the caller knows of; default: the window's end). Polls every
    `poll_s` for up to `wait_s`; a window CloudWatch has not reached by then is missing, with what it had."""
    start, end = floor_minute(start), ceil_minute(end)
    must_reach = floor_minute(min(last_request_at or end, end - timedelta(microseconds=1)))
    counts = WindowCounts(bucket, filter_id, start, end)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            check_window(start, end, PERIOD_S, now=clock())
            frame = _per_minute(cloudwatch, bucket, filter_id, start, end)
        except PerfkitError as err:
            counts.missing = f"not counted: {err}"
            return counts
        newest = frame["timestamp"].max() if len(frame) else None
        if newest is not None and newest >= must_reach:
            break
        if time.monotonic() + poll_s > deadline:
            published = f"up to {newest:%H:%M} UTC" if newest is not None else "nothing"
            counts.per_minute = frame
            counts.missing = (f"not published yet: after waiting {wait_s:g} s CloudWatch had published {published} for "
                              f"filter {filter_id}, not the minute {must_reach:%H:%M} UTC of the last S3 request (S3 "
                              "request metrics come best effort, minutes late): fetch the window again later")
            return counts
        sleep(poll_s)
    counts.per_minute = frame
    # published through the last request's minute: a metric without a data point had no request in those minutes
    sums = frame.groupby("counter")["value"].sum()
    counts.totals = {name: float(sums.get(name, 0.0)) for name in dict.fromkeys(REQUEST_METRICS.values())}
    return counts


def _per_minute(cloudwatch, bucket: str, filter_id: str, start: datetime, end: datetime) -> pd.DataFrame:
    metrics = list(REQUEST_METRICS)
    dimensions = [{"Name": "BucketName", "Value": bucket}, {"Name": "FilterId", "Value": filter_id}]
    queries = [{"Id": f"m{i}", "Label": metric, "ReturnData": True,
                "MetricStat": {"Metric": {"Namespace": "AWS/S3", "MetricName": metric, "Dimensions": dimensions},
                               "Period": PERIOD_S, "Stat": "Sum"}} for i, metric in enumerate(metrics)]
    rows = [(timestamp, metrics[int(query_id[1:])], REQUEST_METRICS[metrics[int(query_id[1:])]], value)
            for query_id, series in metric_data(queries, start, end, PERIOD_S, cloudwatch).items()
            for timestamp, value in series]
    frame = pd.DataFrame(rows, columns=PER_MINUTE)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame.sort_values(["timestamp", "metric"], ignore_index=True)


class S3RequestWindow:
    """An experiment's window of S3 requests on the profile's prefix, as S3 counted them: open() before the runs,
    close() after them (it waits for CloudWatch, then removes a filter perfkit made)."""

    name = "CloudWatch S3 request metrics"

    def __init__(self, bucket: str, prefix: str, run_id: str = "", filter_id: str = "", region: str = "us-east-1",
                 s3=None, cloudwatch=None, wait_s: float = 600.0, poll_s: float = 60.0, sleep=time.sleep,
                 clock=utc_now):
        self.s3 = s3 or aws_client("s3", region)
        self.cloudwatch = cloudwatch or aws_client("cloudwatch", region)
        self.filter = RequestMetricsFilter(self.s3, bucket, prefix, run_id, filter_id)
        self.wait_s, self.poll_s, self.sleep, self.clock = wait_s, poll_s, sleep, clock
        self.opened_at: datetime | None = None

    def open(self) -> None:
        self.filter.open()
        self.opened_at = self.clock()

    def close(self, last_request_at: datetime | None = None, records=None) -> WindowCounts:
        """The window's counts from its opening (or, for a filter perfkit just made, from when S3 starts publishing
        it) to now, once CloudWatch has published the minute of the last request (`last_request_at`, else the end of
        the last of `records` that read S3); then a filter perfkit made is removed, whatever happened."""
        if last_request_at is None and records is not None:
            last_request_at = last_s3_request(records)
        end = self.clock()
        publishes_from = self.filter.counted_from()
        late_filter = publishes_from is not None and publishes_from > self.opened_at
        start = ceil_minute(publishes_from) if late_filter else self.opened_at
        try:
            if start >= end:
                counts = WindowCounts(self.filter.bucket, self.filter.filter_id, self.opened_at, end)
                counts.missing = (f"not counted: S3 publishes a new filter's metrics ~15 minutes after it is made "
                                  f"(from {start:%H:%M} UTC), and the window ended before, at {end:%H:%M} UTC. Fix: "
                                  f"{NAME_ONE}")
            else:
                counts = fetch_request_counts(self.cloudwatch, self.filter.bucket, self.filter.filter_id, start, end,
                                              last_request_at, self.wait_s, self.poll_s, self.sleep, self.clock)
                if late_filter:
                    counts.notes.append(f"counted from {start:%H:%M} UTC, when S3 starts publishing the new filter, "
                                        f"not from the window's opening at {self.opened_at:%H:%M} UTC")
        finally:
            problem = self.filter.close()
        if problem:
            counts.notes.append(problem)
        return counts

    def abandon(self) -> str | None:
        """The experiment stopped: remove a filter perfkit made, fetch nothing."""
        return self.filter.close()


def last_s3_request(records) -> datetime | None:
    """When the last run that reads S3 (directly or through a tier) ended: the minute CloudWatch must have reached."""
    ends = [started(r).to_pydatetime() + timedelta(seconds=r.wall_s or 0) for r in records
            if backing_of(r.storage) == COUNTED]
    return max(ends) if ends else None
