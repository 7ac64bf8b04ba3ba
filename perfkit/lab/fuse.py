"""HDFS mounted through FUSE: `rclone mount` with rclone's HDFS backend (the Go client gohdfs uses)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import psutil

from perfkit.errors import ServiceError
from perfkit.lab import tools
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts


def is_mounted(path: Path) -> bool:
    """From the mount table, not stat(): a dead FUSE mount fails stat() but is still mounted."""
    return any(part.mountpoint == str(path) for part in psutil.disk_partitions(all=True))


class HdfsFuseMount(Service):
    name = "fuse-hdfs"
    needs = ("hdfs",)  # it mounts HDFS

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.mountpoint = home / "mnt" / "hdfs"
        self.daemons = [Daemon("fuse-hdfs", home, " mount :hdfs:")]  # no port of its own

    def addresses(self) -> dict[str, str]:
        return {"fuse-hdfs": f"{self.mountpoint} (HDFS /, read-only)"}

    def start(self) -> None:
        if not Path("/dev/fuse").exists() or shutil.which("fusermount3") is None:
            raise ServiceError(self.name, "FUSE is not available (/dev/fuse or fusermount3 missing)",
                               "apt-get install fuse3 (the machine must offer /dev/fuse)")
        if self.daemon.pid() is None:
            self._unmount_stale()
            self.mountpoint.mkdir(parents=True, exist_ok=True)
            self.daemon.start(self.argv())
        self.wait_healthy(self.daemon, 30, "read the log; is FUSE usable here?")

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return [str(tools.rclone()), "mount", ":hdfs:/", str(self.mountpoint),
                "--hdfs-namenode", f"{HOST}:{self.ports.namenode_rpc}", "--hdfs-username", "perfkit",
                "--read-only", "--vfs-cache-mode", "off", "--dir-cache-time", "2s"]

    def stop(self) -> list[str]:
        stopped = super().stop()
        self._unmount_stale()
        return stopped

    def _unmount_stale(self) -> None:
        """A mount left behind by a killed rclone answers every call with an error: unmount it."""
        if is_mounted(self.mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", str(self.mountpoint)], capture_output=True)

    def health(self) -> tuple[bool, str]:
        if not is_mounted(self.mountpoint):
            return False, "not mounted"
        try:
            os.listdir(self.mountpoint)
        except OSError as err:
            return False, f"mounted but not answering ({err.strerror})"
        return True, "mounted"
