"""The user's own tables: a map of each storage to existing locations, their schema read from the files.

    tables = {"hdfs": "hdfs:///warehouse/trips_orc",              # one table: the suite's {table}
              "s3": {"location": "s3://bucket/trips/", "format": "orc"}}
    tables = {"hdfs": {"orders": "hdfs:///w/orders", "lineitem": "hdfs:///w/lineitem"},   # {table:orders}, ...
              "s3": {"orders": "s3://b/orders/", "lineitem": "s3://b/lineitem/"}}

perfkit only lists these folders and reads one file's footer per table: it never writes there or deletes
anything (the engines' tables over them are external: dropping one leaves the files).
"""
from __future__ import annotations

from pathlib import Path

import yaml

from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.schema import FORMATS, columns_of, format_of, read_schema
from perfkit.datasets.tables import Table, TableSet
from perfkit.errors import PerfkitError, shorten
from perfkit.suites import DEFAULT_TABLE

FORMAT_NAMES = sorted(set(FORMATS.values()))


def read_tables_file(path: str | Path) -> dict:
    """A YAML file holding the tables map (the CLI's --tables)."""
    path = Path(path).expanduser()
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise PerfkitError(f"tables file {path} cannot be read ({shorten(' '.join(str(err).split()), 200)}): give a YAML "
                           "file mapping each storage to a location, e.g. `hdfs: hdfs:///data/t` and "
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
    return TableSet(name, found, "", {"source": "your own tables", "tables": {
        where: {t: tb.location for t, tb in by_name.items()} for where, by_name in found.items()}})


def inspect_location(profile: Profile, url: str, file_format: str | None, storage_name: str, label: str) -> Table:
    loc = locations.parse_location(url, label)
    if loc.storage != storage_name:
        raise PerfkitError(f"{label}: {url} is on {loc.storage}, not {storage_name}: give a location on "
                           f"{storage_name} for that storage")
    files = locations.list_files(profile, loc)
    if files is None:
        raise PerfkitError(f"{label}: {loc} does not exist. Fix: give an existing folder of ORC or Parquet files")
    if not files:
        raise PerfkitError(f"{label}: {loc} is empty (no data file directly in it; hidden _ and . files do "
                           "not count). Fix: give the folder that holds the table's files")
    first = sorted(files)[0]
    with locations.open_file(profile, loc, first, files[first]) as handle:
        detected = file_format or _detect_format(list(files), handle, f"{label} ({loc})")
        schema = read_schema(handle, detected)
    return Table(loc.url(profile), detected, columns_of(schema), len(files), sum(files.values()),
                 f"{loc.path}/{first}")


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
        first = found[storages[0]][table].columns
        for other in storages[1:]:
            if found[other][table].columns != first:
                raise PerfkitError(f"table {table}: the files on {storages[0]} and on {other} have different "
                                   f"columns ({first} vs {found[other][table].columns}). Fix: point both at "
                                   "copies of the same table")
