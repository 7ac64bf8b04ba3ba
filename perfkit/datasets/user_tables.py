"""The user's own tables: a map of each storage to existing locations, their schema read from the files.

    tables = {"hdfs": "hdfs:///warehouse/trips_orc",              # one table: the suite's {table}
              "s3": {"location": "s3://bucket/trips/", "format": "orc"}}
    tables = {"hdfs": {"orders": "hdfs:///w/orders", "lineitem": "hdfs:///w/lineitem"},   # {table:orders}, ...
              "s3": {"orders": "s3://b/orders/", "lineitem": "s3://b/lineitem/"}}

A location whose files sit in Hive-style key=value folders (year=2024/month=1/part-0.parquet) is a partitioned
table: its partition columns are typed from the folder names, every engine registers its partitions, and each
engine's count of its rows must equal the rows in the files' footers (perfkit.partitions).

perfkit only lists these folders and reads one file's footer per table (every file's, for a partitioned table): it
never writes there or deletes anything (the engines' tables over them are external: dropping one leaves the files).
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import yaml

from perfkit import partitions
from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.schema import FORMATS, columns_of, format_of, read_rows, read_schema
from perfkit.datasets.tables import Table, TableSet
from perfkit.errors import PerfkitError, shorten
from perfkit.suites import DEFAULT_TABLE

FORMAT_NAMES = sorted(set(FORMATS.values()))
FOOTER_THREADS = 8  # footer reads are a few small ranged requests each


def read_tables_file(path: str | Path) -> dict:
    """A YAML file holding the tables map (the CLI's --tables)."""
    path = Path(path).expanduser()
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise PerfkitError(f"tables file {path} cannot be read ({shorten(' '.join(str(err).split()), 200)}): "
                           "give a YAML file mapping each storage to a location, e.g. `hdfs: hdfs:///data/t` and "
                           "`s3: s3://bucket/t/`") from None
    return spec.get("tables", spec) if isinstance(spec, dict) else spec


def normalize(tables, storages: list[str]) -> dict[str, dict[str, dict]]:
    """{storage: {table name: {"location": url, "format": fmt or None}}}, every storage with the same names."""
    if not isinstance(tables, dict) or not tables:
        raise PerfkitError("tables: give a map of each storage to its location(s), e.g. "
                           "{'hdfs': 'hdfs:///data/t', 's3': 's3://bucket/t/'}")
    missing = [s for s in storages if s not in tables]
    extra = [s for s in tables if s not in storages]
    if missing or extra:
        raise PerfkitError(f"tables: the map has storages {', '.join(map(str, tables))} but the run compares "
                           f"{', '.join(storages)}. Fix: give one location per compared storage"
                           + (f" (missing: {', '.join(missing)})" if missing else ""))
    out = {where: _entries(spec, where) for where, spec in tables.items()}
    names = {where: sorted(by_name) for where, by_name in out.items()}
    if len({tuple(n) for n in names.values()}) > 1:
        seen = "; ".join(f"{where}: {', '.join(n)}" for where, n in names.items())
        raise PerfkitError(f"tables: every storage needs the same tables ({seen}). Fix: name the same tables "
                           "on each storage")
    return out


def _entries(spec, where: str) -> dict[str, dict]:
    if isinstance(spec, str):
        return {DEFAULT_TABLE: _one(spec, None, where)}
    if isinstance(spec, dict) and "location" in spec:
        return {DEFAULT_TABLE: _one(spec["location"], spec.get("format"), where)}
    if isinstance(spec, dict) and spec:
        out = {}
        for name, entry in spec.items():
            if isinstance(entry, str):
                out[str(name)] = _one(entry, None, f"{where}.{name}")
            elif isinstance(entry, dict) and "location" in entry:
                out[str(name)] = _one(entry["location"], entry.get("format"), f"{where}.{name}")
            else:
                raise PerfkitError(f"tables.{where}.{name}: give a location, or {{location: URL, format: orc}}")
        return out
    raise PerfkitError(f"tables.{where}: give a location (hdfs:///path, s3://bucket/prefix/), "
                       "{location: URL, format: orc|parquet}, or a map of table names to locations")


def _one(url, file_format, where: str) -> dict:
    if file_format is not None and str(file_format).lower() not in FORMAT_NAMES:
        raise PerfkitError(f"tables.{where}: format {file_format!r} is not one of {', '.join(FORMAT_NAMES)}")
    return {"location": str(url), "format": str(file_format).lower() if file_format else None}


def user_tables(profile: Profile, tables, storages: list[str], name: str = "own") -> TableSet:
    """Check every location (exists, holds files of one format, matches its storage) and read its schema."""
    spec = normalize(tables, storages)
    found: dict[str, dict[str, Table]] = {}
    for where, by_name in spec.items():
        found[where] = {}
        for table, entry in by_name.items():
            label = f"tables.{where}" + ("" if table == DEFAULT_TABLE else f".{table}")
            found[where][table] = inspect_location(profile, entry["location"], entry["format"], where, label)
    _same_columns(found)
    details = {"source": "your own tables", "tables": {
        where: {t: tb.location for t, tb in by_name.items()} for where, by_name in found.items()}}
    partitioned = {where: {t: {"partitioned_by": tb.partitioning.keys, "partitions": len(tb.partitioning.partitions),
                               "rows": tb.partitioning.rows}
                           for t, tb in by_name.items() if tb.partitioning}
                   for where, by_name in found.items()}
    if any(partitioned.values()):
        details["partitions"] = {where: by_name for where, by_name in partitioned.items() if by_name}
    return TableSet(name, found, "", details)


def inspect_location(profile: Profile, url: str, file_format: str | None, storage_name: str, label: str) -> Table:
    loc = locations.parse_location(url, label)
    if loc.storage != storage_name:
        raise PerfkitError(f"{label}: {url} is on {loc.storage}, not {storage_name}: give a location on "
                           f"{storage_name} for that storage")
    tree = locations.list_tree(profile, loc)
    if tree is None:
        raise PerfkitError(f"{label}: {loc} does not exist. Fix: give an existing folder of ORC or Parquet files")
    layout = partitions.discover(tree, label, str(loc))
    files = layout.files
    if not files:
        if layout.other_folders:
            raise PerfkitError(f"{label}: {loc} holds no data file directly, and its folders "
                               f"({', '.join(layout.other_folders[:3])}) are not key=value partition folders. Fix: "
                               "give the folder that holds the table's files, or its partitions as key=value folders "
                               "(year=2024/month=1/...)")
        raise PerfkitError(f"{label}: {loc} is empty (no data file in it or in key=value partition folders below it; "
                           "hidden _ and . files do not count). Fix: give the folder that holds the table's files")
    first = sorted(files)[0]
    with locations.open_file(profile, loc, first, files[first]) as handle:
        detected = file_format or _detect_format(list(files), handle, f"{label} ({loc})")
        schema = read_schema(handle, detected)
    columns = columns_of(schema)
    partitioning = layout.partitioning
    if partitioning is not None:
        clash = sorted({name.lower() for name, _ in columns} & set(partitioning.keys))
        if clash:
            raise PerfkitError(f"{label}: {loc} is partitioned by {', '.join(clash)}, which the files also hold as "
                               "a column: a table cannot have both. Fix: give files without that column, or "
                               "folders named by another key")
        partitioning = replace(partitioning, rows=footer_rows(profile, loc, files, detected))
        print(f"perfkit: {label}: {loc} is {partitioning.describe()}, {partitioning.files:,} files, "
              f"{partitioning.rows:,} rows in their footers", file=sys.stderr)
    return Table(loc.url(profile), detected, columns, len(files), sum(files.values()),
                 f"{loc.path}/{first}", partitioning)


def footer_rows(profile: Profile, loc, files: dict[str, int], file_format: str) -> int:
    """The rows of every file, summed from their footers (a few KB read per file, in parallel)."""
    def rows(item) -> int:
        name, size = item
        with locations.open_file(profile, loc, name, size) as handle:
            return read_rows(handle, file_format)

    with ThreadPoolExecutor(FOOTER_THREADS) as pool:
        return sum(pool.map(rows, sorted(files.items())))


def _detect_format(names: list[str], first_file, where: str) -> str:
    """By the files' extensions; files without one (as Hive and Trino write them) by the first file's magic bytes."""
    if any(name.lower().endswith(tuple(FORMATS)) for name in names):
        return format_of(names, where)  # one format, or mixed ones refused
    magic = first_file.read(4)
    first_file.seek(0)
    if magic[:3] == b"ORC":
        return "orc"
    if magic == b"PAR1":
        return "parquet"
    raise PerfkitError(f"{where} holds no ORC or Parquet file (by extension or content). Fix: give a folder of "
                       "ORC or Parquet files, or say its format: {location: URL, format: orc}")


def _same_columns(found: dict[str, dict[str, Table]]) -> None:
    """The storages are compared on the same data: a table whose columns differ between storages is refused."""
    storages = list(found)
    for table in found[storages[0]]:
        first = found[storages[0]][table].all_columns
        for other in storages[1:]:
            if found[other][table].all_columns != first:
                raise PerfkitError(f"table {table}: the files on {storages[0]} and on {other} have different "
                                   f"columns ({first} vs {found[other][table].all_columns}). Fix: point both at "
                                   "copies of the same table")
