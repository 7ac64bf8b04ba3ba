"""Start, find and stop the lab's daemons by the pid files the lab itself wrote."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil

from perfkit import atomic
from perfkit.errors import STACK_FRAME, ServiceError, root_cause
from perfkit.lab.settings import HOST
from perfkit.waiting import WaitTimeout, poll_until


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def plain_ip(ip: str) -> str:
    """An IPv4-mapped IPv6 address (a Java server on a tcp6 socket) as the IPv4 address it stands for."""
    try:
        mapped = getattr(ipaddress.ip_address(ip.split("%")[0]), "ipv4_mapped", None)
    except ValueError:
        return ip
    return str(mapped) if mapped else ip


def listening_addresses(pid: int | None) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket process `pid` listens on: where it can be reached."""
    if pid is None:
        return []
    try:
        sockets = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.Error:  # gone, or not ours to look at
        return []
    return sorted({(plain_ip(s.laddr.ip), s.laddr.port) for s in sockets if s.status == psutil.CONN_LISTEN})


def command_line(pid: int) -> str:
    """The process's arguments joined by spaces; empty if it is gone, unreadable or inside exec()."""
    try:
        return " ".join(psutil.Process(pid).cmdline()).strip()
    except psutil.Error:
        return ""


def port_owner(host: str, port: int) -> tuple[int, str] | None:
    """(pid, command line) of the process listening on host:port, when this machine lets us see it."""
    wanted = {host, "0.0.0.0", "::"}  # that address, or a wildcard a connection to it would land on
    try:
        sockets = psutil.net_connections(kind="tcp")
    except psutil.Error:
        return None
    for s in sockets:
        if s.status == psutil.CONN_LISTEN and s.laddr.port == port and s.pid and plain_ip(s.laddr.ip) in wanted:
            return s.pid, command_line(s.pid)
    return None


_START_MARK = "=== perfkit lab: starting"
# a log past this size is set aside when its daemon starts, one older copy kept: the lab's logs grew by about 500 MB
# in a day of reports (the S3 access log, a line per request, the most), and nothing ever read their old parts
LOG_SET_ASIDE_BYTES = 64 * 2**20
# a qualified Java exception at the start of a line ("Caused by: java.net.BindException: ...") names the root cause
_JAVA_EXCEPTION = re.compile(r"^(Caused by:\s*)?[\w$]+(\.[\w$]+)+(Exception|Error)\b")
_ERROR_LINE = re.compile(r"Exception|Error\b|(?i:\b(error|fatal|failed)\b|address already in use)")
BIND_FAILED = re.compile(r"BindException|(?i:address already in use)")


def start_failure(log: Path) -> str:
    """One line: why the daemon's latest start failed, read from its log since that start.

    The last Java exception wins (the innermost "Caused by" of the fatal trace), then the last line
    that speaks of an error, then simply the last line.
    """
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "no log"
    mark = text.rfind(_START_MARK)  # the log is appended to: only this start's part counts
    lines = [line.strip() for line in (text[mark:].splitlines()[1:] if mark >= 0 else text.splitlines())]
    lines = [line for line in lines if line and not STACK_FRAME.match(line)]
    for wanted in (_JAVA_EXCEPTION.match, _ERROR_LINE.search, bool):
        found = [line for line in lines if wanted(line)]
        if found:
            return root_cause(found[-1]).rstrip(".")
    return "nothing in its log"


def set_aside_if_large(log: Path, limit: int | None = None) -> None:
    """Before the daemon that appends to `log` starts: a log past `limit` bytes becomes <name>.1 (replacing the one
    set aside before), and the daemon starts a new one. Readers that keep an offset see a shorter file and start over
    (perfkit.storages.s3_access_log)."""
    try:
        if log.stat().st_size > (LOG_SET_ASIDE_BYTES if limit is None else limit):
            log.replace(log.with_name(f"{log.name}.1"))
    except FileNotFoundError:
        pass


class Daemon:
    """One background process of the lab: its pid file, log file and command line marker.

    The marker (a string its command line must contain) and the process start time recorded
    in the pid file guard against a reused pid: the lab never signals a process it did not start.
    `ports` are the TCP ports this daemon listens on, by LabPorts field name.
    """

    def __init__(self, name: str, home: Path, marker: str, ports: dict[str, int] | None = None):
        self.name, self.marker = name, marker
        self.ports = dict(ports or {})
        self.pid_file = home / "pids" / f"{name}.pid"
        self.log = home / "logs" / f"{name}.log"

    def pid(self) -> int | None:
        """The pid of our running process, or None (and a stale pid file is removed)."""
        try:
            record = json.loads(self.pid_file.read_text())
            pid = int(record["pid"])
        except (OSError, KeyError, ValueError, TypeError):
            self.pid_file.unlink(missing_ok=True)
            return None
        started = record.get("started")
        for _ in range(5):
            if _gone(pid) or (started is not None and start_ticks(pid) != started):
                break  # gone, or the pid now names another process
            cmdline = command_line(pid)
            if self.marker in cmdline:
                return pid
            if cmdline:
                break  # a command line without our marker: not ours
            time.sleep(0.01)  # empty while the process is inside exec(): look again
        self.pid_file.unlink(missing_ok=True)
        return None

    def start(self, argv: list[str], env: dict | None = None, cwd: Path | None = None) -> int:
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        set_aside_if_large(self.log)
        with open(self.log, "ab") as log:
            log.write(f"\n=== perfkit lab: starting {self.name} at {time.ctime()} ===\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True,
            )
        # never a half-written pid file for a concurrent reader
        atomic.write_text(self.pid_file,
                          json.dumps({"pid": proc.pid, "argv": argv[:3], "started": start_ticks(proc.pid)}))
        self._wait_for_exec(proc)
        return proc.pid

    def _wait_for_exec(self, proc: subprocess.Popen, timeout: float = 5.0) -> None:
        """Until the forked child has exec'd, its command line is ours, not the daemon's."""
        try:
            poll_until(lambda: proc.poll() is not None or _gone(proc.pid) or self.marker in command_line(proc.pid),
                       timeout, 0.02, what=f"{self.name} to exec")
        except WaitTimeout:
            pass  # still not exec'd: pid() looks again later

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the process group the lab started; True if something was stopped."""
        pid = self.pid()
        if pid is None:
            return False
        _signal_group(pid, signal.SIGTERM)
        try:
            poll_until(lambda: _gone(pid), timeout, 0.2, what=f"{self.name} to exit")
        except WaitTimeout:
            _signal_group(pid, signal.SIGKILL)
            time.sleep(0.5)
        self.pid_file.unlink(missing_ok=True)
        return True

    def wait_until(self, healthy, timeout: float, fix: str) -> None:
        """Poll `healthy()` until it is true; fail fast with the log's root cause if the process dies."""
        def alive_and_healthy() -> bool:
            if self.pid() is None:
                raise self._died(fix)
            return healthy()

        try:
            poll_until(alive_and_healthy, timeout, 0.5, what=f"{self.name} to be healthy")
        except WaitTimeout:
            raise self._not_healthy(timeout, fix) from None

    def _not_healthy(self, timeout: float, fix: str) -> ServiceError:
        # a daemon that failed to bind may linger without serving: name a port another process holds
        pid = self.pid()
        foreign = {field: port for field, port in self.ports.items()
                   if (owner := port_owner(HOST, port)) and owner[0] != pid}
        if foreign:
            return ServiceError(self.name, f"not healthy after {timeout:.0f} s: "
                                f"port {', '.join(map(str, foreign.values()))} is held by another process",
                                self._port_fix(foreign), str(self.log))
        return ServiceError(self.name, f"not healthy after {timeout:.0f} s", fix, str(self.log))

    def _died(self, fix: str) -> ServiceError:
        cause = start_failure(self.log)
        if self.ports and BIND_FAILED.search(cause):  # the usual cause, and the generic fix would not say so
            fix = self._port_fix(self.ports)
        return ServiceError(self.name, f"exited during start-up: {cause}", fix, str(self.log))

    @staticmethod
    def _port_fix(ports: dict[str, int]) -> str:
        taken = ", ".join(f"{port} ({field})" for field, port in ports.items())
        moves = " / ".join(f"PERFKIT_LAB_PORT_{field.upper()}=<free port>" for field in ports)
        return f"another program took port {taken}: stop it, or move the lab with {moves}"


def _gone(pid: int) -> bool:
    """No such process, or only a zombie left of it."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # ZombieProcess is one too
        return True
    except psutil.AccessDenied:
        return False


def start_ticks(pid: int) -> int | None:
    """Clock ticks after boot at which pid started: with the pid, it names one process (exec keeps it).
    Ticks, as /proc/PID/stat counts them, so pid files written before psutil still match."""
    # psutil adds the boot time (whole seconds, which NTP can move) to the ticks: take it off again with the value
    # it used, i.e. one that did not change around the call
    for _ in range(3):
        try:
            boot = psutil.boot_time()
            created = psutil.Process(pid).create_time()
        except psutil.Error:
            return None
        if psutil.boot_time() == boot:
            return round((created - boot) * os.sysconf("SC_CLK_TCK"))
    return None


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the daemon leads its own session: its children go with it
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(pid, sig)
