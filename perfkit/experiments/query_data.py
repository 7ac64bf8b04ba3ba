"""A query comparison's data: where its tables come from (the user's own tables, or the suite's dataset: taxi rows,
TPC-H, HiBench), checked against every query before any work; placed and verified on each storage; a cache tier's view
of the S3 copy; and the dataset as the run records it for its report."""
from __future__ import annotations

from dataclasses import asdict, replace
from urllib.parse import urlsplit

from perfkit.config import Profile
from perfkit.datasets.generator import REGISTRY as GENERATORS, generator_class
from perfkit.datasets.placement import PlacedDataset, place_taxi
from perfkit.datasets.tables import TableSet, Table, single_table
from perfkit.datasets.taxi import SCHEMA, TaxiDataset
from perfkit.errors import PerfkitError
from perfkit.storages import backing_of, get_storage, placed
from perfkit.suites import DEFAULT_TABLE
from perfkit.tiers import is_tier, tier

PLACED = placed()  # the storages a dataset is placed on


def placed_storages(storages: list[str]) -> list[str]:
    """Where the data must be: the compared storages that hold files, and the storage behind any cache tier."""
    needed = {backing_of(s) or s for s in storages}
    return [s for s in placed() if s in needed]


def data_source(suite_name: str, suite_spec, tables: dict | None, storages: list[str]) -> str:
    """Where the tables come from: "tables" (the user's own, on `storages`), or the suite's dataset (taxi by
    default). Every query's placeholders and every write target are checked against the tables they will have: a bad
    one is named now, not mid-run."""
    from perfkit.datasets import user_tables

    queries = suite_spec.queries
    if tables is not None:
        names = user_tables.normalize(tables, storages)[storages[0]]
        source = "tables"
    else:
        source = suite_spec.dataset or "taxi"
        names = generator_class(source).tables if source in GENERATORS else [DEFAULT_TABLE]
        # a write target is made by the run, not read: only the tables the queries read must be the taxi table
        read = {n for q in queries for n in q.table_names()} - set(suite_spec.targets)
        if source == "taxi" and suite_spec.dataset is None and read - {DEFAULT_TABLE}:
            raise PerfkitError(f"suite {suite_name}: its queries name tables ({{table:NAME}}): give `tables`, each "
                               "storage's locations of those tables (the generated taxi data is one table: {table})")
    for query in queries:
        query.for_tables({n: n for n in [*names, *suite_spec.targets]})
    for target, spec in suite_spec.targets.items():  # a `like` that names no table would fail every run of it
        if "like" in spec and spec["like"] not in names:
            raise PerfkitError(f"suite {suite_name}: write target {target!r} is like {spec['like']!r}, which the "
                               f"data has not (it has {', '.join(names)}; the bare {{table}} is {DEFAULT_TABLE!r}). "
                               "Fix: name one of those, or give its columns: {columns: [[NAME, TYPE], ...]}")
    return source


def place_data(profile: Profile, source: str, storages: list[str], *, tables=None, dataset: TaxiDataset | None = None,
               file_format: str = "orc", scale=None, placement: str = "copy",
               progress: bool = True) -> tuple[TableSet, PlacedDataset | None]:
    """The tables on every storage (and each tier's view of S3's), and the taxi files when the data is taxi rows."""
    where = placed_storages(storages)
    placed_taxi = None
    if source == "tables":
        from perfkit.datasets.user_tables import user_tables

        tableset = user_tables(profile, tables, where)
    elif source == "taxi":
        placed_taxi = place_taxi(dataset, profile, file_format, progress=progress)
        tableset = taxi_tables(profile, placed_taxi, where)
    else:
        from perfkit.datasets.generate import place_generated
        from perfkit.datasets.generator import get_generator

        with get_generator(source, profile, scale) as gen:
            tableset = place_generated(gen, file_format, where, progress, method=placement)
    return with_tiers(tableset, storages, profile), placed_taxi


def taxi_tables(profile: Profile, placed_taxi: PlacedDataset, storages: list[str]) -> TableSet:
    """The generated taxi files as the one table of the taxi suites."""
    columns = [(name, hive) for name, _, hive in SCHEMA]
    first = sorted(placed_taxi.files)[0]

    def first_file(where: str) -> str:
        folder = get_storage(where, profile).folder("datasets", placed_taxi.name, placed_taxi.file_format)
        return f"{folder.path}/{first}"

    by_storage = {where: Table(placed_taxi.locations[where], placed_taxi.file_format, columns, len(placed_taxi.files),
                               placed_taxi.total_bytes, first_file(where))
                  for where in storages}
    return single_table(f"taxi_{placed_taxi.file_format}", by_storage, placed_taxi.verified, {})


def with_tiers(tableset: TableSet, storages: list[str], profile: Profile) -> TableSet:
    """The placed tables, plus each cache tier's view of its backing storage's tables (the same files, read through
    the tier)."""
    tables = dict(tableset.tables)
    for where in filter(is_tier, storages):
        cache = tier(where, profile)
        tables[where] = {name: replace(t, location=cache.location(t.location), first_file="")
                         for name, t in tableset.tables[cache.backing].items()}
    return replace(tableset, tables=tables)


def dataset_record(profile: Profile, tableset: TableSet, placed_taxi: PlacedDataset | None,
                   dataset: TaxiDataset) -> dict:
    """The placed data as a run records it: its name and verification, its table on every storage (which taxi files
    were placed again), one copy's bytes (every storage holds the same files) and its files' replication on HDFS."""
    summary = tableset.summary()
    record = {"name": tableset.name, "verified": tableset.verified, **tableset.details, "summary": summary,
              "one_copy_bytes": sum(t.bytes for t in next(iter(tableset.tables.values())).values()),
              "hdfs_replication": _replication(profile, tableset)}
    if placed_taxi is not None:
        for row in summary:
            again = [r for r in placed_taxi.replaced if r.startswith(f"{row['storage']}/")]
            row["re-placed"] = ", ".join(again) or "none"
        record.update({"format": placed_taxi.file_format, "files": len(placed_taxi.files),
                       "bytes": placed_taxi.total_bytes, "replaced": placed_taxi.replaced, **asdict(dataset)})
    return record


def _replication(profile: Profile, tableset: TableSet) -> int | None:
    """The replication the dataset's files have on the first storage that sets one per file (HDFS; a one-DataNode lab
    keeps 1); None where none is on such a storage. Recorded as hdfs_replication, as runs always recorded it."""
    for where, tables in tableset.tables.items():
        storage = get_storage(where, profile)
        for table in tables.values():
            loc = storage.parse(urlsplit(table.location))
            if loc is not None and (found := storage.replication(loc)):
                return found
    return None
