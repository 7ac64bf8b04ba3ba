"""The answer for the user's cluster (issue 71): a query's time on S3 and on HDFS at their data size and distance,
what a month costs there, when copying to HDFS pays off, and how sure each answer is.

The lab's runs fit perfkit.model.query_time (each engine's own costs and S3's terms); decide() carries them to a
Target, the user's cluster, by what the runs measured of each query:
  - the bytes it reads per byte of its table (column pruning, predicates: the runs' median share), times the user's
    table size;
  - the S3 requests it makes for those bytes, a straight line through the runs' (bytes, requests) at their sizes:
    a query's fixed requests (footers, listings) and those that grow with the bytes (range GETs) apart, which is where
    the regime turns with the data size;
  - the round trip and one connection's bandwidth of the user's path to S3 (calibrated there, or given).
Every input is said with where it came from (measured, calibrated, given or assumed): Decision.inputs.

    model = fit(frame)                    # perfkit.model.query_time, from observations() of the lab's runs
    decision = decide(model, frame, Target(data_bytes=1e12, rtt_ms=20, mb_s=85, runs_per_day=24), prices)
    decision.table(); decision.sentences()
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.findings import plural
from perfkit.model.query_time import Prediction, QueryTimeModel

DAYS_A_MONTH = 30
QUERY_RUNS = "hdfs_vs_s3_queries"  # the experiment whose runs the model is fitted on (the same SQL on both storages)


@dataclass(frozen=True)
class Target:
    """The user's cluster: one copy of their tables, their path to S3, how often each query runs, HDFS's layout."""
    data_bytes: float
    rtt_ms: float  # a small GET's time on the path to S3 (the round trip, and S3's own): what calibration measures
    mb_s: float  # one connection's bandwidth to S3, MB/s (10^6 bytes)
    runs_per_day: float = 24.0
    replication: int = 3
    volume_type: str = "st1"
    copy_mb_s: float | None = None  # the copy S3 -> HDFS, MB/s; None: no break-even
    sources: dict = field(default_factory=dict)  # input -> where it came from ("given" unless said)

    def __post_init__(self):
        for name in ("data_bytes", "rtt_ms", "mb_s", "runs_per_day"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or math.isnan(value) or value < 0 or (
                    name in ("data_bytes", "mb_s") and value == 0):
                raise PerfkitError(f"decide: {name} {value!r} must be a number above 0 (rtt_ms and runs_per_day "
                                   "may be 0)")
        if int(self.replication) != self.replication or self.replication < 1:
            raise PerfkitError(f"decide: replication {self.replication!r} must be a whole number, 1 or more")

    @property
    def g_s(self) -> float:
        """A small GET's time on the user's path, as the fit's runs had it from their calibration."""
        return self.rtt_ms / 1000

    @property
    def w_bytes_s(self) -> float:
        return self.mb_s * 1e6


@dataclass(frozen=True)
class Scaling:
    """How one engine's query grows with its table, read from the runs: bytes per table byte on each storage, and
    S3 requests as fixed + per byte read."""
    share: dict  # storage -> bytes read per byte of table (median over the runs)
    requests_fixed: float
    requests_per_byte: float
    sizes: int  # distinct table sizes the runs had: 1 makes the requests proportional (an assumption, said)

    def bytes_read(self, storage: str, table_bytes: float) -> float:
        return self.share[storage] * table_bytes

    def requests(self, table_bytes: float) -> float:
        return self.requests_fixed + self.requests_per_byte * self.bytes_read("s3", table_bytes)


@dataclass
class Decision:
    target: Target
    rows: pd.DataFrame  # one per engine and query: the predictions and what follows from them
    cost: pd.DataFrame  # a month on each storage: stored, requests, total
    inputs: dict  # input -> "value (where it came from)"

    def table(self) -> pd.DataFrame:
        return self.rows

    def sentences(self) -> list[str]:
        """The answer in words: per engine and query, the verdict with both times and their intervals, the regime,
        the break-even; then the month's cost."""
        said = []
        for row in self.rows.itertuples():
            turn = ("" if math.isnan(row.turns_at_bytes) else
                    f" (latency-bound below {_bytes(row.turns_at_bytes)} of table, bandwidth-bound above)")
            said.append(f"{row.engine} {row.query}: {row.verdict}: S3 {_duration(row.s3_s)} (95% PI "
                        f"{_duration(row.s3_low)} to {_duration(row.s3_high)}), HDFS {_duration(row.hdfs_s)} "
                        f"({_duration(row.hdfs_low)} to {_duration(row.hdfs_high)}); S3 {row.regime}{turn}; "
                        f"{row.break_even}.")
        for row in self.cost.itertuples():
            said.append(f"A month on {row.storage}: {_money(row.total)} ({_money(row.stored)} stored"
                        + (f", {_money(row.requests)} in requests" if row.requests else "") + ").")
        return said


def scaling(observations: pd.DataFrame, engine: str, query: str) -> Scaling:
    """One engine's query as its runs grew (observations with a table_bytes column: the run's table, one copy)."""
    runs = observations[observations["engine"].eq(engine) & observations["query"].eq(query)]
    if "table_bytes" not in runs or runs["table_bytes"].isna().all():
        raise PerfkitError(f"decide: the runs of {engine} {query} do not say their table's size: runs of an older "
                           "perfkit; measure again")
    share = {storage: float((part["bytes"] / part["table_bytes"]).median())
             for storage, part in runs.groupby("storage")}
    missing = [s for s in ("s3", "hdfs") if s not in share]
    if missing:
        raise PerfkitError(f"decide: {engine} {query} has no runs on {', '.join(missing)}: decide needs both storages")
    on_s3 = runs[runs["storage"].eq("s3")].dropna(subset=["requests"])
    sizes = on_s3["table_bytes"].nunique()
    if sizes >= 2:
        per_byte, fixed = np.polyfit(on_s3["bytes"], on_s3["requests"], 1)
        if fixed < 0 or per_byte < 0:  # a line below zero at either end: the requests are proportional
            fixed, per_byte = 0.0, float((on_s3["requests"] / on_s3["bytes"]).median())
    else:
        fixed, per_byte = 0.0, float((on_s3["requests"] / on_s3["bytes"]).median())
    return Scaling(share, float(fixed), float(per_byte), sizes)


def decide(model: QueryTimeModel, observations: pd.DataFrame, target: Target, prices) -> Decision:
    """Each fitted engine and query at the target: both storages' predicted time with its 95% prediction interval,
    S3's regime and the table size where it turns, the verdict the intervals allow, the copy break-even; and the
    month's cost of each storage (stored, with replicas on HDFS, and S3's requests at the runs a day)."""
    rows, requests_a_day = [], 0.0
    for engine, fitted in model.engines.items():
        for query in fitted.queries:
            grown = scaling(observations, engine, query)
            requests = grown.requests(target.data_bytes)
            s3 = model.predict(engine, query, "s3", bytes=grown.bytes_read("s3", target.data_bytes),
                               requests=requests, g_s=target.g_s, w_bytes_s=target.w_bytes_s)
            hdfs = model.predict(engine, query, "hdfs", bytes=grown.bytes_read("hdfs", target.data_bytes))
            turns_at = turning_point(model, engine, grown, target)
            rows.append({"engine": engine, "query": query,  # a time's interval stops at 0 (the fit is linear)
                         "s3_s": s3.seconds, "s3_low": max(s3.low, 0.0), "s3_high": s3.high,
                         "hdfs_s": hdfs.seconds, "hdfs_low": max(hdfs.low, 0.0), "hdfs_high": hdfs.high,
                         "s3_requests": requests, "s3_bytes": grown.bytes_read("s3", target.data_bytes),
                         "regime": s3.regime, "turns_at_bytes": turns_at,
                         "verdict": verdict(s3, hdfs), "break_even": break_even(target, s3, hdfs),
                         "requests_assumed_proportional": grown.sizes < 2})
            requests_a_day += requests * target.runs_per_day
    return Decision(target, pd.DataFrame(rows), month_cost(target, prices, requests_a_day), inputs(target))


def verdict(s3: Prediction, hdfs: Prediction) -> str:
    """What the two prediction intervals allow: a side only when they do not overlap."""
    if s3.low > hdfs.high:
        return f"S3 slower ({s3.seconds / hdfs.seconds:.2f}× HDFS's time)"
    if s3.high < hdfs.low:
        return f"S3 faster ({s3.seconds / hdfs.seconds:.2f}× HDFS's time)"
    return "no side decided: the predictions' intervals overlap"


def turning_point(model: QueryTimeModel, engine: str, grown: Scaling, target: Target) -> float:
    """The table size (bytes) where S3's time turns from latency- to bandwidth-bound on the target's path: where the
    requests' round trips (fixed + per byte read) equal the bytes' time through one connection. NaN when it never
    turns: no fixed requests (both grow alike), or the requests grow faster than the bytes' time."""
    fitted = model.engines[engine]
    u, rt, bw = (fitted.term(name)[0] for name in ("u", "rt", "bw"))
    per_request = u + rt * target.g_s
    per_table_byte = grown.share["s3"] * (bw / target.w_bytes_s - per_request * grown.requests_per_byte)
    fixed = per_request * grown.requests_fixed
    return float(fixed / per_table_byte) if per_table_byte > 0 and fixed > 0 else math.nan


def break_even(target: Target, s3: Prediction, hdfs: Prediction) -> str:
    """After how many runs copying the table to HDFS once beats querying S3, from the predicted times."""
    if target.copy_mb_s is None:
        return "copy not measured: no break-even"
    penalty = s3.seconds - hdfs.seconds
    copy_s = target.data_bytes / (target.copy_mb_s * 1e6)
    if penalty <= 0:
        return f"copying never pays off (S3 not slower; the copy takes {_duration(copy_s)})"
    runs = math.ceil(copy_s / penalty)
    return (f"copying pays off after {plural(runs, 'run')} (copy {_duration(copy_s)}, {_duration(penalty)} saved "
            "a run)")


def month_cost(target: Target, prices, requests_a_day: float) -> pd.DataFrame:
    """A month of the table on S3 (stored + the queries' GETs) and on HDFS (every replica on EBS)."""
    gb = target.data_bytes / 1e9
    s3_stored = gb * prices.figures["s3"]["storage_per_gb_month"]
    s3_requests = prices.request_cost({"s3_get": requests_a_day * DAYS_A_MONTH})
    hdfs_stored = gb * target.replication * prices.ebs_per_gb_month(target.volume_type)
    replicas = f"{target.replication} replica" + ("" if target.replication == 1 else "s")
    return pd.DataFrame([
        {"storage": prices.texts["storage_class"], "stored": s3_stored, "requests": s3_requests,
         "total": s3_stored + s3_requests},
        {"storage": f"HDFS on EBS {target.volume_type}, {replicas}", "stored": hdfs_stored, "requests": 0.0,
         "total": hdfs_stored},
    ])


def calibrated_path(path, rtt_ms: float | None = None, mb_s: float | None = None) -> tuple[float, float, dict]:
    """The path to S3 from a file `perfkit calibrate --save` wrote: (a small GET's ms, one connection's MB/s, where
    each came from); a figure given on the command line wins over the file's and is said as given."""
    import json

    try:
        found = json.loads(Path(path).read_text())
        small_get_ms, one_connection = float(found["small_get_ms"]), float(found["one_connection_mb_s"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise PerfkitError(f"decide: {path} is not a calibration ({type(err).__name__}: {err}): write one with "
                           "`perfkit calibrate --save FILE` on your cluster") from None
    where = f"calibrated on profile {found.get('profile', '?')} at {found.get('measured_at', '?')}"
    sources = {**({} if rtt_ms is not None else {"round trip": where}),
               **({} if mb_s is not None else {"one connection": where})}
    return (small_get_ms if rtt_ms is None else rtt_ms, one_connection if mb_s is None else mb_s, sources)


def inputs(target: Target) -> dict:
    said = {"data": f"{_bytes(target.data_bytes)} one copy", "round trip": f"{target.rtt_ms:.3g} ms",
            "one connection": f"{target.mb_s:.3g} MB/s", "runs a day": f"{target.runs_per_day:g} per query",
            "HDFS": f"{target.replication} replicas on EBS {target.volume_type}",
            "copy S3 -> HDFS": f"{target.copy_mb_s:g} MB/s" if target.copy_mb_s else "not given"}
    found = {name: f"{value} ({target.sources.get(name, 'given')})" for name, value in said.items()}
    found["parallelism"] = ("the measured runs' (assumed): the fit's terms are their engines' on the machine that ran "
                            "them; a cluster with more task slots reads its bytes and requests faster than predicted")
    return found


def _bytes(value: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} bytes"


def _duration(seconds: float) -> str:
    """0.42 s, 12.3 s, 4.5 min, 2.1 h: a time a reader takes in at once."""
    if abs(seconds) < 10:
        return f"{seconds:.2f} s"
    if abs(seconds) < 600:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if abs(seconds) < 36_000 else f"{seconds / 3600:,.1f} h"


def _money(value: float) -> str:
    return f"${value:,.0f}" if value >= 100 else f"${value:,.2f}"
