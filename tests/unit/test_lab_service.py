"""The lab's services share one base: the Lab orders, starts, reports and stops them through it alone."""
import threading
import time

import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import Lab, tools
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service, start_order, start_together
from perfkit.lab.settings import LabPorts


class Toy(Service):
    """A sleeper per toy service; `log` records what the Lab asked of each, in order."""

    def __init__(self, home, name: str, needs: tuple[str, ...], log: list[str]):
        super().__init__(home, LabPorts())
        self.name, self.needs, self.log = name, needs, log
        self.daemons = [Daemon(name, home, f"perfkit-toy-{name}")]

    def addresses(self):
        return {self.name: f"toy://{self.name}"}

    def argv(self, daemon=None):
        return ["bash", "-c", f"exec -a perfkit-toy-{self.name} sleep 60"]

    def start(self):
        self.log.append(f"start {self.name}")
        if self.daemon.pid() is None:
            self.daemon.start(self.argv())
        self.wait_healthy(self.daemon, 5, "none")

    def health(self):
        return (self.daemon.pid() is not None), "toy"

    def stop(self):
        self.log.append(f"stop {self.name}")
        return super().stop()


@pytest.fixture
def toy_lab(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "java_home", lambda: None)
    monkeypatch.setattr(Lab, "fetch_tools", staticmethod(lambda: None))
    log: list[str] = []
    lab = Lab(home=tmp_path)
    # listed out of order on purpose: the Lab follows `needs`, not the list
    lab.services = [Toy(tmp_path, "query", ("catalog",), log), Toy(tmp_path, "catalog", ("store",), log),
                    Toy(tmp_path, "store", (), log), Toy(tmp_path, "mount", ("store",), log)]
    yield lab, log
    lab.down()


def test_up_starts_what_a_service_needs_first_and_down_stops_in_reverse(toy_lab):
    lab, log = toy_lab
    rows = lab.up(["query"])
    assert log == ["start store", "start catalog", "start query"]  # mount is not needed
    assert [r.service for r in rows] == ["store", "catalog", "query"] and all(r.healthy for r in rows)
    assert [r.detail for r in rows] == ["toy"] * 3 and all(r.pid for r in rows)
    log.clear()
    assert lab.down() == ["query", "catalog", "store"]  # mount never ran: nothing to stop
    assert log == ["stop mount", "stop query", "stop catalog", "stop store"]
    assert lab.pids() == []


def test_status_and_pids_come_from_the_base(toy_lab):
    lab, _ = toy_lab
    lab.up(["mount"])
    rows = {r.service: r for r in lab.status()}
    assert rows["mount"].healthy and rows["store"].healthy
    assert not rows["query"].running and rows["query"].detail == "not running"
    assert sorted(lab.pids()) == sorted(p for s in lab.services for p in s.pids().values() if p)


def test_start_order_keeps_the_listed_order_where_needs_allow_it_and_refuses_a_cycle(tmp_path):
    def toys(*specs):
        return [Toy(tmp_path, name, needs, []) for name, needs in specs]

    order = start_order(toys(("b", ("a",)), ("c", ()), ("a", ())))
    assert [s.name for s in order] == ["c", "a", "b"]
    with pytest.raises(PerfkitError, match="x, y need each other"):
        start_order(toys(("x", ("y",)), ("y", ("x",))))


def test_every_lab_service_is_a_service_and_the_real_order_is_the_listed_one(tmp_path):
    lab = Lab(home=tmp_path)
    assert all(isinstance(s, Service) for s in lab.services)
    assert [s.name for s in start_order(lab.services)] == [s.name for s in lab.services]
    for service in lab.services:
        assert set(service.pids()) == {d.name for d in service.daemons}
        assert set(service.addresses()) <= set(service.pids())
        assert all(need in {s.name for s in lab.services} for need in service.needs)


class Named:
    """A service as start_together sees it: a name and what it needs."""

    def __init__(self, name: str, needs: tuple[str, ...] = ()):
        self.name, self.needs = name, needs


def test_start_together_starts_independent_services_side_by_side_and_a_dependent_after_its_needs():
    both_running, log = threading.Barrier(2, timeout=5), []

    def start(service):
        log.append(f"begin {service.name}")
        if service.name in ("store", "mount"):
            both_running.wait()  # returns only when the other one is starting too: a BrokenBarrierError otherwise
        log.append(f"end {service.name}")
        return True

    down = start_together([Named("store"), Named("mount"), Named("catalog", ("store",))], start, at_once=2)
    assert down == set()
    assert log.index("begin catalog") > log.index("end store")
    assert sorted(log[:2]) == ["begin mount", "begin store"]


def test_start_together_leaves_down_what_needs_a_service_left_down_and_raises_the_first_error_after_the_rest(capsys):
    ended = []

    def start(service):
        if service.name == "broken":
            raise PerfkitError("broken: port taken")
        time.sleep(0.2)  # still starting when the error comes
        ended.append(service.name)
        return service.name != "javaless"

    services = [Named("broken"), Named("javaless"), Named("slow"), Named("after-broken", ("broken",))]
    with pytest.raises(PerfkitError, match="broken: port taken"):
        start_together(services, start, at_once=4)
    assert sorted(ended) == ["javaless", "slow"]  # the starts under way ended; nothing new began
    assert start_together([Named("javaless"), Named("dependent", ("javaless",))], start) == {"javaless", "dependent"}
    assert "lab: dependent not started: it needs javaless\n" in capsys.readouterr().out
