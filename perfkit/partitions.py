"""Hive-style partitioned locations: `key=value` folders found in a listing, typed, and checked by their rows.

    events/year=2024/month=1/part-0.parquet
    events/year=2024/month=2/part-0.parquet      -> partitioned by year int, month int: 2 partitions

A location is read as partitioned when its data files sit in `key=value` folders, the same keys in the same order
everywhere. Files beside partition folders, or keys in another order in one branch, are refused with the folder
named: an engine would silently read some of those files and not others. Each engine then registers the table with
its partition columns and the partitions found (perfkit.engines), and counts its rows, which must equal the rows
in the files' footers (check_rows).

Values are unescaped as Hive escapes them in paths (`%3A` is `:`); `__HIVE_DEFAULT_PARTITION__` is Hive's name of
the partition of nulls. A key's type is int (bigint when a value is beyond int) when every value is a whole number,
else string (also when one partition holds its nulls).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from perfkit.compat import zip_strict
from perfkit.errors import PerfkitError

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hive's (and pyarrow's, Spark's) folder value for a null key
KEY_VALUE = re.compile(r"^([A-Za-z0-9_]+)=(.+)$")
WHOLE = re.compile(r"^-?\d+$")
INT_MAX = 2**31 - 1
ADD_BATCH = 100  # partitions per ALTER TABLE ... ADD statement
EXAMPLES = 3  # paths named in a message


@dataclass(frozen=True)
class Partition:
    path: str  # the folders below the table's location, as on the storage: "year=2024/month=01"
    values: tuple[str | None, ...]  # unescaped, in key order; None for Hive's default partition (nulls)


@dataclass(frozen=True)
class Partitioning:
    columns: tuple[tuple[str, str], ...]  # (name, Hive type), in folder order: the table's partition columns
    partitions: tuple[Partition, ...]  # every folder holding data files, sorted by path
    files: int = 0
    rows: int | None = None  # summed from every file's footer (None: not read)

    @property
    def keys(self) -> list[str]:
        return [name for name, _ in self.columns]

    def describe(self) -> str:
        """"year int, month int: 6 partitions" for messages."""
        cols = ", ".join(f"{name} {typ}" for name, typ in self.columns)
        return f"partitioned by {cols}: {len(self.partitions)} partition{'s' * (len(self.partitions) != 1)}"


@dataclass(frozen=True)
class Layout:
    files: dict[str, int]  # the table's data files, by path below the location: bytes
    partitioning: Partitioning | None  # None: the files sit directly in the location
    other_folders: tuple[str, ...] = ()  # folders that are not key=value (ignored beside direct files)


def unescape(text: str) -> str:
    """Hive's unescapePathName: every %XX is the character of that code."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def discover(listing: dict[str, int], label: str, location: str) -> Layout:
    """The layout of a location from its recursive listing ({path below it: bytes}, hidden files and folders
    already left out): its direct files, or its key=value partitions; a mixed layout is refused naming the folder.
    `label` names the entry (tables.hdfs) and `location` the folder, in messages."""
    direct = {path: size for path, size in listing.items() if "/" not in path}
    nested = {path: size for path, size in listing.items() if "/" in path}
    tops = sorted({path.split("/", 1)[0] for path in nested})
    partition_tops = [f"{top}/" for top in tops if KEY_VALUE.match(top)]
    other_tops = tuple(f"{top}/" for top in tops if not KEY_VALUE.match(top))
    if not partition_tops:  # a plain folder: its direct files are the table (other folders ignored, as before)
        return Layout(direct, None, other_tops)
    location = location.rstrip("/")
    if direct:
        raise _beside(label, location, sorted(direct), partition_tops)
    if other_tops:
        raise PerfkitError(f"{label}: {location} mixes partition folders ({_few(partition_tops)}) with folders that "
                           f"are not key=value ({_few(other_tops)}). Fix: move those folders out of the table's "
                           "location, or give a location that holds only key=value partition folders")
    by_folder: dict[str, list[str]] = {}
    for path in sorted(nested):
        folder, _, name = path.rpartition("/")
        by_folder.setdefault(folder, []).append(name)
    ancestors = {folder[:i] for folder in by_folder for i, c in enumerate(folder) if c == "/"}
    for folder in sorted(by_folder):  # files in a folder that also holds partition folders: an intermediate level
        if folder in ancestors:
            inner = [f"{f}/" for f in sorted(by_folder) if f.startswith(folder + "/")]
            raise _beside(label, f"{location}/{folder}", by_folder[folder], inner)
    keys_of = {folder: _keys(label, location, folder) for folder in sorted(by_folder)}
    orders: dict[tuple[str, ...], str] = {}
    for folder, keys in keys_of.items():
        orders.setdefault(tuple(k.lower() for k, _ in keys), folder)
    if len(orders) > 1:
        seen = "; ".join(f"{folder}/ by {', '.join(order)}" for order, folder in list(orders.items())[:EXAMPLES])
        raise PerfkitError(f"{label}: the partition folders of {location} are not nested by the same keys in the "
                           f"same order ({seen}). Fix: give a location whose partition folders all follow one order "
                           "of keys, as an engine writes them (year=.../month=.../files)")
    first = next(iter(keys_of.values()))
    partitions = tuple(Partition(folder, tuple(None if v == DEFAULT_PARTITION else unescape(v) for _, v in keys))
                       for folder, keys in keys_of.items())
    columns = tuple((key.lower(), key_type([p.values[i] for p in partitions])) for i, (key, _) in enumerate(first))
    return Layout(nested, Partitioning(columns, partitions, files=len(nested)))


def _keys(label: str, location: str, folder: str) -> list[tuple[str, str]]:
    keys = []
    for part in folder.split("/"):
        match = KEY_VALUE.match(part)
        if not match:
            raise PerfkitError(f"{label}: {location}/{folder} is inside a partition folder but {part!r} is not "
                               "key=value. Fix: give a location whose data files all sit in key=value folders "
                               "(year=2024/month=1/...), or move that folder out of it")
        keys.append((match.group(1), match.group(2)))
    lowered = [k.lower() for k, _ in keys]
    if len(set(lowered)) < len(lowered):
        raise PerfkitError(f"{label}: {location}/{folder} repeats a partition key ({', '.join(lowered)}). Fix: give "
                           "a location whose partition folders name each key once")
    return keys


def _beside(label: str, folder: str, files: list[str], partitions: list[str]) -> PerfkitError:
    return PerfkitError(f"{label}: {folder} holds data files ({_few(files)}) beside partition folders "
                        f"({_few(partitions)}): an engine reads either the files or the partitions, not both. "
                        "Fix: move those files into a key=value partition folder (or out of the table's location), "
                        "or give a folder of files only")


def _few(items) -> str:
    items = list(items)
    more = f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else ""
    return ", ".join(items[:EXAMPLES]) + more


def key_type(values: list[str | None]) -> str:
    """int when every value is a whole number and no two texts name the same number (01 and 1); bigint when one is
    beyond int; else string. A key with a partition of nulls is a string: every engine accepts Hive's name of that
    partition as a string value and reads it as NULL."""
    present = sorted({v for v in values if v is not None})
    if None in values or not present or not all(WHOLE.match(v) for v in present):
        return "string"
    numbers = {int(v) for v in present}
    if len(numbers) < len(present):
        return "string"
    return "int" if all(-INT_MAX - 1 <= n <= INT_MAX for n in numbers) else "bigint"


def literal(value: str | None, hive_type: str) -> str:
    """A partition value in a PARTITION (...) clause of Hive and Spark: numbers bare, text quoted."""
    if value is None:
        return f"'{DEFAULT_PARTITION}'"
    if hive_type in ("int", "bigint"):
        return str(int(value))
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quoted(text: str) -> str:
    """A location in a SQL string literal (a quote in a path is rare: Hive escapes it as %27)."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def add_partitions_ddl(qualified: str, location: str, partitioning: Partitioning, batch: int = ADD_BATCH) -> list[str]:
    """ALTER TABLE ... ADD PARTITION (...) LOCATION '...' for every partition found, `batch` partitions a statement,
    for Hive, the Spark Thrift Server and Spark SQL. Each partition's location is its folder, as listed."""
    types = [typ for _, typ in partitioning.columns]
    clauses = ["PARTITION "
               f"({', '.join(f'`{k}`={literal(v, t)}' for k, v, t in zip_strict(partitioning.keys, p.values, types))}) "
               f"LOCATION '{quoted(location.rstrip('/') + '/' + p.path)}'" for p in partitioning.partitions]
    return [f"ALTER TABLE {qualified} ADD IF NOT EXISTS " + " ".join(clauses[i:i + batch])
            for i in range(0, len(clauses), batch)]


def rows_problem(label: str, location: str, engine: str, counted: int, partitioning: Partitioning) -> str | None:
    """The message when an engine counts other rows than the files' footers hold, else None."""
    if partitioning.rows is None or counted == partitioning.rows:
        return None
    return (f"{label} ({location}, {partitioning.describe()}): {engine} counts {counted:,} rows but the "
            f"{partitioning.files:,} files' footers hold {partitioning.rows:,}: it does not read every partition. "
            f"Fix: check that every partition folder is named key=value with the key in lower case, and that "
            "nothing writes into the location while perfkit runs")


def check_rows(engine, qualified: str, label: str, location: str, partitioning: Partitioning,
               timeout_s: float | None = None) -> int:
    """SELECT count(*) through the engine equals the rows in the footers; else PerfkitError with the fix."""
    counted = int(engine.execute(f"SELECT count(*) FROM {qualified}", timeout_s)[0][0])
    problem = rows_problem(label, location, engine.name, counted, partitioning)
    if problem:
        raise PerfkitError(problem)
    return counted
