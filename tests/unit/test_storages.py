"""The comparison over N storages against a baseline, checked against hand-computed numbers."""
import numpy as np
import pandas as pd
import pytest

from perfkit import stats
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.query_report import recap_table, recap_wide

TIMES = {"hdfs": (1.0, 2.0, 3.0), "s3": (2.0, 4.0, 6.0), "alluxio": (0.5, 1.0, 1.5)}


def _frame(times=TIMES, hashes=None):
    rows = [{"subject": "spark", "case": "q1", "storage": where, "phase": "measured", "ok": True, "wall_s": w,
             "result_hash": (hashes or {}).get(where, "h")} for where, ws in times.items() for w in ws]
    return pd.DataFrame(rows)


def test_every_storage_is_compared_with_the_baseline():
    c = stats.compare_storages(_frame(), ["hdfs", "s3", "alluxio"], "hdfs").set_index("storage")
    assert list(c.index) == ["s3", "alluxio"]
    assert c.loc["s3", "speedup_median"] == pytest.approx(4.0 / 2.0)  # medians 4 s and 2 s
    assert c.loc["alluxio", "speedup_median"] == pytest.approx(1.0 / 2.0)
    assert c.loc["alluxio", "speedup_min"] == pytest.approx(0.5 / 1.0)
    assert c.loc["s3", "hdfs_median"] == c.loc["alluxio", "hdfs_median"] == 2.0


def test_another_baseline_turns_the_ratios_around():
    c = stats.compare_storages(_frame(), ["hdfs", "s3", "alluxio"], "s3").set_index("storage")
    assert c.loc["hdfs", "speedup_median"] == pytest.approx(2.0 / 4.0)
    assert c.loc["alluxio", "speedup_median"] == pytest.approx(1.0 / 4.0)


def test_the_wide_recap_has_a_median_speed_up_and_verdict_per_storage():
    comparison = stats.compare_storages(_frame(), ["hdfs", "s3", "alluxio"], "hdfs")
    wide = recap_wide(comparison, {"q1": "count"}, "hdfs", ["s3", "alluxio"]).iloc[0]
    assert wide["HDFS median (s)"] == 2.0 and wide["S3 median (s)"] == 4.0 and wide["ALLUXIO median (s)"] == 1.0
    assert wide["S3 ÷ HDFS time (medians)"] == 2.0 and wide["ALLUXIO ÷ HDFS time (medians)"] == 0.5
    assert wide["query"] == "q1: count" and wide["check"] == "noisy (CV > 10%)"  # CV of 1, 2, 3 s is 0.5


def test_a_storage_with_other_results_is_not_compared_and_the_others_still_are():
    comparison = stats.compare_storages(_frame(hashes={"alluxio": "x"}), ["hdfs", "s3", "alluxio"], "hdfs")
    wide = recap_wide(comparison, {}, "hdfs", ["s3", "alluxio"]).iloc[0]
    assert wide["ALLUXIO verdict"] == stats.NOT_COMPARABLE and np.isnan(wide["ALLUXIO ÷ HDFS time (medians)"])
    assert wide["S3 ÷ HDFS time (medians)"] == 2.0 and "RESULTS DIFFER" in wide["check"]


def test_two_storages_keep_the_published_shape():
    comparison = stats.compare_storages(_frame({k: TIMES[k] for k in ("hdfs", "s3")}), ["hdfs", "s3"], "hdfs")
    recap = recap_table(comparison, {"q1": "count"})
    assert list(recap.columns[:4]) == ["engine", "HDFS median (s)", "S3 median (s)", "S3 ÷ HDFS time (median)"]
    assert recap["S3 ÷ HDFS time (median)"][0] == 2.0


@pytest.mark.parametrize("storages, baseline, message", [
    (["hdfs"], "hdfs", "give two or more distinct storages of hdfs, s3"),
    (["hdfs", "hdfs"], "hdfs", "hdfs given more than once: give each once"),
    (["hdfs", "gcs"], "hdfs", "give two or more distinct storages of hdfs, s3"),
    (["hdfs", "s3"], "s3a", "baseline 's3a' is not one of the storages hdfs, s3"),
])
def test_bad_storages_and_baselines_are_refused(storages, baseline, message):
    with pytest.raises(PerfkitError, match=message):
        QueryComparison(load_profile("lab"), engines=["spark"], storages=storages, baseline=baseline)
