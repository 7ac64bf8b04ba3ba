"""An experiment's HDFS reads over the window of its runs, as the NameNode and the DataNodes counted them, beside the
engines' own count.

Where Hadoop's daemons refresh their JMX too seldom to be read around each run (a cluster at Hadoop's default metrics
period: perfkit.accounting.sources), HDFS's counters are read once before an experiment's first run and once after
its last. A read shows what the daemons last refreshed, up to a period before it (another reader, a monitoring agent,
may have refreshed it), so each read waits a period after the I/O it must include: the one before the window after
the data was placed, the one after it after the last run. At Hadoop's default that is 10 s twice per experiment,
where reads around each run held every run on HDFS up to 10 s."""
from __future__ import annotations

import contextlib
import math
import time
from datetime import datetime, timezone

import pandas as pd

from perfkit.accounting import counters
from perfkit.accounting.concurrent import OtherRunsInWindow
from perfkit.accounting.hdfs_jmx import HdfsJmx
from perfkit.accounting.metrics_period import fresh_after
from perfkit.accounting.sources import hdfs_per_run
from perfkit.accounting.table import engine_hdfs_bytes
from perfkit.accounting.window import started, stored_rows
from perfkit.errors import root_cause

COUNTED = ("hdfs_bytes_read", "hdfs_read_ops", "hdfs_block_locations", "hdfs_listings", "hdfs_bytes_written")
COMPARED = ("hdfs_bytes_read",)  # what the engines count too
SERVER = "HDFS (NameNode and DataNode JMX)"
WHAT = {"hdfs_bytes_read": "bytes read", "hdfs_read_ops": "block reads", "hdfs_block_locations":
        "getBlockLocations (files opened)", "hdfs_listings": "listings", "hdfs_bytes_written": "bytes written"}
OVERLAPPED = ("not attributable: another perfkit process measured during the window, and HDFS counted its reads too: "
              "HDFS's count is not compared with the engines'")
STOPPED = "not counted: the experiment stopped before its last run"


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

    def close(self) -> dict:
        """{"start", "end", "totals": what HDFS counted in the window, or "missing": why not}."""
        end = datetime.now(timezone.utc)
        self._sleep(self.wait_s)
        after = self._read()
        found: dict = {"start": self.start, "end": end}
        problems = [side for side in (self._before, after) if isinstance(side, str)]
        if problems:
            found["missing"] = "; ".join(dict.fromkeys(problems))
        else:
            found["totals"] = counters.difference(self._before, after)
        return found

    def _read(self) -> dict | str:
        try:
            return self.source.read()
        except Exception as err:  # noqa: BLE001 - a daemon that does not answer: the window's count is missing
            return f"{self.source.name} not read: {root_cause(err, 200)}"


def hdfs_window_vs_engines(counted: dict, records, attributable: bool = True) -> pd.DataFrame:
    """One row per counter: what HDFS counted in the window, the engines' sum over the runs on HDFS that started in
    it (bytes read: the one counter both keep), and HDFS's minus the engines'. Unknown is NaN, never 0; attrs["notes"]
    says why, and what else HDFS counted."""
    notes = [] if attributable else [OVERLAPPED]
    start, end = (pd.Timestamp(counted[key]) for key in ("start", "end"))
    on_hdfs = [r for r in records if r.storage == "hdfs" and start <= started(r) < end]
    engine_bytes = [b for r in on_hdfs if (b := engine_hdfs_bytes((r.io or {}).get("engine") or {})) is not None]
    if not on_hdfs:
        notes.append("no run on HDFS started in the window")
    elif len(engine_bytes) < len(on_hdfs):
        notes.append(f"{len(on_hdfs) - len(engine_bytes)} of {len(on_hdfs)} runs on HDFS in the window have no engine "
                     "count: the engines' sum is not shown")
    complete = bool(on_hdfs) and len(engine_bytes) == len(on_hdfs)
    if counted.get("missing"):
        notes.append(f"HDFS's count: {counted['missing']}")
    notes.append("HDFS counts every client's reads in the window, warm-ups included, not this experiment's alone: "
                 "other jobs on the cluster and perfkit's own table registration too; the DataNodes count what they "
                 "sent, which can exceed what a seeking reader used")
    totals = counted.get("totals") or {}
    rows = []
    for name in COUNTED:
        server = totals.get(name, math.nan)
        engines = math.fsum(engine_bytes) if name in COMPARED and complete else math.nan
        rows.append({"counter": name, "what": WHAT[name], SERVER: server, "engines": engines,
                     "difference": server - engines if attributable else math.nan})
    table = pd.DataFrame(rows)
    table.attrs["notes"] = notes
    return table


@contextlib.contextmanager
def hdfs_read_window(profile, results, wanted: bool = True, others: OtherRunsInWindow | None = None, window=None):
    """Around an experiment's runs: where HDFS is not counted around each run (perfkit.accounting.sources.
    hdfs_per_run), count it over the window of the runs and store the count,
    beside the engines' sum, in results.config["hdfs_window"]; with whether another perfkit process measured in the
    window (`others`), which makes HDFS's count not this experiment's alone."""
    period = profile.hadoop_metrics_period_s
    if not (wanted and profile.webhdfs_url) or hdfs_per_run(profile):
        yield None
        return
    window = window or HdfsWindow(HdfsJmx(profile.webhdfs_url, period_s=0), period)
    others = others or OtherRunsInWindow()
    window.open()
    others.open()
    try:
        yield window
    except BaseException:
        results.config["hdfs_window"] = {"missing": STOPPED, "notes": []}
        raise
    attributable = not others.close()
    counted = window.close()
    compared = hdfs_window_vs_engines(counted, results.records, attributable)
    results.config["hdfs_window"] = {
        "start": counted["start"].isoformat(), "end": counted["end"].isoformat(), "attributable": attributable,
        "missing": counted.get("missing", ""), "notes": compared.attrs["notes"],
        "compared": stored_rows(compared)}
