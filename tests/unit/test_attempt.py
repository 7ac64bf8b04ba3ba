"""The observers around one run (perfkit.experiments.attempt): started in order, ended as a stack, let go when the run
stops otherwise; a refusal keeps the run and the observers after it from starting."""
from __future__ import annotations

import pytest

from perfkit.experiments.attempt import Observer, Run, Watched


class Logged(Observer):
    def __init__(self, name: str, log: list, refuse: str | None = None):
        self.name, self.log, self.refuse = name, log, refuse

    def start(self):
        self.log.append(f"start {self.name}")
        return self.refuse

    def answered(self):
        self.log.append(f"answered {self.name}")

    def stop(self):
        self.log.append(f"stop {self.name}")

    def end(self, run):
        self.log.append(f"end {self.name}")
        run.record["params"][self.name] = True

    def abandon(self):
        self.log.append(f"abandon {self.name}")
        raise RuntimeError("letting go failed too")  # never hides why the run stopped


def test_observers_start_in_order_and_end_as_a_stack_each_adding_to_the_run():
    log: list[str] = []
    with Watched([Logged("health", log), Logged("io", log)]) as watched:
        assert watched.refused is None
        watched.answered()
        watched.stop()
        run = watched.end(Run({"params": {}}))
    assert log == ["start health", "start io", "answered health", "answered io", "stop health", "stop io",
                   "end io", "end health"]
    assert run.record["params"] == {"io": True, "health": True} and run.error is None and run.io.stored() == {}


def test_a_refusal_starts_nothing_after_it_and_lets_go_of_what_started():
    log: list[str] = []
    with Watched([Logged("health", log, refuse="S3 not reachable before the run"), Logged("io", log)]) as watched:
        assert watched.refused == "S3 not reachable before the run"
    assert log == ["start health", "abandon health"]


def test_an_interrupted_run_lets_go_of_every_started_observer_in_reverse_and_keeps_its_cause():
    log: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with Watched([Logged("health", log), Logged("faults", log), Logged("io", log)]):
            raise KeyboardInterrupt
    assert log == ["start health", "start faults", "start io", "abandon io", "abandon faults", "abandon health"]
