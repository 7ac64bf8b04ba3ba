"""A tier that did not cache, named from the run's own counters with the fix: what a reader of a hot ratio near 1
must know before believing the tier is no faster.

- **It would not keep what it fetched**: a warm and a hot try of the same query and round both fetched from S3.
  Why, from the workers' counters and how full the store was after each try: a store too small for the working set
  (it evicted blocks, Worker.BlocksEvicted, to make room for others), a write to the store refused (cache requests
  failed, Worker.CacheFailedBlocks, and nothing was evicted: the worker logs "Failed to free ... Blocks removed: 0"),
  an eviction that removed nothing (the store full, nothing evicted, nothing failed); each with its own fix.
- **Metadata synced on every read**: a hot try through the tier made the S3 server answer HEADs or LISTs, where a tier
  that holds the data and its metadata asks S3 nothing (Alluxio's `alluxio.user.file.metadata.sync.interval=0`; 0
  HEADs and LISTs on every hot try of Trino, Spark and Hive here, the sync left at its default).
- **A free that left blocks held**: what the tier still held when the cold try began (held_before_bytes, recorded
  after the emptying; a reader may still lock those blocks), so that cold try could read part of its bytes from the
  cache.
- A store smaller than the data is said before the run (Tier.size_note)."""
from __future__ import annotations

import pandas as pd

from perfkit.accounting.recorded_io import RunIO
from perfkit.findings import plural
from perfkit.presenting.query_report import _range
from perfkit.storages import storage_class
from perfkit.tiers import is_tier

FAILED = "worker cache failed blocks"  # Alluxio's Worker.CacheFailedBlocks, in a run's tier activity
EVICTED = "worker blocks evicted"  # Alluxio's Worker.BlocksEvicted
FULL = 0.95  # a store holding this share of its capacity or more is full
NOT_EMPTIED = r"yet its workers still hold ([\d.]+) MB"  # Alluxio.empty's words, in records before held_before_bytes


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
        held = _held_mb(tries)
        if not len(held):
            continue
        notes.append(f"emptying {where} left {_range(held, '{:.1f}')} MB held before {len(held)} of its "
                     f"{len(tries)} cold tries: its workers did not free those blocks (a reader may still hold "
                     "them; Alluxio's worker logs 'Failed to free'), so those tries could read part of their bytes "
                     "from the cache ('MB from cache' of the cold rows says how much). Fix: free the mount again "
                     "once nothing reads it, or restart the workers (the lab: `perfkit lab down`, then `perfkit "
                     "lab up`)")
    return notes


def _held_mb(cold: pd.DataFrame) -> pd.Series:
    """MB a tier still held at each cold try that began with some held: as recorded (held_before_bytes), else, for
    records made before it was, as Alluxio.empty said it."""
    recorded = pd.to_numeric(cold["held_before_bytes"], errors="coerce") / 1e6 if "held_before_bytes" in cold else None
    said = cold["emptied"].astype(str).str.extract(NOT_EMPTIED, expand=False).astype(float)
    held = said if recorded is None else recorded.fillna(said)
    return held[held > 0]


def _not_kept(engine: str, where: str, runs: pd.DataFrame) -> list[str]:
    """Rounds whose warm and hot tries both fetched from S3: the tier did not keep what it fetched; why, from its
    workers' counters (evictions, failed cache requests) and how full its store was, with that cause's fix."""
    fetched = runs.assign(s3=pd.to_numeric(runs["s3_bytes"], errors="coerce"))
    by_try = fetched.pivot_table(index=["case", "iteration"], columns="try", values="s3", aggfunc="sum")
    if not {"warm", "hot"} <= set(by_try.columns):
        return []
    again = by_try[(by_try["warm"] > 0) & (by_try["hot"] > 0)]
    if again.empty:
        return []
    why, fix = _why_not_kept(runs)
    return [f"{engine} through {where} did not keep what it fetched: in {plural(len(again), 'round')} the warm and "
            f"the hot try both fetched from S3 ({again['hot'].sum() / 1e6:.1f} MB on the hot tries; {why}), so "
            f"its hot times are S3's. Fix: {fix}"]


def _why_not_kept(runs: pd.DataFrame) -> tuple[str, str]:
    """(the cause, its fix): a store too small for the working set (it evicted to make room), a write to the store
    refused (cache requests failed, or the store kept nothing though it had room: Alluxio logs a refused cache write
    without always counting it), an eviction that removed nothing (the store full, nothing evicted, nothing failed),
    else a store that took nothing with no counter saying why."""
    activity = [a for a in runs["tier_activity"] if isinstance(a, dict)] if "tier_activity" in runs else []
    failed = sum(int(a.get(FAILED, 0)) for a in activity)
    evicted = sum(int(a.get(EVICTED, 0)) for a in activity)
    fullest = _fullest(runs)
    held = f"{fullest[0] / 1e6:.1f} of its {fullest[1] / 1e6:.1f} MB held" if fullest else "how full it was not counted"
    full = fullest is not None and fullest[0] >= FULL * fullest[1]
    if evicted:
        return (f"its store is too small for the working set: its workers evicted {plural(evicted, 'block')} to make "
                f"room, {held}",
                "a store larger than the data the queries read (the lab: PERFKIT_LAB_ALLUXIO_STORE; a cluster: "
                "alluxio.worker.tieredstore.level0.dirs.quota and the levels below it), or fewer tables through the "
                "tier")
    if failed or (fullest is not None and not full):
        failures = f"its workers failed {plural(failed, 'cache request')}, " if failed else ""
        return (f"a write to its store was refused: {failures}nothing evicted, {held} (the worker logs \"Failed to "
                "free ... Blocks removed: 0\": a block larger than the room it could make)",
                "a store larger than one block of the files (their block size), with no pinned blocks or readers "
                "holding the rest (the lab: PERFKIT_LAB_ALLUXIO_STORE)")
    if full:
        return (f"its store is full and evicted nothing: {held}, no cache request failed",
                "free what holds the store (`alluxio fs free`, `alluxio fs unpin` for pinned files) or a larger "
                "store, and check the worker's log for \"Failed to free\" (blocks locked by a reader)")
    return (f"its store took nothing, {held}",
            "a store with room for the data (the lab: PERFKIT_LAB_ALLUXIO_STORE), and check the worker's log for "
            "\"Failed to free\": blocks it cannot evict (pinned, or locked by a reader)")


def _fullest(runs: pd.DataFrame) -> tuple[float, float] | None:
    """(bytes held, capacity) after the try that left the store fullest, where both were counted."""
    if not {"tier_holds_bytes", "tier_capacity_bytes"} <= set(runs.columns):
        return None
    held = pd.to_numeric(runs["tier_holds_bytes"], errors="coerce")
    capacity = pd.to_numeric(runs["tier_capacity_bytes"], errors="coerce")
    share = (held / capacity).dropna()
    if share.empty:
        return None
    at = share.idxmax()
    return float(held[at]), float(capacity[at])


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
