"""What every lab service is to the Lab: a name, the services it needs, its daemons and their ports, and how to start,
check and stop it. The Lab (perfkit.lab.Lab) orders, starts and reports services through this surface only."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab.process import Daemon
from perfkit.lab.settings import LabPorts


class Service:
    """A lab service: one or more daemons (background processes the lab started) that together answer.

    A subclass sets `name` and `needs`, fills `daemons` in __init__, and says how each daemon is started (`argv`),
    how the service starts (`start`: only its missing daemons, then wait until healthy) and when it answers
    (`health`). `ports` is the lab's port plan; `ports_needed()` the ports this service's daemons listen on.
    """

    name: str = ""
    needs: tuple[str, ...] = ()  # names of the services that must be up first (the Lab starts them before)
    cluster_only: bool = False  # runs in the lab's cluster shape only (perfkit.lab.shape)

    def __init__(self, home: Path, ports: LabPorts):
        self.home, self.ports = home, ports
        self.daemons: list[Daemon] = []

    @property
    def daemon(self) -> Daemon:
        """The first daemon: the only one of most services."""
        return self.daemons[0]

    def addresses(self) -> dict[str, str]:
        """Daemon name -> where to reach it, as `perfkit lab status` shows it."""
        raise NotImplementedError

    def ports_needed(self) -> dict[str, int]:
        """LabPorts field -> port, for every port the daemons listen on."""
        return {field: port for daemon in self.daemons for field, port in daemon.ports.items()}

    def ports_by_daemon(self) -> dict[str, int]:
        """'field (daemon)' -> port: for a service whose daemons share their fields (one per node)."""
        return {f"{k} ({d.name})": v for d in self.daemons for k, v in d.ports.items()}

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        """The command line that starts `daemon` (the first by default)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the daemons that are not running, then wait until the service is healthy (ServiceError if not)."""
        raise NotImplementedError

    def health(self) -> tuple[bool, str]:
        """(healthy, one line of detail): asks the service itself, not only whether its processes live."""
        raise NotImplementedError

    def stop(self) -> list[str]:
        """Stop every daemon, last started first; the names of those that were running."""
        return [daemon.name for daemon in reversed(self.daemons) if daemon.stop()]

    def pids(self) -> dict[str, int | None]:
        """Daemon name -> its pid, or None when it is not running."""
        return {daemon.name: daemon.pid() for daemon in self.daemons}

    def wait_healthy(self, daemon: Daemon, timeout_s: float, fix: str) -> None:
        """Wait until health() says yes; fail fast, with the log's cause, if `daemon` dies meanwhile."""
        daemon.wait_until(lambda: self.health()[0], timeout_s, fix)


def start_order(services: list[Service]) -> list[Service]:
    """The services with every one after those it needs; otherwise in the given order."""
    placed: list[Service] = []
    names: set[str] = set()
    todo = list(services)
    known = {service.name for service in services}
    while todo:
        ready = next((s for s in todo if all(n in names or n not in known for n in s.needs)), None)
        if ready is None:
            raise PerfkitError(f"lab: {', '.join(s.name for s in todo)} need each other: no start order exists")
        placed.append(ready)
        names.add(ready.name)
        todo.remove(ready)
    return placed


def start_together(services: list[Service], start: Callable[[Service], bool], at_once: int | None = None) -> set[str]:
    """Start each of `services` (in start order) once those it needs are up, as many side by side as there are
    cores (or `at_once`): a start is mostly a JVM loading classes, CPU-bound (on 2 cores the lab came up in 62 s
    one by one, 45 s two at a time, 49-51 s three or more at a time). `start(service)` returns False when it left
    the service down on purpose; what needs a service left down is not started. Returns the names left down. The
    first error stops further starts and is raised once the starts under way have ended."""
    names = {service.name for service in services}
    up: set[str] = set()
    down: set[str] = set()
    todo, running, error = list(services), {}, None
    with ThreadPoolExecutor(at_once or os.cpu_count() or 2) as pool:
        while todo or running:
            for service in list(todo) if error is None else []:
                needs = [name for name in service.needs if name in names]
                if down & set(needs):
                    say(f"lab: {service.name} not started: it needs {', '.join(sorted(down & set(needs)))}")
                    down.add(service.name)
                    todo.remove(service)
                elif all(name in up for name in needs):
                    running[pool.submit(start, service)] = service
                    todo.remove(service)
            if not running:
                if todo and error is None:
                    raise PerfkitError(f"lab: {', '.join(s.name for s in todo)} need each other: no start order exists")
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                service = running.pop(future)
                try:
                    (up if future.result() else down).add(service.name)
                except Exception as err:  # noqa: BLE001 - raised below, after the other starts end
                    error = error or err
                    down.add(service.name)
    if error is not None:
        raise error
    return down


def say(line: str) -> None:
    """One line on stdout in one write: starts side by side never print into each other's lines."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
