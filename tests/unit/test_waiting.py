"""poll_until: the one wait loop. A fake clock keeps these tests instant and exact."""
import pytest

from perfkit.errors import PerfkitError
from perfkit.waiting import WaitTimeout, poll_until


class FakeClock:
    def __init__(self):
        self.now, self.sleeps = 100.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_returns_the_conditions_first_true_value():
    clock, answers = FakeClock(), iter([None, 0, {"workers": 1}])
    value = poll_until(lambda: next(answers), 10, interval_s=0.5, clock=clock, sleep=clock.sleep)
    assert value == {"workers": 1}
    assert clock.sleeps == [0.5, 0.5]  # two misses, two pauses


def test_a_true_first_answer_never_sleeps():
    clock = FakeClock()
    assert poll_until(lambda: "up", 10, clock=clock, sleep=clock.sleep) == "up"
    assert clock.sleeps == []


def test_times_out_naming_what_was_awaited_after_a_bounded_number_of_calls():
    clock, calls = FakeClock(), []

    def never():
        calls.append(clock.now)
        return False

    with pytest.raises(WaitTimeout) as err:
        poll_until(never, 2, interval_s=0.5, what="the NameNode's web endpoint", clock=clock, sleep=clock.sleep)
    assert str(err.value) == "gave up waiting for the NameNode's web endpoint after 2 s"
    assert isinstance(err.value, PerfkitError) and isinstance(err.value, TimeoutError)
    assert err.value.last is False
    assert calls == [100.0, 100.5, 101.0, 101.5, 102.0]  # every interval, the last one at the deadline
    assert sum(clock.sleeps) == 2


def test_the_last_pause_stops_at_the_deadline():
    clock = FakeClock()
    with pytest.raises(WaitTimeout):
        poll_until(lambda: None, 1, interval_s=0.4, clock=clock, sleep=clock.sleep)
    assert clock.sleeps == pytest.approx([0.4, 0.4, 0.2])


def test_an_error_from_the_condition_ends_the_wait_at_once():
    clock = FakeClock()

    def dead():
        raise RuntimeError("the daemon exited")

    with pytest.raises(RuntimeError, match="the daemon exited"):
        poll_until(dead, 60, clock=clock, sleep=clock.sleep)
    assert clock.sleeps == []


def test_real_clock_waits_about_the_timeout():
    import time

    started = time.monotonic()
    with pytest.raises(WaitTimeout, match="gave up waiting for nothing after 0.2 s"):
        poll_until(lambda: False, 0.2, interval_s=0.05, what="nothing")
    assert 0.2 <= time.monotonic() - started < 2
