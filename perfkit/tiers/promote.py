"""Promote the newest partitions of a table on S3 to a cache tier, demote them back: the study's design, where a
table stays on S3 and recent partitions are read through Alluxio by pointing their LOCATION at alluxio://.

Only the metastore changes (ALTER TABLE ... PARTITION (...) SET LOCATION, through HiveServer2): nothing is copied,
nothing deleted. Each promoted partition's original location is kept in a table property, so demoting restores it
string for string.

    with get_engine("hive", profile) as hive:
        moves = promote(hive, "perfkit.pageviews", newest=2, tier=Alluxio(profile))
        demote(hive, "perfkit.pageviews", tier=Alluxio(profile))
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from perfkit.errors import PerfkitError
from perfkit.tiers import Alluxio

ORIGINALS = "perfkit.promoted.originals"  # table property: {partition: its location before promotion}


@dataclass(frozen=True)
class Partition:
    spec: tuple[tuple[str, str], ...]  # (("year", "2026"), ("month", "11"), ...) in the table's key order
    location: str

    @property
    def name(self) -> str:
        return "/".join(f"{k}={v}" for k, v in self.spec)

    def sql(self) -> str:
        """The PARTITION clause: numbers bare, anything else quoted."""
        return ", ".join(f"`{k}`={v}" if re.fullmatch(r"-?\d+", v) else f"`{k}`='{v}'" for k, v in self.spec)

    def order_key(self) -> tuple:
        """Newest last: numeric values compare as numbers (hour=9 before hour=10), others as text."""
        return tuple((0, int(v), "") if re.fullmatch(r"-?\d+", v) else (1, 0, v) for _, v in self.spec)


@dataclass(frozen=True)
class Move:
    partition: str
    old: str
    new: str


def parse_name(name: str) -> tuple[tuple[str, str], ...]:
    """"year=2026/month=11" -> (("year", "2026"), ("month", "11"))."""
    spec = []
    for part in name.strip("/").split("/"):
        key, eq, value = part.partition("=")
        if not eq or not key or not value:
            raise PerfkitError(f"partition {name!r}: give it as key=value/key=value, e.g. year=2026/month=11/day=22/"
                               "hour=03")
        spec.append((key, value))
    return tuple(spec)


def partitions(engine, table: str) -> list[Partition]:
    """Every partition of `table` with its location, oldest first."""
    _check_table(engine, table)
    found = []
    for (name,) in engine.execute(f"SHOW PARTITIONS {table}"):
        partition = Partition(parse_name(str(name)), "")
        found.append(Partition(partition.spec, _location(engine, table, partition)))
    if not found:
        raise PerfkitError(f"table {table} has no partitions: promote and demote move partitions; a table without "
                           "any has nothing to move")
    return sorted(found, key=Partition.order_key)


def promote(engine, table: str, newest: int, tier: Alluxio, listed: list[Partition] | None = None) -> list[Move]:
    """Point the newest `newest` partitions that are on S3 at the tier; the others stay as they are. `listed`: the
    table's partitions as partitions() just gave them (each listing is a statement per partition)."""
    if isinstance(newest, bool) or not isinstance(newest, int) or newest < 1:
        raise PerfkitError(f"newest={newest!r}: give how many of the newest partitions to promote, a whole number "
                           "of at least 1")
    reason = tier.unavailable()
    if reason:
        raise PerfkitError(f"promote: {reason}")
    every = listed if listed is not None else partitions(engine, table)
    chosen = every[-newest:]
    moves = [Move(p.name, p.location, tier.location(p.location)) for p in chosen if not _on_tier(p.location)]
    originals = _originals(engine, table)
    originals.update({m.partition: m.old for m in moves})
    _set_originals(engine, table, originals)  # first: an interrupted promotion can still be demoted exactly
    for move, partition in zip(moves, [p for p in chosen if not _on_tier(p.location)]):
        engine.execute(f"ALTER TABLE {table} PARTITION ({partition.sql()}) SET LOCATION '{move.new}'")
    return moves


def demote(engine, table: str, tier: Alluxio, names: list[str] | None = None,
           listed: list[Partition] | None = None) -> list[Move]:
    """Point promoted partitions (all, or those named) back at S3, at exactly the location they had. `listed`: as
    promote's."""
    every = {p.name: p for p in (listed if listed is not None else partitions(engine, table))}
    if names:
        wanted = ["/".join(f"{k}={v}" for k, v in parse_name(n)) for n in names]
        missing = [n for n in wanted if n not in every]
        if missing:
            raise PerfkitError(f"table {table} has no partition {', '.join(missing)}: its partitions are "
                               f"{_few(list(every))}")
        chosen = [every[n] for n in wanted]
    else:
        chosen = list(every.values())
    originals = _originals(engine, table)
    moves = []
    for partition in chosen:
        if not _on_tier(partition.location):
            continue  # already on S3
        back = originals.get(partition.name) or tier.s3_location(partition.location)
        engine.execute(f"ALTER TABLE {table} PARTITION ({partition.sql()}) SET LOCATION '{back}'")
        moves.append(Move(partition.name, partition.location, back))
    for move in moves:
        originals.pop(move.partition, None)
    if moves:  # nothing moved: the recorded originals stand as they are
        _set_originals(engine, table, originals)
    return moves


def _on_tier(location: str) -> bool:
    return location.startswith("alluxio:")


def _check_table(engine, table: str) -> None:
    database, _, name = table.rpartition(".")
    rows = engine.execute(f"SHOW TABLES IN {database or 'default'} LIKE '{name}'")
    if not any(str(r[-1]).lower() == name.lower() for r in rows):
        raise PerfkitError(f"table {table} does not exist in the metastore: give database.table of a partitioned "
                           "table (SHOW TABLES lists them)")


def _location(engine, table: str, partition: Partition) -> str:
    """The partition's LOCATION, from DESCRIBE FORMATTED (Hive prints it as a 'Location:' row)."""
    for row in engine.execute(f"DESCRIBE FORMATTED {table} PARTITION ({partition.sql()})"):
        if row and str(row[0]).strip().rstrip(":").lower() == "location":
            return str(row[1]).strip()
    raise PerfkitError(f"table {table} partition {partition.name}: the metastore gave no location")


def _originals(engine, table: str) -> dict[str, str]:
    for key, value, *_ in engine.execute(f"SHOW TBLPROPERTIES {table}"):
        if str(key).strip() == ORIGINALS:
            return json.loads(str(value))
    return {}


def _set_originals(engine, table: str, originals: dict[str, str]) -> None:
    text = json.dumps(originals, sort_keys=True).replace("'", "\\'")
    engine.execute(f"ALTER TABLE {table} SET TBLPROPERTIES ('{ORIGINALS}'='{text}')")


def _few(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def demonstration(profile, newest: int = 2, days: int = 2, hours: int = 3):
    """The report's promote/demote demonstration on a small pageview table: per partition its location on S3, after
    promoting the newest `newest`, after demoting; and a check that Trino's answer over the mixed table equals its
    answer over S3 alone and that demoting restored every location exactly. Returns (locations frame, checks frame)."""
    import pandas as pd

    from perfkit.datasets.pageviews import place_pageviews
    from perfkit.engines import get_engine, result_hash

    tier = Alluxio(profile)
    query = ("SELECT year, month, day, hour, count(*), sum(bytes) FROM {t} GROUP BY year, month, day, hour "
             "ORDER BY year, month, day, hour")
    with get_engine("hive", profile) as hive, get_engine("trino", profile) as trino:
        table = place_pageviews(profile, hive, days=days, hours=hours)
        # each step's listing passed on: a listing is a HiveServer2 statement per partition
        first = partitions(hive, table)
        undone = demote(hive, table, tier, listed=first)  # a previous demonstration cut short leaves nothing promoted
        before = partitions(hive, table) if undone else first
        on_s3 = result_hash(trino.execute(query.format(t=table)))
        promote(hive, table, newest, tier, listed=before)
        promoted = partitions(hive, table)
        mixed = result_hash(trino.execute(query.format(t=table)))
        demote(hive, table, tier, listed=promoted)
        after = partitions(hive, table)
    locations = pd.DataFrame({"partition": [p.name for p in before], "on S3": [p.location for p in before],
                              "promoted": [p.location for p in promoted], "demoted": [p.location for p in after]})
    checks = pd.DataFrame([
        {"check": f"Trino over {table} with {newest} partitions on alluxio:// = over S3 alone",
         "result": "ok" if mixed == on_s3 else f"DIFFERENT ({mixed} vs {on_s3})"},
        {"check": "demote restored every location string for string",
         "result": "ok" if [p.location for p in after] == [p.location for p in before] else "DIFFERENT"}])
    return locations, checks
