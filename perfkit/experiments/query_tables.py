"""The tables a query comparison's engines read: one shared external table per storage and table, a cache tier's view
of the S3 tables, and a write workload's fresh target; and what an engine cannot run on a storage, said as a reason.

Shared, read-only and made once: a table's name ends with a digest of what it is (engine, location, format, columns,
and a partitioned table's partition columns and partitions), so runs at once on the same files use the same table and
no run drops a table another reads."""
from __future__ import annotations

from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.tables import Table, TableSet, registered_name
from perfkit.engines import DATABASE
from perfkit.partitions import check_rows
from perfkit.suites import DEFAULT_TABLE, Query
from perfkit.tiers import is_tier, tier


def register_tables(engine, tableset: TableSet, storages: list[str], profile: Profile,
                    timeout_s: float | None = None) -> dict[str, dict[str, str] | None]:
    """storage -> {placeholder name: the engine's table}; a tier this engine cannot read through: None."""
    tables: dict[str, dict[str, str] | None] = {}
    for where in storages:
        if is_tier(where):
            tables[where] = register_tier(engine, tableset, where, profile, timeout_s)
            continue
        tables[where] = {}
        for name, table in tableset.tables[where].items():
            bare = register_table(engine, registered_name(tableset.name, name, where), table, _label(name, where),
                                  timeout_s)
            tables[where][name] = f"{DATABASE}.{bare}"
    return tables


def register_table(engine, base: str, table: Table, label: str, timeout_s: float | None = None) -> str:
    """One shared external table (Engine.register_shared_table: named `base` and the digest of its definition,
    partitions included, made only when no run has made it yet); a partitioned one is then counted by the engine and
    checked against the rows in its files' footers (a partition the engine missed stops the run here). Returns the
    table's bare name.

    The check runs on every registration, not only when this run made the table: it is a count(*) per table, the
    footers are read afresh by each run, and a table made by another run (one on another machine still adding its
    partitions, or files replaced since) is caught before any timing instead of skewing it."""
    registered = engine.register_shared_table(base, table.location, table.file_format, table.columns,
                                              table.partitioning)
    if table.partitioning is not None:
        check_rows(engine, f"{DATABASE}.{registered}", label, table.location, table.partitioning, timeout_s)
    return registered


def register_tier(engine, tableset: TableSet, where: str, profile: Profile,
                  timeout_s: float | None = None) -> dict[str, str] | None:
    """The tables read through a cache tier; None when this engine cannot read through it."""
    cache = tier(where, profile)
    if cache.unavailable() or not cache.reads_through(engine.name):
        return None
    at = cache.backing if cache.reads_backing_table else where  # the backing table itself, or the tier's own
    tables = {}
    for name, table in tableset.tables[where].items():
        bare = register_table(engine, registered_name(tableset.name, name, at), table, _label(name, at), timeout_s)
        registered = f"{DATABASE}.{bare}"
        tables[name] = cache.table(registered) if cache.reads_backing_table else registered
    return tables


def unavailable_reason(engine_name: str, where: str, query, profile: Profile) -> str | None:
    """Why this engine does not run this query on this storage (a tier it cannot read through), or None."""
    if not is_tier(where):
        return None
    cache = tier(where, profile)
    if cache.unavailable():
        return cache.unavailable()
    if not cache.reads_through(engine_name):
        return f"{where} is read through {', '.join(cache.engines)} only, not {engine_name}"
    if getattr(query, "writes", None):
        return f"{where} is a read cache: write workloads are compared on hdfs and s3"
    return None


def write_target(engine, query: Query, step, tables: dict[str, str], tableset: TableSet, spec: dict, run_id: str,
                 profile: Profile) -> dict[str, str]:
    """A write workload's table (`spec`: its suite's target), created empty at a fresh folder under the run's prefix
    (cleaned up after). Its name has the digest of that folder: this run's and this step's own, dropped once the run
    is measured."""
    by_name = tableset.tables[step.storage]
    columns = by_name[spec["like"]].all_columns if "like" in spec else [tuple(c) for c in spec["columns"]]
    file_format = next(iter(by_name.values())).file_format
    folder = locations.profile_location(profile, step.storage, "runs", run_id, engine.name, query.id,
                                        f"{step.phase}-{step.iteration}")
    locations.make_folder(profile, folder)
    registered = engine.register_shared_table(registered_name(f"{tableset.name}_out", query.writes, step.storage),
                                              folder.url(profile), file_format, columns)
    return {**tables, query.writes: f"{DATABASE}.{registered}"}


def _label(table: str, where: str) -> str:
    return f"the table on {where}" if table == DEFAULT_TABLE else f"table {table} on {where}"
