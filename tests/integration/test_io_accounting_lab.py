"""Each run's I/O on the real lab: the S3 server's log and the engines' own statistics count the same GET, HEAD and
LIST requests, run by run; HDFS's DataNodes report the bytes of a full scan."""
from __future__ import annotations

import pytest

from perfkit.accounting.table import EXACT
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting import report_of

pytestmark = pytest.mark.lab


def measured_io(results):
    return [r for r in results.records if r.phase == "measured" and r.ok]


def bytes_not_counted(profile) -> dict:
    """What a run on S3 says is missing on the lab's `local` network: its server's bytes (no emulator between)."""
    return {"s3_bytes_read": profile.provider.s3_bytes_not_counted()}


def test_server_and_engine_count_the_same_s3_requests_on_every_run(profile, tmp_path, monkeypatch, s3_counts_agree):
    """Runs after a warm-up and after one another (each storage's measured run follows the warm-ups of both); TPC-H's
    22 queries, each once, are counted alike on the matrix that test_suites_lab runs."""
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    cmp = QueryComparison(profile, engines=["spark", "trino"], suite="taxi", rows=20_000, files=2, runs=1, warmup=1)
    runs = measured_io(cmp.run(progress=False))
    s3_counts_agree(runs, {"spark", "trino"})
    spark = [r for r in runs if r.storage == "s3" and r.subject == "spark"]
    assert "classic input stream" in spark[0].io["sources"]["engine"]


def test_hive_counts_the_s3_requests_its_server_saw_on_every_run(profile, tmp_path, monkeypatch):
    """Hive's own count: the S3A statistics of HiveServer2's JVM, where the lab's local MapReduce tasks run."""
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    cmp = QueryComparison(profile, engines=["hive"], suite="taxi", rows=20_000, files=2, runs=1, warmup=0)
    runs = measured_io(cmp.run(progress=False))
    on_s3, no_bytes = [r for r in runs if r.storage == "s3"], bytes_not_counted(profile)
    assert len(on_s3) == len(cmp.suite_queries)
    for r in on_s3:
        assert r.io["attributable"] and r.io["missing"] == {} and r.io["not_counted"] == no_bytes, (r.case, r.io)
        server, engine = r.io["server"], r.io["engine"]
        assert server["s3_get"] > 0 and engine["s3_bytes_read"] > 0, (r.case, r.io)
        assert {n: server.get(n, 0) for n in EXACT} == {n: engine.get(n, 0) for n in EXACT}, f"{r.case}: {r.io}"
        assert r.io["sources"]["engine"].startswith("HiveServer2's S3A statistics")
    for r in (r for r in runs if r.storage == "hdfs"):  # HiveServer2 shows no HDFS client counts: not zero, absent
        assert "engine" not in r.io and r.io["server"]["hdfs_read_ops"] > 0, (r.case, r.io)


def test_a_full_scan_reads_the_table_s_bytes_and_the_datanodes_sent_at_least_that(profile, tmp_path, monkeypatch):
    """The engines' own count of a full scan is the table's bytes (within 5%); the DataNodes count what they sent,
    which is at least that: a reader that seeks gets the rest of a block streamed (and drops it)."""
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    suite = tmp_path / "scan"
    suite.mkdir()
    (suite / "all.sql").write_text("SELECT * FROM {table}")  # every column of every row
    cmp = QueryComparison(profile, engines=["spark", "trino"], suite=str(suite), rows=60_000, files=2, runs=1,
                          warmup=0, storages=["hdfs", "s3"])
    runs = measured_io(cmp.run(progress=False))
    table_bytes = cmp.placed.total_bytes
    for r in runs:
        engine = r.io["engine"]
        read = engine.get("input_bytes") or engine.get(f"{r.storage}_bytes_read")
        assert read == pytest.approx(table_bytes, rel=0.05), (r.subject, r.storage, read, table_bytes)
        if r.storage == "hdfs":
            assert r.io["server"]["hdfs_bytes_read"] >= 0.99 * table_bytes, (r.subject, r.io["server"])


def test_the_hdfs_probe_that_watches_a_run_changes_none_of_the_counts_of_the_run(profile):
    """A run is probed every second while it runs: the probe (the NameNode, and the file's DataNode) must leave every
    HDFS counter perfkit reads unchanged, block lookups included (a checksum probe counted two per probe)."""
    import time

    from perfkit.storages.hdfs_jmx import HdfsJmx
    from perfkit.storages.hdfs import hdfs_probe
    from perfkit.storages import get_storage

    hdfs = get_storage("hdfs", profile)
    folder = hdfs.folder("perfkit-tests", "probe-counts")
    hdfs.write_text(folder, "part-0.txt", "a file with a block\n")
    try:
        probe = hdfs_probe(profile, f"{folder.path}/part-0.txt")
        assert probe() is None  # the first probe looks up the file's DataNodes: before any run
        counters = HdfsJmx(profile.webhdfs_url, profile.hadoop_metrics_period_s)
        before = counters.read()
        assert [probe() for _ in range(5)] == [None] * 5
        time.sleep(0.05)
        after = counters.read()
        assert {name: after[name] - before[name] for name in after} == {name: 0 for name in after}
        assert set(after) >= {"hdfs_block_locations", "hdfs_listings", "hdfs_bytes_read", "hdfs_read_ops"}
    finally:
        hdfs.delete_tree(folder)


def test_where_hdfs_refreshes_its_jmx_too_seldom_it_is_counted_over_the_window(profile, tmp_path, monkeypatch):
    """A cluster's daemons at a long metrics period: HDFS is read before the first run and after the last (not around
    each run, which would hold every run a period), and its count is set beside the engine's sum over the runs."""
    import dataclasses

    from perfkit.accounting.hdfs_window import SERVER

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    slow = dataclasses.replace(profile, hadoop_metrics_period_s=1.0)  # the lab's daemons refresh every 10 ms anyway
    suite = tmp_path / "scan"
    suite.mkdir()
    (suite / "all.sql").write_text("SELECT * FROM {table}")
    cmp = QueryComparison(slow, engines=["trino"], suite=str(suite), rows=60_000, files=2, runs=2, warmup=0,
                          storages=["hdfs", "s3"])
    results = cmp.run(progress=False)
    on_hdfs = [r for r in measured_io(results) if r.storage == "hdfs"]
    assert len(on_hdfs) == 2
    for r in on_hdfs:
        assert "server" not in r.io and r.io["missing"]["server"].startswith(
            "not counted per run but over the experiment's window"), r.io
    engine_sum = sum(r.io["engine"]["input_bytes"] for r in on_hdfs)
    window = results.config["hdfs_window"]
    assert window["attributable"] and not window["missing"], window
    compared = {row["counter"]: row for row in window["compared"]}
    assert compared["hdfs_bytes_read"]["engines"] == engine_sum
    # the DataNode sent at least what Trino read: nothing else read HDFS in the window
    assert compared["hdfs_bytes_read"][SERVER] >= 0.99 * engine_sum, window
    assert compared["hdfs_read_ops"][SERVER] > 0 and compared["hdfs_block_locations"][SERVER] > 0, window
    assert report_of(cmp).hdfs_window()["difference"].iloc[0] == compared["hdfs_bytes_read"]["difference"]
