"""An experiment's HDFS reads over the window of its runs, as the NameNode and the DataNodes counted them, beside the
engines' own count.

Where Hadoop's daemons refresh their JMX too seldom to be read around each run (a cluster at Hadoop's default metrics
period: perfkit.storages.hdfs_jmx), HDFS's counters are read once before an experiment's first run and once after
its last. A read shows what the daemons last refreshed, up to a period before it (another reader, a monitoring agent,
may have refreshed it), so each read waits a period after the I/O it must include: the one before the window after
the data was placed, the one after it after the last run. At Hadoop's default that is 10 s twice per experiment,
where reads around each run held every run on HDFS up to 10 s."""
from __future__ import annotations

import contextlib
import time
from datetime import datetime, timezone

import pandas as pd

from perfkit.accounting import counters
from perfkit.accounting.concurrent import OtherRunsInWindow
from perfkit.jmx_freshness import fresh_after
from perfkit.storages.hdfs_jmx import HdfsJmx, hdfs_per_run
from perfkit.accounting.table import HDFS, engine_hdfs_bytes
from perfkit.accounting.counted_window import WindowCount, compare_with_engines, counted_window
from perfkit.errors import root_cause

COUNTED = ("hdfs_bytes_read", "hdfs_read_ops", "hdfs_block_locations", "hdfs_listings", "hdfs_bytes_written")
COMPARED = ("hdfs_bytes_read",)  # what the engines count too
SERVER = "HDFS (NameNode and DataNode JMX)"
WHAT = {"hdfs_bytes_read": "bytes read", "hdfs_read_ops": "block reads", "hdfs_block_locations":
        "getBlockLocations (files opened)", "hdfs_listings": "listings", "hdfs_bytes_written": "bytes written"}
OVERLAPPED = ("not attributable: another perfkit process measured during the window, and HDFS counted its reads too: "
              "HDFS's count is not compared with the engines'")


class HdfsWindow:
    """HDFS's counters read fresh before and after a window of runs; `source` reads them (HdfsJmx, without waits of
    its own: the window waits)."""

    def __init__(self, source, period_s: float, sleep=time.sleep):
        self.source, self._sleep = source, sleep
        self.wait_s = fresh_after(period_s)  # before each read: the JMX caches expire, so it shows what came before
        self.start: datetime | None = None
        self._before: dict | str = {}

    def open(self) -> None:
        self._sleep(self.wait_s)
        self._before = self._read()
        self.start = datetime.now(timezone.utc)

    def close(self, records=None) -> WindowCount:
        """What HDFS counted since open(), or why not (`records`: the window's runs, not needed here)."""
        end = datetime.now(timezone.utc)
        self._sleep(self.wait_s)
        after = self._read()
        count = WindowCount(self.source.name, self.start, end)
        problems = [side for side in (self._before, after) if isinstance(side, str)]
        if problems:
            count.missing = "; ".join(dict.fromkeys(problems))
        else:
            count.totals = counters.difference(self._before, after)
        return count

    def abandon(self) -> None:
        """The experiment stopped: nothing to remove, nothing to read."""

    def _read(self) -> dict | str:
        try:
            return self.source.read()
        except Exception as err:  # noqa: BLE001 - a daemon that does not answer: the window's count is missing
            return f"{self.source.name} not read: {root_cause(err, 200)}"


def hdfs_window_vs_engines(counted: WindowCount, records, attributable: bool = True) -> pd.DataFrame:
    """HDFS's count of the window beside the engines' sum over the runs on HDFS that started in it
    (counted_window.compare_with_engines): bytes read, the one counter both keep."""
    def engine_counts(engine) -> dict[str, float] | None:
        found = engine_hdfs_bytes(engine or {})
        return None if found is None else {name: found for name in COMPARED}

    return compare_with_engines(
        counted, records, storage=HDFS, label="HDFS", server=SERVER, counters=WHAT,
        engine_counts=engine_counts, attributable=attributable, overlapped=OVERLAPPED,
        caveat="HDFS counts every client's reads in the window, warm-ups included, not this experiment's alone: other "
        "jobs on the cluster and perfkit's own table registration too; the DataNodes count what they sent, which can "
        "exceed what a seeking reader used")


@contextlib.contextmanager
def hdfs_read_window(profile, results, wanted: bool = True, others: OtherRunsInWindow | None = None, window=None):
    """Around an experiment's runs: where HDFS is not counted around each run (perfkit.storages.hdfs_jmx.
    hdfs_per_run), HDFS's count over the window of the runs beside the engines' sum, in results.config["hdfs_window"]
    (counted_window)."""
    period = profile.hadoop_metrics_period_s
    if not (wanted and profile.webhdfs_url) or hdfs_per_run(profile):
        yield None
        return
    window = window or HdfsWindow(HdfsJmx(profile.webhdfs_url, period_s=0), period)
    with counted_window(results, "hdfs_window", window, hdfs_window_vs_engines, others) as opened:
        yield opened
