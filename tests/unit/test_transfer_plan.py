import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison, recap_table, summarise_transfers
from perfkit.results import ResultSet, now
from perfkit.transfer import get_method
from perfkit.transfer.manifest import Manifest, verify_copy

PROFILE = load_profile("lab")


def test_unknown_method_is_named():
    with pytest.raises(PerfkitError, match="unknown transfer method 'rsync'"):
        TransferComparison(PROFILE, methods=["rsync"])


def test_plan_tries_every_concurrency_only_for_parallel_methods_and_rotates_order():
    cmp = TransferComparison(PROFILE, methods=["cli-sequential", "stream"], concurrency=[1, 8], repeats=2)
    assert cmp.plan() == [(0, "cli-sequential", 1), (0, "stream", 1), (0, "stream", 8),
                          (1, "stream", 1), (1, "stream", 8), (1, "cli-sequential", 1)]


def test_destinations_live_under_the_runs_own_prefix():
    cmp = TransferComparison(PROFILE, methods=["stream"])
    assert cmp.destination("stream", 4, 0) == f"/perfkit/transfers/{cmp.run_id}/stream-c4-r0"


def test_verify_copy_names_missing_and_truncated_files():
    m = Manifest("b", "p", (("a", 10), ("b", 20)))
    verify_copy(m, {"a": 10, "b": 20})
    with pytest.raises(PerfkitError, match=r"verification failed: 1 missing \['b'\], 1 of wrong size \['a'\]"):
        verify_copy(m, {"a": 9})


def test_concurrency_below_one_is_refused():
    with pytest.raises(PerfkitError, match="stream: concurrency must be at least 1"):
        get_method("stream", PROFILE, 0)


def test_summary_median_duration_and_rate_and_recap_order(tmp_path):
    rs = ResultSet("t", folder=tmp_path)
    for wall in (4.0, 2.0, 3.0):
        rs.add(subject="stream", storage="s3→hdfs", case="total", phase="measured", iteration=0,
               started_at=now(), wall_s=wall, bytes=300_000_000, params={"concurrency": 4})
    rs.add(subject="cli-sequential", storage="s3→hdfs", case="total", phase="measured", iteration=0,
           started_at=now(), wall_s=60.0, bytes=300_000_000, params={"concurrency": 1})
    rs.add(subject="s3-dist-cp", storage="s3→hdfs", case="total", phase="measured", iteration=0,
           started_at=now(), wall_s=None, ok=False, error="unavailable: not on EMR", params={"concurrency": 1})
    summary = summarise_transfers(rs.to_frame()).set_index("method")
    assert summary.loc["stream", "seconds"] == 3.0 and summary.loc["stream", "MB/s"] == pytest.approx(100.0)
    recap = recap_table(summarise_transfers(rs.to_frame()))
    assert list(recap.columns) == ["Duration", "Method", "MB/s", "status"]
    assert list(recap["Method"]) == ["stream (4 at once)", "cli-sequential", "s3-dist-cp"]
    assert list(recap["Duration"]) == ["0m03.0s", "1m00.0s", "–"]
    assert recap["status"].iloc[2] == "unavailable: not on EMR"
