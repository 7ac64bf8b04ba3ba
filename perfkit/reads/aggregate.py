"""Aggregate throughput of parallel jobs, as the NFS-vs-HDFS study defined it, and the spread of their ends."""
from __future__ import annotations

import numpy as np
import pandas as pd


def aggregate(jobs: pd.DataFrame) -> dict:
    """jobs: one row per job with start, end (epoch seconds), bytes, ok.

    aggregate MB/s = bytes of all successful jobs / (last end - first start); "first done" and
    "last done" are seconds from the first start; the completion times show how jobs finished.
    """
    ok = jobs[jobs["ok"].astype(bool)]
    if ok.empty:
        return {"jobs": len(jobs), "ok": 0, "MB": 0.0, "seconds": np.nan, "MB/s": np.nan,
                "first done s": np.nan, "last done s": np.nan, "median done s": np.nan}
    first_start = ok["start"].min()
    done = (ok["end"] - first_start).sort_values()
    span = ok["end"].max() - first_start
    total = ok["bytes"].sum()
    return {"jobs": len(jobs), "ok": len(ok), "MB": total / 1e6, "seconds": span, "MB/s": total / 1e6 / span,
            "first done s": done.iloc[0], "last done s": done.iloc[-1], "median done s": float(done.median())}


def completion_times(jobs: pd.DataFrame) -> pd.Series:
    """Seconds from the first start to each successful job's end, sorted: the completion curve."""
    ok = jobs[jobs["ok"].astype(bool)]
    return (ok["end"] - ok["start"].min()).sort_values().reset_index(drop=True)
