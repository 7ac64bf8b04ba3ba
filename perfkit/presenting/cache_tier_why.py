"""Why a tier is faster or slower than S3 read directly: what one hot query asked of each, by their own counters.

A hot query that reads little (ORC's column pruning: under 1 MB of an 87 MB table) is a few dozen small reads, so what
each read costs decides, not bandwidth. S3 read directly: the requests the S3 server counted, GETs for the data, HEADs
and LISTs for what is there. Alluxio: the metadata RPCs its master served (a file's status, the workers' list, the
cluster's configuration, which a new client context fetches first) and the blocks its worker opened. Trino's own
cache counts only bytes: its reads are local files inside Trino."""
from __future__ import annotations

import pandas as pd

from perfkit.accounting.recorded_io import RunIO
from perfkit.presenting.query_report import _range
from perfkit.tiers import is_tier

MASTER = "master "  # the prefix of an Alluxio master RPC's name in a run's tier activity


def _median(values) -> float:
    values = pd.Series(list(values), dtype=float).dropna()
    return float(values.median()) if len(values) else float("nan")


def _server(record_io, *names: str) -> float:
    server = RunIO.of(record_io).counts("server")
    return sum(server.get(n, 0) for n in names) if server else float("nan")


def _engine(record_io, name: str, scale: float = 1.0) -> float:
    value = RunIO.of(record_io).counts("engine").get(name)
    return float("nan") if value is None else value * scale


def _rpcs(activity) -> dict[str, int]:
    return {k.removeprefix(MASTER): v for k, v in (activity or {}).items() if k.startswith(MASTER)}


def why_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per engine, query and storage (S3 directly, then each tier), the median over the hot tries: seconds; MB the
    engine read, and where it says them (Trino's query stats), its drivers' time reading them (summed over drivers),
    its CPU and splits; the S3 requests the server counted; the tier's metadata RPCs (by kind) and block reads."""
    hot = frame[frame["try"] == "hot"]
    rows = []
    for (engine, case, where), group in hot.groupby(["subject", "case", "storage"], sort=True):
        activity = [a for a in group.get("tier_activity", pd.Series(dtype=object)) if isinstance(a, dict)]
        rpcs = {name: _median(_rpcs(a).get(name) for a in activity)
                for name in (_rpcs(activity[0]) if activity else {})}
        rows.append({
            "engine": engine, "query": case, "storage": where, "_order": is_tier(where),
            "hot (s)": round(_median(group["wall_s"]), 3),
            "MB read": round(_median(_engine(io, "input_bytes", 1e-6) for io in group["io"]), 2),
            "reading (s)": round(_median(_engine(io, "input_read_ms", 1e-3) for io in group["io"]), 2),
            "CPU (s)": round(_median(_engine(io, "cpu_ms", 1e-3) for io in group["io"]), 2),
            "splits": _median(_engine(io, "splits") for io in group["io"]),
            "S3 GETs": _median(_server(io, "s3_get") for io in group["io"]),
            "S3 HEADs, LISTs": _median(_server(io, "s3_head", "s3_list") for io in group["io"]),
            "tier metadata RPCs": sum(rpcs.values()) if rpcs else None,
            "of which": ", ".join(f"{name} {n:g}" for name, n in rpcs.items() if n) or ("—" if rpcs else None),
            # a new client context asks the master for the cluster's configuration first: one per client started
            "tier clients started": rpcs.get("getConfiguration") if rpcs else None,
            "tier blocks read": _median(a.get("worker blocks read") for a in activity) if activity else None})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    return table.sort_values(["engine", "query", "_order"], kind="stable").drop(columns="_order").reset_index(drop=True)


def why_sentences(table: pd.DataFrame) -> list[str]:
    """Per engine: what a hot query asked of S3 read directly, and of each tier that counts its metadata RPCs."""
    sentences = []
    for engine, rows in table.groupby("engine", sort=False) if len(table) else ():
        through_tier = rows["storage"].map(is_tier)
        direct = rows[~through_tier]
        said = []
        if len(direct) and direct["S3 GETs"].notna().all():
            said.append(f"on S3 directly {_count(direct['S3 GETs'], 'GET', 'GETs')} and "
                        f"{_count(direct['S3 HEADs, LISTs'], 'HEAD or LIST', 'HEADs and LISTs')} to S3")
        for where, tier_rows in rows[through_tier].groupby("storage", sort=False):
            counted = tier_rows.dropna(subset=["tier metadata RPCs"])
            if not len(counted):
                continue
            kinds = list(dict.fromkeys(counted["of which"]))  # said once when every query asked the same
            kinds = kinds[0] if len(kinds) == 1 else "; ".join(f"{q}: {w}" for q, w in zip(counted["query"],
                                                                                          counted["of which"]))
            part = (f"through {where} {_count(counted['tier metadata RPCs'], 'metadata RPC', 'metadata RPCs')} "
                    f"to its master ({kinds}) and "
                    f"{_count(counted['tier blocks read'], 'block read', 'block reads')} from its worker")
            started = counted["tier clients started"].dropna()
            if len(started) and (started > 0).all():  # Trino's Alluxio file system starts a client per file it opens
                part += (f", {_range(started, '{:g}')} of its clients started for the query (each asks the master "
                         "for the cluster's configuration first)")
            gets = counted["S3 GETs"].dropna()
            if len(gets) and (gets == 0).all():
                part += ", none to S3"
            said.append(part)
        if len(said) < 2:
            continue
        sentence = f"What a hot query asked, {engine} (medians per query): " + "; ".join(said) + "."
        reading = rows.dropna(subset=["reading (s)"])
        if len(reading) == len(rows):
            sentence += (f" {engine.capitalize()}'s own stats, the same queries: its drivers spent " + ", ".join(
                f"{_range(r['reading (s)'], '{:.2f}')} s reading and {_range(r['CPU (s)'], '{:.2f}')} s of CPU "
                f"{'on S3 directly' if not is_tier(where) else f'through {where}'}"
                for where, r in reading.groupby("storage", sort=False)) + ".")
        sentences.append(sentence)
    return sentences


def _count(values, one: str, many: str) -> str:
    """A count's median range with its noun: "1 GET", "0 GETs", "32–34 GETs"."""
    said = _range(values, "{:g}")
    return f"{said} {one if said == '1' else many}"
