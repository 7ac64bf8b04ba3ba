"""Which addresses the lab's processes talk to: every TCP and UDP socket of every process the lab started (and
their children), read from /proc, with its peer. The lab must never talk to an address off this machine.

    watch = SocketWatch(Lab().pids()); watch.start(); ...; watch.stop(); watch.foreign   # sampled during a run
"""
from __future__ import annotations

import ipaddress
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from perfkit.lab.process import _proc_net_address

_TABLES = {"tcp": "/proc/net/tcp", "tcp6": "/proc/net/tcp6", "udp": "/proc/net/udp", "udp6": "/proc/net/udp6"}
_TCP_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
               "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING"}


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
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.append(pid)
            todo += children.get(pid, [])
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def connections(roots: list[int]) -> list[Connection]:
    """Every TCP/UDP socket of the processes (and their children), with its peer."""
    owner = {}
    for pid in process_tree(roots):
        try:
            command = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        for inode in _socket_inodes(pid):
            owner[inode] = (pid, command)
    found = []
    for protocol, table in _TABLES.items():
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[9] not in owner:
                continue
            pid, command = owner[fields[9]]
            (local, lport), (remote, rport) = (f.split(":") for f in fields[1:3])
            state = _TCP_STATES.get(fields[3], fields[3]) if protocol.startswith("tcp") else "-"
            found.append(Connection(pid, command, protocol, f"{_proc_net_address(local)}:{int(lport, 16)}",
                                    f"{_proc_net_address(remote)}:{int(rport, 16)}", state))
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
