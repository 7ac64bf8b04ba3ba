"""Counting a run's I/O: the S3 server's log, HDFS's JMX, the before/after difference, runs that overlap."""
import json
import math
import threading

import pytest

from perfkit.accounting import counters
from perfkit.accounting.concurrent import ConcurrentRuns, OtherRunsInWindow
from perfkit.storages.hdfs_jmx import HdfsJmx
from perfkit.accounting.recorded_io import RunIO
from perfkit.accounting.run_io import NOT_ATTRIBUTABLE, RunAccounting
from perfkit.storages.s3_access_log import BUCKET_LEVEL, S3AccessLog, count_lines
from perfkit.accounting.sources import ServerSources, server_sources


def nonzero(counts):
    return {name: value for name, value in counts.items() if value}


def log_line(operation, key="perfkit/taxi/part-0.parquet", status=200, sent=0, size=1234, agent="Boto3/1.40 md/x"):
    return (f"- lab [24/November/2026:20:00:00 +0000] 127.0.0.1 perfkit 1A2B3C {operation} {key} "
            f"/lab/{key}?x=1 {status} {'-' if status == 200 else 'SlowDown'} {sent} {size} 3 3 - {agent} - - SigV4 - "
            "AuthHeader s3.us-east-1.amazonaws.com - arn:aws:s3:::/lab Yes")


def test_the_server_log_counts_requests_by_type_and_throttled_answers():
    lines = [log_line("s3_GetObject", size=1000), log_line("GetObject", size=24), log_line("s3_HeadObject"),
             log_line("s3_ListObjectsV2", key="-"), log_line("s3_UploadPart", size=5),
             log_line("s3_HeadBucket", key="-"), log_line("s3_GetObject", status=503, size=0),
             "log starts 2026-11-24", "garbage"]
    found = count_lines(lines)
    assert found["s3_get"] == 3 and found["s3_head"] == 1 and found["s3_list"] == 1 and found["s3_put"] == 1
    assert "s3_bytes_read" not in found  # the lab's server logs no bytes for a GET it streams
    assert found["s3_throttled"] == 1 and found["s3_errors"] == 1
    assert found[BUCKET_LEVEL] == 1  # perfkit's health probe: not a request on the data
    assert found["unparsed"] == 1  # said, not dropped


def test_the_log_is_read_incrementally_and_a_line_being_written_waits(tmp_path):
    path = tmp_path / "access.log"
    path.write_text(log_line("s3_GetObject", size=10) + "\n" + log_line("s3_GetObject", size=20)[:30])
    source = S3AccessLog(path)
    assert source.read()["s3_get"] == 1
    with path.open("a") as log:
        log.write(log_line("s3_GetObject", size=20)[30:] + "\n")
    assert nonzero(source.read()) == {"s3_get": 2}


def test_a_log_s_earlier_lines_can_be_skipped_and_a_line_being_written_is_read_whole(tmp_path):
    path = tmp_path / "access.log"
    path.write_text((log_line("s3_GetObject") + "\n") * 3 + log_line("s3_HeadObject")[:30])
    source = S3AccessLog(path, skip_existing=True)
    before = source.read()
    assert nonzero(before) == {} and before["s3_get"] == 0  # the lines before: not counted; every counter there
    with path.open("a") as log:
        log.write(log_line("s3_HeadObject")[30:] + "\n" + log_line("s3_GetObject", status=503) + "\n")
    # a counter's first count in a run is the run's (a difference keeps only counters the snapshot before had)
    assert counters.difference(before, source.read()) == {**before, "s3_head": 1, "s3_get": 1, "s3_throttled": 1,
                                                          "s3_errors": 1}


def test_a_log_set_aside_when_the_server_starts_again_is_counted_on_from_the_new_one(tmp_path):
    from perfkit.lab.process import set_aside_if_large

    path = tmp_path / "access.log"
    path.write_text((log_line("s3_GetObject") + "\n") * 3)
    source = S3AccessLog(path)
    assert source.read()["s3_get"] == 3
    set_aside_if_large(path, limit=10)  # the lab's S3 starts again: its log set aside, a new one begun
    path.write_text(log_line("s3_HeadObject") + "\n")
    assert nonzero(source.read()) == {"s3_get": 3, "s3_head": 1}  # cumulative: nothing counted twice or lost


def test_a_missing_log_names_the_file_and_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"access log .*missing: restart the lab's S3"):
        S3AccessLog(tmp_path / "none.log").read()


def test_difference_is_after_minus_before_and_a_counter_that_went_down_is_unknown():
    assert counters.difference({"s3_get": 4, "s3_head": 9}, {"s3_get": 10, "s3_head": 3, "new": 1}) == {
        "s3_get": 6, "s3_head": pytest.approx(math.nan, nan_ok=True)}
    assert math.isnan(counters.requests({})) and counters.requests({"s3_get": 2, "s3_list": 1, "hdfs_read_ops": 5}) == 3


class Session:
    """The JMX servlet of one NameNode and two DataNodes."""

    def __init__(self):
        self.bytes = [100.0, 50.0]
        self.asked = []

    def get(self, url, params, timeout):
        self.asked.append((url, params["qry"]))
        live = {"dn0": {"infoAddr": "127.0.0.1:9864"}, "dn1": {"infoAddr": "127.0.0.1:9865"}}
        beans = {"Hadoop:service=NameNode,name=NameNodeActivity": [{"GetBlockLocations": 7, "GetListingOps": 2}],
                 "Hadoop:service=NameNode,name=NameNodeInfo": [{"LiveNodes": json.dumps(live)}]}
        if "DataNodeActivity" in params["qry"]:
            i = 0 if "9864" in url else 1
            beans = {params["qry"]: [{"BytesRead": self.bytes[i], "ReadBlockOpNumOps": 3, "ReadBlockOpAvgTime": 0.5,
                                      "BytesWritten": 0}]}
        return Response(beans.get(params["qry"], []))


class Response:
    def __init__(self, beans):
        self.beans = beans

    def raise_for_status(self):
        pass

    def json(self):
        return {"beans": self.beans}


def test_hdfs_jmx_sums_every_live_datanode_found_through_the_namenode():
    servlets = Session()
    jmx = HdfsJmx("http://127.0.0.1:9870", period_s=0, new_session=lambda: servlets)
    assert jmx.read() == {"hdfs_block_locations": 7, "hdfs_listings": 2, "hdfs_bytes_read": 150, "hdfs_read_ops": 6,
                          "hdfs_bytes_written": 0}
    assert {url for url, _ in servlets.asked} == {f"http://127.0.0.1:{port}/jmx" for port in (9870, 9864, 9865)}


def test_hdfs_jmx_asks_the_namenode_and_the_datanodes_side_by_side():
    """Each answer waits until the other two daemons are asked too: one after the other, none would come back."""
    everyone_asked = threading.Barrier(3, timeout=5)

    class Waiting(Session):
        def get(self, url, params, timeout):
            if "Info" not in params["qry"]:  # the DataNodes' addresses come first, from the NameNode
                everyone_asked.wait()
            return super().get(url, params, timeout)

    servlets = Waiting()
    assert HdfsJmx("http://127.0.0.1:9870", period_s=0, new_session=lambda: servlets).read()["hdfs_bytes_read"] == 150


def test_hdfs_jmx_waits_a_metrics_period_between_reads(monkeypatch):
    """JMX shows a refreshed value only once a period has passed since the last read."""
    slept = []
    monkeypatch.setattr("perfkit.jmx_freshness.time.sleep", slept.append)
    servlets = Session()
    jmx = HdfsJmx("http://127.0.0.1:9870", period_s=0.5, new_session=lambda: servlets)
    jmx.read()
    jmx.read()
    assert len(slept) == 1 and 0.501 < slept[0] <= 0.51  # Hadoop's JMX cache lives 501 ms at a 500 ms period


class Counting:
    name = "fake server"

    def __init__(self):
        self.value = {"s3_get": 0.0}

    def read(self):
        return dict(self.value)


def test_a_snapshot_reads_the_server_sources_and_the_engine_side_by_side(tmp_path):
    """Each read waits until the other two are under way: read one after the other, none would come back."""
    all_asked = threading.Barrier(3, timeout=5)

    class Waiting(Counting):
        def read(self):
            all_asked.wait()
            return super().read()

    def engine():
        all_asked.wait()
        return {"s3_get": 1}

    run = RunAccounting(ServerSources([Waiting(), Waiting()]), engine, "fake engine", ConcurrentRuns(tmp_path))
    run.before()
    assert run.after().engine == {"s3_get": 0}


def test_finish_sends_the_after_reads_and_after_collects_them_with_what_counted_until_then(tmp_path):
    """finish() at the run's end: the counters are read then (what counts later is not the run's), while the caller
    hashes the answer; after() collects those reads."""
    read = threading.Semaphore(0)  # released by each read

    class Signalling(Counting):
        def read(self):
            found = super().read()
            read.release()
            return found

    server, engine = Signalling(), {"s3_get": 0}
    run = RunAccounting(ServerSources([server]), lambda: read.release() or dict(engine), "fake engine",
                        ConcurrentRuns(tmp_path))
    run.before()
    assert read.acquire(timeout=5) and read.acquire(timeout=5)
    server.value["s3_get"] += 2
    engine["s3_get"] += 2
    run.finish()
    assert read.acquire(timeout=5) and read.acquire(timeout=5)  # both sides read by finish(), not by after()
    server.value["s3_get"] += 100  # after the run's end: another's
    engine["s3_get"] += 100
    io = run.after()
    assert io.server == {"s3_get": 2} == io.engine and io.attributable is True


def test_a_run_gets_the_difference_of_each_side_and_names_the_sources(tmp_path):
    server, engine = Counting(), {"s3_get": 10}
    run = RunAccounting(ServerSources([server]), lambda: dict(engine), "fake engine", ConcurrentRuns(tmp_path))
    run.before()
    server.value["s3_get"] += 4
    engine["s3_get"] += 4
    io = run.after()
    assert io.stored() == {"server": {"s3_get": 4}, "engine": {"s3_get": 4}, "attributable": True, "missing": {},
                           "sources": {"server": "fake server", "engine": "fake engine"}}


def test_a_run_reads_only_the_sources_of_the_storage_it_reads(tmp_path):
    s3, hdfs, everywhere = Counting(), Counting(), Counting()
    s3.storage, hdfs.storage = "s3", "hdfs"
    s3.name, hdfs.name, everywhere.name = "S3 log", "HDFS JMX", "both"
    reads = []
    for source in (s3, hdfs, everywhere):
        source.read = (lambda src: lambda: reads.append(src.name) or dict(src.value))(source)
    run = RunAccounting(ServerSources([s3, hdfs, everywhere]), None, "", ConcurrentRuns(tmp_path), storage="hdfs")
    run.before()
    io = run.after()
    assert reads == ["HDFS JMX", "both", "HDFS JMX", "both"]
    assert io.sources["server"] == "HDFS JMX; both"


def test_hdfs_is_read_around_each_run_only_where_its_daemons_refresh_jmx_often(tmp_path):
    from perfkit.config import load_profile

    def of_hdfs(profile):
        return server_sources(profile).on("hdfs")

    lab = of_hdfs(load_profile("lab"))
    assert [type(s).__name__ for s in lab.read] == ["HdfsJmx"] and lab.not_per_run == {}  # the lab: every 10 ms
    cluster = load_profile("emr", bucket="b")
    assert cluster.hadoop_metrics_period_s == 10.0  # Hadoop's default, unless the profile says otherwise
    on_cluster = of_hdfs(cluster)
    assert on_cluster.read == [] and list(on_cluster.not_per_run) == ["hdfs"]
    why = on_cluster.not_per_run["hdfs"]
    assert "every 10 s" in why and "up to 10 s" in why
    assert "*.periodMillis=100 in hadoop-metrics2.properties" in why
    assert "hadoop_metrics_period_s: 0.1 in the profile" in why
    fast = load_profile("emr", bucket="b", hadoop_metrics_period_s=0.1)
    assert [type(s).__name__ for s in of_hdfs(fast).read] == ["HdfsJmx"]


def test_a_run_on_a_storage_not_counted_per_run_says_why_and_reads_the_others(tmp_path):
    s3 = Counting()
    s3.storage = "s3"
    sources = ServerSources([s3], not_per_run={"hdfs": "not counted per run: slow daemons"})
    on_hdfs = RunAccounting(sources, lambda: {"input_bytes": 0}, "engine", ConcurrentRuns(tmp_path), storage="hdfs")
    on_hdfs.before()
    io = on_hdfs.after()
    assert io.server is None and io.missing == {"server": "not counted per run: slow daemons"}
    assert io.engine == {"input_bytes": 0}  # the engine's side still counts
    on_s3 = RunAccounting(sources, None, "", ConcurrentRuns(tmp_path), storage="s3")
    on_s3.before()
    s3.value["s3_get"] += 2
    io = on_s3.after()
    assert io.server == {"s3_get": 2} and io.missing == {}


def test_s3_on_the_lab_without_an_emulator_counts_requests_at_the_server_and_says_why_it_has_no_bytes():
    from perfkit.config import load_profile

    of_s3 = server_sources(load_profile("lab")).on("s3")
    assert [type(s).__name__ for s in of_s3.read] == ["S3AccessLog"]  # the unit tests' lab: network local
    assert list(of_s3.not_counted) == ["s3"] and list(of_s3.not_counted["s3"]) == ["s3_bytes_read"]
    why = of_s3.not_counted["s3"]["s3_bytes_read"]
    assert "logs no bytes for a GET it streams" in why and "perfkit lab network ec2-s3" in why


def test_an_emulator_that_cannot_be_asked_for_s3_s_bytes_is_named_as_the_reason(monkeypatch):
    from perfkit.config import load_profile

    lab = load_profile("lab")

    def unreadable():
        raise ValueError("the network setting is unreadable")

    monkeypatch.setattr(lab.provider, "s3_wire_bytes", unreadable)
    assert server_sources(lab).not_counted["s3"]["s3_bytes_read"] == (
        "not counted: the network emulator could not be asked (the network setting is unreadable)")


@pytest.mark.parametrize("options, said", [
    ({}, "this profile does not ask for; set s3_request_metrics: true in the profile"),
    ({"s3_request_metrics": True}, "not counted per run but over the experiment's window (its S3 window)"),
])
def test_s3_on_aws_is_not_counted_per_run_at_the_server_and_each_run_says_why(options, said):
    from perfkit.config import load_profile

    of_s3 = server_sources(load_profile("emr", bucket="b", **options)).on("s3")
    assert of_s3.read == [] and said in of_s3.not_per_run["s3"]


def test_a_counter_the_server_does_not_count_is_missing_with_why_while_its_others_count(tmp_path):
    s3 = Counting()
    s3.storage = "s3"
    sources = ServerSources([s3], not_counted={"s3": {"s3_bytes_read": "not counted: no emulator"}})
    run = RunAccounting(sources, None, "", ConcurrentRuns(tmp_path), storage="s3")
    run.before()
    s3.value["s3_get"] += 2
    io = run.after()
    assert io.server == {"s3_get": 2} and io.missing == {}
    assert io.not_counted == {"s3_bytes_read": "not counted: no emulator"}  # one counter's blank, not the side's
    assert io.stored()["not_counted"] == io.not_counted and RunIO.of(io.stored()) == io
    on_hdfs = RunAccounting(sources, None, "", ConcurrentRuns(tmp_path), storage="hdfs")
    on_hdfs.before()
    assert on_hdfs.after().gaps() == []  # a run on HDFS reads no S3 counters: nothing to say about S3's bytes
    other = ConcurrentRuns(tmp_path)
    other._mine = tmp_path / "measuring" / "other.lock"
    run.before()
    other.start()
    other.stop()
    assert run.after().missing == {"server": NOT_ATTRIBUTABLE}  # the whole side's reason, not a counter's


def test_a_side_that_cannot_be_read_is_missing_with_its_reason_and_the_other_kept(tmp_path):
    def broken():
        raise ConnectionError("refused")

    run = RunAccounting(ServerSources([Counting()]), broken, "fake engine", ConcurrentRuns(tmp_path))
    run.before()
    io = run.after()
    assert io.server == {"s3_get": 0} and io.missing == {"engine": "not read: refused"}


def test_a_run_that_overlapped_another_keeps_no_server_count(tmp_path):
    mine = RunAccounting(ServerSources([Counting()]), None, "", ConcurrentRuns(tmp_path))
    other = ConcurrentRuns(tmp_path)
    other._mine = tmp_path / "measuring" / "other.lock"  # a file per process: this stands for another one
    mine.before()
    other.start()  # another run starts while this one measures
    other.stop()
    io = mine.after()
    assert io.server is None and io.missing["server"] == NOT_ATTRIBUTABLE and io.attributable is False


def test_a_run_waits_for_the_engine_to_settle_before_each_snapshot(tmp_path):
    """Work a query left running reads between the two sides' snapshots: the run waits for it, at both ends."""
    server, engine, calls = Counting(), {"s3_get": 0}, []

    def settle():  # the lingering task's GET lands while the engine settles, before either side is read
        calls.append(len(calls))
        server.value["s3_get"] += 1
        engine["s3_get"] += 1

    run = RunAccounting(ServerSources([server]), lambda: dict(engine), "fake engine", ConcurrentRuns(tmp_path),
                        settle=settle)
    run.before()
    io = run.after()
    assert calls == [0, 1] and io.server == {"s3_get": 1} == io.engine and io.attributable is True


def test_a_run_whose_engine_did_not_settle_keeps_neither_side(tmp_path):
    answers = iter([None, "2 Spark tasks or jobs still running 10 s after the query returned"])
    run = RunAccounting(ServerSources([Counting()]), lambda: {"s3_get": 0}, "fake engine", ConcurrentRuns(tmp_path),
                        settle=lambda: next(answers))
    run.before()
    io = run.after()
    why = "not attributable: after the run: 2 Spark tasks or jobs still running 10 s after the query returned"
    assert io.attributable is False and io.missing == {"server": why, "engine": why}
    assert io.server is None and io.engine is None


def test_a_window_over_this_process_s_own_runs_saw_no_other_run(tmp_path):
    window = OtherRunsInWindow(tmp_path)
    window.open()
    for _ in range(3):  # the experiment's own runs, inside its window
        run = ConcurrentRuns(tmp_path)
        run.start()
        assert run.stop() is False
    assert window.close() is False


def test_a_window_sees_another_process_start_measuring_inside_it(tmp_path):
    window = OtherRunsInWindow(tmp_path)
    window.open()
    mine = ConcurrentRuns(tmp_path)
    mine.start()
    mine.stop()
    with open(tmp_path / "measuring" / "starts", "ab") as starts:  # another process's run starts: its byte
        starts.write(b".")
    assert window.close() is True


def test_a_window_opened_while_another_process_measures_saw_it(tmp_path):
    other = ConcurrentRuns(tmp_path)
    other._mine = tmp_path / "measuring" / "other.lock"  # a file per process: this stands for another one
    other.start()
    window = OtherRunsInWindow(tmp_path)
    window.open()
    other.stop()
    assert window.close() is True


def test_a_run_started_while_another_measures_is_not_attributable_and_serial_runs_are(tmp_path):
    first, second = ConcurrentRuns(tmp_path), ConcurrentRuns(tmp_path)
    first.start()
    done = threading.Event()
    result = []

    def other_process():  # the flock is per open file: a second handle in a thread stands for another process
        second._mine = tmp_path / "measuring" / "other.lock"
        second.start()
        result.append(second.stop())
        done.set()

    threading.Thread(target=other_process).start()
    done.wait(5)
    assert result == [True]  # the first was measuring when it started
    assert first.stop() is True  # and it started during the first
    serial = ConcurrentRuns(tmp_path)
    serial.start()
    assert serial.stop() is False


def frame_of(*runs):
    import pandas as pd

    rows = [{"subject": engine, "storage": storage, "case": query, "phase": "measured", "ok": True, "wall_s": wall,
             "io": io} for engine, storage, query, wall, io in runs]
    return pd.DataFrame(rows)


class Prices:
    def request_cost(self, counts):
        return counts.get("s3_get", 0) * 0.0004 / 1000 + counts.get("s3_list", 0) * 0.005 / 1000


def test_the_io_table_gives_medians_per_query_both_sides_their_agreement_and_the_cost():
    def io(get, listed, mb, engine_get=None):
        return {"server": {"s3_get": get, "s3_head": 0, "s3_list": listed, "s3_bytes_read": mb * 1e6},
                "engine": {"s3_get": get if engine_get is None else engine_get, "s3_head": 0, "s3_list": listed},
                "attributable": True}

    frame = frame_of(("spark", "s3", "q1", 1.0, io(4, 1, 10)), ("spark", "s3", "q1", 1.2, io(6, 1, 12)),
                     ("spark", "s3", "q1", 1.1, io(5, 1, 11)), ("trino", "s3", "q1", 0.3, io(14, 2, 30, engine_get=11)))
    from perfkit.accounting.table import io_table

    table = io_table(frame, Prices()).set_index("engine")
    assert table.loc["spark", "runs"] == 3 and table.loc["spark", "GET (server)"] == 5
    assert table.loc["spark", "S3 requests (server)"] == 6 and table.loc["spark", "S3 MB (server)"] == 11
    assert table.loc["spark", "server = engine"] == "exact"
    assert table.loc["trino", "server = engine"] == "server vs engine: GET 14 vs 11"
    assert table.loc["spark", "$ per 1,000 runs"] == pytest.approx(1000 * (5 * 0.0004 + 1 * 0.005) / 1000)
    # a run on HDFS reads HDFS's counters only: its S3 sides are not compared (neither counted them)
    hdfs_run = {"server": {"hdfs_bytes_read": 5e6}, "engine": {"input_bytes": 5e6}, "attributable": True}
    assert io_table(frame_of(("trino", "hdfs", "q1", 0.2, hdfs_run))).iloc[0]["server = engine"] == (
        "not compared: a run on HDFS reads no S3 counters")
    # the bytes an engine read from whichever storage the run read (Trino's physical input): S3's on S3, not a tier's
    s3_run = {"server": {"s3_bytes_read": 4e6}, "engine": {"input_bytes": 3.9e6}, "attributable": True}
    assert io_table(frame_of(("trino", "s3", "q1", 0.2, s3_run))).iloc[0]["S3 MB (engine)"] == pytest.approx(3.9)
    assert math.isnan(io_table(frame_of(("trino", "trino-cache", "q1", 0.2, s3_run))).iloc[0]["S3 MB (engine)"])


def test_a_run_not_attributable_gives_no_server_median_and_old_records_no_rows():
    from perfkit.accounting.table import io_frame, io_table

    frame = frame_of(("spark", "s3", "q1", 1.0, {"engine": {"s3_get": 3}, "attributable": False,
                                                  "missing": {"server": NOT_ATTRIBUTABLE}}),
                     ("spark", "hdfs", "q1", 1.0, {}))
    assert len(io_frame(frame)) == 1
    row = io_table(frame).iloc[0]
    assert math.isnan(row["S3 requests (server)"]) and row["S3 requests (engine)"] == 3


def test_the_io_table_says_why_a_side_is_missing_once_per_reason_with_its_runs():
    from perfkit.accounting.table import io_table

    window = "not counted per run but over the experiment's window"
    frame = frame_of(("spark", "hdfs", "q1", 1.0, {"engine": {"hdfs_bytes_read": 5}, "missing": {"server": window}}),
                     ("trino", "hdfs", "q1", 1.0, {"engine": {"input_bytes": 5}, "missing": {"server": window}}),
                     ("trino", "hdfs", "q2", 1.0, {"engine": {"input_bytes": 7}, "missing": {"server": window}}),
                     ("trino", "s3", "q1", 1.0, {"engine": {"s3_get": 3}, "attributable": False,
                                                 "missing": {"server": NOT_ATTRIBUTABLE}}),
                     ("trino", "s3", "q2", 1.0, {"server": {"s3_get": 3}, "engine": {"s3_get": 3}, "missing": {}}))
    assert io_table(frame).attrs["missing"] == [
        f"the server's count of 3 runs (spark on hdfs, trino on hdfs): {window}",
        f"the server's count of 1 run (trino on s3): {NOT_ATTRIBUTABLE}"]
    assert io_table(frame_of(("spark", "hdfs", "q1", 1.0, {}))).attrs["missing"] == []  # before perfkit counted I/O


WHY_NO_BYTES = "not counted: no emulator"


@pytest.mark.parametrize("blank", [{"not_counted": {"s3_bytes_read": WHY_NO_BYTES}},
                                   {"missing": {"server.s3_bytes_read": WHY_NO_BYTES}}],  # as perfkit stored it before
                         ids=["not_counted", "older record"])
def test_the_io_table_says_why_a_counter_of_a_side_is_blank(blank):
    from perfkit.accounting.table import io_table

    why = WHY_NO_BYTES
    frame = frame_of(*[(engine, "s3", "q1", 1.0, {"server": {"s3_get": 3}, "engine": {"s3_get": 3}, **blank})
                       for engine in ("spark", "trino", "trino")])
    assert RunIO.of(frame["io"].iloc[0]).not_counted == {"s3_bytes_read": why}
    table = io_table(frame)
    assert table["S3 requests (server)"].tolist() == [3, 3] and table["S3 MB (server)"].isna().all()
    assert table.attrs["missing"] == [f"the server's S3 MB read of 3 runs (spark on s3, trino on s3): {why}"]


def test_a_report_shows_the_io_table_with_blanks_left_blank_then_its_prices_and_why_each_blank_is(capsys, monkeypatch):
    import re

    import IPython.display

    from perfkit.accounting.table import io_table
    from perfkit.report.tables import show_storage_io

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects: shown.extend(objects))
    window = "not counted per run but over the experiment's window"
    table = io_table(frame_of(("trino", "hdfs", "q1", 1.0,
                               {"engine": {"input_bytes": 2e6}, "missing": {"server": window}})))
    table.attrs["basis"] = "S3 Standard, us-east-1"
    show_storage_io(table)
    row = dict(zip(re.findall(r"<th>(.*?)</th>", shown[0].data), re.findall(r"<td>(.*?)</td>", shown[0].data)))
    assert row["engine"] == "trino" and row["HDFS MB (engine)"] == "2" and row["HDFS MB (server)"] == ""
    assert "NaN" not in shown[0].data
    assert capsys.readouterr().out == ("Prices: S3 Standard, us-east-1\n"
                                       f"- the server's count of 1 run (trino on hdfs): {window}\n")


def test_a_server_source_that_does_not_answer_is_named_and_the_others_still_count(tmp_path):
    class Down:
        name = "the proxy"

        def read(self):
            raise ConnectionError("refused")

    server = Counting()
    run = RunAccounting(ServerSources([server, Down()]), None, "", ConcurrentRuns(tmp_path))
    run.before()
    server.value["s3_get"] = 3
    io = run.after()
    assert io.server == {"s3_get": 3} and io.missing == {"server": "the proxy not read: refused"}


def test_a_tier_s_own_s3_requests_are_not_compared_with_the_engine_s():
    from perfkit.accounting.table import io_table

    frame = frame_of(("trino", "alluxio", "q1", 0.5, {"server": {"s3_get": 36}, "engine": {"s3_get": 0}}))
    assert io_table(frame).iloc[0]["server = engine"] == "not compared: the tier makes its own S3 requests"


def test_hdfs_locality_is_the_share_of_the_datanodes_bytes_that_went_to_a_reader_on_their_node():
    import pandas as pd

    from perfkit.accounting.table import hdfs_locality

    def run(engine, storage, sent, remote, ok=True, attributable=True):
        return {"subject": engine, "storage": storage, "case": "q1", "phase": "measured", "ok": ok, "wall_s": 1.0,
                "io": {"attributable": attributable,
                       "server": {"hdfs_bytes_read": sent, "hdfs_remote_bytes_read": remote}}}

    frame = pd.DataFrame([run("spark", "hdfs", 1000, 250), run("spark", "hdfs", 3000, 1750),
                          run("hive", "hdfs", 800, 800), run("spark", "s3", 5000, 5000),  # not HDFS: left out
                          run("hive", "hdfs", 900, 0, attributable=False),  # another run's bytes in it: left out
                          run("hive", "hdfs", 900, 0, ok=False)])  # failed: left out
    assert hdfs_locality(frame) == {"hive": (0.0, 800.0), "spark": (2000.0, 4000.0)}  # spark: (750 + 1250) of 4000
    older = pd.DataFrame([{**run("spark", "hdfs", 10, 0), "io": {"server": {"hdfs_bytes_read": 10}}}])
    assert hdfs_locality(older) == {}  # counted before perfkit read RemoteBytesRead: not known, never all local
