"""perfkit decide: the lab's fit carried to the user's table size and path to S3, checked against the truth the runs
were made from (tests/unit/test_query_time_model.py's synthetic engine), and the month's cost by hand."""
import math

import pytest

from perfkit.decide import Target, decide, scaling, turning_point
from perfkit.errors import PerfkitError
from perfkit.model.query_time import fit
from perfkit.prices import PriceTable
from tests.unit.test_query_time_model import TRUTH, WORK, runs, true_time

TABLE = 87e6  # the synthetic runs' table at size 1 (make report's taxi table)


def observed(scatter=0.0, fixed_requests=0):
    """The synthetic runs with their table's size; `fixed_requests` more GETs a run on S3, whatever the size (footers,
    listings): the requests no longer grow in proportion to the bytes."""
    frame = runs(scatter=scatter)
    table = frame["bytes"] / frame["query"].map({q: b for q, (b, _) in WORK.items()}) * TABLE
    frame = frame.assign(table_bytes=table)
    if fixed_requests:
        on_s3 = frame["storage"].eq("s3")
        frame.loc[on_s3, "requests"] += fixed_requests
        frame.loc[on_s3, "wall_s"] = [true_time(q, "s3", b, r, g, w) for q, b, r, g, w in frame.loc[
            on_s3, ["query", "bytes", "requests", "g_s", "w_bytes_s"]].itertuples(index=False)]
    return frame


PRICES = PriceTable.load()


def test_the_prediction_at_the_user_s_size_and_path_is_the_truth_there():
    frame = observed()
    target = Target(data_bytes=100 * TABLE, rtt_ms=30, mb_s=50, runs_per_day=24)
    rows = decide(fit(frame), frame, target, PRICES).table().set_index(["engine", "query"])
    for query, (bytes1, requests1) in WORK.items():
        row = rows.loc[("trino", query)]
        assert row["s3_s"] == pytest.approx(true_time(query, "s3", 100 * bytes1, 100 * requests1, 0.030, 50e6))
        assert row["hdfs_s"] == pytest.approx(true_time(query, "hdfs", 100 * bytes1, None, None, None))
        assert row["s3_low"] <= row["s3_s"] <= row["s3_high"]
        assert bool(row["requests_assumed_proportional"]) is False  # two sizes ran


def test_fixed_requests_make_the_regime_turn_where_round_trips_equal_the_bytes_time():
    frame = observed(fixed_requests=200)
    model = fit(frame)
    grown = scaling(frame, "trino", "scan")
    assert grown.requests_fixed == pytest.approx(200) and grown.requests_per_byte == pytest.approx(180 / 87e6)
    target = Target(data_bytes=TABLE, rtt_ms=40, mb_s=1)  # a slow link: the bytes' time overtakes the requests'
    at = turning_point(model, "trino", grown, target)
    # at that table size, by the truth's terms: the requests' time equals the bytes' time through a connection
    bytes_read = 87e6 / TABLE * at
    requests = 200 + 180 / 87e6 * bytes_read
    latency = (TRUTH["u"] + TRUTH["rt"] * 0.040) * requests
    assert latency == pytest.approx(TRUTH["bw"] * bytes_read / 1e6, rel=1e-6)
    # at 40 MB/s the requests grow faster than the bytes' time: it never turns
    assert math.isnan(turning_point(model, "trino", grown, Target(data_bytes=TABLE, rtt_ms=40, mb_s=40)))
    # proportional requests never turn
    assert math.isnan(turning_point(fit(observed()), "trino", scaling(observed(), "trino", "scan"), target))


def test_the_month_costs_what_the_price_list_says():
    # 120 TB: S3 Standard $0.023 a GB-month; HDFS on st1 $0.045 a GB-month for each of 3 replicas; the GETs at $0.0004
    # per 1,000 (scaled requests of both queries x 24 runs a day x 30 days)
    frame = observed()
    target = Target(data_bytes=120e12, rtt_ms=20, mb_s=85, runs_per_day=24, replication=3, volume_type="st1")
    decision = decide(fit(frame), frame, target, PRICES)
    cost = decision.cost.set_index("storage")
    gets = sum(r * 120e12 / TABLE for _, r in WORK.values()) * 24 * 30
    assert cost.loc["S3 Standard", "stored"] == pytest.approx(120e3 * 0.023)
    assert cost.loc["S3 Standard", "requests"] == pytest.approx(gets * 0.0004 / 1000)
    assert cost.loc["HDFS on EBS st1, 3 replicas", "total"] == pytest.approx(360e3 * 0.045)
    assert any(s.startswith("A month on S3 Standard: $") for s in decision.sentences())


def test_the_break_even_is_the_copy_over_the_predicted_penalty():
    frame = observed()
    target = Target(data_bytes=10 * TABLE, rtt_ms=40, mb_s=40, copy_mb_s=1)
    row = decide(fit(frame), frame, target, PRICES).table().set_index("query").loc["scan"]
    copy_s = 10 * TABLE / 1e6
    runs_needed = math.ceil(copy_s / (row["s3_s"] - row["hdfs_s"]))
    assert runs_needed > 1 and row["break_even"].startswith(f"copying pays off after {runs_needed} runs (copy ")
    assert "S3 slower" in row["verdict"]


def test_overlapping_intervals_decide_no_side():
    frame = observed(scatter=0.3)
    target = Target(data_bytes=TABLE, rtt_ms=0, mb_s=1000)  # S3 as near as it gets: a few ms apart at most
    verdicts = decide(fit(frame), frame, target, PRICES).table()["verdict"]
    assert (verdicts == "no side decided: the predictions' intervals overlap").any()


@pytest.mark.parametrize("field, value, words", [
    ("data_bytes", 0, "data_bytes 0 must be a number above 0"), ("mb_s", -1, "mb_s -1 must be"),
    ("replication", 0, "replication 0 must be a whole number")])
def test_a_target_that_is_no_cluster_is_refused_by_name(field, value, words):
    given = {"data_bytes": 1e12, "rtt_ms": 20, "mb_s": 85, field: value}
    with pytest.raises(PerfkitError, match=words):
        Target(**given)


def test_runs_without_their_table_size_are_refused_with_the_fix():
    frame = observed().drop(columns="table_bytes")
    with pytest.raises(PerfkitError, match="do not say their table's size"):
        scaling(frame, "trino", "q1")
    hdfs_only = observed()
    with pytest.raises(PerfkitError, match="has no runs on s3"):
        scaling(hdfs_only[hdfs_only["storage"].eq("hdfs")], "trino", "q1")


def test_the_cli_fits_saved_runs_and_answers_for_the_given_cluster(tmp_path):
    from click.testing import CliRunner

    from perfkit.cli import main
    from perfkit.model.observations import observations
    from perfkit.results import Record, ResultSet, records_frame

    frame = observed()
    records = []
    for i, row in enumerate(frame.itertuples()):
        on_s3 = row.storage == "s3"
        io = {"server": {"s3_get": row.requests, "s3_head": 0.0, "s3_list": 0.0, "s3_bytes_read": row.bytes}
              if on_s3 else {"hdfs_bytes_read": row.bytes}}
        network = {"small_get_ms": row.g_s * 1000, "one_connection_mb_s": row.w_bytes_s / 1e6} if on_s3 else {}
        records.append(Record("r1", "hdfs_vs_s3_queries", row.engine, row.storage, row.query, "measured", i,
                              "2026-12-07T18:00:00+00:00", row.wall_s, io=io,
                              config={"network": network, "dataset": {"one_copy_bytes": row.table_bytes}}))
    results = ResultSet("hdfs_vs_s3_queries", run_id="20261207T180000Z-abcdef", folder=tmp_path)
    results.records = records
    path = results.save()
    done = CliRunner().invoke(main, ["decide", str(path), "--data-gb", "870", "--rtt-ms", "30", "--mb-s", "50",
                                     "--copy-mb-s", "200"])
    assert done.exit_code == 0, done.output
    expected = decide(fit(frame), frame, Target(data_bytes=870e9, rtt_ms=30, mb_s=50, copy_mb_s=200), PRICES)
    assert done.output.splitlines()[:-1] == expected.sentences()
    assert done.output.splitlines()[-1].startswith("inputs: data 870 GB one copy (given); round trip 30 ms (given)")
    assert len(observations(records_frame([r.__dict__ for r in records]))[0]) == len(frame)


def test_the_cli_refuses_runs_it_cannot_fit_with_the_fix(tmp_path):
    from click.testing import CliRunner

    from perfkit.cli import main

    done = CliRunner().invoke(main, ["decide", str(tmp_path / "nothing.jsonl"), "--data-gb", "1", "--rtt-ms", "1",
                                     "--mb-s", "1"])
    assert done.exit_code != 0 and "does not exist" in done.output


def test_a_calibration_file_gives_the_path_and_says_where_it_was_measured(tmp_path):
    from perfkit.decide import calibrated_path

    saved = tmp_path / "emr.json"
    saved.write_text('{"small_get_ms": 18.5, "one_connection_mb_s": 92.0, "profile": "emr", '
                     '"measured_at": "2026-12-07T18:30:00+00:00"}')
    rtt_ms, mb_s, sources = calibrated_path(saved)
    where = "calibrated on profile emr at 2026-12-07T18:30:00+00:00"
    assert (rtt_ms, mb_s) == (18.5, 92.0) and sources == {"round trip": where, "one connection": where}
    target = Target(data_bytes=1e12, rtt_ms=rtt_ms, mb_s=mb_s, sources=sources)
    assert target.g_s == pytest.approx(0.0185) and target.w_bytes_s == 92e6
    from perfkit.decide import inputs
    assert inputs(target)["round trip"] == f"18.5 ms ({where})" and inputs(target)["data"] == "1 TB one copy (given)"
    # a figure given on the command line wins, and is said as given
    assert calibrated_path(saved, mb_s=40.0) == (18.5, 40.0, {"round trip": where})
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(PerfkitError, match=r"is not a calibration .*perfkit calibrate --save FILE"):
        calibrated_path(tmp_path / "bad.json")
