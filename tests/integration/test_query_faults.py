"""Faults on the real lab: unequal data is found before timing; no sample spans an S3 outage."""
import threading
import time
from datetime import datetime, timedelta

import pytest
import requests

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.storages.digest import digest_file
from perfkit.datasets.placement import place_taxi, staging_dir
from perfkit.engines import get_engine
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.storages import storage_probes
from perfkit.lab.s3 import S3Server
from perfkit.protocol import Step
from perfkit.results import ResultSet


@pytest.fixture(scope="module")
def comparison(profile):
    cmp = QueryComparison(profile, engines=["spark"], rows=20_000, files=2, runs=1, warmup=0, seed=23,
                          queries=["q1"], query_timeout_s=60)
    cmp.prepare(progress=False)
    return cmp


def _flipped(data: bytes) -> bytes:
    """Same size, other content: one byte in the middle of the file changed."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:]


@pytest.mark.parametrize("where", ["s3", "hdfs"])
def test_a_planted_same_size_file_is_found_and_replaced_before_any_timing(comparison, profile, where, capsys):
    placed, dataset = comparison.placed, comparison.dataset
    name = sorted(placed.files)[0]
    local = staging_dir() / dataset.name / "orc" / name
    planted = _flipped(local.read_bytes())
    rel = f"datasets/{dataset.name}/orc"
    s3, hdfs = s3_storage.s3_client(profile), hdfs_storage.webhdfs_client(profile)
    if where == "s3":
        s3.put_object(Bucket=profile.s3_bucket, Key=f"{profile.s3_key(rel)}/{name}", Body=planted)
    else:
        hdfs.write(f"{profile.hdfs_path(rel)}/{name}", data=planted, overwrite=True)

    again = place_taxi(dataset, profile, progress=False)

    assert again.replaced == [f"{where}/{name}"]
    assert f"differ in content from the generated ones ({where}/{name})" in capsys.readouterr().err
    if where == "s3":
        body = s3.get_object(Bucket=profile.s3_bucket, Key=f"{profile.s3_key(rel)}/{name}")["Body"].read()
    else:
        with hdfs.read(f"{profile.hdfs_path(rel)}/{name}") as reader:
            body = reader.read()
    assert body == local.read_bytes()
    assert place_taxi(dataset, profile, progress=False).replaced == []  # equal now: nothing to re-place


@pytest.mark.parametrize("engine_name", ["trino", "spark"])
def test_a_corrupt_hdfs_block_fails_the_run_by_name_and_the_next_placement_repairs_it(comparison, profile, lab,
                                                                                      engine_name, capsys):
    """64 bytes flipped inside a DataNode's block file (same size), in the file's tail: HDFS's file checksum, computed
    from the stored
    CRCs, does not change; the run that reads it fails naming the file, and placement then re-places it."""
    from perfkit.storages import get_storage

    placed, dataset = comparison.placed, comparison.dataset
    hdfs = get_storage("hdfs", profile)
    folder = hdfs.folder(f"datasets/{dataset.name}/orc")
    name = sorted(placed.files)[0]
    path = f"{folder.path}/{name}"
    block_id = requests.get(f"{profile.webhdfs_url}/webhdfs/v1{path}", params={
        "op": "GET_BLOCK_LOCATIONS", "offset": 0, "length": 1, "user.name": profile.hdfs_user},
        timeout=30).json()["LocatedBlocks"]["locatedBlocks"][0]["block"]["blockId"]
    block_file = next(p for p in profile.provider.hdfs_blocks().rglob(f"blk_{block_id}") if p.is_file())
    data = bytearray(block_file.read_bytes())
    tail = len(data) - 200  # in the ORC file's tail, which every engine reads (a column it skips would not fail)
    data[tail:tail + 64] = bytes(b ^ 0xFF for b in data[tail:tail + 64])
    block_file.write_bytes(bytes(data))
    assert hdfs.checksum_matches(folder, staging_dir() / dataset.name / "orc" / name,
                                 digest_file(staging_dir() / dataset.name / "orc" / name)), \
        "HDFS's file checksum does not see the flipped bytes (it is computed from the stored CRCs)"

    results = comparison.results = ResultSet("test_faults", {}, folder=lab.home / "test-results")
    comparison.probes = storage_probes(profile, ["hdfs"])
    query = comparison.suite_queries[0]
    with get_engine(engine_name, profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        comparison.measure(results, engine, query, Step("measured", 0, "hdfs"), tables["hdfs"])
    run = results.records[-1]
    assert not run.ok
    assert f"corrupt block in {path} (HDFS checksum error)" in run.error, run.error

    assert "is corrupt" in hdfs.damaged(folder, {name: placed.files[name]})[name]  # the reader told the NameNode
    again = place_taxi(dataset, profile, progress=False)
    assert f"hdfs/{name}" in again.replaced
    err = capsys.readouterr().err
    assert f"hdfs/{name}: block {block_id} at byte 0 is corrupt" in err, err
    assert hdfs.damaged(folder, {name: placed.files[name]}) == {}
    with get_engine(engine_name, profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        comparison.measure(results, engine, query, Step("measured", 1, "hdfs"), tables["hdfs"])
    assert results.records[-1].ok, results.records[-1].error


def test_an_edited_staging_file_is_regenerated_not_uploaded(comparison, profile):
    dataset = comparison.dataset
    local = staging_dir() / dataset.name / "orc" / sorted(comparison.placed.files)[-1]
    original = digest_file(local).md5
    local.write_bytes(_flipped(local.read_bytes()))
    place_taxi(dataset, profile, progress=False)
    assert digest_file(local).md5 == original


def test_no_sample_spans_an_s3_outage(comparison, lab):
    """The S3 server is stopped while queries run, and started again: runs around the outage fail."""
    s3_server = next(s for s in lab.services if isinstance(s, S3Server))
    outage = {}

    def outage_thread():
        time.sleep(3)
        outage["stopping"] = datetime.now().astimezone()
        s3_server.stop()
        outage["down"] = datetime.now().astimezone()
        time.sleep(8)
        outage["restart"] = datetime.now().astimezone()
        s3_server.start()

    results = comparison.results = ResultSet("test_faults", {}, folder=lab.home / "test-results")
    comparison.probes = storage_probes(comparison.profile, ["hdfs", "s3"])
    query = comparison.suite_queries[0]
    worker = threading.Thread(target=outage_thread)
    with get_engine("spark", comparison.profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        worker.start()
        deadline = time.monotonic() + 120
        i = 0
        while worker.is_alive() and time.monotonic() < deadline:
            comparison.measure(results, engine, query, Step("measured", i, "s3"), tables["s3"])
            i += 1
            time.sleep(0.5)
        worker.join()
        for j in range(i, i + 2):  # the server is back: these are samples again
            comparison.measure(results, engine, query, Step("measured", j, "s3"), tables["s3"])
    assert s3_server.health()[0], "the S3 server is back"
    s3_runs = [r for r in results.records if r.storage == "s3"]
    failed = [r for r in s3_runs if not r.ok]
    assert failed, "a run during the outage must be recorded as failed"
    assert all("S3 bucket" in r.error for r in failed), [r.error for r in failed]
    for r in s3_runs:
        if r.ok:
            # a sample read S3 before the stop or after the restart: it started before the stop and got its answer
            # before the restart (its reads were answered before the server went down; the engine may still have
            # been summing up when stop() returned, 93 ms after it once), or it started after the restart. A run
            # that waited out the outage on retries ends after the restart and fails this.
            start = datetime.fromisoformat(r.started_at)
            end = start + timedelta(seconds=r.wall_s)
            assert (start < outage["stopping"] and end < outage["restart"]) or start > outage["restart"], (r, outage)
    assert s3_runs[-1].ok and s3_runs[-2].ok, "runs after the restart are samples again"


@pytest.mark.parametrize("engine_name", ["spark", "trino", "hive", "spark-thrift"])
def test_a_run_past_its_time_limit_is_cancelled_and_the_engine_goes_on(comparison, engine_name, tmp_path):
    query = comparison.suite_queries[0]
    results = comparison.results = ResultSet("test_timeout", {}, folder=tmp_path)
    comparison.probes = storage_probes(comparison.profile, ["hdfs", "s3"])
    # 20,000 x 20,000 pairs, a sine and a cosine each: 4.6 s for Spark when warm, more for the others (with only
    # an addition per pair, Spark's generated code finished in 0.8 s on an idle machine, inside the limit)
    slow_join = ("SELECT count(*) FROM {t} a CROSS JOIN {t} b "
                 "WHERE sin(a.trip_distance * b.trip_distance) + cos(a.trip_distance + b.trip_distance) > 3")
    with get_engine(engine_name, comparison.profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        comparison.query_timeout_s = 1.0
        try:
            comparison.measure(results, engine, _Sql(slow_join), Step("measured", 0, "hdfs"), tables["hdfs"])
        finally:
            comparison.query_timeout_s = 60
        comparison.measure(results, engine, query, Step("measured", 1, "hdfs"), tables["hdfs"])
    timed_out, after = results.records
    assert not timed_out.ok and timed_out.error == "timed out after 1 s (query_timeout_s) and was cancelled"
    assert after.ok and after.rows > 0, after.error


class _Sql:
    id = "slow"

    def __init__(self, sql):
        self.sql = sql

    def for_tables(self, tables, engine=None):
        return self.sql.replace("{t}", tables["table"])


def test_a_table_perfkit_did_not_create_is_never_dropped(profile):
    """A user's managed table, named as perfkit would name its own, in perfkit's database and in the default one."""
    from perfkit.errors import PerfkitError

    with get_engine("hive", profile) as engine:
        engine.execute("CREATE DATABASE IF NOT EXISTS perfkit")
        for table in ("perfkit.users_own", "default.faults_orc_hdfs"):
            engine.execute(f"DROP TABLE IF EXISTS {table}")
            engine.execute(f"CREATE TABLE {table} (a INT)")
            engine.execute(f"INSERT INTO {table} VALUES (7)")
        try:
            with pytest.raises(PerfkitError, match="table perfkit.users_own exists and was not created by perfkit"):
                engine.register_table("users_own", profile.hdfs_url("test-nowhere"), "orc", [("a", "int")])
            assert engine.execute("SELECT a FROM perfkit.users_own") == [(7,)]
            engine.register_table("faults_orc_hdfs", profile.hdfs_url("test-nowhere"), "orc", [("a", "int")])
            assert engine.execute("SELECT a FROM default.faults_orc_hdfs") == [(7,)]  # the default database: untouched
        finally:
            for table in ("perfkit.users_own", "default.faults_orc_hdfs", "perfkit.faults_orc_hdfs"):  # the test's own
                engine.execute(f"DROP TABLE IF EXISTS {table}")
