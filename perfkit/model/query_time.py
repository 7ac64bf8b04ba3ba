"""A query's time on HDFS and on S3, as a model fitted from a run's own records, to carry a lab's finding to another
data size and another network (issue 71).

For one engine, each measured run i of query q on a storage:

    t_i = a_q + c_q * B_i + [S3] * (u * R_i + rt * R_i * g_i + bw * B_i / w_i) + error

  B_i   bytes the storage served for the run (its server's counters: S3's access log, HDFS's DataNodes)
  R_i   requests the run made to S3 (GET, HEAD and LIST, from the server)
  g_i   the time of one small GET on the run's S3 path, measured by the run's calibration (a round trip + the server)
  w_i   the bytes per second of one connection on that path, measured by the calibration

and the terms fitted:

  a_q   the engine's own fixed cost of query q (planning, scheduling, result): seconds
  c_q   the engine's own cost per byte of query q (reading and decoding): seconds per byte, the same on both storages
  u     S3's cost per request apart from the round trip (the client's signing, the server's own time): seconds
  rt    round trips on the critical path per request: 1 if the engine waits for every request in turn, 1/k if it
        keeps k requests in flight
  bw    bytes on one connection's critical path per byte: 1 if every byte comes through one connection in turn, 1/k
        if k connections share the work

Every term is linear, so the fit is weighted least squares; its weights make each run's error relative (1 / t^2 of its
cell's median: a 10 s query's 0.5 s is no larger an error than a 0.1 s query's 5 ms). The storage terms are the
engine's (its S3 client, its parallelism); the engine's own terms are each query's. The fit needs runs at two or more
data sizes (c_q apart from a_q), round trips (u apart from rt) and bandwidths (bw apart from c_q): DesignError says
which is missing. An interval of a prediction is statsmodels' 95% prediction interval of one run's time at the
target (the fit's own uncertainty and the runs' scatter), on the relative scale the fit was made on.

    model = fit(observations)             # a frame: engine, query, storage, wall_s, bytes, requests, g_s, w_bytes_s
    model.predict("trino", "q1", "s3", bytes=8.6e9, requests=3200, g_s=0.020, w_bytes_s=85e6)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm

from perfkit.errors import PerfkitError

CONFIDENCE = 0.95
COLUMNS = ["engine", "query", "storage", "wall_s", "bytes", "requests", "g_s", "w_bytes_s"]
STORAGE_TERMS = ["u", "rt", "bw"]  # the engine's S3 terms, in the design's order after each query's a and c
SPREAD = 2.0  # the least factor between a variable's smallest and largest value that separates its term


class DesignError(PerfkitError):
    """The runs cannot separate the model's terms: which variation is missing, and what to run."""


@dataclass(frozen=True)
class Prediction:
    seconds: float
    low: float  # the 95% prediction interval of one run's time
    high: float
    latency_s: float  # the S3 terms at the target: requests' round trips ...
    bandwidth_s: float  # ... and bytes through the connections (0 on HDFS)
    engine_s: float  # the engine's own terms (fixed and per byte)

    @property
    def regime(self) -> str:
        """What S3's part of the time is bound by at the target: the larger of its two network terms."""
        if not self.latency_s and not self.bandwidth_s:
            return "no S3 network terms"
        return "latency-bound" if self.latency_s >= self.bandwidth_s else "bandwidth-bound"


@dataclass
class EngineFit:
    engine: str
    queries: list[str]
    result: object  # statsmodels' RegressionResults of the weighted fit

    def design_row(self, query: str, storage: str, bytes: float, requests: float, g_s: float,
                   w_bytes_s: float) -> np.ndarray:
        return _design_row(self.queries, query, storage == "s3", bytes, requests, g_s, w_bytes_s)

    def term(self, name: str) -> tuple[float, float, float]:
        """A fitted term with its 95% confidence interval: (value, low, high)."""
        low, high = self.result.conf_int(1 - CONFIDENCE).loc[name]
        return float(self.result.params[name]), float(low), float(high)


@dataclass
class QueryTimeModel:
    engines: dict[str, EngineFit]

    def predict(self, engine: str, query: str, storage: str, bytes: float, requests: float = 0.0,
                g_s: float = 0.0, w_bytes_s: float = math.inf) -> Prediction:
        fitted = self._engine(engine)
        if query not in fitted.queries:
            raise PerfkitError(f"query {query!r} was not in {engine}'s fit (it has {', '.join(fitted.queries)}): "
                               "fit on runs of that query first")
        row = fitted.design_row(query, storage, bytes, requests, g_s, w_bytes_s)
        params = np.asarray(fitted.result.params)
        seconds = float(row @ params)
        # the fit is relative (weights 1/t^2): a new run's weight is 1/seconds^2 at its own prediction
        frame = fitted.result.get_prediction(row[None, :], weights=1 / max(seconds, 1e-9) ** 2)
        low, high = frame.conf_int(obs=True, alpha=1 - CONFIDENCE)[0]
        parts = row * params
        base = 2 * len(fitted.queries)
        return Prediction(seconds, float(low), float(high), latency_s=float(parts[base] + parts[base + 1]),
                          bandwidth_s=float(parts[base + 2]), engine_s=float(parts[:base].sum()))

    def _engine(self, engine: str) -> EngineFit:
        if engine not in self.engines:
            raise PerfkitError(f"engine {engine!r} was not in the fit (it has {', '.join(self.engines)})")
        return self.engines[engine]


def fit(observations: pd.DataFrame) -> QueryTimeModel:
    """The model per engine from measured runs (COLUMNS; HDFS rows may leave requests, g_s and w_bytes_s empty)."""
    missing = [c for c in COLUMNS if c not in observations]
    if missing:
        raise PerfkitError(f"observations lack {', '.join(missing)}: give one row per measured run with {COLUMNS}")
    return QueryTimeModel({engine: _fit_engine(engine, runs) for engine, runs in observations.groupby("engine")})


def _fit_engine(engine: str, runs: pd.DataFrame) -> EngineFit:
    runs = runs.dropna(subset=["wall_s", "bytes"])
    queries = sorted(runs["query"].unique())
    _check_design(engine, runs, queries)
    on_s3 = runs["storage"].eq("s3").to_numpy()
    design = np.vstack([_design_row(queries, q, s3, b, r, g, w) for q, s3, b, r, g, w in zip(
        runs["query"], on_s3, runs["bytes"], runs["requests"].fillna(0), runs["g_s"].fillna(0),
        runs["w_bytes_s"].fillna(math.inf))])
    # each run's weight from its cell's median time: the errors are relative, the weights not themselves noisy
    cell = runs.groupby(["query", "storage", "bytes", "g_s", "w_bytes_s"], dropna=False)["wall_s"].transform("median")
    names = [f"{term}[{q}]" for q in queries for term in ("a", "c")] + STORAGE_TERMS
    result = sm.WLS(runs["wall_s"].to_numpy(float), pd.DataFrame(design, columns=names),
                    weights=1 / cell.to_numpy(float) ** 2).fit()
    return EngineFit(engine, queries, result)


def _design_row(queries: list[str], query: str, on_s3: bool, bytes: float, requests: float, g_s: float,
                w_bytes_s: float) -> np.ndarray:
    row = np.zeros(2 * len(queries) + len(STORAGE_TERMS))
    at = 2 * queries.index(query)
    row[at], row[at + 1] = 1.0, bytes
    if on_s3:
        base = 2 * len(queries)
        row[base:] = [requests, requests * g_s, bytes / w_bytes_s]
    return row


def _check_design(engine: str, runs: pd.DataFrame, queries: list[str]) -> None:
    """Each term needs its own variation in the runs (a factor of SPREAD or more between the smallest and largest
    value: two runs of one size differ by a few bytes of headers): say which is missing, in the user's words."""
    s3 = runs[runs["storage"].eq("s3")]
    short = []
    for query in queries:
        if _spread(runs.loc[runs["query"].eq(query), "bytes"]) < SPREAD:
            short.append(f"query {query} at two or more data sizes (its cost per byte apart from its fixed cost)")
    if s3.empty:
        short.append("runs on S3")
    else:
        if _spread(s3["g_s"]) < SPREAD:
            short.append("S3 at two or more round trips (the round trip's share apart from a request's own cost)")
        if _spread(s3["w_bytes_s"]) < SPREAD:
            short.append("S3 at two or more bandwidths per connection (the bandwidth's share apart from the "
                         "engine's cost per byte)")
    if short:
        raise DesignError(f"{engine}: the runs cannot separate the model's terms; they need " + "; ".join(short)
                          + f" (values a factor of {SPREAD:g} apart or more)")


def _spread(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.max() / values.min()) if len(values) and values.min() > 0 else 1.0
