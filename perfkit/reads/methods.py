"""The read methods: a mounted path, libnfs, the Hadoop CLI, WebHDFS, gohdfs, and HDFS through FUSE."""
from __future__ import annotations

import mmap
import os
import shutil

from perfkit.storages import hdfs as hdfs_storage
from perfkit.errors import PerfkitError
from perfkit.hadoop_cli import HadoopCli, gohdfs, gohdfs_unavailable
from perfkit.reads import BUFFER, ReadMethod, drain_command


def read_path(path: str, buffer) -> int:
    """Read a file to nowhere through the kernel, one large buffer at a time."""
    total = 0
    try:
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buffer):
                total += n
    except OSError as err:
        raise PerfkitError(f"cannot read {path}: {err.strerror}") from None
    return total


class PathReader(ReadMethod):
    """Reads plain files through the kernel into one buffer, allocated before the clock starts.

    The buffer is page-aligned anonymous memory: the kernel copies into it about twice as fast as
    into a bytearray, whose data starts off a page boundary (measured: ~9 vs ~19 GB/s from cache).
    Its size, `buffer_size` bytes, is the size of every read call (bench/read.py gives dd the same).
    """

    buffer = None
    buffer_size = BUFFER

    def prepare(self):
        self.buffer = mmap.mmap(-1, self.buffer_size)

    def read(self, location):
        if self.buffer is None:
            self.prepare()
        return read_path(location, self.buffer)


class Posix(PathReader):
    """Any mounted path: the NFS export where a cluster mounts it (profile setting nfs_mount)."""

    name, storage = "posix", "nfs"

    def unavailable(self):
        if not self.profile.nfs_mount:
            known = self.profile.provider.no_nfs_mount()
            why = f" ({known})" if known else ""
            return f"no NFS mount: the profile's nfs_mount is empty{why}"
        if not os.path.isdir(self.profile.nfs_mount):
            return f"nfs_mount {self.profile.nfs_mount} is not a folder"
        return None

    def location(self, relative):
        return os.path.join(self.profile.nfs_mount, relative)


class LibNfs(ReadMethod):
    """A userspace NFS client (libnfs's nfs-cat): no mount needed."""

    name, storage = "libnfs", "nfs"

    def unavailable(self):
        if not self.profile.nfs_url:
            return "no NFS server: the profile's nfs_url is empty"
        if shutil.which("nfs-cat") is None:
            return "nfs-cat is not installed (apt-get install libnfs-utils)"
        return None

    def location(self, relative):
        return self.profile.nfs_file_url(relative)

    def read(self, location):
        return drain_command(["nfs-cat", location], f"nfs-cat {location.split('?')[0]}")


class HdfsCli(ReadMethod):
    """`hadoop fs -cat`, one JVM per file, as jobs on a cluster would call it."""

    name, storage = "hdfs-cli", "hdfs"

    def location(self, relative):
        return self.profile.hdfs_url_of(relative)

    def read(self, location):
        return drain_command(HadoopCli(self.profile).command("fs", "-cat", location), f"hadoop fs -cat {location}")


class WebHdfs(ReadMethod):
    """HTTP reads from the DataNodes, through the NameNode's redirect."""

    name, storage = "webhdfs", "hdfs"

    def location(self, relative):
        return "/" + relative.lstrip("/")

    def read(self, location):
        from hdfs import HdfsError

        total = 0
        try:
            with hdfs_storage.webhdfs_client(self.profile).read(location, chunk_size=BUFFER) as chunks:
                for chunk in chunks:
                    total += len(chunk)
        except HdfsError as err:
            raise PerfkitError(f"WebHDFS read of {location} failed: {str(err)[:300]}") from None
        return total


class GoHdfs(ReadMethod):
    """The Go HDFS client (`gohdfs cat`): native RPC, no JVM."""

    name, storage = "gohdfs", "hdfs"

    def unavailable(self):
        return gohdfs_unavailable(self.profile)

    def location(self, relative):
        return "/" + relative.lstrip("/")

    def read(self, location):
        binary, env = gohdfs(self.profile)
        return drain_command([binary, "cat", location], f"gohdfs cat {location}", {**os.environ, **env})


class FuseHdfs(PathReader):
    """HDFS mounted through FUSE (rclone's HDFS backend in the lab), read as plain files."""

    name, storage = "fuse-hdfs", "hdfs"

    def unavailable(self):
        mount = self.profile.fuse_hdfs_mount
        if not mount:
            return "no FUSE mount of HDFS: the profile's fuse_hdfs_mount is empty"
        if not os.path.ismount(mount):
            return f"{mount} is not mounted: {self.profile.provider.fix('fuse-hdfs', 'mount HDFS there')}"
        return None

    def location(self, relative):
        return os.path.join(self.profile.fuse_hdfs_mount, relative.lstrip("/"))
