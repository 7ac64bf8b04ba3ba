"""The what-if sweep's arithmetic: slopes against hand-made samples, which bound a query, the copy's words."""
import math

import numpy as np
import pandas as pd
import pytest

from perfkit.errors import PerfkitError
from perfkit.experiments.copy_cost import CopyCost
from perfkit.presenting.distance_report import DistanceReport, bound_by, fit_slopes
from perfkit.experiments.s3_distance import S3Distance


def _samples(rtt_slope: float, bandwidth_cost: float, noise=(0.0, 0.01, -0.01)) -> pd.DataFrame:
    rows = []
    for where, slope, cost in (("s3", rtt_slope, bandwidth_cost), ("hdfs", 0.0, 0.0)):
        for rtt in (0, 10, 20, 40):
            rows += [{"subject": "trino", "case": "q1", "storage": where, "rtt_ms": rtt, "per_connection_mb_s": np.nan,
                      "wall_s": 1.0 + slope * rtt + e} for e in noise]
        for mb_s, share in ((200, 0.25), (40, 1.0)):
            rows += [{"subject": "trino", "case": "q1", "storage": where, "rtt_ms": 0, "per_connection_mb_s": mb_s,
                      "wall_s": 1.0 + cost * share + e} for e in noise]
    return pd.DataFrame(rows)


def test_the_slope_is_seconds_per_ms_of_round_trip_and_hdfs_is_the_flat_control():
    table = fit_slopes(_samples(rtt_slope=0.02, bandwidth_cost=0.1)).set_index("storage")
    s3, hdfs = table.loc["s3"], table.loc["hdfs"]
    assert s3["s_per_ms_rtt"] == pytest.approx(0.02)  # the noise is the same at every round trip: exact
    assert s3["ci_low"] < 0.02 < s3["ci_high"] and s3["ci_low"] > 0
    assert s3["rtt_cost_s"] == pytest.approx(0.8)  # 0.02 s/ms over a 40 ms sweep
    assert s3["bandwidth_cost_s"] == pytest.approx(0.1)  # 40 MB/s against no limit, both at 0 ms
    assert s3["bound_by"] == "latency"
    assert hdfs["s_per_ms_rtt"] == pytest.approx(0.0, abs=1e-12) and hdfs["bound_by"] == "neither (within noise)"


def test_a_query_that_moves_with_bandwidth_only_is_bandwidth_bound():
    s3 = fit_slopes(_samples(rtt_slope=0.0, bandwidth_cost=2.0)).set_index("storage").loc["s3"]
    assert s3["bandwidth_cost_s"] == pytest.approx(2.0)
    assert s3["bound_by"] == "bandwidth"


def test_bound_by_needs_an_effect_beyond_noise():
    assert bound_by(-0.001, 0.2, 0.5, 0.30) == "neither (within noise)"  # slope's interval holds 0, p 0.3
    assert bound_by(0.001, 0.2, 0.5, 0.01) == "bandwidth"
    assert bound_by(0.001, 0.9, 0.5, 0.01) == "latency"
    assert bound_by(math.nan, math.nan, math.nan, math.nan) == "neither (within noise)"


def test_the_sweep_refuses_what_it_cannot_fit():
    with pytest.raises(PerfkitError, match="two or more round trips"):
        S3Distance("lab", rtt_ms=[20])
    with pytest.raises(PerfkitError, match="rtt_ms"):
        S3Distance("lab", rtt_ms=[0, -5])
    with pytest.raises(PerfkitError, match=r"per_connection_mb_s\[1\]=0: give a number of MB/s > 0"):
        S3Distance("lab", per_connection_mb_s=[85, 0])
    with pytest.raises(PerfkitError, match=r"per_connection_mb_s=40: one number, not a list: write "
                                           r"per_connection_mb_s=\[40\]"):
        S3Distance("lab", per_connection_mb_s=40)
    with pytest.raises(PerfkitError, match=r"per_connection_mb_s=\[40, 40\]: 40 given more than once: give each once"):
        S3Distance("lab", per_connection_mb_s=[40, 40])
    assert S3Distance("lab", per_connection_mb_s=[85, 4e1]).per_connection_mb_s == [85.0, 40.0]


def test_the_sweep_is_refused_on_a_cluster_profile(tmp_path):
    yml = tmp_path / "cluster.yml"
    yml.write_text("base: emr\nbucket: b\n")
    with pytest.raises(PerfkitError, match="is a cluster's, where S3 is where it is. Fix: run it with profile lab"):
        S3Distance(str(yml))


def test_the_copy_cost_names_the_fastest_verified_method():
    cost = CopyCost(seconds={"stream": 3.2, "distcp": 14.0}, bytes=37_000_000)
    assert cost.fastest == ("stream", 3.2)
    assert cost.sentence() == "copying 37 MB S3 → HDFS took 3.2 s by stream, the fastest (also distcp 14.0 s), verified"
    none = CopyCost(failed={"distcp": "verification failed: 1 file missing"})
    assert none.fastest is None
    assert none.sentence() == "the copy to HDFS was not measured (distcp: verification failed: 1 file missing)"


def test_findings_give_seconds_per_ms_what_bandwidth_cost_and_the_break_even_per_setting(monkeypatch):
    sweep = DistanceReport([], S3Distance("lab", rtt_ms=[0, 10, 20, 40], per_connection_mb_s=[200, 40],
                                          runs=3).sweep_record())
    monkeypatch.setattr(sweep, "samples", lambda: _samples(rtt_slope=0.02, bandwidth_cost=0.1))
    break_even = pd.DataFrame([
        {"network": "rtt 0 ms", "engine": "trino", "query": "q1", "runs": pd.NA},
        {"network": "rtt 40 ms", "engine": "trino", "query": "q1", "runs": 12},
        {"network": "bandwidth 40 MB/s", "finding": "the copy to HDFS was not measured (stream: timed out)"},
    ]).astype({"runs": "Int64"})
    monkeypatch.setattr(sweep, "break_even_frame", lambda: break_even)
    found = sweep.findings()
    assert found.sentences == [
        # 0.02 s per ms, exact: the noise is the same at every round trip; 0.02 × 40 ms = 0.80 s; the interval
        # (t at 10 degrees of freedom × the fit's standard error) 0.00078 wide: 2 significant digits of its width
        "trino on S3: q1 0.02000 s per ms of round trip (95% CI 0.01961–0.02039); 0.80 s more over the 40 ms sweep; "
        "bound by latency on 1 of 1 query.",
        # 40 MB/s adds 0.1 s against no limit, far beyond the ±0.01 s noise
        "trino on S3 at 40 MB/s per connection: +0.10 s per query against no limit, slower beyond noise "
        "(Welch p < 0.05) on 1 of 1 query.",
        "trino on HDFS (the control): q1 0.00000 s per ms of round trip (95% CI -0.00039 to 0.00039); 0.00 s more "
        "over the 40 ms sweep; bound by neither beyond noise on 1 of 1 query.",
        "trino on HDFS at 40 MB/s per connection: +0.00 s per query against no limit, slower beyond noise "
        "(Welch p < 0.05) on 0 of 1 query.",
        "At rtt 0 ms: copying to HDFS never pays off (no query slower on S3).",
        "At rtt 40 ms: copying to HDFS pays off after 12 runs of a query on 1 of 1 engine-query pair.",
        "At bandwidth 40 MB/s: the copy to HDFS was not measured (stream: timed out).",
    ]
    assert found.undecided == []
    assert found.conditions == (
        "taxi, 1,000,000 rows in 8 ORC files; 3 measured runs each after 1 warm-up; S3 behind emulated round trips of "
        "0, 10, 20, 40 ms (no bandwidth limit) and 200, 40 MB/s per connection (0 ms added), each calibrated before "
        "its runs; HDFS local; the embedded lab on this machine (Toxiproxy between S3's clients and server); "
        "no drift control recorded (a run made before perfkit timed one)")


def _setting_file(folder, sweep: dict, group: dict, network, small_get_ms: float, s3_extra_s: float):
    """One setting's stored run, as a DistancePoint saves it: trino's q1 on both storages behind `network`."""
    from perfkit.calibration import Calibration
    from perfkit.config import load_profile
    from perfkit.experiments.s3_distance import DistancePoint
    from perfkit.results import ResultSet

    point = DistancePoint(load_profile("lab"), engines=["trino"], queries=["q1"], runs=3, warmup=0,
                          storages=["hdfs", "s3"], baseline="hdfs", copy_methods=["stream"])
    calibration = Calibration(network=network.as_dict(), endpoint="http://127.0.0.1:7270", small_get_ms=small_get_ms,
                              small_get_direct_ms=1.0, one_connection_mb_s=90.0, parallel_mb_s=300.0, connections=8)
    config = {"versions": {"trino": "Trino 476"}, "host": {"hostname": "h"}, "profile": {"name": "lab"},
              "parameters": point.parameters(), "network": calibration.as_dict(), "dataset": {},
              "query_titles": {"q1": "Trips per cab type"}, "write_queries": [], "s3_counted_run_by_run": True,
              "s3_distance": sweep, "run_group": group}
    results = ResultSet("s3_distance", config, folder=folder)
    for i, noise in enumerate((0.0, 0.01, -0.01)):
        for where, wall in (("hdfs", 1.0 + noise), ("s3", 1.0 + s3_extra_s + noise)):
            results.add(subject="trino", storage=where, case="q1", phase="measured", iteration=i,
                        started_at=f"2026-12-07T10:00:0{i}+00:00", wall_s=wall, rows=2, result_hash="h")
    results.save()
    return results


def test_a_stored_sweep_is_rebuilt_from_any_one_of_its_settings_files_with_the_same_findings(tmp_path, report_from):
    from perfkit.network import NetworkProfile
    from perfkit.results import run_group

    sweep = S3Distance("lab", rtt_ms=[0, 20, 40], per_connection_mb_s=[40], runs=3, warmup=0)
    record = sweep.sweep_record()
    settings = [NetworkProfile(f"rtt {rtt} ms", rtt_ms=rtt) for rtt in (0, 20, 40)] + [
        NetworkProfile("bandwidth 40 MB/s", per_connection_mb_s=40)]
    folder = tmp_path / "stored"
    folder.mkdir()
    groups = run_group([s.name for s in settings])
    # S3 0.02 s slower per ms of round trip; at 40 MB/s, 0.5 s slower than at no limit
    extra = {"rtt 0 ms": 0.0, "rtt 20 ms": 0.4, "rtt 40 ms": 0.8, "bandwidth 40 MB/s": 0.5}
    files = [_setting_file(folder, record, group, network, 1.0 + network.rtt_ms, extra[network.name])
             for network, group in zip(settings, groups)]
    report = DistanceReport.load(files[2].path)  # any one setting's file finds the others, in the sweep's order
    assert [p.results.run_id for p in report.points] == [f.run_id for f in files]
    slope = report.slope_fits().set_index("storage").loc["s3"]
    assert slope["s_per_ms_rtt"] == pytest.approx(0.02) and slope["bound_by"] == "latency"
    assert slope["bandwidth_cost_s"] == pytest.approx(0.5)
    found = report.findings()
    assert found.sentences[0].startswith("trino on S3: q1 0.0200") and found.sentences[0].endswith(
        " s more over the 40 ms sweep; bound by latency on 1 of 1 query.")
    assert "s per ms of round trip (95% CI 0.01" in found.sentences[0]
    assert "0, 20, 40 ms" in found.conditions and "40 MB/s per connection" in found.conditions
    assert list(report.calibrations()["small GET (ms)"]) == [1.0, 21.0, 41.0, 1.0]

    text = report_from(files[0].path, "s3_distance")
    for sentence in found.sentences:
        assert sentence.split(" (")[0] in text, sentence
