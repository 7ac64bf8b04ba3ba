"""'What each run asked of the storage': the runs' I/O as tables, the server's count beside the engine's, priced."""
from __future__ import annotations

import math

import pandas as pd

from perfkit.accounting import counters
from perfkit.storages.hdfs_jmx import HdfsJmx
from perfkit.accounting.recorded_io import SIDES, RunIO
from perfkit.storages.pricing import request_cost
from perfkit.storages.s3_access_log import S3AccessLog

EXACT = ("s3_get", "s3_head", "s3_list")  # what the two sides must count alike (classic S3A stream; Trino's SDK)
KEYS = ["engine", "storage", "query"]
DIRECT = S3AccessLog.storage  # the engine reads S3 itself: its count and the server's are of the same requests
HDFS = HdfsJmx.storage  # the storage whose daemons' JMX counts the DataNodes' bytes and their locality
HDFS_RUN = "not compared: a run on HDFS reads no S3 counters"


def io_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per measured, successful run: engine, storage, query, wall_s, attributable, and a column per side and
    counter ("server.s3_get", "engine.s3_get", ...). Runs recorded before perfkit counted I/O have none."""
    rows = []
    for run in _measured_ok(frame).itertuples():
        io = RunIO.of(getattr(run, "io", None))
        if not io.counted:
            continue
        row = {"engine": run.subject, "storage": run.storage, "query": run.case, "wall_s": run.wall_s,
               "attributable": io.attributable}
        for side in SIDES:
            row.update({f"{side}.{name}": value for name, value in io.counts(side).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def hdfs_locality(frame: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per engine, over its measured runs on HDFS: (bytes the DataNodes sent to a reader on their own host, bytes
    they sent), from the DataNodes' own counters. On a cluster a reader is local to some DataNodes and remote to
    others; in the one-process lab every reader is local."""
    runs = io_frame(frame)
    columns = {"server.hdfs_bytes_read", "server.hdfs_remote_bytes_read"}
    if runs.empty or not columns <= set(runs.columns):
        return {}
    runs = runs[(runs["storage"] == HDFS) & runs["attributable"].astype(bool)].dropna(subset=list(columns))
    found = {}
    for engine, group in runs.groupby("engine", sort=True):
        sent = float(group["server.hdfs_bytes_read"].sum())
        if sent > 0:
            found[engine] = (sent - float(group["server.hdfs_remote_bytes_read"].sum()), sent)
    return found


def missing_sides(frame: pd.DataFrame) -> list[str]:
    """Why a side's count, or one of its counters, is missing from measured, successful runs: one line per side (or
    counter) and reason, with how many runs and which engines and storages (a blank in the table says nothing by
    itself)."""
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for run in _measured_ok(frame).itertuples():
        for gap in RunIO.of(getattr(run, "io", None)).gaps():
            found.setdefault(gap, []).append((run.subject, run.storage))
    lines = []
    for (side, counter, why), runs in found.items():
        what = counters.LABELS.get(counter, counter) if counter else "count"
        where = ", ".join(f"{engine} on {storage}" for engine, storage in dict.fromkeys(runs))
        lines.append(f"the {side}'s {what} of {len(runs)} run{'s' * (len(runs) != 1)} ({where}): {why}")
    return lines


def _measured_ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["phase"] == "measured") & frame["ok"]] if len(frame) else frame


def engine_hdfs_bytes(engine: dict) -> float | None:
    """The bytes an engine says a run on HDFS read: its HDFS client's count (Spark), else its physical input (Trino)."""
    value = engine.get("hdfs_bytes_read", engine.get("input_bytes"))
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def per_run(runs: pd.DataFrame, side: str, names) -> pd.Series:
    """Each run's sum of these counters as `side` counted them; NaN for a run that counted none of them."""
    columns = [f"{side}.{name}" for name in names if f"{side}.{name}" in runs.columns]
    if not columns:
        return pd.Series(math.nan, index=runs.index)
    return runs[columns].sum(axis=1, min_count=1)


def counted(runs: pd.DataFrame, names) -> pd.Series:
    """Each run's sum of these counters: the server's count, else the engine's."""
    return per_run(runs, "server", names).fillna(per_run(runs, "engine", names))


def agreement(server: dict, engine: dict) -> str:
    """Whether the two sides counted GET, HEAD and LIST alike: 'exact', or what differs."""
    if not server or not engine:
        return "one side"
    differ = [f"{counters.LABELS[name]} {server.get(name, 0):g} vs {engine.get(name, 0):g}" for name in EXACT
              if not _same(server.get(name, 0), engine.get(name))]
    return "exact" if not differ else "server vs engine: " + ", ".join(differ)


def _same(a, b) -> bool:
    return b is not None and not (isinstance(b, float) and math.isnan(b)) and a == b


def io_table(frame: pd.DataFrame, prices=None) -> pd.DataFrame:
    """Per engine, storage and query, the median over its runs: S3 requests and MB, HDFS MB, as the server counted
    them and as the engine did; whether the two agree run by run; and the request cost of 1,000 runs. attrs["missing"]
    says why a side was not counted on some runs (missing_sides)."""
    runs = io_frame(frame)
    if runs.empty:
        table = pd.DataFrame(columns=[*KEYS, "runs"])
        table.attrs["missing"] = missing_sides(frame)
        return table
    rows = []
    for key, group in runs.groupby(KEYS, sort=False):
        row = dict(zip(KEYS, key))
        row["runs"] = len(group)
        server, engine = (_medians(group, side) for side in SIDES)
        for side, counts in (("server", server), ("engine", engine)):
            row[f"S3 requests ({side})"] = counters.requests(counts)
        for name in ("s3_get", "s3_head", "s3_list", "s3_put"):
            row[f"{counters.LABELS[name]} ({'server' if server else 'engine'})"] = (
                (server or engine).get(name, math.nan))
        row["S3 MB (server)"] = server.get("s3_bytes_read", math.nan) / 1e6
        # an engine that counts the bytes its queries read from storage, whichever (Trino's physical input), read
        # the run's storage: on a tier, its cache's bytes count too, so there they are not S3's
        row["S3 MB (engine)"] = engine.get("s3_bytes_read", engine.get("input_bytes", math.nan)
                                           if row["storage"] == DIRECT else math.nan) / 1e6
        row["HDFS MB (server)"] = server.get("hdfs_bytes_read", math.nan) / 1e6
        hdfs_engine = engine_hdfs_bytes(engine) if row["storage"] == HDFS else engine.get("hdfs_bytes_read")
        row["HDFS MB (engine)"] = (math.nan if hdfs_engine is None else hdfs_engine) / 1e6
        if row["storage"] == HDFS:  # its snapshots read HDFS's counters only (accounting.run_io)
            row["server = engine"] = HDFS_RUN
        elif row["storage"] == DIRECT:
            verdicts = {agreement(_of(run, "server"), _of(run, "engine")) for run in group.to_dict("records")}
            row["server = engine"] = verdicts.pop() if len(verdicts) == 1 else "; ".join(sorted(verdicts))
        else:  # a tier fetches from S3 itself (a cold read): the engine never sees those requests
            row["server = engine"] = "not compared: the tier makes its own S3 requests"
        if prices is not None:
            row["$ per 1,000 runs"] = 1000 * request_cost(prices, server or engine)
        rows.append(row)
    table = pd.DataFrame(rows)
    mb = [c for c in table.columns if " MB " in c]
    table = table.round({**dict.fromkeys(mb, 3), "$ per 1,000 runs": 6})
    table.attrs["missing"] = missing_sides(frame)
    return table


def _of(run: dict, side: str) -> dict:
    prefix = f"{side}."
    return {name[len(prefix):]: value for name, value in run.items()
            if name.startswith(prefix) and not (isinstance(value, float) and math.isnan(value))}


def _medians(group: pd.DataFrame, side: str) -> dict:
    columns = [c for c in group.columns if c.startswith(f"{side}.")]
    if side == "server":
        group = group[group["attributable"].astype(bool)]
    found = {c.split(".", 1)[1]: float(group[c].median()) for c in columns if group[c].notna().any()}
    return found
