"""A read waits until the JMX cache the last read filled has expired, by Hadoop's own rule."""
import random

import pytest

from perfkit.jmx_freshness import FreshReads, fresh_after


def hadoop_refreshes(cache_set_ms: float, read_at_ms: float, period_ms: int) -> bool:
    """MetricsSourceAdapter.updateJmxCache: fresh when Time.now() - jmxCacheTS >= jmxCacheTTL, on a millisecond
    clock, where jmxCacheTTL = period + 1 and jmxCacheTS is the clock when the last refresh ended."""
    return int(read_at_ms) - int(cache_set_ms) >= period_ms + 1


@pytest.mark.parametrize("period_ms", [1, 2, 10, 100, 10_000])
def test_a_read_that_waited_fresh_after_is_refreshed_wherever_the_last_refresh_fell_in_its_millisecond(period_ms):
    rng = random.Random(period_ms)
    for _ in range(20_000):
        refreshed = rng.uniform(0, 1e6)  # the daemon's refresh ended; its answer came back later still
        answer_back = refreshed + rng.uniform(0, 0.5)
        assert hadoop_refreshes(refreshed, answer_back + 1000 * fresh_after(period_ms / 1000), period_ms)


def test_the_old_wait_of_a_tenth_more_than_the_period_was_short_below_10_ms():
    """What fresh_after mends: 1.1 periods at 1 ms is 1.1 ms, and Hadoop keeps the cache 2 ms."""
    assert not hadoop_refreshes(0.0, 1.1, period_ms=1)
    assert hadoop_refreshes(0.0, 1000 * fresh_after(0.001), period_ms=1)


def test_fresh_reads_sleep_only_what_is_left_of_the_wait_after_the_last_read_came_back():
    now, slept = [100.0], []
    reads = FreshReads(0.01, clock=lambda: now[0], sleep=slept.append)
    assert reads(lambda: "first") == "first" and slept == []  # nothing read before: no wait

    def slow_read():
        now[0] += 0.004  # the round trip; the wait counts from when it came back
        return "second"

    now[0] += 0.005
    assert reads(slow_read) == "second"
    assert slept == [pytest.approx(fresh_after(0.01) - 0.005)]
    now[0] += 1.0
    reads(lambda: None)
    assert len(slept) == 1  # a period long past: no wait


def test_a_period_of_zero_never_waits():
    slept = []
    reads = FreshReads(0, clock=lambda: 0.0, sleep=slept.append)
    reads(lambda: None)
    reads(lambda: None)
    assert slept == []
