"""Issue 11 on the lab: Alluxio up and down, the taxi suite through every tier with S3's results and no socket off
the machine, and a worker store smaller than the data said and shown by the counters."""
import pytest

from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.presenting.query_report import result_mismatches
from perfkit.experiments.tier_copy import TierCopy
from perfkit.lab.sockets import SocketWatch
from perfkit.tiers import Alluxio
from perfkit.presenting import report_of


@pytest.fixture(scope="module")
def alluxio(lab):
    server = next(s for s in lab.services if s.name == "alluxio")
    assert server.health()[0]
    return server


def test_the_taxi_suite_gives_s3s_results_through_every_tier_and_nothing_leaves_the_machine(profile, lab, alluxio):
    watch = SocketWatch(lab.pids()).start()
    try:
        c = QueryComparison(profile, engines=["trino", "spark", "hive"], storages=["s3", "alluxio", "trino-cache"],
                            baseline="s3", rows=50_000, files=2, runs=1, warmup=0, query_timeout_s=300)
        c.prepare(progress=False)
        frame = c.run(progress=False).to_frame()
    finally:
        watch.stop()
    ok = frame[frame["ok"]]
    queries = {q.id for q in c.suite_queries}
    assert len(queries) == 4
    for engine, storages in (("trino", {"s3", "alluxio", "trino-cache"}), ("spark", {"s3", "alluxio"}),
                             ("hive", {"s3", "alluxio"})):
        for where in storages:
            assert set(ok.loc[(ok["subject"] == engine) & (ok["storage"] == where), "case"]) == queries, (engine, where)
    for case, group in ok.groupby("case"):
        assert group["result_hash"].nunique() == 1, case  # every engine, every tier: S3's result
    assert result_mismatches(frame).empty
    assert watch.samples >= 10 and watch.peers  # it looked, and saw the lab talking (to itself)
    assert not watch.foreign, sorted(map(str, watch.foreign))
    assert all(remote.startswith("127.0.0.1:") for _, remote in watch.peers), sorted(watch.peers)


def test_alluxio_down_is_named_and_lab_up_brings_it_back(profile, lab, alluxio):
    probe = Alluxio(profile).probe(lambda: None)
    assert probe() is None
    dumps = set((lab.home / "logs").glob("alluxio-*-exit-*"))
    alluxio.stop()
    assert set((lab.home / "logs").glob("alluxio-*-exit-*")) == dumps  # no metrics dump nor jstack left per stop
    try:
        rows = {r.service: r for r in lab.status(["alluxio"])}
        assert not rows["alluxio-master"].running and not rows["alluxio-worker"].running
        assert probe() == f"the Alluxio master at {profile.alluxio_master} does not answer (Connection refused)"
    finally:
        lab.up(["alluxio"])
    assert all(r.healthy for r in lab.status(["alluxio"]))
    assert alluxio.mounts()["/perfkit-lab"] == "s3://perfkit-lab/"  # the mount table survives a restart
    assert probe() is None


def test_a_store_smaller_than_the_data_is_said_and_hot_copies_fetch_from_s3(profile, lab, alluxio, monkeypatch,
                                                                             tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    bench = TierCopy(profile, objects=4, object_mb=8, rounds=1, readers=["boto3 via Alluxio's S3 API"])  # 32 MB
    bench.prepare(progress=False)
    Alluxio(profile).empty()  # nothing cached: the worker starts with an empty store
    # the worker alone restarts with the smaller store, the master and the proxy kept (the whole tier's two
    # restarts cost this test 40 s of its 100 on a busy machine)
    alluxio.stop_worker()
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_STORE", "12MB")
    try:
        lab.up(["alluxio"])
        assert alluxio.health() == (True, "1 worker, store 12 MB")  # the master's view: the new worker registered
        note = Alluxio(profile).size_note(32_000_000)
        assert note.startswith(f"the Alluxio workers' store holds {12 * 2**20 / 1e6:.1f} MB, less than the 32.0 MB "
                               "of data read")  # Alluxio's MB are MiB
        bench.run(progress=False)
    finally:
        Alluxio(profile).empty()  # the 1 GB worker starts from an empty store again
        alluxio.stop_worker()
        monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_STORE")
        lab.up(["alluxio"])
    counters = report_of(bench).counters_table().set_index("try")
    assert counters.loc["cold", "MB from S3"] >= 32.0  # every byte at least once (evictions re-fetch some)
    assert counters.loc["hot", "MB from S3"] > 0  # evicted: not all from the cache, and the counters show it
    assert bench.failures().empty  # every byte still checked and right
    assert Alluxio(profile).size_note(32_000_000) is None  # back to the 1 GB store


def test_a_file_placed_again_on_s3_reads_whole_through_alluxio_once_the_tier_refreshed(profile, alluxio):
    from perfkit.storages.s3 import shared_s3_client

    s3 = shared_s3_client(profile)
    through_alluxio = TierCopy(profile, objects=1, object_mb=1, rounds=1).s3_client("boto3 via Alluxio's S3 API")
    folder = f"{profile.prefix}/tests/alluxio-refresh"
    key, old, new = f"{folder}/part-0.bin", b"a" * 1000, b"b" * 1500
    try:
        s3.put_object(Bucket=profile.s3_bucket, Key=key, Body=old)
        assert through_alluxio.get_object(Bucket=profile.s3_bucket, Key=key)["Body"].read() == old  # Alluxio looked
        s3.put_object(Bucket=profile.s3_bucket, Key=key, Body=new)  # placed again, longer
        stale = through_alluxio.get_object(Bucket=profile.s3_bucket, Key=key)["Body"].read()
        assert len(stale) == len(old)  # Alluxio's master keeps the length of its first look: a cut file
        Alluxio(profile).refresh([f"{profile.s3_scheme}://{profile.s3_bucket}/{folder}"])
        assert through_alluxio.get_object(Bucket=profile.s3_bucket, Key=key)["Body"].read() == new
    finally:
        s3.delete_object(Bucket=profile.s3_bucket, Key=key)
        Alluxio(profile).refresh([f"{profile.s3_scheme}://{profile.s3_bucket}/{folder}"])  # gone from its view too
