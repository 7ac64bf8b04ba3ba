import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.presenting.transfer_report import TransferReport, recap_table, summarise_transfers
from perfkit.results import ResultSet, now
from perfkit.transfer import get_method
from perfkit.transfer.manifest import Manifest, verify_copy

PROFILE = load_profile("lab")


def _records(tmp_path, cmp: TransferComparison, parallel: list[str], **config) -> ResultSet:
    """An empty run of `cmp` as it records one: its parameters, the profile's name, which methods copy in parallel."""
    return ResultSet("s3_to_hdfs_transfer", {"profile": {"name": "lab"}, "parameters": cmp.parameters(),
                                             "parallel_methods": parallel, **config}, folder=tmp_path)


def test_unknown_method_is_named():
    with pytest.raises(PerfkitError, match="unknown transfer method 'rsync'"):
        TransferComparison(PROFILE, methods=["rsync"])


def test_plan_tries_every_concurrency_only_for_parallel_methods_and_rotates_order():
    cmp = TransferComparison(PROFILE, methods=["cli-sequential", "stream"], concurrency=[1, 8], repeats=2)
    firsts = set()
    for seed in range(12):  # the run's seed picks the first method; the next repeat starts one method later
        cmp.order_seed = seed
        plan = cmp.plan()
        first, other = ("cli-sequential", "stream") if plan[0][1] == "cli-sequential" else ("stream", "cli-sequential")
        levels = {"cli-sequential": [1], "stream": [1, 8]}
        assert plan == [(r, name, c) for r, order in ((0, (first, other)), (1, (other, first)))
                        for name in order for c in levels[name]]
        firsts.add(first)
    assert firsts == {"cli-sequential", "stream"}
    cmp.order = "given"
    assert [name for _, name, _ in cmp.plan()] == ["cli-sequential", "stream", "stream"] * 2


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
    recap = recap_table(summarise_transfers(rs.to_frame()), parallel={"stream"})
    assert list(recap.columns) == ["Duration", "Method", "MB/s", "status"]
    assert list(recap["Method"]) == ["stream (4 at once)", "cli-sequential", "s3-dist-cp"]
    assert list(recap["Duration"]) == ["0m03.0s", "1m00.0s", "—"]
    assert recap["status"].iloc[2] == "unavailable: not on EMR"


def test_findings_name_the_fastest_the_slowest_the_plain_cli_and_what_concurrency_changed(tmp_path):
    cmp = TransferComparison(PROFILE, methods=["stream", "cli-sequential", "hdfs-cp", "s3-dist-cp"],
                             concurrency=[1, 4], repeats=3)
    results = _records(tmp_path, cmp, ["stream", "hdfs-cp"], dataset={"files": 12, "bytes": 300_000_000})
    copies = {("stream", 4): (3.0, 4.0, 2.0), ("stream", 1): (8.0, 10.0, 9.0),
              ("cli-sequential", 1): (60.0, 62.0, 58.0), ("hdfs-cp", 4): (90.0, 88.0, 92.0)}
    for (method, level), walls in copies.items():
        for repeat, wall in enumerate(walls):
            results.add(subject=method, storage="s3→hdfs", case="total", phase="measured", iteration=repeat,
                        started_at=now(), wall_s=wall, bytes=300_000_000, params={"concurrency": level})
    results.add_unavailable("s3-dist-cp", "s3→hdfs", "total", "not on EMR", params={"concurrency": 1})
    found = TransferReport(results).findings()
    assert found.sentences == [
        "Fastest verified copy: stream (4 at once): 3.0 s, 100.0 MB/s, median of 3 copies.",  # 300 MB / 3 s
        "Slowest verified copy: hdfs-cp (4 at once): 90.0 s, 3.3 MB/s, median of 3 copies, 30.00× the fastest's "
        "time.",
        "The plain CLI, cli-sequential: 60.0 s, 5.0 MB/s, median of 3 copies, 20.00× the fastest's time.",
        "Every copy by stream (4 at once) was faster than every copy by stream (1 at once), the runner-up.",  # 4 < 8
        "stream: 4 at once 3.00× faster than 1 (33.3 → 100.0 MB/s).",  # median 9 s against 3 s
    ]
    assert found.undecided == ["s3-dist-cp: unavailable: not on EMR"]
    assert found.conditions == ("12 files, 300.0 MB in all; 3 copies per method and concurrency (rotate order), "
                                "no warm-up, verified by file count and sizes; the embedded lab on this machine; "
                                "no drift control recorded (a run made before perfkit timed one)")


@pytest.mark.parametrize("plain_s, said", [
    (1.0, "The plain CLI, cli-sequential: 1.0 s, 10.0 MB/s, was the fastest."),
    (9.0, "The plain CLI, cli-sequential: 9.0 s, 1.1 MB/s, was the slowest: 4.50× the fastest's time.")])
def test_the_plain_cli_is_placed_whether_it_is_fastest_or_slowest(tmp_path, plain_s, said):
    """Two runs of one report rank the methods differently: their findings still begin alike."""
    cmp = TransferComparison(PROFILE, methods=["stream", "cli-sequential"], concurrency=[4])
    results = _records(tmp_path, cmp, ["stream"])
    for method, wall, level in (("stream", 2.0, 4), ("cli-sequential", plain_s, 1)):
        results.add(subject=method, storage="s3→hdfs", case="total", phase="measured", iteration=0,
                    started_at=now(), wall_s=wall, bytes=10_000_000, params={"concurrency": level})
    found = TransferReport(results).findings()
    assert [s.split()[:2] for s in found.sentences[:3]] == [["Fastest", "verified"], ["Slowest", "verified"],
                                                              ["The", "plain"]]
    assert found.sentences[2] == said


def test_one_copy_each_leaves_the_ranking_undecided(tmp_path):
    cmp = TransferComparison(PROFILE, methods=["stream", "distcp"], concurrency=[4])
    results = _records(tmp_path, cmp, ["stream", "distcp"])
    for method, wall in (("stream", 2.0), ("distcp", 2.5)):
        results.add(subject=method, storage="s3→hdfs", case="total", phase="measured", iteration=0,
                    started_at=now(), wall_s=wall, bytes=10_000_000, params={"concurrency": 4})
    found = TransferReport(results).findings()
    assert found.first == "Fastest verified copy: stream (4 at once): 2.0 s, 5.0 MB/s."
    assert found.undecided == ["Whether stream (4 at once) beats distcp (4 at once) beyond noise: 1 copy each is no "
                               "measure of noise (repeats ≥ 3 would tell)"]
