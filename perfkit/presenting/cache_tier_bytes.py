"""Where a tier's reads came from, try by try: the bytes served from its cache and fetched from S3, by the tier's own
counters and by the S3 server's, against the bytes the engine read; and how many reads a tier needs to serve a query.

Two sources count the S3 side: the tier (Alluxio's workers: bytes read from the under store; Trino's cache: bytes read
from S3 to fill it) and the S3 server (the lab's request log and network emulator; CloudWatch or the access log on
AWS), over the same window: the read, then the fill it started (perfkit.experiments.attempt.TierCounters). They agree
within 1% of the bytes in play, with a KB of headers per request the server counted (it counts whole responses).

The bytes the engine read are the engine's own count where it keeps one (Trino's query stats; Spark's Hadoop client
statistics of alluxio:// in local mode), else the tier's count of what it sent, on a run that fetched nothing from S3
(Alluxio's workers; Hive keeps no count perfkit reads). A read is whole
when cache + S3 = read within 1%; a cold read fetches more than it read where the tier fills whole blocks (Alluxio)
or pages (Trino's cache): that is the fill, said as the bytes fetched per byte read, not a fault."""
from __future__ import annotations

import itertools
import math

import pandas as pd

from perfkit.accounting.recorded_io import RunIO
from perfkit.protocol import TRIES
from perfkit.tiers import is_tier

AGREE = 0.01  # two counts of the same bytes agree within 1%
HEADER_BYTES = 1024  # the most a response's status line and headers add to the server's count, per request
SERVED = 0.99  # a read served by the tier: at least 99% of its bytes from the cache
ENGINE_COUNTS = {"input_bytes": "the engine (its query stats)",
                 "tier_bytes_read": "the engine (its Hadoop client statistics)"}
TIER_SENT = "worker bytes sent"  # Alluxio's workers' bytes to clients, in a run's tier activity


def read_bytes(io, activity, fetched: float | None) -> tuple[float, str]:
    """The bytes one run read and who counted them: the engine, else the tier where it fetched nothing from S3 (its
    workers' bytes sent hold their own fill too: 77-83 MB for a cold q1 that read 0.89 MB, here); (NaN, "") when
    neither did."""
    engine = RunIO.of(io).counts("engine")
    for name, who in ENGINE_COUNTS.items():
        if _number(engine.get(name)) is not None:
            return float(engine[name]), who
    sent = (activity or {}).get(TIER_SENT) if isinstance(activity, dict) else None
    if _number(sent) is not None and fetched == 0:
        return float(sent), "the tier (bytes its workers sent)"
    return math.nan, ""


def server_s3(io) -> tuple[float, float, str]:
    """The S3 server's bytes and requests for one run, or (NaN, NaN, why not)."""
    stored = RunIO.of(io)
    server = stored.counts("server")
    if "s3_bytes_read" not in server:
        return math.nan, math.nan, stored.missing.get("server") or "the S3 server's bytes not counted"
    requests = sum(server.get(name, 0) or 0 for name in ("s3_get", "s3_head", "s3_list"))
    return float(server["s3_bytes_read"]), float(requests), ""


def bytes_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per tier run (engine, tier, query, round, try): MB the engine read and who counted them, MB from the cache and
    from S3 by the tier, MB from S3 by the S3 server, the share of the read served from the cache, and the check."""
    frame = frame[frame["storage"].map(is_tier)]
    rows = []
    for _, run in frame.iterrows():
        cache, fetched = _number(run.get("cache_bytes")), _number(run.get("s3_bytes"))
        read, counted_by = read_bytes(run.get("io"), run.get("tier_activity"), fetched)
        server, requests, server_why = server_s3(run.get("io"))
        rows.append({
            "engine": run["subject"], "tier": run["storage"], "query": run["case"], "round": run["iteration"] + 1,
            "try": run["try"], "MB read": _mb(read), "read counted by": counted_by or "nobody",
            "MB from cache": _mb(cache), "MB from S3 (tier)": _mb(fetched), "MB from S3 (S3 server)": _mb(server),
            "% of the read from cache": round(100 * min(cache, read) / read, 1) if cache is not None and read > 0
            else None,
            "check": check(read, cache, fetched, server, requests, server_why)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = table["try"].map({t: i for i, t in enumerate(TRIES)})
    return table.assign(_order=order).sort_values(["engine", "tier", "query", "round", "_order"],
                                                  kind="stable").drop(columns="_order").reset_index(drop=True)


def check(read: float, cache: float | None, fetched: float | None, server: float, requests: float,
          server_why: str) -> str:
    """Whether the counts of one run add up: the tier's S3 bytes against the server's, and cache + S3 against the
    read. "ok: ..." when they do, "not checked: ..." when a count is missing, else what does not add up, in MB."""
    if cache is None or fetched is None:
        return "not checked: no counters from the tier"
    if math.isnan(read):
        return "not checked: no count of the bytes read (the engine keeps none perfkit reads)"
    problems = []
    if not math.isnan(server) and abs(fetched - server) > AGREE * max(fetched, server, read) + HEADER_BYTES * requests:
        more = ("S3 sent more than the tier counted: streams closed early, or reads the tier does not count"
                if server > fetched else "the tier counted more than S3 sent")
        problems.append(f"the tier counted {fetched / 1e6:.2f} MB from S3, the S3 server {server / 1e6:.2f} MB "
                        f"({more})")
    if cache + fetched < read * (1 - AGREE):
        problems.append(f"{(read - cache - fetched) / 1e6:.2f} MB of the {read / 1e6:.2f} MB read came from neither "
                        "the cache nor S3 by the tier's count")
    if problems:
        return "; ".join(problems)
    said = "ok: cache + S3 = the bytes read"
    if read > 0 and cache + fetched > read * (1 + AGREE):  # the fill, or a cache that served more than was read
        said = (f"ok: fetched {fetched / read:.1f}× the bytes read (the tier's fill)" if fetched > AGREE * read
                else f"ok: the cache served {(cache - read) / 1e6:.2f} MB more than the bytes read")
    return said + (f" (no count from the S3 server: {server_why})" if math.isnan(server) else "")


def disagreements(table: pd.DataFrame) -> pd.DataFrame:
    """The runs whose counts do not add up (checked, and not ok)."""
    if table.empty:
        return table
    return table[~table["check"].str.startswith(("ok", "not checked"))]


def warmup_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per engine, tier and query: the share of each read served from the cache, in order after the tier was emptied
    (read 1 is cold; the median over rounds), and the reads a tier needs before at least 99% of the query's bytes
    come from it (the most any round needed), or None when it never got there."""
    rows = []
    shares = table.dropna(subset=["% of the read from cache"]) if len(table) else table
    for (engine, where, case), group in shares.groupby(["engine", "tier", "query"], sort=False) if len(shares) else ():
        row = {"engine": engine, "tier": where, "query": case}
        for n, try_ in enumerate(TRIES, 1):
            values = group.loc[group["try"] == try_, "% of the read from cache"]
            row[f"read {n} ({try_}): % from cache"] = round(float(values.median()), 1) if len(values) else None
        row["reads before 99% from the cache"] = _reads_to_serve(group)
        rows.append(row)
    return pd.DataFrame(rows)


def _reads_to_serve(group: pd.DataFrame) -> int | None:
    """The reads each round needed before every later read was served (>= 99% from the cache), the most of any
    round; None when the last read of some round was not."""
    needed = []
    for _, by_round in group.groupby("round"):
        ordered = [by_round.loc[by_round["try"] == t, "% of the read from cache"] for t in TRIES]
        served = [bool(len(s)) and float(s.iloc[0]) >= 100 * SERVED for s in ordered]
        if not served[-1]:
            return None
        needed.append(len(served) - len(list(itertools.takewhile(bool, reversed(served)))))
    return max(needed) if needed else None


def bytes_sentences(table: pd.DataFrame) -> list[str]:
    """Per engine and tier: each try's share of the bytes read that came from the cache and the MB fetched from S3
    (the tier's count, the S3 server's in brackets), summed over its queries and rounds; then the warm-up."""
    if table.empty:
        return []
    warmup = warmup_table(table)
    sentences = []
    for (engine, where), group in table.groupby(["engine", "tier"], sort=False):
        parts = []
        for try_ in TRIES:
            runs = group[group["try"] == try_]
            if not len(runs) or runs["MB from cache"].isna().any():
                continue
            read, cache, fetched = runs["MB read"].sum(), runs["MB from cache"].sum(), runs["MB from S3 (tier)"].sum()
            server = runs["MB from S3 (S3 server)"]
            by_server = f" (the S3 server: {server.sum():.2f} MB)" if server.notna().all() else ""
            if runs["MB read"].isna().any():
                parts.append(f"{try_} {fetched:.2f} MB fetched from S3{by_server}, the bytes read not counted")
                continue
            share = f"{100 * min(cache, read) / read:.1f}%" if read > 0 else "none"
            parts.append(f"{try_} {share} of {read:.2f} MB read from the cache, {fetched:.2f} MB fetched from "
                         f"S3{by_server}")
        if not parts:
            continue
        sentence = f"Where {engine}'s reads through {where} came from (the tier's counters): " + "; ".join(parts)
        needed = (warmup[(warmup["engine"] == engine) & (warmup["tier"] == where)]["reads before 99% from the cache"]
                  if len(warmup) else pd.Series(dtype=float))  # no share: nobody counted the bytes read
        if len(needed) and needed.notna().all():
            most = int(needed.max())
            sentence += (f"; at least 99% of each query's bytes from the cache after {most} "
                         f"{'read' if most == 1 else 'reads'}" if most else "; every read 99% from the cache")
        elif len(needed):
            sentence += f"; not 99% from the cache within {len(TRIES)} reads"
        sentences.append(sentence + ".")
    return sentences


def _number(value) -> float | None:
    if value is None or isinstance(value, (dict, list, str)):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def _mb(value) -> float | None:
    return None if value is None or value != value else round(value / 1e6, 3)
