"""The cache-tier report from its records alone (issue 45): the comparison's run, the pay-off sweep's distances and the
copy bench, each recorded with the comparison's run id, read back and shown as the live objects show them."""
import pandas as pd
import pytest

from perfkit.presenting import run_report
from perfkit.calibration import Calibration
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.cache_tier import CacheTierComparison
from perfkit.presenting.cache_tier_report import CacheTierReport
from perfkit.presenting.payoff_report import EXPERIMENT as PAYOFF, PayoffReport
from perfkit.presenting.tier_copy_report import EXPERIMENT as COPY, CopyReport
from perfkit.network import NetworkProfile
from perfkit.results import ResultSet

S3_AT = {0: [0.50, 0.52, 0.48], 60: [2.0, 2.1, 1.9]}  # S3 read directly: its time grows with the round trip
TIER_AT = {0: [0.90, 0.95, 0.85], 60: [0.90, 0.92, 0.88]}  # the hot tier: it does not


def _calibration(rtt_ms: int) -> dict:
    network = NetworkProfile(f"rtt {rtt_ms} ms", rtt_ms=rtt_ms, per_connection_mb_s=85, source="the sweep")
    return Calibration(network=network.as_dict(), endpoint="http://127.0.0.1:7270", small_get_ms=rtt_ms + 1.5,
                       small_get_direct_ms=1.5, one_connection_mb_s=80.0, parallel_mb_s=300.0,
                       connections=8).as_dict()


def _comparison_run(folder) -> ResultSet:
    """A cache-tier run as CacheTierComparison saves it: Trino, q1, S3 and Alluxio, one round of cold, warm, hot."""
    c = CacheTierComparison(load_profile("lab"), engines=["trino"], storages=["s3", "alluxio"], queries=["q1"])
    config = {"versions": {"trino": "Trino 477"}, "profile": {"name": "lab"}, "parameters": c.parameters(),
              "network": Calibration.from_dict(_calibration(20)).as_dict(), "query_titles": {"q1": "Trips per cab"}}
    results = ResultSet("cache_tier", config, folder=folder)
    for where, seconds in (("s3", (0.5, 0.5, 0.5)), ("alluxio", (5.0, 1.0, 0.8))):
        for try_, wall in zip(("cold", "warm", "hot"), seconds):
            params = {"try": try_}
            if where == "alluxio":
                params.update(cache_bytes=0 if try_ == "cold" else 900_000, s3_bytes=87_000_000 if try_ == "cold"
                              else 0)
            results.add(subject="trino", storage=where, case="q1", phase="measured", iteration=0,
                        started_at="2026-11-29T10:00:00+00:00", wall_s=wall, rows=2, result_hash="h", params=params)
    results.save()
    return results


def _sweep_point(folder, of_run: str, rtt_ms: int) -> ResultSet:
    """One distance of the pay-off sweep, as PayoffPoint saves it (its config names the sweep and the run)."""
    sweep = {"of_run": of_run, "rtt_ms": [0, 60], "per_connection_mb_s": 85, "runs": 3, "queries": ["q1"],
             "movable": True}
    config = {"parameters": {"engines": ["trino"], "storages": ["s3", "alluxio"], "baseline": "s3"},
              "network": _calibration(rtt_ms), "payoff": sweep}
    point = ResultSet(PAYOFF, config, folder=folder)
    for where, times in (("s3", S3_AT[rtt_ms]), ("alluxio", TIER_AT[rtt_ms])):
        for i, wall in enumerate(times):
            point.add(subject="trino", storage=where, case="q1", phase="measured", iteration=i,
                      started_at="2026-11-29T10:01:00+00:00", wall_s=wall, rows=2, result_hash="h",
                      params={"try": "hot", "s3_bytes": 0}, io={"engine": {"input_bytes": 900_000}})
    point.save()
    return point


def _copy_bench(folder, part_of: str) -> ResultSet:
    bench = ResultSet(COPY, {"parameters": {"objects": 2}, "part_of": part_of}, folder=folder)
    for reader, where, walls in (("boto3", "s3", (1.0, 1.0, 1.0)), ("boto3 via Alluxio's S3 API", "alluxio",
                                                                     (4.0, 0.5, 0.25))):
        for try_, wall in zip(("cold", "warm", "hot"), walls):
            bench.add(subject=reader, storage=where, case="2 x 16 MB", phase="measured", iteration=0,
                      started_at="2026-11-29T10:02:00+00:00", wall_s=wall, bytes=32_000_000,
                      params={"try": try_, "start_up_s": 0.0, "cache_bytes": 0, "s3_bytes": 0})
    bench.save()
    return bench


@pytest.fixture
def stored(tmp_path):
    run = _comparison_run(tmp_path)
    _sweep_point(tmp_path, "another-run", 0)  # another run's sweep: not this one's
    (tmp_path / PAYOFF / "copied-by-hand.jsonl").write_text("not a record\n")  # nor a file that is not perfkit's
    points = [_sweep_point(tmp_path, run.run_id, rtt) for rtt in (0, 60)]
    bench = _copy_bench(tmp_path, run.run_id)
    return run, points, bench


def test_the_sweep_recorded_with_a_run_is_read_back_and_only_it(stored):
    run, points, _ = stored
    payoff = PayoffReport.load(ResultSet.load(run.path))
    assert [p.results.run_id for p in payoff.points] == [p.run_id for p in points]  # nearest first
    assert (payoff.rtt_ms, payoff.runs, payoff.queries) == ([0, 60], 3, ["q1"])
    samples = payoff.samples()
    assert sorted(set(samples["rtt_ms"])) == [0.0, 60.0] and len(samples) == 12
    assert samples["mb_read"].eq(0.9).all()  # the engine's input bytes, in MB
    row = payoff.table().iloc[0]
    assert row["S3 at 60 ms (s)"] == pd.Series(S3_AT[60]).median() and row["tier at 0 ms (s)"] == 0.9
    # the lines through the medians: S3 0.5 s + 1.5 s over 60 ms, the tier flat at 0.9 s: they cross at 16 ms
    assert row["tier faster beyond (ms)"].startswith("16 ms")
    [said] = payoff.sentences()
    assert said.startswith("Where alluxio pays off (trino, hot, against S3 read directly at round trips of 0 and "
                           "60 ms): q1 (0.9 MB) faster beyond 16 ms")
    assert payoff.conditions() == ("the pay-off: hot reads of q1 at round trips of 0, 60 ms (85 MB/s per "
                                   "connection), each calibrated, 3 rounds each; its runs: no drift control recorded "
                                   "(a run made before perfkit timed one)")
    assert payoff.failures().empty


def test_the_cache_tier_report_of_a_stored_run_says_the_sweeps_findings_too(stored):
    run, _, _ = stored
    report = CacheTierReport.load(run.path)
    payoff = PayoffReport.load(report.results)
    found = report.findings(payoff)
    # 0.5 s / 5.0 s
    assert found.sentences[0].startswith("trino through alluxio: cold 0.10× the speed of S3's cold try")
    assert any(s.startswith("Where alluxio pays off") for s in found.sentences)
    assert found.conditions.endswith(payoff.conditions())
    assert run_report(report) is report and run_report(payoff) is payoff  # stored: nothing measured


def test_the_copy_bench_recorded_with_a_run_is_read_back_and_a_run_without_one_has_none(stored, tmp_path):
    run, _, bench = stored
    copy = CopyReport.load(run)
    assert copy.results.run_id == bench.run_id and run_report(copy, part_of="x") is copy
    table = copy.copy_table().set_index(["reader", "try"])
    assert table.loc[("boto3 via Alluxio's S3 API", "hot"), "vs S3"] == "4.00× (faster)"  # 1.0 s / 0.25 s
    assert table.loc[("boto3 via Alluxio's S3 API", "hot"), "MB/s"] == 128.0  # 32 MB in 0.25 s
    alone = _comparison_run(tmp_path / "alone")
    assert CopyReport.load(alone) is None and PayoffReport.load(alone).points == []


def test_a_part_of_a_run_is_refused_by_perfkit_report_naming_the_run_that_shows_it(stored):
    from perfkit.report.stored import stored_run_notebook

    run, points, bench = stored
    for part in (points[0], bench):
        with pytest.raises(PerfkitError, match=f"is a run of {part.experiment}, a part of run {run.run_id}, whose "
                                               f"report shows it. Fix: give {run.path}"):
            stored_run_notebook(part.path)
    assert stored_run_notebook(run.path).name == "cache_tier.ipynb"


def test_perfkit_report_from_a_stored_cache_tier_run_renders_its_sweep_and_bench_and_records_nothing(
        stored, report_from):
    run, _, _ = stored
    text = report_from(run.path, "cache_tier")
    assert "trino through alluxio: cold 0.10×" in text and "Where alluxio pays off" in text
    assert "boto3 via Alluxio&#x27;s S3 API" in text or "boto3 via Alluxio's S3 API" in text  # the copy bench
    assert "Promote/demote is shown when the report measures, not from a stored run." in text
