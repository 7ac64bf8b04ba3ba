"""An NFS server on loopback: `rclone serve nfs` exports a lab folder (NFSv3, no portmapper needed).

The kernel here has no NFS client, so the lab reads it with libnfs (nfs-cat); a cluster mounts its
own NFS server and reads through the mount.
"""
from __future__ import annotations

from pathlib import Path

from perfkit.lab import tools
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts


class NfsServer(Service):
    name = "nfs"

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.export = home / "nfs"
        self.daemons = [Daemon("nfs", home, "serve nfs", ports={"nfs": ports.nfs})]

    def addresses(self) -> dict[str, str]:
        return {"nfs": f"nfs://{HOST}/ port {self.ports.nfs} (exports {self.export})"}

    def start(self) -> None:
        self.export.mkdir(parents=True, exist_ok=True)
        if self.daemon.pid() is None:
            self.daemon.start(self.argv())
        self.wait_healthy(self.daemon, 30, "read the log; is another NFS server on that port?")

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return [str(tools.rclone()), "serve", "nfs", str(self.export), "--addr", f"{HOST}:{self.ports.nfs}",
                "--read-only", "--vfs-cache-mode", "off", "--dir-cache-time", "2s"]

    def health(self) -> tuple[bool, str]:
        return (True, "answering") if port_in_use(HOST, self.ports.nfs) else (False, "port not open")
