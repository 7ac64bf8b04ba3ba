"""Reads of what a Hadoop daemon's JMX shows, each fresh.

Hadoop's metrics system refreshes what JMX shows at most once per metrics period (`*.period`, 10 s by default): a
source's JMX cache lives the period plus 1 ms (MetricsSourceAdapter's jmxCacheTTL), and the first read after that is
fresh (updateJmxCache). So each read waits that long after the one before (`fresh_after`): on a cluster at the
default 10 s that is 10 s between a run's two snapshots (perfkit.storages.hdfs_jmx reads HDFS around each run only
where the period is short); the lab sets the period to 10 ms."""
from __future__ import annotations

import time

JMX_CACHE_EXTRA_S = 0.001  # Hadoop keeps a source's JMX cache its period plus 1 ms (jmxCacheTTL = period + 1)
CLOCK_MARGIN_S = 0.001  # a margin: perfkit times the wait on its clock, the daemon its cache on its own
CLOCK_RATE_MARGIN = 0.001  # a daemon's clock slewed by NTP runs up to 0.05% slow: twice that


def fresh_after(period_s: float) -> float:
    """Seconds after the daemon last refreshed its JMX (at the latest, when its answer came back) until a read is
    fresh: the cache's time to live, with margins for clocks (12 ms at the lab's 10 ms, 10.012 s at 10 s)."""
    return period_s * (1 + CLOCK_RATE_MARGIN) + JMX_CACHE_EXTRA_S + CLOCK_MARGIN_S


class FreshReads:
    """Calls a read once the JMX cache the last read filled has expired; a period of 0: no waits (the caller waits)."""

    def __init__(self, period_s: float, clock=None, sleep=None):
        self.wait_s = fresh_after(period_s) if period_s > 0 else 0.0
        self._clock, self._sleep = clock or time.monotonic, sleep or time.sleep
        self._last_read = -float("inf")

    def __call__(self, read):
        """read(), once the daemons' JMX cache of the last read has expired."""
        wait = self._last_read + self.wait_s - self._clock()
        if wait > 0:
            self._sleep(wait)
        try:
            return read()
        finally:
            self._last_read = self._clock()  # after the last bean came back: its refresh was before
