"""Which addresses the lab's processes talk to: every TCP and UDP socket of every process the lab started (and
their children), with its peer. The lab must never talk to an address off this machine.

    watch = SocketWatch(Lab().pids()); watch.start(); ...; watch.stop(); watch.foreign   # sampled during a run
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from dataclasses import dataclass

import psutil

from perfkit.lab.process import plain_ip


@dataclass(frozen=True)
class Connection:
    pid: int
    command: str
    protocol: str
    local: str
    remote: str
    state: str

    @property
    def off_machine(self) -> bool:
        """A peer that is neither this machine's loopback nor "none" (a listening or unconnected socket)."""
        address = self.remote.rsplit(":", 1)[0].strip("[]")
        ip = ipaddress.ip_address(address)
        return not (ip.is_loopback or ip.is_unspecified)


def process_tree(roots: list[int]) -> list[int]:
    """The given pids and every process below them (a daemon's children: Hive's local jobs, Spark's workers)."""
    found = list(dict.fromkeys(roots))
    for pid in list(found):
        try:
            children = psutil.Process(pid).children(recursive=True)
        except psutil.Error:  # gone, or not ours to look at
            continue
        found += [child.pid for child in children if child.pid not in found]
    return found


def _protocol(sock) -> str:
    """tcp, tcp6, udp or udp6: the /proc/net table the socket is listed in."""
    name = "tcp" if sock.type == socket.SOCK_STREAM else "udp"
    return name + ("6" if sock.family == socket.AF_INET6 else "")


def _endpoint(address, family: int) -> str:
    """ip:port; an unset peer reads as the family's any-address and port 0 ("0.0.0.0:0", ":::0")."""
    if not address:
        return "0.0.0.0:0" if family == socket.AF_INET else ":::0"
    return f"{plain_ip(address.ip)}:{address.port}"


def connections(roots: list[int]) -> list[Connection]:
    """Every TCP/UDP socket of the processes (and their children), with its peer."""
    found = []
    for pid in process_tree(roots):
        try:
            process = psutil.Process(pid)
            command, sockets = process.name(), process.net_connections(kind="inet")
        except psutil.Error:
            continue
        for sock in sockets:
            state = sock.status if sock.type == socket.SOCK_STREAM else "-"
            found.append(Connection(pid, command, _protocol(sock), _endpoint(sock.laddr, sock.family),
                                    _endpoint(sock.raddr, sock.family), state))
    return found


class SocketWatch:
    """Samples the processes' sockets every `interval` s in a thread; `foreign` collects every peer off the machine.
    A connection opened and closed between two samples can slip through: sample often during the work."""

    def __init__(self, roots: list[int], interval: float = 0.2):
        self.roots, self.interval = roots, interval
        self.samples = 0
        self.peers: set[tuple[str, str]] = set()  # (command, remote) of every connected socket seen
        self.foreign: set[Connection] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        for conn in connections(self.roots):
            if conn.state != "LISTEN" and not conn.remote.endswith(":0"):
                self.peers.add((conn.command, conn.remote))
            if conn.off_machine:
                self.foreign.add(conn)
        self.samples += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def start(self) -> "SocketWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
