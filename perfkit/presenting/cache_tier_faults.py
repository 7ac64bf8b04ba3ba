"""A tier that did not cache, named from the run's own counters with the fix: what a reader of a hot ratio near 1
must know before believing the tier is no faster.

- **It would not keep what it fetched**: a warm and a hot try of the same query and round both fetched from S3. The
  store took nothing (full of blocks it cannot evict, or a write to it refused: Alluxio's worker then logs "Failed to
  free ... Blocks removed: 0"); its workers' failed cache requests (Worker.CacheFailedBlocks) say so where counted.
- **Metadata synced on every read**: a hot try through the tier made the S3 server answer HEADs or LISTs, where a tier
  that holds the data and its metadata asks S3 nothing (Alluxio's `alluxio.user.file.metadata.sync.interval=0`; 0
  HEADs and LISTs on every hot try of Trino, Spark and Hive here, the sync left at its default).
- **A free that left blocks held**: the cold try's "emptied before" says how much the workers still held (a reader
  may still lock them), so that cold try could read part of its bytes from the cache.
- A store smaller than the data is said before the run (Tier.size_note)."""
from __future__ import annotations

import pandas as pd

from perfkit.accounting.recorded_io import RunIO
from perfkit.findings import plural
from perfkit.presenting.query_report import _range
from perfkit.storages import storage_class
from perfkit.tiers import is_tier

FAILED = "worker cache failed blocks"  # Alluxio's Worker.CacheFailedBlocks, in a run's tier activity
NOT_EMPTIED = r"yet its workers still hold ([\d.]+) MB"  # perfkit.tiers.alluxio.Alluxio.empty's words


def fault_notes(frame: pd.DataFrame) -> list[str]:
    """One note per engine and tier with a fault (tries_frame's rows: try, s3_bytes, io, tier_activity)."""
    tiers = frame[frame["storage"].map(is_tier)] if len(frame) else frame
    notes = _not_emptied(tiers)
    for (engine, where), runs in tiers.groupby(["subject", "storage"], sort=False) if len(tiers) else ():
        notes += _not_kept(engine, where, runs) + _metadata_synced(engine, where, runs)
    return notes


def _not_emptied(tiers: pd.DataFrame) -> list[str]:
    """Per tier whose emptying left data held before a cold try (a free its workers did not carry out): how much,
    what that does to the cold tries, and the fix."""
    cold = tiers[tiers["try"] == "cold"] if len(tiers) and "emptied" in tiers else tiers.iloc[0:0]
    notes = []
    for where, tries in cold.groupby("storage", sort=False) if len(cold) else ():
        held = tries["emptied"].astype(str).str.extract(NOT_EMPTIED, expand=False).dropna().astype(float)
        if not len(held):
            continue
        notes.append(f"emptying {where} left {_range(held, '{:.1f}')} MB held before {len(held)} of its "
                     f"{len(tries)} cold tries: its workers did not free those blocks (a reader may still hold "
                     "them; Alluxio's worker logs 'Failed to free'), so those tries could read part of their bytes "
                     "from the cache ('MB from cache' of the cold rows says how much). Fix: free the mount again "
                     "once nothing reads it, or restart the workers (the lab: `perfkit lab down`, then `perfkit "
                     "lab up`)")
    return notes


def _not_kept(engine: str, where: str, runs: pd.DataFrame) -> list[str]:
    """Rounds whose warm and hot tries both fetched from S3: the tier did not keep what it fetched."""
    fetched = runs.assign(s3=pd.to_numeric(runs["s3_bytes"], errors="coerce"))
    by_try = fetched.pivot_table(index=["case", "iteration"], columns="try", values="s3", aggfunc="sum")
    if not {"warm", "hot"} <= set(by_try.columns):
        return []
    again = by_try[(by_try["warm"] > 0) & (by_try["hot"] > 0)]
    if again.empty:
        return []
    failed = sum(int((a or {}).get(FAILED, 0)) for a in runs["tier_activity"] if isinstance(a, dict))
    why = (f"its workers failed {plural(failed, 'cache request')}" if failed else
           "its store took nothing")
    return [f"{engine} through {where} did not keep what it fetched: in {plural(len(again), 'round')} the warm and "
            f"the hot try both fetched from S3 ({again['hot'].sum() / 1e6:.1f} MB on the hot tries; {why}), so "
            "its hot times are S3's. Fix: a store with room for the data (the lab: PERFKIT_LAB_ALLUXIO_STORE), and "
            "check the worker's log for \"Failed to free\": blocks it cannot evict (pinned, or locked by a reader)"]


def _metadata_synced(engine: str, where: str, runs: pd.DataFrame) -> list[str]:
    """Hot tries that made the S3 server answer HEADs or LISTs: the tier checked S3's metadata on a read. Not for a
    tier read through the engine's own S3 table (Trino's cache): the engine lists S3 itself, one LIST a query."""
    if storage_class(where).reads_backing_table:
        return []
    hot = runs[runs["try"] == "hot"]
    asked = [sum(RunIO.of(io).counts("server").get(k, 0) or 0 for k in ("s3_head", "s3_list")) for io in hot["io"]]
    asked = [n for n in asked if n > 0]
    if not asked:
        return []
    return [f"{engine} through {where} asked S3 for metadata on {len(asked)} of its {plural(len(hot), 'hot try')} "
            f"({max(asked):g} HEADs and LISTs at most): the tier syncs a file's metadata with S3 on a read "
            "(Alluxio: alluxio.user.file.metadata.sync.interval=0), so each hot read pays round trips to S3. Fix: a "
            "sync interval of minutes, or -1 with `alluxio fs loadMetadata -R` after the data is placed"]
