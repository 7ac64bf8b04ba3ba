"""Start, find and stop the lab's daemons by the pid files the lab itself wrote."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from perfkit.errors import ServiceError


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def log_tail(log: Path, lines: int = 8) -> str:
    if not log.exists():
        return ""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


class Daemon:
    """One background process of the lab: its pid file, log file and command line marker.

    The marker (a string its command line must contain) guards against a reused pid:
    the lab never signals a process it did not start.
    """

    def __init__(self, name: str, home: Path, marker: str):
        self.name, self.marker = name, marker
        self.pid_file = home / "pids" / f"{name}.pid"
        self.log = home / "logs" / f"{name}.log"

    def pid(self) -> int | None:
        """The pid of our running process, or None (and a stale pid file is removed)."""
        try:
            pid = json.loads(self.pid_file.read_text())["pid"]
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (FileNotFoundError, ProcessLookupError, KeyError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        if self.marker not in cmdline or _is_zombie(pid):
            self.pid_file.unlink(missing_ok=True)
            return None
        return pid

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
        self.pid_file.write_text(json.dumps({"pid": proc.pid, "argv": argv[:3]}))
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
        """Poll `healthy()` until it is true; fail fast with the log's tail if the process dies."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pid() is None:
                raise ServiceError(self.name, f"exited during start-up:\n{log_tail(self.log)}\n", fix, str(self.log))
            if healthy():
                return
            time.sleep(0.5)
        raise ServiceError(self.name, f"not healthy after {timeout:.0f} s", fix, str(self.log))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _is_zombie(pid)


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
