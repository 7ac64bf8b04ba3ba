"""A query comparison's report from its records alone (issue 45): the report of a run just measured, and the report of
its saved file read back, show the same Findings and tables; a file that is not a query comparison's is named."""
import re
from dataclasses import asdict

import pandas as pd
import pytest

from perfkit.calibration import Calibration
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.copy_cost import CopyCost
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.query_report import QueryReport
from perfkit.network import PROFILES
from perfkit.results import ResultSet

HDFS = [1.0, 1.1, 0.9, 1.0]
S3 = [2.0, 2.2, 1.9, 2.1]  # S3 about twice as slow: a verdict beyond noise at 4 runs a side


def _run(tmp_path) -> ResultSet:
    """The records and config of a run as QueryComparison saves them: two storages, one engine, the copy measured."""
    cmp = QueryComparison(load_profile("lab"), engines=["spark"], queries=["q1"], runs=4, warmup=0)
    calibration = Calibration(network=PROFILES["ec2-s3"].as_dict(), endpoint="http://127.0.0.1:7270",
                              small_get_ms=21.3, small_get_direct_ms=1.2, one_connection_mb_s=90.0,
                              parallel_mb_s=300.0, connections=8)
    dataset = {"name": "taxi_orc", "verified": "yes", "one_copy_bytes": 87_000_000, "hdfs_replication": 1,
               "summary": [{"storage": where, "table": "table", "location": f"{where}://x/t", "format": "orc",
                            "files": 8, "MB": 87.0, "verified equal": "yes", "re-placed": "none"}
                           for where in ("hdfs", "s3")]}
    config = {"versions": {"python": "3.11", "spark": "Spark 4.0.1"}, "host": {"hostname": "h"},
              "profile": {"name": "lab"}, "parameters": cmp.parameters(), "network": calibration.as_dict(),
              "dataset": dataset, "query_titles": {"q1": "Trips per cab type"}, "write_queries": [],
              "s3_counted_run_by_run": True}
    results = ResultSet("hdfs_vs_s3_queries", config, folder=tmp_path)
    for i, (hdfs, s3) in enumerate(zip(HDFS, S3)):
        for where, wall in (("hdfs", hdfs), ("s3", s3)):
            results.add(subject="spark", storage=where, case="q1", phase="measured", iteration=i,
                        started_at=f"2026-11-29T10:00:0{i}+00:00", wall_s=wall, rows=2, result_hash="h")
    results.config["copy"] = asdict(CopyCost(seconds={"stream": 3.0, "distcp": 9.0}, bytes=87_000_000))
    results.save()
    return results


def test_a_saved_run_reads_back_record_for_record_with_one_shared_config(tmp_path):
    results = _run(tmp_path)
    loaded = ResultSet.load(results.path)
    assert (loaded.experiment, loaded.run_id, loaded.path) == (results.experiment, results.run_id, results.path)
    assert [asdict(r) for r in loaded.records] == [asdict(r) for r in results.records]
    assert all(r.config is loaded.config for r in loaded.records)


def test_the_report_of_the_saved_file_is_the_report_of_the_run(tmp_path):
    results = _run(tmp_path)
    live, stored = QueryReport(results), QueryReport.load(results.path)
    found = stored.findings()
    assert found.sentences == live.findings().sentences and found.conditions == live.findings().conditions
    # the numbers, from the records: S3's median 2.05 s over HDFS's 1.0 s; the copy 3.0 s by stream, the fastest
    ratio = pd.Series(S3).median() / pd.Series(HDFS).median()
    assert found.sentences[0] == f"Spark 4.0.1: S3 slower than HDFS on 1 of 1 query beyond noise ({ratio:.2f}×)."
    assert found.sentences[1] == ("Copying to HDFS pays off after 3 runs of a query (1 of 1 engine-query pair; "
                                  "copying 87 MB S3 → HDFS took 3.0 s by stream, the fastest (also distcp 9.0 s), "
                                  "verified).")
    assert "S3 behind an emulated network (ec2-s3" in found.conditions and "21.3 ms per small GET" in found.conditions
    recap = stored.recap()
    assert recap.loc[0, "S3 ÷ HDFS time (median)"] == round(ratio, 2)
    assert recap.loc[0, "query"] == "q1: Trips per cab type" and recap.loc[0, "version"] == "Spark 4.0.1"
    for table in ("recap", "break_even", "storage_cost", "dataset_table", "environment", "engines_table", "failures"):
        pd.testing.assert_frame_equal(getattr(stored, table)(), getattr(live, table)(), obj=table)
    # break-even: the copy over S3's penalty per run, 3.0 s / (2.05 - 1.0) s: pays off after the third run
    assert stored.break_even_frame().loc[0, "runs"] == 3
    assert stored.break_even().loc[0, "copying pays off after (runs)"] == "3"
    assert stored.storage_cost().attrs["replication"] == 1 and stored.s3_window().startswith("S3's requests were")
    assert stored.network_headline().data == f"**{Calibration.from_dict(results.config['network']).headline()}**"
    stored.raise_for_failures()  # nothing failed: no error


def test_a_run_without_the_copy_says_so_and_a_file_of_another_experiment_is_named(tmp_path):
    results = _run(tmp_path)
    del results.config["copy"]
    report = QueryReport(results)
    assert not any(s.startswith("Copying to HDFS") for s in report.findings().sentences)
    assert list(report.break_even()["finding"]) == ["The copy to HDFS was not measured in this run: no break-even."]
    transfer = ResultSet("s3_to_hdfs_transfer", {"parameters": {"methods": ["stream"]}}, folder=tmp_path)
    transfer.add(subject="stream", storage="hdfs", case="total", phase="measured", iteration=0,
                 started_at="2026-11-29T10:00:00+00:00", wall_s=1.0)
    transfer.save()
    with pytest.raises(PerfkitError, match=r"s3_to_hdfs_transfer/\S+\.jsonl: its records name no engines, storages, "
                                           r"baseline in their parameters: give a run of a query comparison"):
        QueryReport.load(transfer.path)


def test_perfkit_report_from_a_stored_run_renders_it_with_no_lab_and_records_nothing(tmp_path, report_from):
    """`perfkit report --from RUN.jsonl`: the run's experiment's notebook, its `results` parameter the file, rendered
    where nothing runs (unit tests start no lab), its Findings the records' and no new run recorded."""
    results = _run(tmp_path / "stored")
    text = report_from(results.path, "hdfs_vs_s3_queries")
    for sentence in QueryReport(results).findings().sentences:
        assert sentence.split(" (")[0] in text, sentence
    assert "q1: Trips per cab type" in text and "S3 behind an emulated network (ec2-s3" in text


def test_perfkit_report_from_a_run_its_notebook_cannot_render_again_is_refused_by_name(tmp_path):
    from click.testing import CliRunner

    from perfkit.cli import main

    other = ResultSet("toy_experiment", {"parameters": {}}, folder=tmp_path)  # an experiment with no notebook here
    other.add(subject="stream", storage="hdfs", case="total", phase="measured", iteration=0,
              started_at="2026-11-29T10:00:00+00:00", wall_s=1.0)
    other.save()
    said = CliRunner().invoke(main, ["report", "--from", str(other.path)])
    assert said.exit_code == 1
    assert f"perfkit: {other.path} is a run of toy_experiment, and " in said.output
    text = " ".join(said.output.split())
    assert "cannot render a stored run (it has no `results` parameter). Fix: give a run of " in text
    able = re.search(r"Fix: give a run of (.+), or render its notebook again to measure anew", text).group(1)
    assert {"cache_tier", "engine_storage_matrix", "hdfs_vs_s3_queries"} <= set(able.split(", "))
    said = CliRunner().invoke(main, ["report"])
    assert said.exit_code == 2 and "give NOTEBOOK, or --from RUN.jsonl" in said.output


def test_tpch_s_independent_check_is_read_back_from_the_records(tmp_path):
    from perfkit.experiments.query_reference import reference_table
    from perfkit.datasets.tpch_reference import ReferenceAnswer

    results = _run(tmp_path)
    assert QueryReport.load(results.path).reference_table() is None  # not checked: nothing to show
    checked = reference_table(results.to_frame(), {"q1": ReferenceAnswer("q1", rows=2, result_hash="h")}, "DuckDB 1.4")
    results.config["reference"] = {"by": "DuckDB 1.4", "verdicts": {"q1": "agrees"},
                                   "table": checked.to_dict("records")}
    results.save()
    table = QueryReport.load(results.path).reference_table()
    pd.testing.assert_frame_equal(table, checked)
    assert table.attrs["by"] == "DuckDB 1.4" and list(table["verdict"]) == ["agrees"]
