"""README's "Extending perfkit", followed once: a storage added as one class and one registry line passes the same
conformance checks as the lab's storages, and perfkit then finds it by name and by URL, counts a run's requests with
its own server's counters and prices them and a month of its data at the prices it ships."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from perfkit import storages
from perfkit.accounting.concurrent import ConcurrentRuns
from perfkit.accounting.run_io import RunAccounting
from perfkit.accounting.sources import server_sources
from perfkit.config import load_profile
from perfkit.datasets import locations
from perfkit.errors import PerfkitError, ServiceError
from perfkit.storages import Location, Storage
from perfkit.storages.conformance import check_storage
from perfkit.storages.base import Counted, ServerCounting, visible, visible_tree
from perfkit.storages.pricing import monthly_storage_table, price_table, request_cost
from perfkit.tiers import Tier


class LocalFolder(Storage):
    """Files in a local folder (file:// URLs), e.g. a mounted file system."""

    name = "local-folder"
    schemes = ("file",)
    colour = "#2ca02c"
    root = Path("/nonexistent")  # set by the test; a real one would take it from the profile
    shipped_prices = {"local-folder": {"source": "the test's own", "storage_per_gb_month": 0.01,
                                       "read_per_1000": 0.002}}

    @classmethod
    def month_stored(cls, prices, bytes_, replication=3, volume_type="st1"):
        return "local folder", bytes_ / 1e9, bytes_ / 1e9 * prices.figures["local-folder"]["storage_per_gb_month"]

    @classmethod
    def request_cost(cls, prices, counts):
        return counts.get("folder_reads", 0) * prices.figures["local-folder"]["read_per_1000"] / 1000

    def server_counting(self):
        """Its "server" logs each read it serves, one line of its size: the counters are that log's sums."""
        log = self.root / "access.log"

        def read():
            sizes = [int(line) for line in log.read_text().split()] if log.exists() else []
            return {"folder_reads": float(len(sizes)), "folder_bytes_read": float(sum(sizes))}

        return ServerCounting([Counted("the folder's access log", read)])

    def folder(self, *parts: str) -> Location:
        return Location(self.name, str(self.root.joinpath(self.profile.prefix, *parts)))

    def url(self, loc: Location) -> str:
        return Path(loc.path).as_uri()

    def list_files(self, loc):
        path = Path(loc.path)
        return visible({p.name: p.stat().st_size for p in path.iterdir() if p.is_file()}) if path.is_dir() else None

    def list_tree(self, loc):
        path = Path(loc.path)
        return visible_tree({str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}
                            ) if path.is_dir() else None

    def read_range(self, loc, name, offset, length):
        with open(Path(loc.path, name), "rb") as f:
            f.seek(offset)
            data = f.read(length)
        with open(self.root / "access.log", "a") as log:
            log.write(f"{len(data)}\n")
        return data

    def read_text(self, loc, name):
        path = Path(loc.path, name)
        return path.read_text() if path.exists() else None

    def checksum_matches(self, loc, local, digest):
        return hashlib.md5(Path(loc.path, local.name).read_bytes()).hexdigest() == digest.md5

    def upload(self, loc, local):
        Path(loc.path).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, Path(loc.path, local.name))

    def write_text(self, loc, name, text):
        Path(loc.path).mkdir(parents=True, exist_ok=True)
        Path(loc.path, name).write_text(text)

    def delete_tree(self, loc):
        shutil.rmtree(loc.path)

    def check(self):
        if not self.root.is_dir():
            raise ServiceError(f"local folder {self.root}", "not a folder", "create it")


@pytest.fixture
def local_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(LocalFolder, "root", tmp_path / "store")
    monkeypatch.setitem(storages.REGISTRY, "local-folder", LocalFolder)  # the one registry line, undone after
    return storages.get_storage("local-folder", load_profile("emr", bucket="b"))


def test_a_new_storage_passes_the_conformance_checks(local_folder, tmp_path):
    LocalFolder.root.mkdir()
    (tmp_path / "scratch").mkdir()
    done = check_storage(local_folder, tmp_path / "scratch")
    assert "keeps a checksum that tells the file from a one-bit change" in done and len(done) == 9
    assert list(LocalFolder.root.joinpath("perfkit", "conformance").iterdir()) == []  # it deleted what it made


def test_a_new_storage_is_found_by_name_by_url_and_as_a_place_for_data(local_folder, tmp_path):
    assert "local-folder" in storages.placed() and "local-folder" not in storages.tiers()
    loc = locations.parse_location((tmp_path / "t").as_uri(), "tables.local-folder")
    assert loc == Location("local-folder", str(tmp_path / "t"))
    assert locations.list_files(load_profile("emr", bucket="b"), loc) is None


def test_the_conformance_checks_catch_a_storage_that_lists_hidden_files(local_folder, tmp_path, monkeypatch):
    LocalFolder.root.mkdir()
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr(LocalFolder, "list_files", lambda self, loc: {p.name: p.stat().st_size
                                                                       for p in Path(loc.path).iterdir()}
                        if Path(loc.path).is_dir() else None)
    with pytest.raises(AssertionError, match="not the one uploaded file"):
        check_storage(local_folder, tmp_path / "scratch")


def test_a_new_storage_is_drawn_in_its_own_colour(local_folder):
    import matplotlib
    import pandas as pd

    from perfkit import plots

    matplotlib.use("Agg")
    table = pd.DataFrame({"cell": ["trino on local-folder", "trino on s3", "trino on alluxio"],
                          "storage": ["local-folder", "s3", "alluxio"], "geomean (s)": [1.0, 2.0, 3.0],
                          "× best": [1.0, 2.0, 3.0]})
    bars = plots.ranking(table).axes[0].patches
    assert [matplotlib.colors.to_hex(b.get_facecolor()) for b in bars] == ["#2ca02c", "#ff7f0e", "#808080"]


def test_a_new_storage_read_locally_is_a_copy_target_by_its_capability_not_its_name(local_folder, monkeypatch):
    """The break-even pairs the storage read remotely with one its data can be copied into, found by what the
    storages say they are (reads_remote, copy_target), never by their names."""
    assert storages.break_even_pair(["hdfs", "s3"]) == ("s3", "hdfs")
    assert storages.break_even_pair(["s3", "alluxio"]) is None  # a tier reads S3's copy: nothing to copy into
    assert storages.break_even_pair(["local-folder", "s3"]) is None  # not a copy target until it says so
    monkeypatch.setattr(LocalFolder, "copy_target", True)
    assert storages.break_even_pair(["local-folder", "s3"]) == ("s3", "local-folder")


def test_a_new_storage_s_own_counters_count_a_run_on_it_and_no_run_elsewhere(local_folder, tmp_path):
    table = LocalFolder.root / "perfkit" / "t"
    table.mkdir(parents=True)
    (table / "part-0").write_bytes(bytes(range(256)) * 40)  # 10,240 bytes
    sources = server_sources(local_folder.profile)
    assert [s.name for s in sources.on("local-folder").read] == ["the folder's access log"]
    assert "the folder's access log" not in [s.name for s in sources.on("s3").read]
    run = RunAccounting(sources, None, "", ConcurrentRuns(tmp_path / "runs"), storage="local-folder")
    run.before()
    local_folder.read_range(local_folder.folder("t"), "part-0", 100, 4000)
    local_folder.read_range(local_folder.folder("t"), "part-0", 10_000, 4000)  # past the end: 240 bytes
    io = run.after()
    assert io.counts("server") == {"folder_reads": 2, "folder_bytes_read": 4240}
    assert io.sources["server"] == "the folder's access log"


def test_a_new_storage_prices_its_requests_and_its_month_at_the_prices_it_ships(local_folder, tmp_path):
    prices = price_table()
    assert request_cost(prices, {"folder_reads": 5000, "s3_get": 1000}) == pytest.approx(5 * 0.002 + 0.0004)
    month = monthly_storage_table(prices, 250e9)
    assert month.set_index("storage").loc["local folder", "USD per month"] == pytest.approx(250 * 0.01)
    assert "local-folder: the test's own" in prices.basis()
    own = tmp_path / "mine.yml"
    own.write_text("local-folder:\n  read_per_1000: 0.004\n")  # a user's file prices it as it prices S3
    assert request_cost(price_table(own), {"folder_reads": 5000}) == pytest.approx(5 * 0.004)
    own.write_text("local-folder:\n  reads_per_1000: 0.004\n")
    with pytest.raises(PerfkitError, match="unknown key local-folder.reads_per_1000"):
        price_table(own)


def test_a_run_records_the_replication_of_a_new_storage_that_keeps_copies_of_its_own(local_folder, monkeypatch):
    """The replication a month's price is multiplied by comes from the storage that sets it per file (HDFS on the
    lab), asked by capability: a new storage that keeps 2 copies is recorded, one that says nothing is not."""
    from perfkit.datasets.tables import Table, TableSet
    from perfkit.experiments.query_data import dataset_record

    asked = []
    monkeypatch.setattr(LocalFolder, "replication", lambda self, loc: asked.append(loc) or 2)
    table = Table("file:///data/trips", "orc", [("id", "bigint")], files=1, bytes=10)
    s3 = Table("s3a://b/trips", "orc", [("id", "bigint")], files=1, bytes=10)
    record = dataset_record(local_folder.profile, TableSet("own", {"s3": {"trips": s3}, "local-folder":
                                                                   {"trips": table}}), None, None)
    assert record["hdfs_replication"] == 2 and asked == [Location("local-folder", "/data/trips")]
    monkeypatch.setattr(LocalFolder, "replication", lambda self, loc: None)
    assert dataset_record(local_folder.profile, TableSet("own", {"s3": {"trips": s3}}), None, None)[
        "hdfs_replication"] is None


class FolderCache(Tier):
    """A cache tier in front of the new storage: it caches that storage's copy, not S3's."""

    name = "folder-cache"
    backing = "local-folder"

    def location(self, url: str) -> str:
        return url.replace("file://", "cache://")


def test_a_tier_in_front_of_a_new_storage_reads_that_storage_s_copy_not_s3_s(local_folder, monkeypatch):
    """Where the data must be placed, which tables a tier reads and whether a run on it reads through the engines'
    S3 client all follow the tier's declared backing."""
    from perfkit.datasets.tables import Table, TableSet
    from perfkit.experiments.attempt import S3Faults
    from perfkit.experiments.query_data import placed_storages, with_tiers

    monkeypatch.setitem(storages.REGISTRY, "folder-cache", FolderCache)
    assert placed_storages(["folder-cache"]) == ["local-folder"]
    assert placed_storages(["alluxio", "folder-cache"]) == ["s3", "local-folder"]
    folder = Table("file:///data/trips", "orc", [("id", "bigint")], files=1, bytes=10)
    s3 = Table("s3a://b/trips", "orc", [("id", "bigint")], files=1, bytes=10)
    tables = with_tiers(TableSet("own", {"s3": {"trips": s3}, "local-folder": {"trips": folder}}),
                        ["s3", "local-folder", "folder-cache"], local_folder.profile).tables
    assert tables["folder-cache"]["trips"].location == "cache:///data/trips"
    assert S3Faults(local_folder.profile, {}, None, "folder-cache", counted=True).reads_s3 is False
    assert S3Faults(local_folder.profile, {}, None, "alluxio", counted=True).reads_s3 is True
