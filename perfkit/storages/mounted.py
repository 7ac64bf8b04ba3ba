"""Storages reached as plain files through a mount: the NFS export, and HDFS mounted through FUSE.

Engines do not query tables on them (`queried = False`): the NFS vs HDFS read experiment reads their files with
its read methods, and perfkit places and lists the files through these classes.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import threading
from functools import cached_property
from pathlib import Path

from perfkit import atomic, health
from perfkit.config import Profile
from perfkit.errors import PerfkitError, ServiceError, root_cause
from perfkit.storages.base import Location, Storage, WritesRefused, refuse_write, visible, visible_tree
from perfkit.storages.registry import get_storage


class MountedFolder(Storage):
    """Files under a root folder, with file:// URLs."""

    schemes = ("file",)
    queried = False

    def root(self) -> Path:
        raise NotImplementedError

    def folder(self, *parts: str) -> Location:
        return Location(self.name, str(self.root().joinpath(self.profile.prefix, *parts)))

    def path(self, loc: Location, name: str = "") -> Path:
        return Path(loc.path, name)

    def url(self, loc: Location) -> str:
        return self.path(loc).as_uri()

    def list_files(self, loc: Location) -> dict[str, int] | None:
        folder = self.path(loc)
        if not folder.is_dir():
            return None
        return visible({entry.name: entry.stat().st_size for entry in os.scandir(folder) if entry.is_file()})

    def list_tree(self, loc: Location) -> dict[str, int] | None:
        folder = self.path(loc)
        if not folder.is_dir():
            return None
        return visible_tree({path.relative_to(folder).as_posix(): path.stat().st_size
                             for path in folder.rglob("*") if path.is_file()})

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        with open(self.path(loc, name), "rb") as f:
            f.seek(offset)
            return f.read(length)

    def read_text(self, loc: Location, name: str) -> str | None:
        path = self.path(loc, name)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        # a file system keeps no checksum of its own: the MD5 of the content read back through the mount
        md5 = hashlib.md5()
        with open(self.path(loc, local.name), "rb") as f:
            while chunk := f.read(8 << 20):
                md5.update(chunk)
        return md5.hexdigest() == digest.md5

    def upload(self, loc: Location, local: Path) -> None:
        atomic.copy_file(local, self.path(loc, local.name))

    def write_text(self, loc: Location, name: str, text: str) -> None:
        atomic.write_text(self.path(loc, name), text)

    def make_folder(self, loc: Location) -> None:
        self.path(loc).mkdir(parents=True, exist_ok=True)

    def delete_tree(self, loc: Location) -> None:
        shutil.rmtree(self.path(loc))

    def check(self) -> None:
        problem = self.health_probe()()
        if problem:
            raise ServiceError(f"{self.name} at {self.root()}", problem, self.fix())

    def health_probe(self, read_file: str | None = None):
        def probe() -> str | None:
            return _within(health.PROBE_TIMEOUT_S, self.problem)  # a frozen mount blocks a stat for ever

        return probe

    def problem(self) -> str | None:
        """Why the root cannot be used now, or None."""
        return None if self.root().is_dir() else "not a folder"

    def fix(self) -> str:
        raise NotImplementedError


class Nfs(MountedFolder):
    """The NFS export: written where the server keeps it (the lab's server runs here) or through the profile's
    nfs_mount; the read methods read it through the NFS server (libnfs) or the mount."""

    name = "nfs"

    def root(self) -> Path:
        export = self.profile.provider.nfs_export()
        if export is not None:
            return export
        if not self.profile.nfs_mount:
            raise PerfkitError("to place files on NFS, set the profile's nfs_mount (where the export is mounted)")
        return Path(self.profile.nfs_mount)

    def unavailable(self) -> str | None:
        if self.profile.provider.nfs_export() is None and not self.profile.nfs_mount:
            return "no NFS export: set the profile's nfs_mount (where the export is mounted)"
        return None

    def health_probe(self, read_file: str | None = None):
        folder, server = super().health_probe(), nfs_probe(self.profile)
        return lambda: folder() or server()

    def fix(self) -> str:
        return self.profile.provider.fix("nfs", "mount the NFS export at the profile's nfs_mount")


class FuseHdfs(WritesRefused, MountedFolder):
    """HDFS mounted through FUSE (read-only): HDFS's folders, read as plain files through the mount."""

    name = "fuse-hdfs"
    backing = "hdfs"
    reads_through = "its FUSE mount"

    @cached_property
    def copy(self) -> Storage:
        return get_storage(self.backing, self.profile)

    def root(self) -> Path:
        if not self.profile.fuse_hdfs_mount:
            raise PerfkitError("no FUSE mount of HDFS: set the profile's fuse_hdfs_mount")
        return Path(self.profile.fuse_hdfs_mount)

    def folder(self, *parts: str) -> Location:
        return self.copy.folder(*parts)

    def path(self, loc: Location, name: str = "") -> Path:
        return self.root().joinpath(loc.path.lstrip("/"), name)

    def unavailable(self) -> str | None:
        return None if self.profile.fuse_hdfs_mount else "no FUSE mount of HDFS: the profile's fuse_hdfs_mount is empty"

    def problem(self) -> str | None:
        return None if os.path.ismount(self.root()) else "not mounted"

    def check(self) -> None:
        self.copy.check()
        super().check()

    def fix(self) -> str:
        return self.profile.provider.fix("fuse-hdfs", "mount HDFS there")

    def make_folder(self, loc: Location) -> None:
        raise refuse_write(self)


def _within(timeout_s: float, check) -> str | None:
    """check()'s answer, or a timeout message when it does not return in time (it is left behind, a daemon)."""
    answer: list = []
    worker = threading.Thread(target=lambda: answer.append(check()), daemon=True)
    worker.start()
    worker.join(timeout_s)
    return answer[0] if answer else f"did not answer within {timeout_s:g} s"


def nfs_probe(profile: Profile) -> health.Probe:
    """The NFS export lists its root within the probe's time (libnfs' nfs-ls; a frozen server does not answer)."""
    import shutil
    import subprocess

    if not profile.nfs_url or shutil.which("nfs-ls") is None:
        return lambda: None  # nothing to ask it with: the reads themselves will fail if it is gone

    def probe() -> str | None:
        try:
            subprocess.run(["nfs-ls", profile.nfs_url], capture_output=True, timeout=health.PROBE_TIMEOUT_S, check=True)
        except subprocess.TimeoutExpired:
            return f"NFS at {profile.nfs_url} did not answer within {health.PROBE_TIMEOUT_S:g} s"
        except subprocess.CalledProcessError as err:
            return (f"NFS at {profile.nfs_url} failed "
                    f"({root_cause(err.stderr.decode(errors='replace') or str(err), 120)})")
        return None

    return probe
