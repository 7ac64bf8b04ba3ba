"""S3's request metrics through CloudWatch: the run's filter made and removed (S3's metrics-configuration API through
botocore's Stubber: moto has none), the window's counts fetched from moto's CloudWatch through the same code."""
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from botocore.stub import Stubber

from perfkit.accounting import cloudwatch_s3 as cws3
from perfkit.accounting import window as window_module
from perfkit.accounting.cloudwatch_s3 import RequestMetricsFilter, S3RequestWindow, fetch_request_counts
from perfkit.errors import PerfkitError

NOW = datetime.now(timezone.utc).replace(second=0, microsecond=0)
START = NOW - timedelta(minutes=40)  # a window well in the past: CloudWatch has published it in these tests
END = START + timedelta(minutes=10)
PREFIX = "perfkit/"


def _bucket():
    return f"bucket-{uuid.uuid4().hex[:8]}"  # one moto server serves every test: each test its own bucket


def _put(cloudwatch, bucket, filter_id, metric, points):
    cloudwatch.put_metric_data(Namespace="AWS/S3", MetricData=[
        {"MetricName": metric, "Timestamp": ts, "Value": value,
         "Dimensions": [{"Name": "BucketName", "Value": bucket}, {"Name": "FilterId", "Value": filter_id}]}
        for ts, value in points])


def _no_such_filter(stub):
    stub.add_client_error("get_bucket_metrics_configuration", "NoSuchConfiguration",
                          "The specified configuration does not exist.", 404)


# -- the filter --------------------------------------------------------------------------------------------------

def test_the_runs_filter_is_created_on_the_prefix_and_removed_after(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {}, {
            "Bucket": "b", "Id": "perfkit-RUN1",
            "MetricsConfiguration": {"Id": "perfkit-RUN1", "Filter": {"Prefix": PREFIX}}})
        stub.add_response("delete_bucket_metrics_configuration", {}, {"Bucket": "b", "Id": "perfkit-RUN1"})
        metrics_filter = RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1")
        metrics_filter.open()
        assert metrics_filter.counted_from() - metrics_filter.created_at == timedelta(minutes=15)
        assert metrics_filter.close() is None
        stub.assert_no_pending_responses()  # created once, deleted once
        assert metrics_filter.close() is None  # already removed: no second delete (the Stubber would refuse it)


def test_a_filter_the_user_names_is_checked_and_never_removed(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        stub.add_response("get_bucket_metrics_configuration",
                          {"MetricsConfiguration": {"Id": "team-filter", "Filter": {"Prefix": "data/"}}},
                          {"Bucket": "b", "Id": "team-filter"})
        metrics_filter = RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1", named="team-filter")
        metrics_filter.open()
        assert metrics_filter.close() is None  # no delete call: the Stubber would raise on one
        stub.assert_no_pending_responses()
    assert metrics_filter.filter_id == "team-filter" and metrics_filter.counted_from() is None


def test_a_named_filter_that_does_not_exist_is_named_with_the_fix(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        with pytest.raises(PerfkitError,
                           match=r"bucket b has no metrics filter 'typo'.*list-bucket-metrics-configurations"):
            RequestMetricsFilter(s3, "b", PREFIX, named="typo").open()


def test_a_filter_perfkit_may_not_create_names_the_iam_action_and_the_fix(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_client_error("put_bucket_metrics_configuration", "AccessDenied", "Access Denied", 403)
        metrics_filter = RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1")
        with pytest.raises(PerfkitError) as raised:
            metrics_filter.open()
    message = str(raised.value)
    assert "PutBucketMetricsConfiguration" in message and "s3:PutMetricsConfiguration" in message
    assert "arn:aws:s3:::b" in message and "s3_request_metrics_filter" in message
    assert metrics_filter.close() is None  # nothing was created: nothing to remove



def test_a_named_filter_perfkit_may_not_read_names_the_get_action(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        stub.add_client_error("get_bucket_metrics_configuration", "AccessDenied", "Access Denied", 403)
        with pytest.raises(PerfkitError, match=r"GetBucketMetricsConfiguration on bucket b: AccessDenied\. perfkit "
                                               r"needs the IAM action s3:GetMetricsConfiguration .* Fix: grant it$"):
            RequestMetricsFilter(s3, "b", PREFIX, named="team").open()

def test_an_existing_filter_of_the_same_id_is_not_replaced(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        stub.add_response("get_bucket_metrics_configuration", {"MetricsConfiguration": {"Id": "perfkit-RUN1"}})
        with pytest.raises(PerfkitError, match="already has a metrics filter 'perfkit-RUN1', not perfkit's"):
            RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1").open()
        stub.assert_no_pending_responses()  # and no put followed


def test_a_filter_that_cannot_be_removed_says_how_to_remove_it(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {})
        stub.add_client_error("delete_bucket_metrics_configuration", "AccessDenied", "Access Denied", 403)
        metrics_filter = RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1")
        metrics_filter.open()
        problem = metrics_filter.close()
    assert "s3:PutMetricsConfiguration" in problem
    assert "delete-bucket-metrics-configuration --bucket b --id perfkit-RUN1" in problem



def test_a_filter_someone_removed_already_is_not_an_error(aws):
    s3 = aws("s3")
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {})
        stub.add_client_error("delete_bucket_metrics_configuration", "NoSuchConfiguration", "gone", 404)
        metrics_filter = RequestMetricsFilter(s3, "b", PREFIX, run_id="RUN1")
        metrics_filter.open()
        assert metrics_filter.close() is None
        stub.assert_no_pending_responses()

# -- the counts ----------------------------------------------------------------------------------------------------

def test_totals_are_the_sums_of_the_published_points_under_perfkits_names(aws):
    cloudwatch, bucket = aws("cloudwatch"), _bucket()
    minutes = [START + timedelta(minutes=i) for i in range(10)]
    put = {metric: [(m, float((i + 1) * scale)) for i, m in enumerate(minutes)]
           for metric, scale in (("GetRequests", 7), ("HeadRequests", 2), ("ListRequests", 1), ("PutRequests", 3),
                                 ("PostRequests", 1), ("BytesDownloaded", 1_000_000), ("4xxErrors", 1),
                                 ("5xxErrors", 2))}
    for metric, points in put.items():
        _put(cloudwatch, bucket, "perfkit-RUN1", metric, points)
    _put(cloudwatch, bucket, "another-filter", "GetRequests", [(minutes[0], 1000.0)])  # not this filter
    _put(cloudwatch, "another-bucket", "perfkit-RUN1", "GetRequests", [(minutes[0], 1000.0)])  # not this bucket
    _put(cloudwatch, bucket, "perfkit-RUN1", "GetRequests", [(END + timedelta(minutes=3), 1000.0)])  # after it

    counts = fetch_request_counts(cloudwatch, bucket, "perfkit-RUN1", START, END)

    def total(*metrics):
        return sum(value for metric in metrics for _, value in put[metric])

    assert counts.missing is None
    assert counts.totals == {"s3_get": total("GetRequests"), "s3_head": total("HeadRequests"),
                             "s3_list": total("ListRequests"), "s3_put": total("PutRequests", "PostRequests"),
                             "s3_delete": 0.0, "s3_bytes_read": total("BytesDownloaded"), "s3_bytes_written": 0.0,
                             "s3_errors": total("4xxErrors", "5xxErrors")}
    assert counts.totals["s3_get"] == 7 * 55  # 7 x (1 + ... + 10)
    gets = counts.per_minute[counts.per_minute.metric == "GetRequests"]
    assert [t.to_pydatetime() for t in gets.timestamp] == minutes
    assert counts.describe()["window"] == [START.isoformat(), END.isoformat()]


def test_the_window_is_widened_to_whole_minutes(aws):
    cloudwatch, bucket = aws("cloudwatch"), _bucket()
    _put(cloudwatch, bucket, "f", "GetRequests", [(START, 4.0), (END - timedelta(minutes=1), 6.0)])
    counts = fetch_request_counts(cloudwatch, bucket, "f", START + timedelta(seconds=25),
                                  END - timedelta(seconds=35))
    assert (counts.start, counts.end) == (START, END)
    assert counts.totals["s3_get"] == 10.0


def test_a_window_cloudwatch_has_not_published_is_missing_with_why_never_zeros(aws):
    cloudwatch, bucket = aws("cloudwatch"), _bucket()
    _put(cloudwatch, bucket, "f", "GetRequests", [(START + timedelta(minutes=i), 5.0) for i in range(4)])
    counts = fetch_request_counts(cloudwatch, bucket, "f", START, END, last_request_at=END - timedelta(seconds=30),
                                  wait_s=0)
    assert counts.totals == {}
    assert counts.missing.startswith("not published yet")
    assert f"up to {START + timedelta(minutes=3):%H:%M} UTC" in counts.missing
    assert f"the minute {END - timedelta(minutes=1):%H:%M} UTC of the last S3 request" in counts.missing
    assert counts.per_minute["value"].sum() == 20.0  # what was published is kept to look at, not summed as a total


def test_nothing_published_at_all_is_missing_too(aws):
    counts = fetch_request_counts(aws("cloudwatch"), _bucket(), "f", START, END, wait_s=0)
    assert counts.totals == {} and "had published nothing for filter f" in counts.missing


def test_the_fetch_polls_a_bounded_time_until_cloudwatch_reaches_the_last_request(aws):
    cloudwatch, bucket = aws("cloudwatch"), _bucket()
    _put(cloudwatch, bucket, "f", "GetRequests", [(START, 5.0)])
    sleeps = []

    def publish_late(seconds):  # CloudWatch publishes the last minute while perfkit waits
        sleeps.append(seconds)
        _put(cloudwatch, bucket, "f", "GetRequests", [(START + timedelta(minutes=5), 3.0)])

    counts = fetch_request_counts(cloudwatch, bucket, "f", START, END, last_request_at=START + timedelta(minutes=5,
                                  seconds=10), wait_s=300, poll_s=60, sleep=publish_late)
    assert sleeps == [60] and counts.missing is None and counts.totals["s3_get"] == 8.0


def test_cloudwatch_refusing_the_fetch_is_missing_with_its_reason(aws):
    cloudwatch = aws("cloudwatch")
    with Stubber(cloudwatch) as stub:
        stub.add_client_error("get_metric_data", "AccessDenied", "not authorized to perform: cloudwatch:GetMetricData")
        counts = fetch_request_counts(cloudwatch, "b", "f", START, END)
    assert counts.totals == {} and "cloudwatch:GetMetricData" in counts.missing


# -- the window ---------------------------------------------------------------------------------------------------

class Clock:
    def __init__(self, *moments):
        self.moments = list(moments)

    def __call__(self):
        return self.moments.pop(0) if len(self.moments) > 1 else self.moments[0]


def test_a_window_on_a_named_filter_counts_from_its_opening_to_its_close(aws):
    cloudwatch, s3, bucket = aws("cloudwatch"), aws("s3"), _bucket()
    _put(cloudwatch, bucket, "team", "GetRequests", [(START + timedelta(minutes=i), 2.0) for i in range(10)])
    with Stubber(s3) as stub:
        stub.add_response("get_bucket_metrics_configuration", {"MetricsConfiguration": {"Id": "team"}})
        window = S3RequestWindow(bucket, PREFIX, filter_id="team", s3=s3, cloudwatch=cloudwatch, wait_s=0,
                                 clock=Clock(START + timedelta(seconds=5), END - timedelta(seconds=20)))
        window.open()
        counts = window.close(last_request_at=END - timedelta(minutes=1))
        stub.assert_no_pending_responses()  # checked, never removed
    assert counts.missing is None and counts.totals["s3_get"] == 20.0 and counts.notes == []


def test_a_window_shorter_than_a_new_filters_first_15_minutes_is_missing_and_the_filter_removed(aws):
    s3 = aws("s3")
    opened = datetime.now(timezone.utc)
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {})
        stub.add_response("delete_bucket_metrics_configuration", {})
        window = S3RequestWindow("b", PREFIX, run_id="RUN1", s3=s3, cloudwatch=aws("cloudwatch"),
                                 clock=Clock(opened, opened + timedelta(minutes=6)))
        window.open()
        counts = window.close()
        stub.assert_no_pending_responses()
    assert counts.totals == {} and "~15 minutes after it is made" in counts.missing
    assert "s3_request_metrics_filter" in counts.missing


def test_a_long_window_on_a_new_filter_counts_from_when_s3_publishes_it(aws, monkeypatch):
    cloudwatch, s3, bucket = aws("cloudwatch"), aws("s3"), _bucket()
    created = START - timedelta(minutes=15, seconds=30)  # S3 publishes from START - 0:30: counted from START
    monkeypatch.setattr(cws3, "utc_now", lambda: created)
    _put(cloudwatch, bucket, "perfkit-RUN1", "GetRequests",
         [(START - timedelta(minutes=1), 99.0), *((START + timedelta(minutes=i), 1.0) for i in range(10))])
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {})
        stub.add_response("delete_bucket_metrics_configuration", {})
        window = S3RequestWindow(bucket, PREFIX, run_id="RUN1", s3=s3, cloudwatch=cloudwatch, wait_s=0,
                                 clock=Clock(created, END))
        window.open()
        counts = window.close(last_request_at=END - timedelta(seconds=1))
    assert counts.start == START and counts.totals["s3_get"] == 10.0  # the minute before S3 publishes is not counted
    assert counts.notes == [f"counted from {START:%H:%M} UTC, when S3 starts publishing the new filter, not from the "
                            f"window's opening at {created:%H:%M} UTC"]


# -- around an experiment's runs ----------------------------------------------------------------------------------

class _Provider:
    """A cluster's provider as far as S3's window goes: it names where the count comes from."""

    def s3_request_window(self, profile):
        return {"bucket": profile.s3_bucket, "prefix": "perfkit/", "filter_id": "team", "region": "us-east-1"}


def test_an_experiments_window_is_stored_in_its_config_beside_the_engines_sum(aws, tmp_path):
    from types import SimpleNamespace

    from perfkit.accounting.window import s3_request_window
    from perfkit.results import ResultSet

    cloudwatch, s3, bucket = aws("cloudwatch"), aws("s3"), _bucket()
    _put(cloudwatch, bucket, "team", "GetRequests", [(START + timedelta(minutes=1), 9.0),
                                                     (START + timedelta(minutes=2), 8.0)])
    results = ResultSet("hdfs_vs_s3_queries", {}, folder=tmp_path)
    with Stubber(s3) as stub:
        stub.add_response("get_bucket_metrics_configuration", {"MetricsConfiguration": {"Id": "team"}})
        window = S3RequestWindow(bucket, PREFIX, filter_id="team", s3=s3, cloudwatch=cloudwatch, wait_s=0,
                                 clock=Clock(START, END))
        with s3_request_window(SimpleNamespace(provider=_Provider()), results, window=window):
            for minute, gets in ((1, 9), (2, 7)):
                results.add(subject="spark", storage="s3", case="q1", phase="measured", iteration=minute,
                            started_at=(START + timedelta(minutes=minute)).isoformat(), wall_s=20.0,
                            io={"engine": {"s3_get": gets}})
    stored = results.config["s3_request_metrics"]
    assert stored["missing"] is None and stored["totals"]["s3_get"] == 17.0
    gets = next(row for row in stored["compared"] if row["counter"] == "s3_get")
    assert (gets["S3 (CloudWatch)"], gets["engines"], gets["difference"]) == (17.0, 16.0, 1.0)
    assert next(row for row in stored["compared"] if row["counter"] == "s3_put")["engines"] is None  # JSON: not NaN


def test_a_window_in_which_another_perfkit_process_measured_is_not_compared(aws, tmp_path):
    from types import SimpleNamespace

    from perfkit.accounting.concurrent import OtherRunsInWindow
    from perfkit.accounting.window import OVERLAPPED, s3_request_window
    from perfkit.results import ResultSet

    cloudwatch, s3, bucket = aws("cloudwatch"), aws("s3"), _bucket()
    _put(cloudwatch, bucket, "team", "GetRequests", [(START + timedelta(minutes=1), 12.0)])
    results = ResultSet("hdfs_vs_s3_queries", {}, folder=tmp_path)
    others = OtherRunsInWindow(tmp_path)
    with Stubber(s3) as stub:
        stub.add_response("get_bucket_metrics_configuration", {"MetricsConfiguration": {"Id": "team"}})
        window = S3RequestWindow(bucket, PREFIX, filter_id="team", s3=s3, cloudwatch=cloudwatch, wait_s=0,
                                 clock=Clock(START, END))
        with s3_request_window(SimpleNamespace(provider=_Provider()), results, others=others, window=window):
            with open(tmp_path / "measuring" / "starts", "ab") as starts:  # another process starts a run
                starts.write(b".")
            results.add(subject="spark", storage="s3", case="q1", phase="measured", iteration=0,
                        started_at=(START + timedelta(minutes=1)).isoformat(), wall_s=20.0,
                        io={"engine": {"s3_get": 9}})
    stored = results.config["s3_request_metrics"]
    gets = next(row for row in stored["compared"] if row["counter"] == "s3_get")
    assert stored["attributable"] is False and OVERLAPPED in stored["notes"]
    assert (gets["S3 (CloudWatch)"], gets["engines"], gets["difference"]) == (12.0, 9.0, None)


def test_an_experiment_that_stops_removes_its_filter_and_says_nothing_was_counted(aws, tmp_path):
    from types import SimpleNamespace

    from perfkit.accounting.window import s3_request_window
    from perfkit.results import ResultSet

    s3 = aws("s3")
    results = ResultSet("hdfs_vs_s3_queries", {}, folder=tmp_path)
    with Stubber(s3) as stub:
        _no_such_filter(stub)
        stub.add_response("put_bucket_metrics_configuration", {})
        stub.add_response("delete_bucket_metrics_configuration", {}, {"Bucket": "b", "Id": "perfkit-R"})
        window = S3RequestWindow("b", PREFIX, run_id="R", s3=s3, cloudwatch=aws("cloudwatch"))
        with pytest.raises(KeyboardInterrupt), s3_request_window(SimpleNamespace(provider=_Provider()), results,
                                                                 window=window):
            raise KeyboardInterrupt
        stub.assert_no_pending_responses()
    assert results.config["s3_request_metrics"]["missing"].startswith("not counted: the experiment stopped")


class _CountingEngine:
    """An engine whose S3 client counts 3 GETs per query on S3 (cumulative, as S3A's statistics)."""
    name = "spark"

    def __init__(self, *args):
        self.gets = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def versions(self):
        return {}

    def execute(self, sql, timeout_s=None):
        self.gets += 3 if "perfkit.t_s3" in sql else 0
        return [(1,)]

    def io_counters(self):
        return {"s3_get": float(self.gets)}

    def io_source(self):
        return "fake S3 client"


@pytest.mark.parametrize("experiment", ["hdfs_vs_s3_queries", "engine_storage_matrix"])
def test_the_query_experiments_store_their_window_beside_the_engines_sum(aws, tmp_path, monkeypatch, experiment):
    """The HDFS vs S3 comparison and the matrix (the cache tier shares the same recording) open the window around
    their runs."""
    import importlib
    from dataclasses import replace

    from perfkit.config import load_profile
    from perfkit.experiments import hdfs_vs_s3_queries as module
    from perfkit.experiments import query_attempt
    from perfkit.suites import DEFAULT_TABLE

    own = importlib.import_module(f"perfkit.experiments.{experiment}")

    cloudwatch, s3, bucket = aws("cloudwatch"), aws("s3"), _bucket()
    _put(cloudwatch, bucket, "team", "GetRequests", [(START, 5.0), (START + timedelta(minutes=1), 6.0)])
    starts = iter(START + timedelta(seconds=5 * i) for i in range(100))  # the runs start in the window, in minute 0-1
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setattr(query_attempt, "now", lambda: next(starts).isoformat())  # where a run's start is taken
    monkeypatch.setattr(module, "get_engine", lambda name, *args: _CountingEngine())  # every experiment opens here
    Comparison = module.QueryComparison
    monkeypatch.setattr(Comparison, "prepare", lambda self, progress=True: "tables")
    monkeypatch.setattr(Comparison, "config", lambda self: {"versions": {}})
    monkeypatch.setattr(Comparison, "watch_storages", lambda self, tableset: setattr(
        self, "probes", {"hdfs": lambda: None, "s3": lambda: None}))
    monkeypatch.setattr(Comparison, "register_tables", lambda self, engine, tableset: {
        where: {DEFAULT_TABLE: f"perfkit.t_{where}"} for where in ("hdfs", "s3")})
    monkeypatch.setattr(Comparison, "cleanup", lambda self: None)
    stub = Stubber(s3)
    stub.add_response("get_bucket_metrics_configuration", {"MetricsConfiguration": {"Id": "team"}})
    stub.activate()
    window = S3RequestWindow(bucket, PREFIX, filter_id="team", s3=s3, cloudwatch=cloudwatch, wait_s=0,
                             clock=Clock(START, START + timedelta(minutes=1, seconds=50)))
    profile = replace(load_profile("lab"), provider=_Provider())
    built = []  # the window the provider's settings build, with this test's clients and clock

    def build(**settings):
        built.append(settings)
        return window

    monkeypatch.setattr(window_module, "S3RequestWindow", build)

    Experiment = Comparison if experiment == "hdfs_vs_s3_queries" else own.EngineStorageMatrix
    results = Experiment(profile, engines=["spark"], suite="taxi", queries=["q1"], runs=2, warmup=1,
                         health_interval_s=0.01).run(progress=False)

    s3_runs = [r for r in results.records if r.storage == "s3"]
    assert [r.io.get("engine") for r in s3_runs] == [{"s3_get": 3.0}] * 3  # the warm-up is on S3 too
    stored = results.config["s3_request_metrics"]
    gets = next(row for row in stored["compared"] if row["counter"] == "s3_get")
    assert (gets["S3 (CloudWatch)"], gets["engines"], gets["difference"]) == (11.0, 9.0, 2.0)
    assert [b["filter_id"] for b in built] == ["team"] and built[0]["run_id"] == results.run_id
    stub.assert_no_pending_responses()
