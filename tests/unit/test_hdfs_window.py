"""HDFS counted over an experiment's window where its daemons refresh JMX too seldom to count each run: the two fresh
reads, the comparison with the engines' sum over the same runs, and the report's table (no HDFS needed)."""
import math
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from perfkit.accounting.counted_window import STOPPED, WindowCount
from perfkit.accounting.hdfs_window import OVERLAPPED, SERVER, HdfsWindow, hdfs_read_window, hdfs_window_vs_engines
from perfkit.config import load_profile
from perfkit.results import Record

START = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
END = START + timedelta(minutes=10)


class Daemons:
    """HDFS's counters, each read the next of `reads` (an exception is raised)."""
    name = "HDFS NameNode and DataNode JMX"

    def __init__(self, *reads):
        self.reads = list(reads)

    def read(self):
        found = self.reads.pop(0)
        if isinstance(found, Exception):
            raise found
        return found


def _run(storage, minute, engine=None, phase="measured"):
    return Record(run_id="R", experiment="hdfs_vs_s3_queries", subject="spark", storage=storage, case="q1",
                  phase=phase, iteration=0, started_at=(START + timedelta(minutes=minute)).isoformat(), wall_s=3.0,
                  io={} if engine is None else {"engine": engine})


def _row(table, counter):
    return table.set_index("counter").loc[counter]


def test_each_read_waits_a_period_after_the_io_it_must_include_and_the_window_gets_the_difference():
    events = []
    daemons = Daemons({"hdfs_bytes_read": 100.0, "hdfs_read_ops": 4.0},
                      {"hdfs_bytes_read": 350.0, "hdfs_read_ops": 9.0})
    reading = daemons.read
    daemons.read = lambda: events.append("read") or reading()
    window = HdfsWindow(daemons, period_s=10.0, sleep=lambda s: events.append(s))
    window.open()
    # after the data was placed: a read once Hadoop's JMX cache (period + 1 ms) has expired shows it
    assert events[1:] == ["read"] and 10.001 < events[0] < 10.02
    counted = window.close()
    assert events[2:] == [events[0], "read"]  # after the last run
    assert counted.totals == {"hdfs_bytes_read": 250.0, "hdfs_read_ops": 5.0}
    assert counted.start <= counted.end and counted.missing is None


def test_a_daemon_that_does_not_answer_leaves_the_window_s_count_missing_with_the_reason():
    window = HdfsWindow(Daemons({"hdfs_bytes_read": 1.0}, ConnectionError("refused")), 10.0, sleep=lambda s: None)
    window.open()
    counted = window.close()
    assert counted.totals == {}  # never zeros
    assert counted.missing == "HDFS NameNode and DataNode JMX not read: refused"


def test_hdfs_s_count_is_set_beside_the_engines_sum_over_the_runs_on_hdfs_in_the_window():
    runs = [_run("hdfs", 1, {"hdfs_bytes_read": 40e6}, phase="warmup"),  # Spark: its HDFS client's count
            _run("hdfs", 2, {"input_bytes": 50e6}),  # Trino: its physical input
            _run("s3", 3, {"input_bytes": 999e6}),  # not on HDFS
            _run("hdfs", -1, {"hdfs_bytes_read": 999e6}),  # before the window
            _run("hdfs", 10, {"hdfs_bytes_read": 999e6})]  # at its end: the window is [start, end)
    counted = WindowCount("JMX", START, END, {"hdfs_bytes_read": 91e6, "hdfs_read_ops": 12.0})
    table = hdfs_window_vs_engines(counted, runs)
    assert list(table.columns) == ["counter", "what", SERVER, "engines", "difference"]
    assert _row(table, "hdfs_bytes_read")[[SERVER, "engines", "difference"]].tolist() == [91e6, 90e6, 1e6]
    assert _row(table, "hdfs_read_ops")[SERVER] == 12 and math.isnan(_row(table, "hdfs_read_ops")["engines"])
    assert math.isnan(_row(table, "hdfs_listings")[SERVER])  # not counted: unknown, not 0
    assert any("every client's reads in the window, warm-ups included" in note for note in table.attrs["notes"])


def test_a_run_without_an_engine_count_or_a_window_shared_with_another_process_is_not_compared():
    runs = [_run("hdfs", 1, {"hdfs_bytes_read": 40e6}), _run("hdfs", 2)]  # Hive on YARN: no engine count
    counted = WindowCount("JMX", START, END, {"hdfs_bytes_read": 91e6})
    table = hdfs_window_vs_engines(counted, runs)
    assert math.isnan(_row(table, "hdfs_bytes_read")["engines"])
    said = "1 of 2 runs on HDFS in the window have no engine count: the engines' sum is not shown"
    assert said in table.attrs["notes"]
    shared = hdfs_window_vs_engines(counted, runs[:1], attributable=False)
    assert _row(shared, "hdfs_bytes_read")["engines"] == 40e6
    assert math.isnan(_row(shared, "hdfs_bytes_read")["difference"])
    assert shared.attrs["notes"][0] == OVERLAPPED
    missing = hdfs_window_vs_engines(WindowCount("JMX", START, END, missing="HDFS JMX not read: refused"), [])
    assert math.isnan(_row(missing, "hdfs_bytes_read")[SERVER])
    assert "HDFS's count: HDFS JMX not read: refused" in missing.attrs["notes"]
    assert "no run on HDFS started in the window" in missing.attrs["notes"]


class OtherRuns:
    def __init__(self, seen: bool):
        self.seen = seen

    def open(self):
        pass

    def close(self):
        return self.seen


def test_a_cluster_at_hadoop_s_default_period_counts_hdfs_over_the_window_and_the_lab_run_by_run():
    results = SimpleNamespace(config={}, records=[])
    with hdfs_read_window(load_profile("lab"), results) as window:  # its daemons refresh every 10 ms
        assert window is None
    assert results.config == {}
    cluster = load_profile("emr", bucket="b")
    window = HdfsWindow(Daemons({"hdfs_bytes_read": 0.0}, {"hdfs_bytes_read": 7e6}), 10.0, sleep=lambda s: None)
    with hdfs_read_window(cluster, results, others=OtherRuns(False), window=window):
        results.records.append(Record(run_id="R", experiment="e", subject="trino", storage="hdfs", case="q1",
                                      phase="measured", iteration=0, started_at=datetime.now(timezone.utc).isoformat(),
                                      wall_s=1.0, io={"engine": {"input_bytes": 7e6}}))
    stored = results.config["hdfs_window"]
    assert stored["attributable"] and stored["missing"] == ""
    (compared,) = [row for row in stored["compared"] if row["counter"] == "hdfs_bytes_read"]
    assert (compared[SERVER], compared["engines"], compared["difference"]) == (7e6, 7e6, 0.0)
    listings = [row for row in stored["compared"] if row["counter"] == "hdfs_listings"][0]
    assert listings[SERVER] is None  # stored as JSON: unknown, not 0 or NaN


def test_an_experiment_stopped_in_its_window_keeps_it_missing_and_raises_on():
    results = SimpleNamespace(config={}, records=[])
    window = HdfsWindow(Daemons({"hdfs_bytes_read": 0.0}), 10.0, sleep=lambda s: None)
    with pytest.raises(KeyboardInterrupt):
        with hdfs_read_window(load_profile("emr", bucket="b"), results, others=OtherRuns(False), window=window):
            raise KeyboardInterrupt
    assert results.config["hdfs_window"] == {"missing": STOPPED, "notes": []}


def test_the_report_shows_hdfs_s_window_says_it_was_counted_run_by_run_or_says_nothing(tmp_path):
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.presenting.query_report import QueryReport
    from perfkit.results import ResultSet

    parameters = QueryComparison(load_profile("lab"), engines=["trino"]).parameters()
    report = QueryReport(ResultSet("hdfs_vs_s3_queries", {"parameters": parameters}, folder=tmp_path))
    assert report.hdfs_window() == "HDFS's reads were counted run by run (above), not per window."
    report.results.config["hdfs_window"] = {"notes": ["n1"], "compared": [
        {"counter": "hdfs_bytes_read", "what": "bytes read", SERVER: 11.0, "engines": 9.0, "difference": 2.0}]}
    table = report.hdfs_window()
    assert table.to_dict("records")[0]["difference"] == 2.0 and table.attrs["notes"] == ["n1"]
    report.results.config["hdfs_window"] = {"missing": STOPPED, "notes": []}
    assert report.hdfs_window() == f"HDFS's count for this run: {STOPPED}"
    for other in ({"storages": ["s3", "trino-cache"], "baseline": "s3"}, {"accounting": False}):  # no HDFS, no count
        config = {**report.results.config, "parameters": {**parameters, **other}}
        assert QueryReport(ResultSet("hdfs_vs_s3_queries", config, folder=tmp_path)).hdfs_window() == ""