"""Query engines behind one interface, registered by name and imported lazily."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import threading
from abc import ABC, abstractmethod
from datetime import date, datetime
from decimal import ROUND_HALF_EVEN, Context, Decimal

from perfkit.config import Profile
from perfkit.partitions import Partitioning, add_partitions_ddl, quoted
from perfkit.errors import PerfkitError
from perfkit.locks import table_lock
from perfkit.registry import Registry

DATABASE = "perfkit"  # every table perfkit registers lives here, apart from the user's own
OWNER_PROPERTY = "perfkit.created"  # set on perfkit's tables: no other table is ever dropped
DEFINITION_PROPERTY = "perfkit.definition"  # what the table is: a digest of its definition (table_definition)

REGISTRY = Registry("engine", {
    "spark": "perfkit.engines.spark:SparkEngine",
    "trino": "perfkit.engines.trino:TrinoEngine",
    "hive": "perfkit.engines.hive:HiveEngine",
    "spark-thrift": "perfkit.engines.spark_thrift:SparkThriftEngine",
})
register = REGISTRY.register


def engine_class(name: str) -> type["Engine"]:
    return REGISTRY.load(name)


def get_engine(name: str, profile: Profile, query_timeout_s: float | None = None) -> "Engine":
    engine = engine_class(name)(profile)
    engine.query_timeout_s = query_timeout_s
    return engine

SETTLE_S = 10.0  # how long a run's I/O waits for work its query left running (settle)


class Engine(ABC):
    """A SQL engine that reads tables whose files sit on HDFS or on S3."""

    name: str = "?"
    query_timeout_s: float | None = None  # the run's time limit per statement, known before open() (get_engine)
    make_database_sql = f"CREATE DATABASE IF NOT EXISTS {DATABASE}"  # an engine's own spelling overrides these two
    list_tables_sql = f"SHOW TABLES IN {DATABASE}"
    _listed: frozenset[str] = frozenset()  # the tables table_names() last found
    _database_made = False  # perfkit's database made (if it was not there) by this engine

    def __init__(self, profile: Profile):
        self.profile = profile

    @abstractmethod
    def open(self) -> None:
        """Connect (or start a session); raise ServiceError with a fix when it cannot."""

    @abstractmethod
    def execute(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        """Run one statement and return every row; past `timeout_s` cancel it and raise QueryTimeout."""

    @abstractmethod
    def create_table_sql(self, table: str, location: str, file_format: str, columns: list[tuple[str, str]],
                         properties: dict[str, str], partitioning: Partitioning | None = None) -> str:
        """The statement that creates the external table DATABASE.`table` over existing files, with `properties` as
        its table properties (the metastore's parameters); with `partitioning`, partitioned by its columns (its
        partitions are added after, by add_partitions_sql)."""

    def add_partitions_sql(self, table: str, location: str, partitioning: Partitioning) -> list[str]:
        """The statements that give the just-created partitioned table DATABASE.`table` the partitions found, each at
        its folder: ALTER TABLE ... ADD PARTITION for Hive, the Spark Thrift Server and Spark SQL (as Hive's MSCK
        REPAIR TABLE would, without a scan); Trino has its own."""
        return add_partitions_ddl(f"{DATABASE}.{table}", location, partitioning)

    def register_table(self, table: str, location: str, file_format: str, columns: list[tuple[str, str]],
                       partitioning: Partitioning | None = None) -> bool:
        """An external table over existing files, made if it is not there already: never moves or deletes data.
        True when this call made it.

        `table` is a bare name in perfkit's own database (DATABASE). A table there that is already this one (the
        same definition, recorded in its properties) is kept as it is: another run may be reading it, and runs
        only read these tables. One of perfkit's with another definition is replaced; one that perfkit did not
        create is refused, never dropped (see drop_own_table).

        With `partitioning` (key=value folders found below `location`) the table is partitioned by its columns and
        the partitions found are part of its definition: it is created, then given those partitions, only when it
        is made. If adding the partitions fails, the table just made is dropped, so that no table carries the
        definition without its partitions.

        Looking, dropping and creating are several statements, so the make holds a lock (per user and machine, keyed
        on the engine and the table): two runs at once both found no table, and the second dropped the table the
        first had just made and was about to query. A second run now waits, then finds the whole table.
        """
        digest = table_definition(self.name, location, file_format, columns, partitioning)
        with table_lock(self.name, table):
            if self._holds(table, digest):
                return False
            self.drop_own_table(table)
            try:
                self.execute(self.create_table_sql(table, location, file_format, columns,
                                                   {OWNER_PROPERTY: "true", DEFINITION_PROPERTY: digest}, partitioning))
            except Exception:
                if not self._holds(table, digest):  # else a concurrent run made the same table first: use it
                    raise
                return False
            self._listed |= {table.lower()}
            if partitioning:
                try:
                    for statement in self.add_partitions_sql(table, location, partitioning):
                        self.execute(statement)
                except Exception:
                    with contextlib.suppress(Exception):  # the error that stopped the partitions is the one to say
                        self.drop_own_table(table)
                    raise
        return True

    def register_shared_table(self, base: str, location: str, file_format: str, columns: list[tuple[str, str]],
                              partitioning: Partitioning | None = None) -> str:
        """register_table under `base` and a digest of the definition: the name says what the table is, so runs at
        once share a table when they read the same files and never replace one another's (the taxi table of 1 M
        rows and the one of 10 M are two tables; a partitioned folder with one more partition is another table).
        Returns the table's bare name."""
        table = f"{base}_{table_definition(self.name, location, file_format, columns, partitioning)[:8]}"
        self.register_table(table, location, file_format, columns, partitioning)
        return table

    def _holds(self, table: str, digest: str) -> bool:
        """Is `table` in perfkit's database, perfkit's, and that definition? A table this engine listed before is
        asked for its properties at once: one statement, not a listing and then its properties for each table
        (registering TPC-H's 8 tables on two storages took 14 s of statements per engine). One not listed, or gone
        since, is looked up afresh."""
        properties = None
        if table.lower() in self._listed:
            with contextlib.suppress(Exception):  # dropped since it was listed: the fresh look below says so
                properties = self.table_properties(table)
        if properties is None:
            if table.lower() not in self.table_names():
                return False
            properties = self.table_properties(table)
        return properties.get(OWNER_PROPERTY) == "true" and properties.get(DEFINITION_PROPERTY) == digest

    def table_names(self) -> set[str]:
        """The tables in perfkit's database (made once, if needed), lower case."""
        if not self._database_made:
            self.execute(self.make_database_sql)
            self._database_made = True
        names = {str(row[1] if len(row) > 1 else row[0]).lower() for row in self.execute(self.list_tables_sql)}
        self._listed = frozenset(names)
        return names

    def table_properties(self, table: str) -> dict[str, str]:
        """The metastore's parameters of a table of perfkit's database."""
        return {str(k): str(v) for k, v, *_ in self.execute(f"SHOW TBLPROPERTIES {DATABASE}.{table}")}

    def drop_own_table(self, table: str) -> None:
        """Create perfkit's database if needed; drop `table` there only if perfkit created it."""
        if table.lower() not in self.table_names():
            return
        if self.table_properties(table).get(OWNER_PROPERTY) != "true":
            raise PerfkitError(f"table {DATABASE}.{table} exists and was not created by perfkit: perfkit drops only "
                               f"its own tables. Fix: rename or drop that table yourself, then run again")
        self.execute(f"DROP TABLE {DATABASE}.{table}")

    def check(self) -> None:
        """Raise ServiceError (what, where, the fix) if this engine cannot run queries now; cheap.

        The metastore first: with it down an engine still answers, and only its table registration fails.
        """
        if self.profile.metastore_uri:
            from perfkit.engines.metastore import check_metastore

            check_metastore(self.profile)
        self.open()
        self.close()

    def versions(self) -> dict[str, str]:
        return {}

    def placement(self) -> dict[str, str]:
        """Where this engine runs its work, as far as it can tell (Spark: its master, executors, YARN application);
        empty when that is one server whose address the profile already gives."""
        return {}

    def s3_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """This engine's S3 requests so far that the server throttled (`s3_throttled`) and that were retried
        (`s3_retried`), from the engine's own S3 client, for a difference before and after a run; None when the
        engine does not expose them (Hive and the Spark Thrift Server: their S3A statistics live in a server JVM
        perfkit cannot read): not counted, which is not zero. `storage` (s3, a tier) may narrow them as in
        io_counters."""
        return None

    def io_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """What this engine's own storage clients asked so far, under perfkit.accounting.counters' names, for a
        difference before and after a run; None when it keeps no count perfkit can read (not zero). `storage` (the
        run's: hdfs, s3, a tier) may narrow it to the counters of what the run reads, where reading them costs."""
        return self.s3_counters()

    def io_source(self) -> str:
        """Where io_counters come from, for the record."""
        return f"{self.name}'s S3 client statistics"

    def settle(self, timeout_s: float = SETTLE_S) -> str | None:
        """Wait until the last query left nothing running in this engine, so a run's I/O is read after all of it;
        None when it did, else what was still running. An engine whose queries end with their answer has nothing
        to wait for."""
        return None

    def close(self) -> None:
        pass

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()


def close_quietly(conn) -> None:
    """Close a server connection, ignoring failures: a server that died mid-run is already recorded in the runs.

    Returns None, for `self.conn = close_quietly(self.conn)`."""
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - clients raise transport errors of several types
            pass


class QueryTimeout(Exception):
    """A statement cancelled because it ran past its time limit."""

    def __init__(self, timeout_s: float):
        super().__init__(f"timed out after {timeout_s:g} s (query_timeout_s) and was cancelled")


def run_with_deadline(run, cancel, timeout_s: float | None, every_s: float = 0.5):
    """run() in this thread; past timeout_s, call cancel() from a timer thread and raise QueryTimeout.

    cancel() is repeated every `every_s` until run() returns: a statement may submit its work (Spark
    jobs) after a first cancel, and cancelling what is not there yet does nothing.
    """
    if not timeout_s:
        return run()
    fired, done = threading.Event(), threading.Event()

    def expire():
        if done.wait(timeout_s):
            return
        fired.set()
        while True:
            cancel()
            if done.wait(every_s):
                return

    timer = threading.Thread(target=expire, name="perfkit-query-deadline", daemon=True)
    timer.start()
    try:
        result = run()
    except Exception:
        if fired.is_set():
            raise QueryTimeout(timeout_s) from None
        raise
    finally:
        done.set()
        timer.join()
    if fired.is_set():  # finished just as the time ran out: past the limit all the same
        raise QueryTimeout(timeout_s)
    return result


def table_definition(engine: str, location: str, file_format: str, columns: list[tuple[str, str]],
                     partitioning: Partitioning | None = None) -> str:
    """A digest of what a registered table is. The engine is part of it: each engine reads a table of its own DDL.
    A partitioned table's partition columns (names and types) and the partitions found (their folders, which hold
    their values) are too: a partition added to the folder gives a new table, made with every partition."""
    lines = [engine, location, file_format, *(f"{name} {typ}" for name, typ in columns)]
    if partitioning:
        lines.append(json.dumps({"partitioned_by": [list(column) for column in partitioning.columns],
                                 "partitions": [p.path for p in partitioning.partitions]}))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def sql_properties(properties: dict[str, str]) -> str:
    """TBLPROPERTIES' list, as Hive and Spark write it."""
    return ", ".join(f"'{key}'='{value}'" for key, value in properties.items())


def hive_ddl(table: str, location: str, file_format: str, columns: list[tuple[str, str]],
             partitioning: Partitioning | None = None, *, properties: dict[str, str] | None = None) -> str:
    """External-table DDL that Hive and Spark's Thrift server accept, marked as perfkit's own (`properties`, else
    the owner's mark alone); a partitioned table's partition columns apart (PARTITIONED BY), its partitions added
    after (add_partitions_ddl)."""
    cols = ", ".join(f"`{name}` {typ}" for name, typ in columns)
    parts = (" PARTITIONED BY (" + ", ".join(f"`{name}` {typ}" for name, typ in partitioning.columns) + ")"
             if partitioning else "")
    stored = {"orc": "ORC", "parquet": "PARQUET"}[file_format]
    return (f"CREATE EXTERNAL TABLE {DATABASE}.{table} ({cols}){parts} STORED AS {stored} "
            f"LOCATION '{quoted(location)}' TBLPROPERTIES ({sql_properties(properties or {OWNER_PROPERTY: 'true'})})")


_NINE_DIGITS = Context(prec=9, rounding=ROUND_HALF_EVEN)


def stable_number(value: float) -> str:
    """A number's text at 9 significant digits, the same for values that differ only by float noise.

    Aggregates over doubles differ in the last bits when partial sums merge in another order. Rounding the
    binary value straight to 9 digits would split a sum whose exact decimal value ends in 5 at the 10th digit
    (TPC-H's money sums do: 152546.4435 arrives as ...44349999 from one engine and ...44350001 from another).
    So first 12 digits (the noise, ~1e-13 relative, is gone and such a sum is exactly its decimal again),
    then 9, in decimal arithmetic, half to even.
    """
    if math.isnan(value):
        return "nan"
    return _nine_digits(value)


@functools.lru_cache(maxsize=1 << 16, typed=True)
def _nine_digits(value: float) -> str:
    """stable_number of a number, kept: each run of a query hashes the same values again (a run's answer of 2,000
    rows of floats took 5.6 ms to hash, outside the engine's time but inside the run's)."""
    rounded = _NINE_DIGITS.create_decimal(Decimal(f"{value:.12g}"))
    return "0" if rounded == 0 else f"{rounded:g}"


def result_hash(rows: list[tuple]) -> str:
    """A hash of the result independent of row order and of float noise (see stable_number)."""
    lines = sorted("\x1f".join(map(_as_text, row)) for row in rows)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _as_text(value) -> str:
    kind = type(value)  # the common cases first: a run's answer is hashed inside the run's time
    if kind is float:
        return _nine_digits(value) if value == value else "nan"  # NaN is the one float unequal to itself
    if kind is int or kind is str:
        return str(value)
    if isinstance(value, float):
        return stable_number(value)
    if isinstance(value, Decimal):
        return stable_number(float(value))
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)
