"""A comparison's run on the real lab: warm-ups, then measured runs interleaved across storages; a query failing on
one storage recorded while the run goes on; a missing copy restored; a cold run's page cache dropped. (Every engine's
results on both storages against pandas: test_engine_conformance.)"""
import pandas as pd
import pytest

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.errors import PerfkitError
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting import report_of


@pytest.fixture(scope="module")
def comparison(profile):
    # the run's order and records are the experiment's, not an engine's: two engines, Trino's runs the quickest
    cmp = QueryComparison(profile, engines=["spark", "trino"], rows=30_000, files=3, runs=2, warmup=1, seed=11)
    cmp.prepare(progress=False)
    return cmp


def test_run_records_warmups_and_interleaved_measured_runs(comparison, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    results = comparison.run(progress=False)
    frame = results.to_frame()
    assert len(frame) == 2 * 4 * (1 + 2) * 2 and frame["ok"].all()
    assert results.path.parent.parent == tmp_path and results.path.exists()
    first = frame[(frame["subject"] == "spark") & (frame["case"] == "q1")]
    assert list(first["phase"]) == ["warmup"] * 2 + ["measured"] * 4
    rounds = [list(first["storage"])[i:i + 2] for i in (0, 2, 4)]  # each round both storages, the next reversed
    assert all(sorted(r) == ["hdfs", "s3"] for r in rounds) and rounds[0] != rounds[1] != rounds[2]
    config = results.config
    assert isinstance(config["order"]["seed"], int)
    # each engine read every table once on each storage before its first timed run, untimed (issue 70)
    assert set(config["engine_warm_up"]) == set(comparison.engines)
    assert all(isinstance(seconds, float) for done in config["engine_warm_up"].values() for seconds in done.values())
    # the drift control: a small read per storage at the start and the end of the run
    control = config["control"]
    assert [r["at"] for r in control["rounds"]][::len(control["rounds"]) - 1] == ["start", "end"]
    assert all(sorted(r["seconds"]) == ["hdfs", "s3"] and all(len(v) == 5 for v in r["seconds"].values())
               for r in control["rounds"]) and "failed" not in control
    recap = report_of(comparison).recap()
    assert list(recap.columns[:5]) == ["engine", "version", "HDFS median (s)", "S3 median (s)",
                                       "S3 ÷ HDFS time (median)"]
    assert (recap["check"].str.contains("RESULTS DIFFER") == False).all()  # noqa: E712
    row = report_of(comparison).comparison().iloc[0]
    measured = frame[(frame.subject == row.subject) & (frame.case == row.case) & (frame.phase == "measured")]
    assert row.speedup_median == pytest.approx(
        measured[measured.storage == "s3"].wall_s.median() / measured[measured.storage == "hdfs"].wall_s.median())


def test_a_query_failing_on_one_storage_is_recorded_and_the_run_goes_on(profile, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    cmp = QueryComparison(profile, engines=["spark", "hive"], rows=2_000, files=2, runs=1, warmup=0, seed=12)
    cmp.prepare(progress=False)
    placed = cmp.placed  # the taxi files behind the one table
    s3 = s3_storage.s3_client(profile)
    bad_key = profile.s3_key("datasets", placed.name, "orc", "part-99999.orc")
    s3.put_object(Bucket=profile.s3_bucket, Key=bad_key, Body=b"this is not an ORC file")
    try:
        results = cmp.run(progress=False)
    finally:
        s3.delete_object(Bucket=profile.s3_bucket, Key=bad_key)
    frame = results.to_frame()
    assert len(frame) == 2 * 4 * 2
    assert frame.loc[frame.storage == "hdfs", "ok"].all()
    failed = frame[frame.storage == "s3"]
    assert not failed["ok"].any() and failed["error"].str.len().gt(0).all()
    saved = pd.read_json(results.path, lines=True)
    assert (saved["ok"] == frame["ok"]).all()
    with pytest.raises(PerfkitError, match="8 query runs failed"):
        report_of(cmp).raise_for_failures()


def test_placement_restores_a_missing_copy_and_verifies(comparison, profile):
    client = hdfs_storage.webhdfs_client(profile)
    victim = profile.hdfs_path("datasets", comparison.placed.name, "orc", "part-00001.orc")
    client.delete(victim)
    before = dict(comparison.placed.files)
    comparison.prepare(progress=False)
    placed = comparison.placed
    assert placed.files == before
    assert hdfs_storage.hdfs_listing(client, victim.rsplit("/", 1)[0]) == placed.files


def test_a_cold_run_drops_the_page_cache_before_each_measured_run(profile, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    cmp = QueryComparison(profile, engines=["spark"], rows=2_000, files=2, runs=1, warmup=1, seed=12,
                          queries=["q1"], cold_cache=True)
    frame = cmp.run(progress=False).to_frame()
    notes = frame.set_index("phase")["params"]
    assert all(p == {} for p in notes["warmup"])
    assert all(p["cache"] in ("page cache dropped",) or p["cache"].startswith("page cache kept")
               for p in notes["measured"])
