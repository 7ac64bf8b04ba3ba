"""The query-time model's observations from a run's own records: one row per measured, successful run.

What each column is read from (perfkit.model.query_time names them):
  bytes      the storage server's count for the run (io.server: s3_bytes_read from S3's access log and the network
             emulator, hdfs_bytes_read from the DataNodes), else the engine's count of that storage's bytes (io.engine),
             else the engine's physical input bytes (Trino's input_bytes: the lab's S3 with no emulator counts none)
  requests   S3 GETs, HEADs and LISTs from the server (io.server), else the engine's
  g_s        the run's calibration: the median time of a small GET on its S3 path (config.network.small_get_ms)
  w_bytes_s  the run's calibration: one connection's bytes per second (config.network.one_connection_mb_s)
  table_bytes  the run's table, one copy (config.dataset.one_copy_bytes): what perfkit.decide scales a query by
A run without bytes (no accounting there), or on S3 without its calibration (a record read without its run's config:
read runs back with ResultSet.load or load_results), is left out and counted, so a fit says how many it could not use.
"""
from __future__ import annotations

import math

import pandas as pd

from perfkit.model.query_time import COLUMNS

REQUESTS = ("s3_get", "s3_head", "s3_list")
BYTES = {"s3": "s3_bytes_read", "hdfs": "hdfs_bytes_read"}


def observations(records: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """(the model's frame, runs left out for want of bytes or calibration) from the records of one or more runs."""
    measured = records[records["phase"].eq("measured") & records["ok"].astype(bool)
                       & records["storage"].isin(list(BYTES))]
    rows = [_row(record) for record in measured.itertuples(index=False)]
    kept = [row for row in rows if row["bytes"] is not None and (row["storage"] != "s3" or row["g_s"] is not None)]
    return pd.DataFrame(kept, columns=[*COLUMNS, "table_bytes"]), len(rows) - len(kept)


def _row(record) -> dict:
    io, network = record.io or {}, (record.config or {}).get("network") or {}
    on_s3 = record.storage == "s3"
    requests = _counted(io, REQUESTS) if on_s3 else None
    small_get_ms, one_connection = network.get("small_get_ms"), network.get("one_connection_mb_s")
    return {"engine": record.subject, "query": record.case, "storage": record.storage, "wall_s": record.wall_s,
            "bytes": _counted(io, (BYTES[record.storage],)) or _counted(io, ("input_bytes",), sides=("engine",)),
            "requests": requests,
            "g_s": small_get_ms / 1000 if on_s3 and small_get_ms else None,
            "w_bytes_s": one_connection * 1e6 if on_s3 and one_connection else None,
            "table_bytes": ((record.config or {}).get("dataset") or {}).get("one_copy_bytes")}


def _counted(io: dict, counters: tuple[str, ...], sides: tuple[str, ...] = ("server", "engine")) -> float | None:
    """The sum of counters from the server's side, else the engine's; None where neither counted them all."""
    for side in sides:
        values = [(io.get(side) or {}).get(name) for name in counters]
        if all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values):
            return float(sum(values))
    return None
