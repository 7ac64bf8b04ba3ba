import math

import pandas as pd

from perfkit.reads.aggregate import aggregate, completion_times


def test_aggregate_against_hand_computed_job_timings():
    jobs = pd.DataFrame([
        {"start": 100.0, "end": 104.0, "bytes": 200e6, "ok": True},
        {"start": 101.0, "end": 110.0, "bytes": 300e6, "ok": True},
        {"start": 100.5, "end": 106.0, "bytes": 100e6, "ok": True},
        {"start": 100.2, "end": 100.4, "bytes": 0, "ok": False},  # failed: not counted
    ])
    a = aggregate(jobs)
    assert a["MB"] == 600 and a["seconds"] == 10.0  # last end 110 - first start 100
    assert a["MB/s"] == 60.0
    assert (a["first done s"], a["median done s"], a["last done s"]) == (4.0, 6.0, 10.0)
    assert (a["jobs"], a["ok"]) == (4, 3)
    assert completion_times(jobs).tolist() == [4.0, 6.0, 10.0]


def test_no_successful_job_gives_no_rate():
    a = aggregate(pd.DataFrame([{"start": 1.0, "end": 2.0, "bytes": 0, "ok": False}]))
    assert a["ok"] == 0 and math.isnan(a["MB/s"])


def test_aggregate_matches_an_independent_calculation_on_random_jobs():
    """bench/read.py rates perfkit's jobs and dd's jobs with aggregate(): check it by plain loops."""
    import random

    rng = random.Random(7)
    for _ in range(50):
        rows = []
        for _ in range(rng.randint(1, 8)):
            start = 1_700_000_000 + rng.uniform(0, 2)
            rows.append({"start": start, "end": start + rng.uniform(0.01, 3), "bytes": rng.randint(0, 10**9),
                         "ok": rng.random() > 0.2})
        a = aggregate(pd.DataFrame(rows))
        good = [r for r in rows if r["ok"]]
        if not good:
            assert math.isnan(a["MB/s"])
            continue
        first = min(r["start"] for r in good)
        window = max(r["end"] for r in good) - first
        expected = sum(r["bytes"] for r in good) / 1e6 / window
        assert math.isclose(a["MB/s"], expected, rel_tol=1e-9) and math.isclose(a["seconds"], window)
        assert math.isclose(a["first done s"], min(r["end"] for r in good) - first)
