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
