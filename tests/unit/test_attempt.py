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


def test_a_tier_fill_is_waited_for_before_the_run_s_io_is_read_after_it():
    """The fill a cold read started belongs to that read: the tier settles as soon as the timed interval ends, before
    the run's own I/O (read at stop) closes its window, so the S3 server counts the fill with the read, as the tier's
    counters do."""
    from perfkit.experiments.attempt import TierCounters
    from perfkit.tiers import Counters

    log: list[str] = []

    class Tier:
        fetched = 0

        def counters(self, engine=None):
            return Counters(cache_bytes=0, s3_bytes=self.fetched)

        def activity(self):
            return {}

        def cached_bytes(self):
            return self.fetched

        def capacity_bytes(self):
            return 1024**3

        def settle(self):
            log.append("settle")
            self.fetched += 8_000_000  # the whole block, fetched in the background
            return "Alluxio's background caching done after 0.5 s"

    with Watched([TierCounters(Tier(), engine=None), Logged("io", log)]) as watched:
        watched.stop()
        run = watched.end(Run({"params": {}}))
    assert log[:3] == ["start io", "settle", "stop io"]  # the fill is inside the I/O's window
    params = run.record["params"]
    assert params["s3_bytes"] == 8_000_000 and params["tier_holds_bytes"] == 8_000_000
    assert params["tier_capacity_bytes"] == 1024**3
    assert params["settled"].startswith("Alluxio's background caching done") and params["fill_wait_s"] >= 0
