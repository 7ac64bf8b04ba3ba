"""Reads of what a Hadoop daemon's JMX shows, each fresh.

Hadoop's metrics system refreshes what JMX shows at most once per metrics period (`*.period`, 10 s by default):
but the first read after a period has passed is fresh (MetricsSourceAdapter.updateJmxCache). So each read waits
until a period has passed since the one before: on a cluster at the default 10 s that is up to 10 s between a run's
two snapshots (perfkit.accounting.sources reads HDFS around each run only where the period is short); the lab sets
the period to 10 ms."""
from __future__ import annotations

import time


class FreshReads:
    def __init__(self, period_s: float):
        self.period_s = period_s
        self._last_read = -float("inf")

    def __call__(self, read):
        """read(), once a period has passed since the last read ended."""
        wait = self._last_read + self.period_s * 1.1 - time.monotonic()  # 10% for the daemons' clocks and timers
        if wait > 0:
            time.sleep(wait)
        try:
            return read()
        finally:
            self._last_read = time.monotonic()  # after the last bean came back: its refresh was before
