"""The S3 -> HDFS copies' report from their records alone (issue 69): the report of a run just measured and the report
of its saved file read back show the same Findings and tables, `perfkit report --from` renders it with no lab, and the
report module stays apart from the experiment's (it imports nothing of it)."""
import ast
import html
from pathlib import Path

import pandas as pd
import pytest

from perfkit.presenting import run_report
from perfkit.calibration import Calibration
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.presenting import transfer_report
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.presenting.transfer_report import TransferReport
from perfkit.network import PROFILES
from perfkit.results import ResultSet
from perfkit.transfer.manifest import Manifest

MB = 1_000_000
FILES = (("part-00000.bin", 10 * MB), ("part-00001.bin", 20 * MB), ("part-00002.bin", 30 * MB),
         ("part-00003.bin", 40 * MB))  # 100 MB in all
MANIFEST = Manifest("perfkit-lab", "perfkit/datasets/files-4", FILES)
# (method, concurrency) -> seconds of each repeat's copy; None: that copy failed
COPIES = {("stream", 1): (5.0, 6.0, 4.0), ("stream", 4): (2.0, 2.5, 1.5), ("cli-sequential", 1): (20.0, 22.0, 21.0),
          ("distcp", 1): (14.0, 15.0, 16.0), ("distcp", 4): (10.0, 12.0, None)}
FAILED = "`distcp` failed (exit 1): java.io.IOException: Job failed"
CALIBRATION = Calibration(network=PROFILES["ec2-s3"].as_dict(), endpoint="http://127.0.0.1:7270", small_get_ms=21.3,
                          small_get_direct_ms=1.2, one_connection_mb_s=90.0, parallel_mb_s=300.0, connections=8)


def _run(folder, copies: dict = COPIES) -> ResultSet:
    """A run's records and config as TransferComparison saves them (its config() with the two things the lab gives:
    the S3 path's calibration and the manifest): four methods, 3 repeats, the plain CLI copying file by file, one
    distcp copy failed, s3-dist-cp unavailable here."""
    cmp = TransferComparison(load_profile("lab"), methods=["stream", "cli-sequential", "distcp", "s3-dist-cp"],
                             concurrency=[1, 4], repeats=3, checksum=True, files=4, mean_mb=25.0)
    cmp._calibration, cmp.manifest = CALIBRATION, MANIFEST
    results = ResultSet("s3_to_hdfs_transfer", cmp.config(), folder=folder)
    for repeat in range(3):
        for (method, level), walls in copies.items():
            started = f"2026-11-29T10:{repeat:02d}:{len(results.records) % 60:02d}+00:00"
            if walls[repeat] is None:
                results.add(subject=method, storage="s3→hdfs", case="total", phase="measured", iteration=repeat,
                            started_at=started, wall_s=None, ok=False, error=FAILED, params={"concurrency": level})
                continue
            results.add(subject=method, storage="s3→hdfs", case="total", phase="measured", iteration=repeat,
                        started_at=started, wall_s=walls[repeat], bytes=100 * MB, params={"concurrency": level})
            if method == "cli-sequential":  # its per-file times: a tenth of the copy per 10 MB
                for name, size in FILES:
                    results.add(subject=method, storage="s3→hdfs", case="file", phase="measured", iteration=repeat,
                                started_at=started, wall_s=walls[repeat] * size / (100 * MB), bytes=size,
                                params={"concurrency": level, "file": name})
        if repeat == 0:
            results.add_unavailable("s3-dist-cp", "s3→hdfs", "total", "s3-dist-cp is not on PATH",
                                    params={"concurrency": 1})
    results.save()
    return results


def test_the_run_records_what_its_report_needs_besides_the_records(tmp_path):
    config = _run(tmp_path).config
    assert config["dataset"] == {"source": "s3://perfkit-lab/perfkit/datasets/files-4", "files": 4,
                                 "bytes": 100 * MB, "smallest_bytes": 10 * MB, "largest_bytes": 40 * MB}
    assert config["parallel_methods"] == ["stream", "distcp"]  # cli-sequential and s3-dist-cp copy one at a time
    assert config["network"]["headline"] == CALIBRATION.headline() and config["profile"]["name"] == "lab"
    assert {"methods", "repeats", "order", "checksum"} <= set(config["parameters"])


def test_the_report_from_hand_made_records_says_what_the_run_found(tmp_path):
    report = TransferReport(_run(tmp_path))
    found = report.findings()
    # medians: stream at 4 2.0 s (100 MB / 2 s = 50 MB/s), stream at 1 5.0 s (20 MB/s), distcp at 4 11.0 s of its two
    # verified copies (9.1 MB/s), distcp at 1 15.0 s (6.7 MB/s), the plain CLI 21.0 s (4.8 MB/s): 21 / 2 = 10.5×
    assert found.sentences == [
        "Fastest verified copy: stream (4 at once): 2.0 s, 50.0 MB/s, median of 3 copies.",
        "Slowest verified copy: cli-sequential: 21.0 s, 4.8 MB/s, median of 3 copies, 10.50× the fastest's time.",
        "The plain CLI, cli-sequential: 21.0 s, 4.8 MB/s, median of 3 copies, was the slowest: 10.50× the fastest's "
        "time.",
        "Every copy by stream (4 at once) was faster than every copy by stream (1 at once), the runner-up.",  # 2.5 < 4
        "stream: 4 at once 2.50× faster than 1 (20.0 → 50.0 MB/s).",  # 5.0 s / 2.0 s
        "distcp: 4 at once 1.36× faster than 1 (6.7 → 9.1 MB/s).",  # 15.0 s / 11.0 s
    ]
    assert found.undecided == ["distcp (4 at once): failed 1 of 3: `distcp` failed (exit 1): java.io.IOException: "
                               "Job failed", "s3-dist-cp: unavailable: s3-dist-cp is not on PATH"]
    assert found.conditions == (
        "4 files, 100.0 MB in all; 3 copies per method and concurrency (rotate order), no warm-up, verified by file "
        "count, sizes and MD5; the embedded lab on this machine; S3 behind an emulated network (ec2-s3: 20 ms round "
        "trip ± 4 ms, 85 MB/s per connection): measured 21.3 ms per small GET (1.2 ms direct), 90 MB/s on one "
        "connection, 300 MB/s on 8; no drift control recorded (a run made before perfkit timed one)")
    pd.testing.assert_frame_equal(report.recap(), pd.DataFrame({
        "Duration": ["0m02.0s", "0m05.0s", "0m11.0s", "0m15.0s", "0m21.0s", "—"],
        "Method": ["stream (4 at once)", "stream (1 at once)", "distcp (4 at once)", "distcp (1 at once)",
                   "cli-sequential", "s3-dist-cp"],
        "MB/s": ["50.0", "20.0", "9.1", "6.7", "4.8", "—"],  # shown: no NaN for the copy that never ran
        "status": ["ok", "ok", f"failed 1 of 3: {FAILED}", "ok", "ok", "unavailable: s3-dist-cp is not on PATH"]}))
    summary = report.summary().set_index(["method", "concurrency"])
    assert summary.loc[("distcp", 4), ["runs", "seconds", "min_seconds"]].tolist() == [2, 11.0, 10.0]
    assert summary.loc[("stream", 4), "MB/s"] == pytest.approx(50.0)
    pd.testing.assert_frame_equal(report.manifest_table(), pd.DataFrame(
        {"source": "s3://perfkit-lab/perfkit/datasets/files-4/", "files": 4, "MB": 100.0, "smallest MB": 10.0,
         "largest MB": 40.0}, index=[0]))
    per_file = report.per_file_times()  # the plain CLI's median copy, 21 s, shared by size: 2.1, 4.2, 6.3, 8.4 s
    assert list(per_file.columns) == [("cli-sequential", 1)]
    assert per_file[("cli-sequential", 1)].tolist() == [2.1, 4.2, 6.3, 8.4]
    copies = report.copies()
    assert len(copies) == 3 * 5 + 1 and copies["ok"].sum() == 14  # every copy and the unavailable one; 14 verified
    failures = report.failures()  # the unavailable method is not a failure
    assert failures[["subject", "iteration", "error"]].values.tolist() == [["distcp", 2, FAILED]]
    environment = dict(report.environment().values)
    assert environment["profile: name"] == "lab" and environment["parameter: repeats"] == "3"
    assert report.network_headline().data == f"**{CALIBRATION.headline()}**"
    assert run_report(report) is report  # a stored run measures nothing


def test_the_report_of_the_saved_file_is_the_report_of_the_run(tmp_path):
    results = _run(tmp_path)
    live, stored = TransferReport(results), TransferReport.load(results.path)
    assert stored.findings().sentences == live.findings().sentences
    assert stored.findings().conditions == live.findings().conditions
    assert stored.findings().undecided == live.findings().undecided
    for table in ("summary", "recap", "per_file_times", "copies", "manifest_table", "environment", "failures"):
        pd.testing.assert_frame_equal(getattr(stored, table)(), getattr(live, table)(), obj=table)
    assert stored.network_headline().data == live.network_headline().data


def test_perfkit_report_from_a_stored_run_renders_it_with_no_lab_and_records_nothing(tmp_path, report_from):
    """`perfkit report --from RUN.jsonl`: the transfer notebook, its `results` parameter the file, rendered where
    nothing runs (unit tests start no lab), its Findings the records' and no new run recorded. (A run with a failed
    copy renders too, then ends with an error, as its first render did: here every copy is verified.)"""
    results = _run(tmp_path / "stored", {**COPIES, ("distcp", 4): (10.0, 12.0, 11.0)})
    text = html.unescape(report_from(results.path, "s3_to_hdfs_transfer"))
    found = TransferReport(results).findings()
    for sentence in [*found.sentences, *found.undecided, found.conditions]:
        assert sentence in text, sentence
    assert "stream (4 at once)" in text and "s3://perfkit-lab/perfkit/datasets/files-4/" in text


def test_records_of_another_experiment_are_named(tmp_path):
    other = ResultSet("hdfs_vs_s3_queries", {"parameters": {"engines": ["spark"]}}, folder=tmp_path)
    other.add(subject="spark", storage="hdfs", case="q1", phase="measured", iteration=0,
              started_at="2026-11-29T10:00:00+00:00", wall_s=1.0)
    other.save()
    with pytest.raises(PerfkitError, match=r"hdfs_vs_s3_queries/\S+\.jsonl: its records name no methods, repeats, "
                                           r"order, checksum in their parameters: give a run of the S3 -> HDFS copies"):
        TransferReport.load(other.path)


def test_the_report_module_imports_nothing_of_the_experiment():
    """The dependency points from the experiment to its report, so the report can move to a presenting package."""
    tree = ast.parse(Path(transfer_report.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name and name.endswith("s3_to_hdfs_transfer")}
