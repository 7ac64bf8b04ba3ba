"""The embedded lab on 127.0.0.1: real HDFS, a real S3-compatible server, an NFS server, a HiveServer2
endpoint, and HDFS mounted through FUSE.

    from perfkit.lab import Lab
    Lab().up(); Lab().status(); Lab().down()
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools
from perfkit.lab.fuse import HdfsFuseMount
from perfkit.lab.hdfs import Hdfs
from perfkit.lab.hiveserver import HiveServer
from perfkit.lab.nfs import NfsServer
from perfkit.lab.process import port_in_use
from perfkit.lab.s3 import S3Server
from perfkit.lab.settings import HOST, LabPorts, lab_credentials
from perfkit.paths import lab_home


@dataclass
class ServiceStatus:
    service: str
    address: str
    pid: int | None
    healthy: bool
    detail: str


class Lab:
    def __init__(self, home: Path | None = None, ports: LabPorts | None = None):
        self.home = Path(home) if home else lab_home()
        self.ports = ports or LabPorts.from_env()
        # start order: storage first, then what reads it
        self.services = [Hdfs(self.home, self.ports), S3Server(self.home, self.ports), NfsServer(self.home, self.ports),
                         HiveServer(self.home, self.ports), HdfsFuseMount(self.home, self.ports)]

    def up(self) -> list[ServiceStatus]:
        """Start what is not running and wait until every service is healthy. Safe to repeat."""
        tools.java_home()
        tools.hadoop_lib()
        tools.versitygw()
        tools.rclone()
        tools.spark_home()
        lab_credentials(create=True, home=self.home)
        for service in self.services:
            self._check_ports(service)
        for service in self.services:
            print(f"lab: starting {service.name} ...", flush=True)
            service.start()
        return self.status()

    def down(self) -> list[str]:
        """Stop every process this lab started (and nothing else); return their names."""
        stopped = []
        for service in reversed(self.services):
            stopped += service.stop()
        return stopped

    def status(self) -> list[ServiceStatus]:
        rows = []
        for service in self.services:
            pids = {d.name: d.pid() for d in service.daemons}
            running = all(pids.values())
            healthy, detail = service.health() if running else (False, "not running")
            addresses = service.addresses()
            for name, pid in pids.items():
                rows.append(ServiceStatus(name, addresses.get(name, next(iter(addresses.values()))), pid, healthy, detail))
        return rows

    def is_up(self) -> bool:
        return all(row.healthy for row in self.status())

    def pids(self) -> list[int]:
        return [pid for s in self.services for d in s.daemons if (pid := d.pid())]

    def _check_ports(self, service) -> None:
        if all(d.pid() for d in service.daemons):
            return  # ours, already running
        for name, port in service.ports_needed().items():
            if port_in_use(HOST, port):
                raise PerfkitError(
                    f"lab: {service.name} cannot start: port {port} ({name}) on {HOST} is already in use by another "
                    f"program (log: {service.daemons[0].log}). Fix: stop that program, or move the lab with "
                    f"PERFKIT_LAB_PORT_{name.split(' ')[0].upper()}=<free port>"
                )
