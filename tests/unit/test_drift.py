"""The drift control's analysis (perfkit.drift, issue 70): a planted move on one storage is called drift, the noise of
millisecond reads is not; the ratio and its interval are what a hand calculation gives; and every report's Conditions
carry the control, its Findings the note and the marked verdicts where the control moved."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfkit import drift, stats
from perfkit.drift import NOT_RECORDED, WITHIN_DRIFT

WHAT = "a 64 KiB read of one data file on HDFS, S3, 5 times at start and end"


def _round(at: str, seconds: dict, minute: int = 0) -> dict:
    return {"at": at, "time": f"2026-12-07T11:{minute:02d}:00+00:00", "seconds": seconds}


def _control(moves: dict[str, list[float]], seed: int = 0, noise: float = 0.05, reads: int = 5,
             base: dict | None = None, failed: dict | None = None) -> dict:
    """A run's config with a control: per storage, its median's factor at each round (start first) over a base time
    of a few milliseconds, each read within ±noise of it (uniform)."""
    rng = np.random.default_rng(seed)
    base = base or {"hdfs": 0.004, "s3": 0.012}
    rounds = len(next(iter(moves.values())))
    ats = ["start", *["between"] * (rounds - 2), "end"]
    control = {"what": WHAT, "rounds": [
        _round(at, {where: list(base[where] * factors[i] * rng.uniform(1 - noise, 1 + noise, reads))
                    for where, factors in moves.items()}, minute=5 * i) for i, at in enumerate(ats)]}
    if failed:
        control["failed"] = failed
    return {"control": control}


def test_a_planted_30_percent_move_on_one_storage_is_drift_and_the_other_storage_is_steady():
    config = _control({"hdfs": [1.0, 1.0], "s3": [1.0, 1.3]})
    hdfs, s3 = drift.drift(config)
    assert (hdfs.storage, s3.storage) == ("hdfs", "s3")
    assert s3.moved() and s3.moved(1.2) and not s3.moved(1.5)  # beyond noise, and beyond 1.10 and 1.20, not 1.50
    assert not hdfs.moved()
    assert s3.low > 1.1 and s3.ratio == pytest.approx(1.3, abs=0.06)
    assert drift.drift_bound(config) == pytest.approx(s3.ratio)


def test_the_ratio_and_interval_are_the_medians_and_the_bootstrap_a_hand_calculation_gives():
    config = _control({"hdfs": [1.0, 1.0], "s3": [1.0, 1.3]}, seed=3)
    first, last = (np.asarray(r["seconds"]["s3"]) for r in config["control"]["rounds"])
    s3 = drift.drift(config)[1]
    assert s3.ratio == pytest.approx(np.median(last) / np.median(first))  # by hand
    assert (s3.low, s3.high) == pytest.approx(stats.ratio_ci(last, first, seed=1))  # the same bootstrap
    assert (s3.rounds, s3.reads, s3.first_median) == (2, 5, pytest.approx(np.median(first)))


@pytest.mark.parametrize("noise", [0.05, 0.02])
def test_noise_of_millisecond_reads_is_not_called_drift(noise):
    """±5% around 4 ms and 12 ms, 5 reads a round, no move: over 200 runs, never called drift at the noise factor."""
    called = [d.storage for seed in range(200)
              for d in drift.drift(_control({"hdfs": [1.0, 1.0, 1.0], "s3": [1.0, 1.0, 1.0]}, seed, noise))
              if d.moved()]
    assert called == []


def test_a_real_move_just_above_the_noise_factor_is_still_called():
    """A 15% move with ±5% noise: called in (nearly) every run at the 1.10 noise factor, in none at 1.25."""
    found = [drift.drift(_control({"hdfs": [1.0, 1.15]}, seed))[0] for seed in range(50)]
    assert sum(d.moved() for d in found) >= 48 and not any(d.moved(1.25) for d in found)


def test_a_move_between_rounds_that_came_back_is_the_largest_move_and_counts():
    config = _control({"hdfs": [1.0, 1.0, 1.0], "s3": [1.0, 1.5, 1.02]}, seed=4)
    s3 = drift.drift(config)[1]
    assert s3.rounds == 3 and s3.ratio == pytest.approx(1.02, abs=0.06) and s3.largest_at == "between"
    assert s3.size == pytest.approx(s3.largest) and s3.largest == pytest.approx(1.5, abs=0.08)
    assert s3.moved()  # conditions that moved and came back moved under the steps that ran meanwhile
    phrase = drift.conditions_phrase(config)
    assert f"largest move {s3.largest:.2f}× (between steps at 11:05:00)" in phrase and phrase.endswith(
        "moved (S3 beyond noise and beyond 1.10×)")


def test_the_conditions_phrase_names_each_storage_its_interval_and_steady():
    config = _control({"hdfs": [1.0, 1.0], "s3": [1.0, 1.0]}, seed=5)
    hdfs, s3 = drift.drift(config)
    assert drift.conditions_phrase(config) == (
        f"control ({WHAT}; 2 rounds): HDFS {hdfs.ratio:.2f}× (95% CI {hdfs.low:.2f}–{hdfs.high:.2f}×), "
        f"S3 {s3.ratio:.2f}× (95% CI {s3.low:.2f}–{s3.high:.2f}×) end ÷ start: steady")
    assert drift.drift_note(config) is None and drift.drift_bound(config) is None


def test_an_older_run_says_no_control_and_a_storage_not_timed_is_named():
    assert drift.conditions_phrase({}) == NOT_RECORDED == "no drift control recorded (a run made before perfkit " \
                                                          "timed one)"
    assert drift.drift({}) == [] and drift.drift_note({"parameters": {}}) is None
    config = _control({"hdfs": [1.0, 1.0]}, failed={"s3": "start: no data file in s3://b/t"})
    assert "; S3 not timed (start: no data file in s3://b/t): steady" in drift.conditions_phrase(config)
    few = _control({"hdfs": [1.0, 1.0]}, reads=2)
    assert "HDFS" in drift.conditions_phrase(few) and "too few reads to judge: 2; need 3" in \
        drift.conditions_phrase(few) and drift.conditions_phrase(few).endswith("not judged (too few reads)")


def test_the_note_names_the_move_against_the_smallest_effect_and_marks_smaller_verdicts():
    config = _control({"hdfs": [1.0, 1.0], "s3": [1.0, 1.3]})
    s3 = drift.drift(config)[1]
    assert drift.drift_note(config, 1.5) is None  # the report's smallest verdict is 1.5×: a 1.3× move leaves it
    note = drift.drift_note(config, 1.2)
    assert note.startswith(f"The drift control moved during the run: S3 {s3.ratio:.2f}× (95% CI {s3.low:.2f}–"
                           f"{s3.high:.2f}×) end ÷ start, more than 1.20×, the smallest effect this report calls "
                           "beyond noise; ")
    assert note.endswith(f"verdicts on effects no larger than {s3.size:.2f}× are marked \"{WITHIN_DRIFT}\"")
    assert "perfkit compare's noise factor" in drift.drift_note(config)
    bound = drift.drift_bound(config, 1.2)
    assert drift.mark("HDFS 1.25× faster.", 1.25, bound) == f"HDFS 1.25× faster ({WITHIN_DRIFT})."
    assert drift.mark("HDFS 1.25× faster.", 1 / 1.25, bound).endswith(f"({WITHIN_DRIFT}).")  # either way
    assert drift.mark("HDFS 2.00× faster.", 2.0, bound) == "HDFS 2.00× faster."
    assert drift.mark("HDFS 1.25× faster.", 1.25, None) == "HDFS 1.25× faster."
    assert drift.smallest_effect([1.4, 0.5, float("nan")]) == 1.4 and drift.smallest_effect([]) == 1.10


def test_a_sweep_is_judged_setting_by_setting():
    steady, moved = _control({"s3": [1.0, 1.0]}, seed=1), _control({"s3": [1.0, 1.4]}, seed=2)
    points = [("rtt 0 ms", steady), ("rtt 40 ms", moved), ("rtt 80 ms", {})]
    phrase = drift.sweep_conditions_phrase(points)
    assert phrase.startswith(f"control at each setting ({WHAT}), each setting's end ÷ its start: at rtt 40 ms S3 ")
    assert phrase.endswith(": moved; steady at the others; not recorded at rtt 80 ms")
    assert drift.sweep_drift_bound(points) == {"rtt 0 ms": None, "rtt 40 ms": drift.drift(moved)[0].size,
                                               "rtt 80 ms": None}
    assert drift.sweep_drift_note(points).startswith("The drift control moved during the sweep: at rtt 40 ms S3 ")
    assert drift.sweep_conditions_phrase([("a", {}), ("b", {})]) == NOT_RECORDED
    assert drift.sweep_drift_note([("rtt 0 ms", steady)]) is None


# ---- every report's Findings ----------------------------------------------------------------------------------------
def _with_control(results, moves: dict[str, list[float]]):
    results.config.update(_control(moves))
    results.save()
    return results


def test_the_query_report_carries_the_control_and_marks_a_verdict_within_its_move(tmp_path):
    from test_query_report import _run

    from perfkit.presenting.query_report import QueryReport

    plain = QueryReport(_run(tmp_path / "old")).findings()
    assert plain.conditions.endswith(f"; {NOT_RECORDED}") and not any(WITHIN_DRIFT in s for s in plain.sentences)
    steady = QueryReport(_with_control(_run(tmp_path / "steady"), {"hdfs": [1.0, 1.0], "s3": [1.0, 1.0]})).findings()
    assert "; control (" in steady.conditions and steady.conditions.endswith("end ÷ start: steady")
    assert steady.sentences == plain.sentences and steady.undecided == plain.undecided
    # S3 2.05× slower than HDFS beyond noise; S3's control moved 2.5×: that verdict is within the drift
    moved_run = _with_control(_run(tmp_path / "moved"), {"hdfs": [1.0, 1.0], "s3": [1.0, 2.5]})
    moved = QueryReport(moved_run).findings()
    assert moved.sentences[0] == (f"Spark 4.0.1: S3 slower than HDFS on 1 of 1 query beyond noise (2.05×; "
                                  f"{WITHIN_DRIFT}).")
    recap = QueryReport.load(moved_run.path).recap()  # the stored run's table says it too
    assert recap.loc[0, "verdict"] == f"HDFS 2.05× faster ({WITHIN_DRIFT})"
    [note] = [u for u in moved.undecided if u.startswith("The drift control moved")]
    assert note.startswith("The drift control moved during the run: S3 2.")
    assert "more than 2.05×, the smallest effect this report calls beyond noise" in note
    # a move smaller than the smallest verdict: said in the Conditions, no note, nothing marked
    small = QueryReport(_with_control(_run(tmp_path / "small"), {"hdfs": [1.0, 1.0], "s3": [1.0, 1.5]})).findings()
    assert small.sentences == plain.sentences and small.undecided == plain.undecided
    assert small.conditions.endswith("moved (S3 beyond noise and beyond 1.10×)")


def test_the_other_reports_carry_the_control_in_their_conditions_and_the_note_where_it_moved(tmp_path):
    from test_read_findings import _report as read_report
    from test_st1_report import ROUND, _stored as st1_run
    from test_transfer_report import _run as transfer_run

    from perfkit.presenting.reads_report import ReadReport
    from perfkit.presenting.st1_report import St1Report
    from perfkit.presenting.transfer_report import TransferReport

    moved = {"hdfs": [1.0, 1.0], "s3": [1.0, 1.6]}
    runs = {"transfer": (TransferReport, transfer_run(tmp_path / "transfer")),
            "reads": (ReadReport, read_report(tmp_path / "reads").results),
            "st1": (St1Report, st1_run(tmp_path / "st1", **ROUND))}
    for name, (report, results) in runs.items():
        assert report(results).findings().conditions.endswith(NOT_RECORDED), name
        _with_control(results, moved)
        found = report(results).findings()
        assert "; control (" in found.conditions and found.conditions.endswith(
            "moved (S3 beyond noise and beyond 1.10×)"), name
        notes = [u for u in found.undecided if u.startswith("The drift control moved during the run: S3 1.")]
        if name == "transfer":  # its one verdict beyond noise, stream at 4 ahead of stream at 1 by 2.5×: > 1.6×
            assert notes == [] and not any(WITHIN_DRIFT in s for s in found.sentences)
        else:  # no verdict beyond noise: the noise factor is the bar
            assert len(notes) == 1 and "perfkit compare's noise factor" in notes[0], name


def test_the_transfer_verdict_within_the_drift_is_marked(tmp_path):
    from test_transfer_report import COPIES, _run as transfer_run

    from perfkit.presenting.transfer_report import TransferReport

    # stream at 4 (2.0, 2.5, 1.5 s) against its runner-up at 1, now 2.2, 2.6, 2.7 s: every copy faster, by 1.3×
    results = _with_control(transfer_run(tmp_path, {**COPIES, ("stream", 1): (2.6, 2.7, 2.6)}),
                            {"hdfs": [1.0, 1.0], "s3": [1.0, 1.6]})
    found = TransferReport(results).findings()
    assert (f"Every copy by stream (4 at once) was faster than every copy by stream (1 at once), the runner-up "
            f"({WITHIN_DRIFT}).") in found.sentences
    assert any("more than 1.30×, the smallest effect this report calls beyond noise" in u for u in found.undecided)


def test_the_sweeps_and_the_copy_bench_carry_each_runs_control(tmp_path):
    from test_cache_tier_stored import _comparison_run, _copy_bench, _sweep_point

    from perfkit.presenting.payoff_report import PayoffReport
    from perfkit.presenting.tier_copy_report import CopyReport
    from perfkit.results import ResultSet

    run = _comparison_run(tmp_path)
    points = [_sweep_point(tmp_path, run.run_id, rtt) for rtt in (0, 60)]
    bench = _copy_bench(tmp_path, run.run_id)
    assert CopyReport.load(run).findings().conditions.endswith(NOT_RECORDED)
    _with_control(points[1], {"s3": [1.0, 3.0]})  # S3's control at 60 ms moved 3×: more than the 2.22× verdict
    _with_control(bench, {"s3": [1.0, 1.0]})
    payoff = PayoffReport.load(ResultSet.load(run.path))
    assert "at rtt 60 ms S3 3." in payoff.conditions() and payoff.conditions().endswith(
        "end ÷ start: moved; not recorded at rtt 0 ms")
    cell = payoff.table().iloc[0]
    assert cell["S3 ÷ tier at 60 ms"].endswith(f"tier faster; {WITHIN_DRIFT})")  # 2.22× < 3×
    assert WITHIN_DRIFT not in cell["S3 ÷ tier at 0 ms"]  # its own distance's control held (none recorded)
    [note] = payoff.undecided()
    assert note.startswith("The drift control moved during the sweep: at rtt 60 ms S3 3.")
    assert payoff.findings().undecided == [note]
    copy = CopyReport.load(run).findings()
    assert copy.conditions.endswith("end ÷ start: steady") and copy.undecided == []
    assert copy.sentences == ["boto3 via Alluxio's S3 API against boto3 (boto3's median time ÷ its, per try): cold "
                              "0.25× (slower), warm 2.00× (faster), hot 4.00× (faster)."]


def test_the_distance_sweep_marks_a_latency_verdict_smaller_than_its_settings_drift(monkeypatch):
    from test_s3_distance import _samples

    from perfkit.experiments.s3_distance import S3Distance
    from perfkit.presenting.distance_report import DistanceReport

    sweep = DistanceReport([], S3Distance("lab", rtt_ms=[0, 10, 20, 40], per_connection_mb_s=[200, 40],
                                          runs=3).sweep_record())
    monkeypatch.setattr(sweep, "samples", lambda: _samples(rtt_slope=0.02, bandwidth_cost=0.1))  # 1.0 → 1.8 s
    monkeypatch.setattr(sweep, "break_even_frame", lambda: pd.DataFrame())
    monkeypatch.setattr(sweep, "_controls", lambda: [("rtt 40 ms", _control({"s3": [1.0, 2.0]}))])
    found = sweep.findings()
    assert found.sentences[0].startswith("trino on S3: q1 0.02000 s per ms of round trip (95% CI 0.01961–0.02039; "
                                         f"{WITHIN_DRIFT}); ")  # the sweep moved S3 1.8×, its control 2×
    assert found.undecided[-1].startswith("The drift control moved during the sweep: at rtt 40 ms S3 2.")
    assert "; control at each setting (" in found.conditions
