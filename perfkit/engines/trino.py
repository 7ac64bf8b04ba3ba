"""Trino (Presto's successor) through its DB-API client: tables in a Hive-connector catalog over the shared
metastore."""
from __future__ import annotations

import contextlib
import re

from perfkit.partitions import Partitioning
from perfkit.engines import DATABASE, OWNER_PROPERTY, Engine, QueryTimeout, close_quietly
from perfkit.engines.trino_s3_stats import API_CALLS, ATTRIBUTES, BEAN, FAULT_COUNTERS, S3StatsOverHttp
from perfkit.errors import ServiceError, root_cause
from perfkit.storages import client_of
from perfkit.storages.base import HDFS_CLIENT, S3_CLIENT

# Hive's type names that Trino spells otherwise; the rest (bigint, smallint, double, timestamp, ...) are the same
TRINO_TYPES = {"string": "varchar", "int": "integer"}
TIME_LIMIT_EXCEEDED = "EXCEEDED_TIME_LIMIT"
# the native S3 file system's counters of a catalog (perfkit.engines.trino_s3_stats), as the jmx catalog's columns
S3_STATS = f'jmx.current."{BEAN.lower()}"'
STATS_COLUMNS = [attribute.lower() for attribute in ATTRIBUTES]
STATS_QUOTED = [f'"{column}"' for column in STATS_COLUMNS]
# a query's stats (the client protocol's StatementStats) that io_counters sums: bytes read from storage, the drivers'
# time reading them (summed over drivers: more than the query's wall time when they read at once), CPU, and splits
QUERY_STATS = {"physicalInputBytes": "input_bytes", "physicalInputTimeMillis": "input_read_ms",
               "cpuTimeMillis": "cpu_ms", "totalSplits": "splits"}


class QueryError(Exception):
    """A statement Trino refused or failed, with its error name (e.g. EXCEEDED_LOCAL_MEMORY_LIMIT) and message."""


def trino_type(hive_type: str) -> str:
    return TRINO_TYPES.get(hive_type.lower(), hive_type)


class TrinoEngine(Engine):
    name = "trino"
    service = "trino"

    def __init__(self, profile):
        super().__init__(profile)
        self.conn = None
        self.time_limit_s: float | None = None  # the query_max_run_time this session has now
        self.server_version = "?"
        self.nodes = 0  # active nodes: a one-node Trino's counters are all on its coordinator
        # what this session's queries did, by their stats (QUERY_STATS), summed: io_counters' own part
        self.query_totals = dict.fromkeys(QUERY_STATS.values(), 0)
        self._stats_over_http: S3StatsOverHttp | None = None  # a one-node Trino's S3 counters (made when first read)

    def open(self) -> None:
        from trino.dbapi import connect

        p = self.profile
        if not p.trino_host:
            raise ServiceError("trino", "the profile names no Trino coordinator", "set trino_host (and trino_port)")
        self.conn = connect(host=p.trino_host, port=p.trino_port, user=p.trino_user, catalog=p.trino_catalog,
                            schema=DATABASE, http_scheme="http", request_timeout=60)
        try:  # the client connects lazily: ask now, so a server that is down is named here
            nodes = self._fetch("SELECT node_version, coordinator FROM system.runtime.nodes WHERE state = 'active'")
            self.server_version = str(next(version for version, coordinator in nodes if coordinator))
            self.nodes = len(nodes)
        except Exception as err:  # noqa: BLE001 - refused, unknown host, no node yet: all mean "not usable"
            self.close()
            fix = p.provider.fix(self.service, "check trino_host/trino_port in the profile")
            raise ServiceError(f"Trino at {p.trino_host}:{p.trino_port}", f"not usable ({_reason(err)})", fix) from None

    def execute(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        """Trino enforces the limit itself (query_max_run_time) and cancels the query on the server."""
        from trino.exceptions import TrinoQueryError

        self._limit(timeout_s)
        try:
            return self._fetch(sql)
        except TrinoQueryError as err:
            if err.error_name == TIME_LIMIT_EXCEEDED and timeout_s:
                raise QueryTimeout(timeout_s) from None
            raise QueryError(_reason(err)) from None
        except Exception as err:
            if self.answers():
                raise
            p = self.profile  # the coordinator died or was stopped mid-statement: say so, not the client's retries
            raise ServiceError(f"Trino at {p.trino_host}:{p.trino_port}", f"is not answering ({_reason(err)})",
                               p.provider.fix(self.service, "check that the coordinator runs")) from None

    def answers(self) -> bool:
        """Does the coordinator answer its info page now (within a few seconds)?"""
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://{self.profile.trino_host}:{self.profile.trino_port}/v1/info",
                                        timeout=5):
                return True
        except OSError:
            return False

    def _fetch(self, sql: str) -> list[tuple]:
        cursor = self.conn.cursor()
        try:
            cursor.execute(sql)
            rows = [tuple(row) for row in cursor.fetchall()]
            for stat, name in QUERY_STATS.items():  # each query's own, summed per session
                self.query_totals[name] += int((cursor.stats or {}).get(stat) or 0)
        except BaseException:
            with contextlib.suppress(Exception):  # closing cancels the query: a failed cancel must not hide why
                cursor.close()
            raise
        cursor.close()
        return rows

    def _limit(self, timeout_s: float | None) -> None:
        if timeout_s == self.time_limit_s:
            return
        if timeout_s:
            # whole milliseconds: Trino's durations take a unit, and a fraction of one would be refused
            self._fetch(f"SET SESSION query_max_run_time = '{max(1, round(timeout_s * 1000))}ms'")
        else:
            self._fetch("RESET SESSION query_max_run_time")
        self.time_limit_s = timeout_s

    make_database_sql = f"CREATE SCHEMA IF NOT EXISTS {DATABASE}"
    list_tables_sql = f"SHOW TABLES FROM {DATABASE}"

    # Trino has no SHOW TBLPROPERTIES: a table's metastore parameters are the columns of "<table>$properties"
    def table_properties(self, table: str) -> dict[str, str]:
        cursor = self.conn.cursor()
        try:
            cursor.execute(f'SELECT * FROM {DATABASE}."{table}$properties"')
            values = cursor.fetchall()
            columns = [d[0] for d in cursor.description or []]
        finally:
            cursor.close()
        return {str(k): str(v) for k, v in zip(columns, values[0])} if values else {}

    def create_table_sql(self, table, location, file_format, columns, properties, partitioning=None) -> str:
        return trino_ddl(table, location, file_format, columns, partitioning, properties=properties)

    def add_partitions_sql(self, table, location, partitioning) -> list[str]:
        return [sync_partitions_sql(self.profile.trino_catalog, table)]

    def versions(self) -> dict[str, str]:
        return {self.name: f"Trino {self.server_version}"}

    def s3_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """Throttled and retried S3 calls of the catalogs a run on `storage` reads (both when not said: the plain one
        and the file-system cache's), summed over the nodes; cluster-wide, so one query at a time. None when no
        catalog's counters answer."""
        stats = self._s3_stats(self._catalogs_reading(storage))
        return None if stats is None else {name: int(stats.get(key.lower(), 0)) for key, name in FAULT_COUNTERS.items()}

    def io_counters(self, storage: str | None = None) -> dict[str, int] | None:
        """S3 requests by type (each call and its retries: the requests S3 saw), throttled and retried, of the
        profile's catalogs from JMX; and what the queries did by their own stats (QUERY_STATS: the bytes they read from
        storage, S3 or HDFS, and the time their drivers spent reading it). Cluster-wide, summed over the nodes: one
        query at a time. A run on HDFS reads no S3 counters (`storage`)."""
        found = dict(self.query_totals)
        stats = self._s3_stats(self._catalogs_reading(storage)) if client_of(storage) != HDFS_CLIENT else None
        if stats is None:  # no jmx catalog, or a catalog without native S3: requests not counted
            return found
        for attribute, name in API_CALLS.items():
            found[name] = found.get(name, 0) + int(stats.get(attribute.lower(), 0))
        found.update({name: int(stats.get(key.lower(), 0)) for key, name in FAULT_COUNTERS.items()})
        return found

    def _catalogs_reading(self, storage: str | None) -> list[str]:
        """The catalogs whose S3 client a run on `storage` uses: the file-system cache's for trino-cache, the plain
        one for s3, both when not said."""
        p = self.profile
        cache = p.provider.trino_cache_catalog(p) if p.trino_cache_catalog else ""  # the one in use (lab: fresh)
        if storage == "trino-cache" and cache:
            return [cache]
        if client_of(storage) == S3_CLIENT:
            return [p.trino_catalog]
        return list(dict.fromkeys(c for c in (p.trino_catalog, cache) if c))

    def _s3_stats(self, catalogs: list[str] | None = None) -> dict[str, float] | None:
        """S3FileSystemStats' counters of the profile's catalogs, summed over catalogs and nodes, by lower-case name.
        A one-node Trino answers from its coordinator over HTTP (far cheaper than a query, which a run pays twice); a
        cluster's counters sit on its workers, so there the jmx catalog sums them in one query."""
        catalogs = catalogs or self._catalogs_reading(None)
        try:
            return self._s3_stats_over_http(catalogs) if self.nodes == 1 else self._s3_stats_by_query(catalogs)
        except Exception:  # noqa: BLE001 - no jmx catalog or resource, or no native S3 file system: not counted
            return None

    def _s3_stats_by_query(self, catalogs: list[str]) -> dict[str, float]:
        """One query over the catalogs; if it fails, each catalog alone, and those that answer (a catalog without
        the native S3 file system has no counters)."""
        try:
            return self._summed_stats(catalogs)
        except Exception:  # one catalog without counters fails the union (re-raised when alone): ask each
            if len(catalogs) == 1:
                raise
        found: dict[str, float] | None = None
        for catalog in catalogs:
            with contextlib.suppress(Exception):
                part = self._summed_stats([catalog])
                found = {name: (found or {}).get(name, 0) + value for name, value in part.items()}
        if found is None:
            raise LookupError(f"no S3FileSystemStats for catalogs {', '.join(catalogs)}")
        return found

    def _summed_stats(self, catalogs: list[str]) -> dict[str, float]:
        columns = ", ".join(STATS_QUOTED)
        union = " UNION ALL ".join(f"SELECT {columns} FROM {S3_STATS.format(catalog=c)}" for c in catalogs)
        row = self._fetch(f"SELECT {', '.join(f'sum({c})' for c in STATS_QUOTED)} FROM ({union})")[0]
        return {column: float(value or 0) for column, value in zip(STATS_COLUMNS, row)}

    def _s3_stats_over_http(self, catalogs: list[str]) -> dict[str, float]:
        if self._stats_over_http is None:
            p = self.profile
            self._stats_over_http = S3StatsOverHttp(f"http://{p.trino_host}:{p.trino_port}", p.trino_user)
        return self._stats_over_http.read(catalogs)

    def io_source(self) -> str:
        return "Trino S3FileSystemStats (JMX); query stats (physical input bytes)"

    def close(self) -> None:
        self.conn = close_quietly(self.conn)


def trino_ddl(table: str, location: str, file_format: str, columns: list[tuple[str, str]],
              partitioning: Partitioning | None = None, *, properties: dict[str, str] | None = None) -> str:
    """An external table of the Hive connector, marked as perfkit's own (`properties` as its extra properties, else
    the owner's mark alone). Partitioned: the partition columns last (as the connector requires) and named in
    partitioned_by; its partitions are registered after (sync_partitions_sql)."""
    every = [*columns, *(partitioning.columns if partitioning else ())]
    cols = ", ".join(f'"{name}" {trino_type(typ)}' for name, typ in every)
    parts = (f"partitioned_by = ARRAY[{', '.join(repr(k) for k in partitioning.keys)}], " if partitioning else "")
    location = location.replace("'", "''")
    properties = properties or {OWNER_PROPERTY: "true"}
    keys, values = (", ".join(f"'{text}'" for text in texts) for texts in (properties, properties.values()))
    return (f"CREATE TABLE {DATABASE}.{table} ({cols}) WITH (format = '{file_format.upper()}', "
            f"external_location = '{location}', {parts}"
            f"extra_properties = MAP(ARRAY[{keys}], ARRAY[{values}]))")


def sync_partitions_sql(catalog: str, table: str) -> str:
    """The Hive connector's own procedure: it registers in the metastore the key=value folders it finds below the
    table's location (Trino has no ALTER TABLE ... ADD PARTITION; case_sensitive false: a folder Year=2024 is the
    partition of column year, as for Hive and Spark)."""
    return (f"CALL {catalog}.system.sync_partition_metadata(schema_name => '{DATABASE}', table_name => '{table}', "
            "mode => 'FULL', case_sensitive => false)")


def _reason(err: Exception) -> str:
    """One line: Trino's error name and message, or the innermost cause of a transport failure."""
    name, message = getattr(err, "error_name", None), getattr(err, "message", None)
    if name and message:
        return f"{name}: {' '.join(str(message).split())}"
    text = root_cause(err, 300)
    # urllib3 wraps a refused connection in three layers; its last words say what happened
    match = re.search(r"(Connection refused|Name or service not known|timed out|No route to host)", text)
    return match.group(1) if match else text
