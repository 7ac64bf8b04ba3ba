"""The embedded lab on 127.0.0.1: real HDFS, a real S3-compatible server, an NFS server, a Hive metastore shared
by real Hive (HiveServer2), the Spark Thrift Server and Trino, Alluxio in front of S3, and HDFS mounted through FUSE;
in the cluster shape (perfkit.lab.shape) also YARN, with a DataNode and a NodeManager on each node's own loopback
address.

    from perfkit.lab import Lab
    Lab().up(); Lab().status(); Lab().down()
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import alluxio_dist, cluster_spark, hive_jars, java, tools, trino_dist, versions
from perfkit.lab.alluxio import AlluxioServer
from perfkit.lab.fuse import HdfsFuseMount
from perfkit.lab.hdfs import Hdfs
from perfkit.lab.hive import HiveServer2
from perfkit.lab.emr_notebooks import EmrNotebooks
from perfkit.lab.livy import Livy
from perfkit.lab.metastore import HiveMetastore
from perfkit.lab.nfs import NfsServer
from perfkit.lab.process import port_in_use, port_owner
from perfkit.lab.s3 import S3Server
from perfkit.lab.s3_network import S3Network, current_network, save_network
from perfkit.lab.service import Service, say, start_order, start_together
from perfkit.lab.shape import LabShape, current_shape, save_shape
from perfkit.lab.spark_thrift import SparkThriftServer
from perfkit.lab.trino import TrinoServer
from perfkit.lab.yarn import Yarn
from perfkit.lab.settings import (HOST, JAVA_OPTIONS_FILE, LabPorts, check_room, checked_home, default_s3_endpoint,
                                  lab_credentials, lab_s3_endpoint, note_java_options, set_lab_s3_endpoint)
from perfkit.locks import network_change
from perfkit.network import PROFILES, NetworkProfile

# the services whose configuration names the S3 endpoint (written at their start)
S3_CLIENTS = ("yarn", "hive-metastore", "hiveserver2", "spark-thrift", "trino", "alluxio")


@dataclass
class ServiceStatus:
    """One daemon: `pid` is set while it runs; `healthy` also needs its whole service to answer."""

    service: str
    address: str
    pid: int | None
    healthy: bool
    detail: str

    @property
    def running(self) -> bool:
        return self.pid is not None


class Lab:
    def __init__(self, home: Path | None = None, ports: LabPorts | None = None):
        self.home = checked_home(home)
        self.ports = ports or LabPorts.from_env()
        self.skipped: set[str] = set()  # services the last up() left down on purpose (no Java for them, ...)
        self._build(current_shape(self.home))

    def _build(self, shape: LabShape) -> None:
        self.shape = shape
        hdfs = Hdfs(self.home, self.ports, shape=shape)
        self.ports.check_distinct(hdfs.datanode_count)  # ports given here did not pass from_env's check
        # listed storage first, then what reads it; select() and down() follow each service's `needs` all the same.
        # YARN is listed in every shape, so that `down` and `status` always see it; only the cluster shape starts it
        before_yarn = [kind(self.home, self.ports) for kind in (S3Server, S3Network, AlluxioServer, NfsServer)]
        self.services: list[Service] = [hdfs, *before_yarn, Yarn(self.home, self.ports, shape), *(
            kind(self.home, self.ports) for kind in (HiveMetastore, HiveServer2, SparkThriftServer, TrinoServer,
                                                     HdfsFuseMount, Livy, EmrNotebooks))]

    def shaped(self, services: list[Service]) -> list[Service]:
        """Those of `services` the lab's shape runs: YARN, Livy and the EMR stand-in only in the cluster shape."""
        return [s for s in services if not s.cluster_only or self.shape.yarn]

    def set_shape(self, shape: LabShape) -> None:
        """Give the lab `shape` (refused while any of its processes runs: HDFS cannot trade its DataNodes for others
        while it serves, nor Hive its MapReduce)."""
        if shape == self.shape:
            return
        if self.pids():
            raise PerfkitError(f"lab: the lab runs in the {self.shape.name} shape; it changes shape only while down. "
                               f"Fix: `perfkit lab down`, then `perfkit lab up --shape {shape.name}`")
        save_shape(shape, self.home)
        self._build(shape)

    def select(self, names: list[str] | None = None) -> list[Service]:
        """The named services (or daemons: namenode -> hdfs) and what they need, in start order; all by default."""
        ordered = self.shaped(start_order(self.services))
        if not names:
            return ordered
        by_name = {service.name: service for service in self.services}
        by_name.update({d.name: service for service in self.services for d in service.daemons})
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise PerfkitError(f"lab: no service {', '.join(unknown)}: the lab's services are "
                               f"{', '.join(s.name for s in self.services)}")
        only_there = sorted({by_name[n].name for n in names if by_name[n].cluster_only})
        if not self.shape.yarn and only_there:
            verb = "runs" if len(only_there) == 1 else "run"
            raise PerfkitError(f"lab: {' and '.join(only_there)} {verb} in the cluster shape only, and this lab is "
                               f"{self.shape.name}. Fix: `perfkit lab down`, then `perfkit lab up --shape cluster`")
        wanted, todo = set(), [by_name[n].name for n in names]
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo += by_name[name].needs
        if S3Server.name in wanted and current_network(self.home).emulated:
            wanted.add(S3Network.name)  # the server sits behind the network's proxy: its clients reach it through it
        return [service for service in ordered if service.name in wanted]

    def up(self, names: list[str] | None = None, network: NetworkProfile | None = None,
           shape: LabShape | None = None) -> list[ServiceStatus]:
        """Start what is not running (only the daemons that are missing) of the named services and what they
        need (all by default), and wait until they are healthy. Safe to repeat, and the way to heal a lab
        after one of its daemons died. `network`: S3's emulated network, set once the tools are fetched and before
        the S3 clients start (set_network). `shape`: the lab's shape, changed only while the lab is down."""
        if shape is not None:
            self.set_shape(shape)
        services = self.select(names)
        check_room(self.home)  # before the tools are fetched: they need room too
        tools.java_home()
        if len(services) > 1 or len(services) == len(self.shaped(self.services)):
            # every download before the first start: a slow fetch never leaves half a lab, and the starts, which
            # run side by side, never fetch at once (Maven's local repository takes one writer)
            self.fetch_tools(yarn=True) if self.shape.yarn else self.fetch_tools()
            tools.spark_home()  # pyspark, which pip installs (not fetched here)
        lab_credentials(create=True, home=self.home)
        for service in services:
            self._check_ports(service)
        if network is not None:
            self.set_network(network)
        if any(None in service.pids().values() for service in services):  # what starts now, starts with them
            note_java_options(self.home, whole_lab_down=not self.pids())
        self.skipped = start_together(services, self._start)
        return self.status(names and [s.name for s in services])

    @staticmethod
    def _start(service: Service) -> bool:
        """Start `service`'s missing daemons and wait until it is healthy; False when it has no Java to run on."""
        missing = [name for name, pid in service.pids().items() if pid is None]
        if missing:
            which = "" if missing == [service.name] else f" ({', '.join(missing)})"
            say(f"lab: starting {service.name}{which} ...")
        try:
            service.start()  # starts only its missing daemons, then waits until the service is healthy
        except java.MissingJava as err:  # this service only: the others come up
            say(f"lab: {service.name} not started: {err}")
            return False
        return True

    @staticmethod
    def fetch_tools(yarn: bool = False) -> None:
        """Fetch (once, into the tool cache) what every service runs, each step timed. The Go builds (CPU-bound) run
        beside the Maven fetches (network-bound); each chain in order, as Maven's local repository takes one writer.
        `yarn`: also what the cluster shape's YARN runs."""
        cluster = [("YARN jars", tools.yarn_lib), ("node address shim", tools.node_address_library),
                   (f"Spark {versions.CLUSTER_SPARK}", cluster_spark.fetch)] if yarn else []
        chains = [
            [("versitygw", tools.versitygw), ("toxiproxy", tools.toxiproxy), ("gohdfs", tools.gohdfs),
             ("rclone", tools.rclone)],
            [("Hadoop jars", tools.hadoop_lib), *cluster, ("Hive metastore", hive_jars.metastore_home),
             ("Hive jars", hive_jars.hive_lib), ("Trino", trino_dist.trino_home), ("Alluxio", alluxio_dist.alluxio_lib),
             ("Alluxio client", alluxio_dist.alluxio_client_jar)],
        ]
        with ThreadPoolExecutor(len(chains)) as pool:
            for future in [pool.submit(_fetch_in_order, chain) for chain in chains]:
                future.result()

    def skipped_daemons(self) -> set[str]:
        """The daemons of the services the last up() left down on purpose (it said why)."""
        return {d.name for s in self.services if s.name in self.skipped for d in s.daemons}

    def send_s3_to(self, endpoint: str | None) -> list[str]:
        """Point every S3 client of the lab (the engines' servers, Alluxio, `hadoop` and DistCp) at `endpoint`
        (None: the lab's own s3 port, without the emulator); restart the running ones when that changes where they
        send requests. Returns what restarted.

        Anywhere but the lab's s3 port, or `direct`, an emulated network set before no longer lies on their path: the
        network becomes `local`, and this says so (a report must not claim a distance its clients did not cross)."""
        own = default_s3_endpoint(self.ports)
        if endpoint is not None and endpoint.rstrip("/") == own:
            endpoint = None  # the lab's own port: through the emulator when one is set, as before
        elif (before := current_network(self.home)).emulated:
            save_network(PROFILES["local"], self.home)
            if self.s3_side_running():
                self._place_s3()
            print(f"lab: S3 network now local, was {before.describe()}: its S3 clients go to "
                  f"{endpoint or 'the lab S3 server'}, not through the emulator (`perfkit lab network {before.name}` "
                  "puts them behind it again)", flush=True)
        return self._point_clients_at(endpoint)

    def _point_clients_at(self, endpoint: str | None) -> list[str]:
        """Record where the lab's S3 clients send requests (None: the lab's s3 port) and restart the running ones
        if that changed (they read it at start). Returns what restarted."""
        if (endpoint or default_s3_endpoint(self.ports)) == lab_s3_endpoint(self.ports, self.home):
            return []
        set_lab_s3_endpoint(endpoint, self.home)
        self.services[0].write_config()  # HDFS's core-site.xml, read by `hadoop fs` and DistCp at each start
        running = [s for s in start_order(self.services)
                   if s.name in S3_CLIENTS and any(pid for pid in s.pids().values())]
        for service in reversed(running):
            service.stop()

        def restart(service: Service) -> bool:
            say(f"lab: restarting {service.name} against S3 at {endpoint or 'the lab S3 server'} ...")
            service.start()
            return True

        start_together(running, restart)  # side by side, each once what it needs is back, as `up` starts them
        return [s.name for s in running]

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def set_network(self, network: NetworkProfile, start: bool = True) -> list[str]:
        """Put S3 behind `network` for every S3 client of the lab (refused while a run measures). Changing the toxics
        is instant; going from `local` to an emulated network or back moves the S3 server between its two ports
        (perfkit.lab.s3), and no client. Clients sent elsewhere by `lab up --s3-endpoint URL` come back to the lab's
        s3 port (a restart of the running ones). Returns what restarted. With `start` False and neither the S3 server,
        the proxy nor any S3 client running (the lab is down), the choice is only recorded: the server and the proxy
        take it up when they start."""
        with network_change():
            save_network(network, self.home)
            if not start and not self.s3_side_running():
                set_lab_s3_endpoint(None, self.home)  # where the S3 clients will send requests when they start
                if self.running([self.services[0].name]):  # `hadoop fs` and DistCp read HDFS's core-site.xml
                    self.services[0].write_config()
                return []
            self._place_s3()
            return self._point_clients_at(None)  # restarts only clients a `--s3-endpoint URL` had sent elsewhere

    def _place_s3(self) -> None:
        """The S3 server on the port the saved network wants and the proxy's listener on or off to match, both
        started if they are not running. A server on the other port is moved: the proxy's listener is turned off
        first, when the server is to take the s3 port back."""
        server, proxy = self.service(S3Server.name), self.service(S3Network.name)
        if server.serving_port() not in (None, server.port):
            proxy.close()
            server.stop()
        self.up([S3Network.name])  # the S3 server (on its port) and the proxy, which applies the saved profile

    def running(self, names: list[str]) -> bool:
        """Whether a daemon of any of these services runs."""
        return any(pid for s in self.services if s.name in names for pid in s.pids().values())

    def s3_side_running(self) -> bool:
        """Whether the S3 server, the network's proxy or any S3 client of the lab runs: what a network change
        reaches now."""
        return self.running([S3Server.name, S3Network.name, *S3_CLIENTS])

    def network(self) -> NetworkProfile:
        return current_network(self.home)

    def down(self) -> list[str]:
        """Stop every process this lab started (and nothing else); return their names."""
        stopped = []
        for service in reversed(start_order(self.services)):
            stopped += service.stop()
        (self.home / JAVA_OPTIONS_FILE).unlink(missing_ok=True)
        return stopped

    def status(self, names: list[str] | None = None) -> list[ServiceStatus]:
        """One row per daemon (of the named services, or all): a live daemon keeps its pid even when its
        service is degraded."""
        rows = []
        for service in self.select(names):
            pids = service.pids()
            dead = [name for name, pid in pids.items() if pid is None]
            if len(dead) == len(pids):
                healthy, detail = False, "not running"
            else:
                healthy, detail = service.health()
                if dead:
                    healthy, detail = False, f"{', '.join(dead)} not running; {detail}"
            addresses = service.addresses()
            for name, pid in pids.items():
                address = addresses.get(name, next(iter(addresses.values())))
                if pid is None:
                    rows.append(ServiceStatus(name, address, None, False, "not running"))
                else:
                    rows.append(ServiceStatus(name, address, pid, healthy, detail))
        return rows

    def is_up(self) -> bool:
        return all(row.healthy for row in self.status())

    def pids(self) -> list[int]:
        return [pid for s in self.services for pid in s.pids().values() if pid]

    def _check_ports(self, service: Service) -> None:
        """Every port of every daemon that must be started is free (a live daemon of ours keeps its own)."""
        for daemon in service.daemons:
            if daemon.pid() is not None:
                continue
            for field, port in daemon.ports.items():
                if port_in_use(HOST, port) and not self._holds(port):
                    raise PerfkitError(self._port_taken(service, daemon, field, port))

    def _holds(self, port: int) -> bool:
        """Whether one of this lab's own daemons listens on `port` (the network's proxy on the s3 port)."""
        owner = port_owner(HOST, port)
        return owner is not None and owner[0] in self.pids()

    def _port_taken(self, service: Service, daemon, field: str, port: int) -> str:
        who = daemon.name if daemon.name == service.name else f"{daemon.name} ({service.name})"
        owner = port_owner(HOST, port)
        by = f"pid {owner[0]} ({_short(owner[1]) or 'command line not readable'})" if owner else "another program"
        log = f" (last log of {daemon.name}: {daemon.log})" if daemon.log.exists() else ""
        move = f"PERFKIT_LAB_PORT_{field.upper()}=<free port>"
        offset = port - getattr(self.ports, field, port)
        if offset:
            move += f" ({daemon.name} listens on that port + {offset})"
        return (f"lab: {who} cannot start: port {port} ({field}) on {HOST} is already in use by {by}{log}. "
                f"Fix: stop that program, or move the lab with {move}")


def _short(cmdline: str, limit: int = 160) -> str:
    return cmdline if len(cmdline) <= limit else cmdline[:limit - 3] + "..."


def _fetch_in_order(steps) -> None:
    for what, fetch in steps:
        began = time.monotonic()
        fetch()
        if (took := time.monotonic() - began) > 1:  # fetched or built now, not found in the tool cache
            print(f"lab: {what} ready in {took:.0f} s", flush=True)
