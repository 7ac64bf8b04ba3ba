"""The NFS and FUSE mounts as storages: the same conformance checks as every storage, on a local folder."""
from __future__ import annotations

import dataclasses

import pytest

from perfkit import storages
from perfkit.config import load_profile
from perfkit.errors import PerfkitError, ServiceError
from perfkit.storages.conformance import check_storage
from perfkit.storages.mounted import FuseHdfs, Nfs, _within


def cluster(**settings):
    return dataclasses.replace(load_profile("emr", bucket="b"), **settings)


def test_the_nfs_export_passes_the_conformance_checks(tmp_path):
    (tmp_path / "export").mkdir()
    (tmp_path / "scratch").mkdir()
    nfs = storages.get_storage("nfs", cluster(nfs_mount=str(tmp_path / "export")))
    done = check_storage(nfs, tmp_path / "scratch")
    assert len(done) == 9, done
    assert list((tmp_path / "export" / "perfkit" / "conformance").iterdir()) == []


def test_nfs_without_an_export_or_a_mount_says_which_setting_to_give():
    nfs = Nfs(cluster(nfs_mount=""))
    assert "nfs_mount" in nfs.unavailable()
    with pytest.raises(PerfkitError, match="set the profile's nfs_mount"):
        nfs.folder("filesets")


def test_nfs_that_is_not_a_folder_is_named_with_its_path(tmp_path):
    nfs = Nfs(cluster(nfs_mount=str(tmp_path / "gone")))
    with pytest.raises(ServiceError, match=f"nfs at {tmp_path / 'gone'}.*not a folder"):
        nfs.check()


def test_fuse_reads_hdfs_folders_through_the_mount_and_refuses_writes(tmp_path):
    fuse = FuseHdfs(cluster(fuse_hdfs_mount=str(tmp_path / "mnt")))
    folder = fuse.folder("filesets", "small")
    assert folder.storage == "hdfs" and folder.path == "/perfkit/filesets/small"  # HDFS's own folder
    assert fuse.path(folder, "f.bin") == tmp_path / "mnt" / "perfkit" / "filesets" / "small" / "f.bin"
    assert fuse.url(folder) == (tmp_path / "mnt" / "perfkit" / "filesets" / "small").as_uri()
    with pytest.raises(PerfkitError, match="reads the hdfs copy through its FUSE mount: perfkit writes to hdfs"):
        fuse.write_text(folder, "_x", "x")
    (tmp_path / "mnt").mkdir()  # a folder, but nothing mounted there
    assert fuse.health_probe()() == "not mounted"


def test_mounts_are_storages_but_engines_query_only_the_others():
    assert storages.placed() == ["hdfs", "s3"]
    assert storages.tiers() == ["trino-cache", "alluxio"]
    assert {"nfs", "fuse-hdfs"} <= set(storages.REGISTRY)


def test_a_check_that_hangs_is_reported_after_its_time():
    assert _within(0.05, lambda: __import__("time").sleep(5)) == "did not answer within 0.05 s"
    assert _within(1, lambda: None) is None
