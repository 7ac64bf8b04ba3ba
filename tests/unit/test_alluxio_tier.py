"""The Alluxio tier without a lab: locations, settings, the microbenchmark's checks and its table."""
import hashlib
import re
from dataclasses import replace

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.lab import alluxio as lab_alluxio
from perfkit.lab.settings import LabPorts
from perfkit.results import ResultSet
from perfkit.tiers import Alluxio, tier
from perfkit.presenting import report_of


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    return load_profile("lab")


def test_an_s3_location_maps_to_the_mount_and_back_string_for_string(lab):
    alluxio = Alluxio(lab)
    url = "s3a://perfkit-lab/perfkit/datasets/taxi/orc"
    assert alluxio.location(url) == f"alluxio://{lab.alluxio_master}/perfkit-lab/perfkit/datasets/taxi/orc"
    assert alluxio.s3_location(alluxio.location(url)) == url
    # as Hive and Spark store a location without a host, and with an empty one
    assert alluxio.s3_location("alluxio:/perfkit-lab/perfkit/datasets/taxi/orc") == url
    assert alluxio.s3_location("alluxio:///perfkit-lab/perfkit/datasets/taxi/orc") == url
    assert alluxio.location("s3a://perfkit-lab") == f"alluxio://{lab.alluxio_master}/perfkit-lab"


def test_a_location_off_the_mounted_bucket_is_refused_with_the_fix(lab):
    with pytest.raises(PerfkitError, match=r"s3a://other/x is not on the S3 bucket the Alluxio tier mounts "
                                           r"\(s3://perfkit-lab at alluxio:///perfkit-lab\)"):
        Alluxio(lab).location("s3a://other/x")
    with pytest.raises(PerfkitError, match="is not on the S3 bucket"):
        Alluxio(lab).location("hdfs://127.0.0.1:9000/perfkit-lab/x")
    with pytest.raises(PerfkitError, match="not under the Alluxio folder where the S3 bucket is mounted"):
        Alluxio(lab).s3_location("alluxio:///perfkit-lab-other/x")


def test_a_profile_without_alluxio_says_what_to_name(lab):
    on_cluster = replace(lab, alluxio_master="", alluxio_s3_mount="")
    assert "names no Alluxio master" in tier("alluxio", on_cluster).unavailable()
    assert tier("alluxio", lab).unavailable() is None


def test_the_store_size_is_checked(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_STORE", "512mb")
    assert lab_alluxio.store_size() == "512MB"
    for bad in ("lots", "0GB", "-1GB", "12"):
        monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_STORE", bad)
        with pytest.raises(PerfkitError, match=rf"PERFKIT_LAB_ALLUXIO_STORE='{bad}' is not a size"):
            lab_alluxio.store_size()


def test_a_store_size_is_read_in_powers_of_1024_as_alluxio_reads_it():
    # the bytes the lab waits for the master to list: 12MB is 12 MiB (the integration test's 12.6 "MB")
    assert [lab_alluxio.size_bytes(s) for s in ("12MB", "1GB", "512KB", "1.5GB", "100B")] == \
        [12 * 1048576, 1073741824, 524288, 1610612736, 100]


def test_the_worker_keeps_its_blocks_in_memory_in_a_folder_of_its_lab_and_gives_it_back_at_stop(tmp_path,
                                                                                                 monkeypatch):
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(lab_alluxio, "SHM", shm)
    monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_MEDIUM", raising=False)
    one, other = (lab_alluxio.AlluxioServer(tmp_path / name, LabPorts()) for name in ("one", "other"))
    assert one.medium == "MEM" and one.store.parent == shm and one.store != other.store  # a folder per lab home
    site = one.site()
    assert site["alluxio.worker.tieredstore.level0.alias"] == "MEM"
    assert site["alluxio.worker.tieredstore.level0.dirs.mediumtype"] == "MEM"
    assert site["alluxio.worker.tieredstore.level0.dirs.path"] == one.store
    one.write_config()
    assert not one.store.exists()  # made when the worker starts, not with its configuration
    for server in (one, other):
        server.store.mkdir()  # as start() does
    (one.store / "block").write_bytes(b"x")
    one.stop()  # no daemon runs: the store in memory is given back, the other lab's is not touched
    assert not one.store.exists() and other.store.is_dir()
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_MEDIUM", "ssd")
    on_disk = lab_alluxio.AlluxioServer(tmp_path / "one", LabPorts())
    assert on_disk.medium == "SSD" and on_disk.store == tmp_path / "one" / "alluxio" / "worker-store"
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_MEDIUM", "tape")
    with pytest.raises(PerfkitError, match=r"PERFKIT_LAB_ALLUXIO_MEDIUM='TAPE': give MEM .* or SSD"):
        lab_alluxio.store_medium()
    monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_MEDIUM")
    monkeypatch.setattr(lab_alluxio, "SHM", tmp_path / "no-shm")
    assert lab_alluxio.store_medium() == "SSD"  # no /dev/shm: on disk


def test_servers_listen_on_loopback_and_keys_stay_out_of_the_client_configuration(tmp_path):
    server = lab_alluxio.AlluxioServer(tmp_path, LabPorts())
    site = server.site()
    assert {site[k] for k in ("alluxio.master.bind.host", "alluxio.master.web.bind.host", "alluxio.worker.bind.host",
                              "alluxio.worker.web.bind.host")} == {"127.0.0.1"}
    assert site["alluxio.master.update.check.enabled"] == "false"
    assert site["alluxio.underfs.s3.endpoint"] == "http://127.0.0.1:7070"
    server.write_config()
    assert (server.conf_dir / "alluxio-site.properties").stat().st_mode & 0o077 == 0
    client = (server.client_conf_dir / "alluxio-site.properties").read_text()
    assert "alluxio.master.rpc.port=19998" in client and "s3a." not in client and "secret" not in client.lower()


def test_every_lab_spark_session_can_read_alluxio(tmp_path):
    from perfkit.lab.spark_conf import lab_spark_conf

    conf = lab_spark_conf(LabPorts(), {"access_key": "a", "secret_key": "b"})
    assert conf["spark.hadoop.fs.alluxio.impl"] == "alluxio.hadoop.FileSystem"
    assert conf["spark.hadoop.alluxio.master.rpc.port"] == "19998"


def _bench(lab, tmp_path, monkeypatch):
    from perfkit.experiments.tier_copy import TierCopy

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    return TierCopy(lab, objects=2, object_mb=0.001, rounds=1)


def test_bad_parameters_are_named(lab):
    from perfkit.experiments.tier_copy import TierCopy

    with pytest.raises(PerfkitError, match="objects=0: give a whole number >= 1"):
        TierCopy(lab, objects=0)
    with pytest.raises(PerfkitError, match=r"object_mb=-1: give a number of MB per object > 0"):
        TierCopy(lab, object_mb=-1)
    with pytest.raises(PerfkitError, match=r"readers=\['scp'\]: unknown scp: choose from aws s3 cp, alluxio fs"):
        TierCopy(lab, readers=["scp"])
    with pytest.raises(PerfkitError, match="tier_copy: the profile names no Alluxio master"):
        TierCopy(replace(lab, alluxio_master=""))


def test_a_copy_with_a_changed_or_missing_file_is_refused(lab, tmp_path, monkeypatch):
    bench = _bench(lab, tmp_path, monkeypatch)
    data = {f"part-{i:04d}.bin": bench._object(i) for i in range(2)}
    bench.expected = {name: hashlib.md5(b).hexdigest() for name, b in data.items()}
    folder = tmp_path / "copy" / "nested"
    folder.mkdir(parents=True)
    for name, b in data.items():
        (folder / name).write_bytes(b)
    assert bench._verify(tmp_path / "copy") == 2000
    (folder / "part-0001.bin").write_bytes(b"x" * 1000)
    with pytest.raises(PerfkitError, match=f"part-0001.bin copied with MD5 {hashlib.md5(b'x' * 1000).hexdigest()}"):
        bench._verify(tmp_path / "copy")
    (folder / "part-0001.bin").unlink()
    with pytest.raises(PerfkitError, match=r"missing \['part-0001.bin'\]"):
        bench._verify(tmp_path / "copy")


def test_the_table_puts_each_try_against_s3s_median(lab, tmp_path, monkeypatch):
    bench = _bench(lab, tmp_path, monkeypatch)
    results = bench.results = ResultSet("tier_copy", {})
    for storage, subject, tries in (("s3", "aws s3 cp", (2.0, 2.0, 4.0)),
                                    ("alluxio", "alluxio fs copyToLocal", (8.0, 1.0, 0.5))):
        for try_, seconds in zip(("cold", "warm", "hot"), tries):
            results.add(subject=subject, storage=storage, case="2 x 0.001 MB", phase="measured", iteration=0,
                        started_at="2026-11-23T00:00:00+00:00", wall_s=seconds, bytes=16_000_000,
                        params={"try": try_, "start_up_s": 1.0, "cache_bytes": 5, "s3_bytes": 7})
    table = report_of(bench).copy_table()
    tier = table[table["reader"] == "alluxio fs copyToLocal"].set_index("try")
    assert list(tier["vs S3"]) == ["0.25× (slower)", "2.00× (faster)", "4.00× (faster)"]  # S3's median: 2 s
    assert list(tier["MB/s"]) == [2.0, 16.0, 32.0]
    assert list(report_of(bench).counters_table()["MB from S3"]) == [0.0, 0.0, 0.0]  # 7 bytes


def test_each_reader_copies_the_prefix_named_for_its_tool(lab, tmp_path, monkeypatch):
    from perfkit.lab import alluxio_dist

    monkeypatch.setattr(alluxio_dist, "alluxio_lib", lambda: tmp_path / "lib")  # no fetch: only the command line
    bench = _bench(lab, tmp_path, monkeypatch)
    aws = bench.command("aws s3 cp", tmp_path / "out")
    assert aws[-7:] == ["cp", "--recursive", f"s3://perfkit-lab/{bench.prefix}", str(tmp_path / "out"),
                        "--endpoint-url", lab.s3_endpoint, "--only-show-errors"]
    shell = bench.command("alluxio fs copyToLocal", tmp_path / "out")
    assert shell[-4:] == ["alluxio.cli.fs.FileSystemShell", "copyToLocal",
                          f"alluxio://{lab.alluxio_master}/perfkit-lab/{bench.prefix}", str(tmp_path / "out")]


class _FillingWorker:
    """An Alluxio worker as its counters show it: `busy` polls with cache requests open, the store growing."""

    def __init__(self, busy: int):
        self.busy, self.polls, self.held = busy, 0, 0

    def master_info(self):
        return {}

    def caching_tasks(self, info=None):
        self.polls += 1
        if self.polls <= self.busy:
            self.held += 1_000_000
            return 1
        return 0

    def store(self, info=None):
        return self.held, 10**9


def test_settle_waits_until_the_worker_is_idle_and_its_store_stopped_growing(lab, monkeypatch):
    import perfkit.tiers.alluxio_client
    import perfkit.tiers.alluxio

    worker = _FillingWorker(busy=3)
    monkeypatch.setattr(perfkit.tiers.alluxio_client, "AlluxioClient", lambda profile: worker)
    monkeypatch.setattr(perfkit.tiers.alluxio, "SETTLE_POLL_S", 0.01)
    said = Alluxio(lab).settle(timeout_s=5)
    assert said.startswith("Alluxio's background caching done after ")
    assert worker.held == 3_000_000 and worker.polls >= 3 + 2  # the idle state seen twice after the fill


def test_settle_says_when_the_fill_outlasts_the_wait(lab, monkeypatch):
    import perfkit.tiers.alluxio_client
    import perfkit.tiers.alluxio

    monkeypatch.setattr(perfkit.tiers.alluxio_client, "AlluxioClient", lambda profile: _FillingWorker(busy=10**6))
    monkeypatch.setattr(perfkit.tiers.alluxio, "SETTLE_POLL_S", 0.01)
    assert Alluxio(lab).settle(timeout_s=0.2) == ("Alluxio's background caching still busy after 0.2 s: "
                                                  "the next try races it")


def test_the_aws_clis_start_up_is_timed_on_the_same_command_as_its_copies(lab, tmp_path, monkeypatch):
    import subprocess
    import sys

    bench = _bench(lab, tmp_path, monkeypatch)
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kwargs: ran.append(argv))
    monkeypatch.setattr("perfkit.experiments.tier_copy.aws_env", lambda profile: {})  # no lab keys needed here
    assert bench.start_up("aws s3 cp") >= 0
    endpoint = ["--endpoint-url", lab.s3_endpoint] if lab.s3_endpoint else []
    assert ran == [[sys.executable, "-m", "awscli", "--version", *endpoint, "--only-show-errors"]]
    assert bench.command("aws s3 cp", tmp_path)[:5] == [sys.executable, "-m", "awscli", "s3", "cp"]


def test_a_tiered_store_puts_memory_over_disk_level_by_level(tmp_path, monkeypatch):
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(lab_alluxio, "SHM", shm)
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_TIERS", "mem:64MB, SSD:1gb")
    assert lab_alluxio.store_levels() == [("MEM", "64MB"), ("SSD", "1GB")]
    server = lab_alluxio.AlluxioServer(tmp_path / "lab", LabPorts())
    site = server.site()
    assert site["alluxio.worker.tieredstore.levels"] == 2
    assert [site[f"alluxio.worker.tieredstore.level{i}.alias"] for i in (0, 1)] == ["MEM", "SSD"]
    assert site["alluxio.worker.tieredstore.level0.dirs.path"].parent == shm  # memory: a folder of /dev/shm
    assert site["alluxio.worker.tieredstore.level1.dirs.path"] == tmp_path / "lab" / "alluxio" / "worker-store"
    assert [site[f"alluxio.worker.tieredstore.level{i}.dirs.quota"] for i in (0, 1)] == ["64MB", "1GB"]
    assert site["alluxio.worker.management.tier.align.reserved.bytes"] == "16MB"  # not 1GB: 64MB of memory is used
    assert site["alluxio.worker.reviewer.class"].endswith("AcceptingReviewer")
    assert "store 64MB MEM in " in server.addresses()["alluxio-worker"] and " over 1GB SSD in " in \
        server.addresses()["alluxio-worker"]
    monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_TIERS")
    monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_MEDIUM", raising=False)
    monkeypatch.delenv("PERFKIT_LAB_ALLUXIO_STORE", raising=False)
    assert lab_alluxio.store_levels() == [("MEM", "1GB")]  # unset: one level, as before


@pytest.mark.parametrize("bad, said", [
    ("SSD:1GB,MEM:64MB", "the fastest first"),
    ("MEM:64MB,MEM:1GB", "each medium once"),
    ("HDD:1GB", "'HDD:1GB' is not a level"),
    ("MEM:lots", "'MEM:lots' is not a level"),
    ("MEM:0MB", "'MEM:0MB' is not a level"),
])
def test_a_tiered_store_that_alluxio_could_not_run_is_refused_with_the_form_to_give(tmp_path, monkeypatch, bad,
                                                                                     said):
    monkeypatch.setattr(lab_alluxio, "SHM", tmp_path)
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_TIERS", bad)
    with pytest.raises(PerfkitError, match=re.escape(f"PERFKIT_LAB_ALLUXIO_TIERS={bad!r}: ")) as err:
        lab_alluxio.store_levels()
    assert said in str(err.value) and "MEM:64MB,SSD:1GB" in str(err.value)


def test_memory_in_a_tiered_store_needs_dev_shm(tmp_path, monkeypatch):
    monkeypatch.setattr(lab_alluxio, "SHM", tmp_path / "no-shm")
    monkeypatch.setenv("PERFKIT_LAB_ALLUXIO_TIERS", "MEM:64MB,SSD:1GB")
    with pytest.raises(PerfkitError, match="MEM needs .*no-shm to write to, which this machine does not give: use SSD "
                                           r"alone \(SSD:1GB\)"):
        lab_alluxio.store_levels()
