"""Start, find and stop the lab's daemons by the pid files the lab itself wrote."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from perfkit.errors import STACK_FRAME, ServiceError, root_cause
from perfkit.lab.settings import HOST


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's "st" column


def _proc_net_address(hex_addr: str) -> str:
    """/proc/net/tcp{,6} writes an address as 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(hex_addr)
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw)
    if raw[:12] == b"\0" * 10 + b"\xff\xff":  # an IPv4-mapped IPv6 address
        return socket.inet_ntop(socket.AF_INET, raw[12:])
    return socket.inet_ntop(socket.AF_INET6, raw)


def _listeners():
    """(address, port, socket inode) of every listening TCP socket on the machine, from /proc/net/tcp{,6}."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) >= 10 and fields[3] == _LISTEN:
                addr, _, hex_port = fields[1].partition(":")
                yield _proc_net_address(addr), int(hex_port, 16), fields[9]


def _listening_inodes(host: str, port: int) -> set[str]:
    """Socket inodes listening where a connection to host:port would land (that address or a wildcard)."""
    wanted = {host, "0.0.0.0", "::"}
    return {inode for address, listen_port, inode in _listeners() if listen_port == port and address in wanted}


def listening_addresses(pid: int | None) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket process `pid` listens on, read from /proc: where it can be reached."""
    if pid is None:
        return []
    owned = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                owned.add(os.readlink(fd))
            except OSError:  # closed while we looked
                continue
    except OSError:
        return []
    found = [(address, port) for address, port, inode in _listeners() if f"socket:[{inode}]" in owned]
    return sorted(set(found))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _owner_from_proc(inodes: set[str]) -> int | None:
    targets = {f"socket:[{inode}]" for inode in inodes}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in targets:
                    return int(proc.name)
        except OSError:  # gone, or not ours to look at
            continue
    return None


def _owner_from_ss(port: int) -> int | None:
    if shutil.which("ss") is None:
        return None
    try:
        out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"pid=(\d+)", out)
    return int(match.group(1)) if match else None


def port_owner(host: str, port: int) -> tuple[int, str] | None:
    """(pid, command line) of the process listening on host:port, when this machine lets us see it."""
    inodes = _listening_inodes(host, port)
    pid = (_owner_from_proc(inodes) if inodes else None) or _owner_from_ss(port)
    return (pid, _cmdline(pid)) if pid else None


_START_MARK = "=== perfkit lab: starting"
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
            if _is_zombie(pid) or (started is not None and _start_time(pid) != started):
                break  # gone, or the pid now names another process
            cmdline = _cmdline(pid)
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
        with open(self.log, "ab") as log:
            log.write(f"\n=== perfkit lab: starting {self.name} at {time.ctime()} ===\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True,
            )
        tmp = self.pid_file.with_suffix(".tmp")  # never a half-written pid file for a concurrent reader
        tmp.write_text(json.dumps({"pid": proc.pid, "argv": argv[:3], "started": _start_time(proc.pid)}))
        tmp.replace(self.pid_file)
        self._wait_for_exec(proc)
        return proc.pid

    def _wait_for_exec(self, proc: subprocess.Popen, timeout: float = 5.0) -> None:
        """Until the forked child has exec'd, its command line is ours, not the daemon's."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if self.marker.encode() in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                    return
            except FileNotFoundError:
                return
            time.sleep(0.02)

    def stop(self, timeout: float = 20.0) -> bool:
        """Stop the process group the lab started; True if something was stopped."""
        pid = self.pid()
        if pid is None:
            return False
        _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            _signal_group(pid, signal.SIGKILL)
            time.sleep(0.5)
        self.pid_file.unlink(missing_ok=True)
        return True

    def wait_until(self, healthy, timeout: float, fix: str) -> None:
        """Poll `healthy()` until it is true; fail fast with the log's root cause if the process dies."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pid() is None:
                cause = start_failure(self.log)
                if self.ports and BIND_FAILED.search(cause):  # the usual cause, and the generic fix would not say so
                    fix = self._port_fix(self.ports)
                raise ServiceError(self.name, f"exited during start-up: {cause}", fix, str(self.log))
            if healthy():
                return
            time.sleep(0.5)
        # a daemon that failed to bind may linger without serving: name a port another process holds
        pid = self.pid()
        foreign = {field: port for field, port in self.ports.items()
                   if (owner := port_owner(HOST, port)) and owner[0] != pid}
        if foreign:
            raise ServiceError(self.name, f"not healthy after {timeout:.0f} s: "
                               f"port {', '.join(map(str, foreign.values()))} is held by another process",
                               self._port_fix(foreign), str(self.log))
        raise ServiceError(self.name, f"not healthy after {timeout:.0f} s", fix, str(self.log))

    @staticmethod
    def _port_fix(ports: dict[str, int]) -> str:
        taken = ", ".join(f"{port} ({field})" for field, port in ports.items())
        moves = " / ".join(f"PERFKIT_LAB_PORT_{field.upper()}=<free port>" for field in ports)
        return f"another program took port {taken}: stop it, or move the lab with {moves}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _is_zombie(pid)


def _start_time(pid: int) -> int | None:
    """Clock ticks after boot at which pid started: with the pid, it names one process (exec keeps it)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the daemon leads its own session: its children go with it
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(pid, sig)
