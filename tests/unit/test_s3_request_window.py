"""The window's comparison of S3's count with the engines' sum over the same runs, and the profile settings that ask
for it (no AWS needed: the counts are given)."""
import math
import re
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from perfkit.accounting.cloudwatch_s3 import S3RequestWindow, WindowCounts
from perfkit.accounting.cloudwatch_s3 import last_s3_request
from perfkit.accounting.window import build_window, window_vs_engines
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.providers import Provider
from perfkit.results import Record

START = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
END = START + timedelta(minutes=10)


def _run(storage, minute, engine=None, wall_s=30.0, phase="measured"):
    return Record(run_id="R", experiment="hdfs_vs_s3_queries", subject="spark", storage=storage, case="q1",
                  phase=phase, iteration=0, started_at=(START + timedelta(minutes=minute)).isoformat(),
                  wall_s=wall_s, io={} if engine is None else {"engine": engine})


def _counts(**totals):
    full = {"s3_get": 0.0, "s3_head": 0.0, "s3_list": 0.0, "s3_put": 0.0, "s3_delete": 0.0, "s3_bytes_read": 0.0,
            "s3_bytes_written": 0.0, "s3_errors": 0.0}
    return WindowCounts("b", "perfkit-R", START, END, totals={**full, **totals})


def _row(table, counter):
    return table.set_index("counter").loc[counter]


def test_s3s_count_is_set_beside_the_engines_sum_over_the_runs_on_s3_in_the_window():
    runs = [_run("s3", 1, {"s3_get": 10, "s3_head": 2, "s3_list": 1, "s3_bytes_read": 5e6}, phase="warmup"),
            _run("s3", 3, {"s3_get": 12, "s3_head": 2, "s3_list": 1, "s3_bytes_read": 6e6}),
            _run("hdfs", 2, {"hdfs_bytes_read": 9e6}),  # not on S3: not summed
            _run("s3", -2, {"s3_get": 500}),  # before the window
            _run("s3", 10, {"s3_get": 500})]  # at its end (the window is [start, end))
    table = window_vs_engines(_counts(s3_get=25, s3_head=4, s3_list=3, s3_bytes_read=11.5e6), runs)
    assert list(table.columns) == ["counter", "what", "S3 (CloudWatch)", "engines", "difference"]
    assert _row(table, "s3_get")[["S3 (CloudWatch)", "engines", "difference"]].tolist() == [25, 22, 3]
    assert _row(table, "s3_head")["difference"] == 0
    assert _row(table, "s3_list")[["engines", "difference"]].tolist() == [2, 1]
    assert _row(table, "s3_bytes_read")["difference"] == pytest.approx(0.5e6)
    assert math.isnan(_row(table, "s3_put")["engines"])  # no engine counted PUTs: unknown, not 0
    assert _row(table, "s3_get")["what"] == "GET"
    assert _row(table, "s3_bytes_read")["what"] == "S3 bytes read"  # its figures are bytes: not labelled MB
    assert any("table registration and other clients" in note for note in table.attrs["notes"])


def test_a_counter_only_some_runs_kept_is_not_summed():
    runs = [_run("s3", 1, {"s3_get": 10, "s3_bytes_read": 1e6}), _run("s3", 2, {"s3_get": 4})]
    table = window_vs_engines(_counts(s3_get=14), runs)
    assert _row(table, "s3_get")["engines"] == 14
    assert math.isnan(_row(table, "s3_bytes_read")["engines"])


def test_a_run_on_s3_without_an_engine_count_leaves_the_engines_sum_unknown():
    runs = [_run("s3", 1, {"s3_get": 10}), _run("s3", 2, None)]
    table = window_vs_engines(_counts(s3_get=14), runs)
    assert math.isnan(_row(table, "s3_get")["engines"]) and math.isnan(_row(table, "s3_get")["difference"])
    assert "1 of 2 runs on S3 in the window have no engine count" in table.attrs["notes"][0]


def test_missing_counts_stay_missing_and_tier_runs_are_named():
    counts = WindowCounts("b", "f", START, END, missing="not published yet: ...")
    runs = [_run("s3", 1, {"s3_get": 10}), _run("alluxio", 2, {"s3_get": 0})]
    table = window_vs_engines(counts, runs)
    assert math.isnan(_row(table, "s3_get")["S3 (CloudWatch)"]) and _row(table, "s3_get")["engines"] == 10
    notes = " | ".join(table.attrs["notes"])
    assert "S3's count: not published yet" in notes and "1 runs through a cache tier" in notes


def test_the_last_s3_request_is_the_end_of_the_last_run_reading_s3():
    runs = [_run("s3", 1, wall_s=30), _run("alluxio", 4, wall_s=50), _run("hdfs", 8, wall_s=10)]
    assert last_s3_request(runs) == START + timedelta(minutes=4, seconds=50)
    assert last_s3_request([_run("hdfs", 1)]) is None


# -- the provider seam and the profile ------------------------------------------------------------------------------

def test_a_cluster_profile_gives_a_window_only_when_it_asks_for_one():
    plain = load_profile("emr", bucket="my-bucket")
    assert plain.provider.s3_request_window(plain) is None and build_window(plain, "RUN1") is None
    asked = load_profile("emr", bucket="my-bucket", s3_request_metrics=True)
    assert asked.provider.s3_request_window(asked) == {"bucket": "my-bucket", "prefix": "perfkit/", "filter_id": "",
                                                       "region": asked.s3_region}
    window = build_window(asked, "RUN1")  # the provider says where the count comes from; accounting builds the window
    assert isinstance(window, S3RequestWindow)
    assert (window.filter.bucket, window.filter.prefix, window.filter.filter_id) == ("my-bucket", "perfkit/",
                                                                                     "perfkit-RUN1")
    named = load_profile("emr", bucket="my-bucket", s3_request_metrics_filter="team.filter-1")
    assert build_window(named, "RUN1").filter.filter_id == "team.filter-1"


def test_the_lab_counts_every_run_itself_and_gives_no_window():
    lab = load_profile("lab")
    assert lab.provider.s3_request_window(lab) is None and build_window(lab, "RUN1") is None
    assert type(lab.provider).s3_request_window is not Provider.s3_request_window


@pytest.mark.parametrize("text, message", [
    ("base: lab\ns3_request_metrics: true\n", "s3_request_metrics is for a profile on AWS S3, and the lab's S3 server"),
    ("base: emr\nbucket: b\ns3_endpoint: http://10.0.0.5:9000\ns3_request_metrics_filter: f\n",
     "s3_request_metrics_filter is for a profile on AWS S3, and CloudWatch counts AWS S3's requests, not those of"),
    ("base: emr\nbucket: b\ns3_request_metrics: yes please\n", "setting 's3_request_metrics' must be true or false"),
    ("base: emr\nbucket: b\ns3_request_metrics_filter: my filter\n", "is not a metrics filter id"),
])
def test_asking_for_request_metrics_where_they_cannot_count_is_named(tmp_path, text, message):
    path = tmp_path / "p.yml"
    path.write_text(text)
    with pytest.raises(PerfkitError, match=message):
        load_profile(str(path))


def _report(profile, tmp_path):
    """The report of a run on `profile` that measured nothing yet, its config as the run recorded it."""
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.presenting.query_report import QueryReport
    from perfkit.results import ResultSet

    cmp = QueryComparison(profile, engines=["trino"])
    config = {"parameters": cmp.parameters(), **cmp.accounting_record()}
    return QueryReport(ResultSet("hdfs_vs_s3_queries", config, folder=tmp_path))


def test_the_report_shows_the_window_or_says_how_s3_was_counted(tmp_path):
    report = _report(load_profile("lab"), tmp_path)
    assert report.s3_window().startswith("S3's requests were counted run by run")
    report.results.config["s3_request_metrics"] = {
        "notes": ["n1"], "compared": [{"counter": "s3_get", "what": "GET", "S3 (CloudWatch)": 11.0, "engines": 9.0,
                                       "difference": 2.0}]}
    table = report.s3_window()
    assert table.to_dict("records")[0]["difference"] == 2.0 and table.attrs["notes"] == ["n1"]
    report.results.config["s3_request_metrics"] = {"missing": "not published yet", "notes": []}
    assert report.s3_window() == "S3's request metrics for this run: not published yet"


def test_a_report_on_aws_without_request_metrics_says_s3_did_not_count_rather_than_run_by_run(tmp_path):
    report = _report(load_profile("emr", bucket="b"), tmp_path)
    assert report.s3_window() == ("S3's own count was not asked for: this profile asks for no CloudWatch request "
                                  "metrics (s3_request_metrics: true counts each experiment's window); the engines' "
                                  "count is above.")


def test_a_report_says_how_s3_was_counted_once_and_shows_each_window_with_its_notes(capsys, monkeypatch):
    import IPython.display

    from perfkit.report.windows import show_windows

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects: shown.extend(objects))
    sentence = "S3's requests were counted run by run (above), not per window: no CloudWatch request metrics asked."
    show_windows("S3", {"tpch": sentence, "hibench": sentence})
    assert capsys.readouterr().out == sentence + "\n" and shown == []
    table = pd.DataFrame([{"counter": "s3_get", "S3 (CloudWatch)": 12.0, "engines": math.nan}])
    table.attrs["notes"] = ["no run on S3 started in the window"]
    show_windows("S3", {"tpch": table})
    assert shown[0].data == "### tpch: S3's count of the window"
    # the table, without row numbers, its missing count blank (not "NaN")
    cells = re.findall(r"<td>(.*?)</td>", shown[1].data)
    assert cells == ["s3_get", "12", ""] and "<th>counter</th>" in shown[1].data
    assert capsys.readouterr().out == "- no run on S3 started in the window\n"
