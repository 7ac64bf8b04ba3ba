"""The same SQL on the same files, on HDFS and on S3, through one or more engines.

    cmp = QueryComparison(load_profile("lab"), engines=["spark", "trino", "hive"], rows=200_000)
    report = cmp.run_report(); report.recap()

The data is a suite's dataset (taxi rows, TPC-H at a scale factor, HiBench at a scale), generated and
verified equal on every storage, or the user's own tables (`tables`: each storage's locations).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import time
from dataclasses import asdict, dataclass, replace

import pandas as pd

from perfkit import provenance, validate
from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.experiments.attempt import Observer, Run, RunIo, S3Faults, StorageHealth, Watched
from perfkit.experiments.base import Experiment
from perfkit.experiments.copy_cost import COPY_METHODS
from perfkit.experiments.query_report import QueryReport
from perfkit.experiments.recording import recording
from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.generate import METHODS as PLACEMENTS
from perfkit.datasets.generator import REGISTRY as GENERATORS, generator_class
from perfkit.partitions import check_rows
from perfkit.datasets.placement import PlacedDataset, place_taxi
from perfkit.datasets.tables import TableSet, registered_name, single_table, Table
from perfkit.datasets.taxi import FORMATS, SCHEMA, TaxiDataset
from perfkit.engines import DATABASE, engine_class, get_engine, result_hash
from perfkit.errors import PerfkitError, root_cause
from perfkit.accounting.run_io import RunAccounting
from perfkit.accounting.sources import server_sources
from perfkit.accounting.hdfs_window import hdfs_read_window
from perfkit.accounting.window import s3_request_window
from perfkit.prices import PriceTable
from perfkit.locks import network_in_use
from perfkit.protocol import Protocol, drop_page_cache
from perfkit.paths import results_dir_checked
from perfkit.results import ResultSet, now
from perfkit.suites import DEFAULT_TABLE, Query, open_suite
from perfkit.transfer import REGISTRY as TRANSFER_METHODS
from perfkit.storages import backing_of, get_storage, placed, storage_probes, tiers
from perfkit.tiers import BACKING, is_tier, tier
from perfkit.progress import progress_bar
from perfkit.parameters import check_fields, param

EXPERIMENT = "hdfs_vs_s3_queries"
PLACED = placed()  # the storages a dataset is placed on
STORAGES = PLACED + tiers()  # and the cache tiers in front of S3, which read the S3 copy


def _optional_names(name: str, value) -> list[str] | None:
    return None if value is None else validate.names(name, value)


@dataclass
class QueryComparison(Experiment):
    experiment = EXPERIMENT
    unit = "query runs"
    Report = QueryReport  # what report() builds from the records
    BREAK_EVEN = True  # run_report() measures the break-even's copy too, where HDFS and S3 are both compared
    # what the report asks for where it differs from the fields' defaults (perfkit.parameters), and why: a shared
    # report is read for its verdicts, so it measures more than a quick `perfkit queries`: 4 runs, the fewest that
    # `compare` can judge, on 1 M rows in 8 ORC files (87 MB)
    REPORT_DEFAULTS = {"rows": 1_000_000, "files": 8, "runs": 4}

    profile: Profile
    engines: list[str] = param(help="Engines: spark, trino, hive, spark-thrift (Spark SQL behind a HiveServer2 "
                               "endpoint).", factory=lambda: ["spark", "trino", "hive"], check=validate.names)
    rows: int = param(200_000, "Taxi trips generated.", check=validate.whole)
    files: int = param(4, "Files the rows are split into.", check=validate.whole)
    file_format: str = param("orc", "orc or parquet.", check=validate.choice, choices=FORMATS, option="--format")
    runs: int = param(3, "Measured runs per query and storage, interleaved across the storages.",
                      check=validate.whole)
    warmup: int = param(1, "Warm-up runs per query and storage: recorded, never summarised.", check=validate.whole,
                        minimum=0)
    queries: list[str] | None = param(None, "Query ids of the suite (default: all).", check=_optional_names)
    suite: str = param("taxi", "A built-in suite (taxi, tpch, hibench), or the path of a folder of .sql files that "
                       "read {table} or {table:NAME}.", check=validate.text, empty_ok=False)
    seed: int = param(42, "The generator's seed.", check=validate.whole, minimum=0)
    cold_cache: bool = param(False, "Drop the page cache before every measured run (where permitted).",
                             check=validate.flag, option="--cold-cache/--warm-cache")
    storages: list[str] = param(help="Where the same files sit: two or more.", factory=lambda: list(PLACED),
                                check=validate.names)
    baseline: str = param("hdfs", "Speed-ups and verdicts are against this storage.")
    query_timeout_s: float | None = param(None, "Seconds; a run past it is cancelled and recorded as failed "
                                          "(default: no limit).", check=validate.number, above=0, unit="seconds",
                                          none_means="no limit", option="--query-timeout")
    health_interval_s: float = param(1.0, "How often the storages are probed during a run (seconds).",
                                     check=validate.number, above=0, unit="seconds", recorded=False)
    scale: str | float | None = param(None, "tpch: the scale factor (default 0.01); hibench: tiny, small, large, "
                                      "huge, gigantic or bigdata (default tiny).")
    tables: dict | str | None = param(None, "The user's own tables: storage -> location(s), or a YAML file of that "
                                      "map.")
    placement: str = param("copy", "tpch, hibench: generate into HDFS and copy to S3, or generate into each storage.",
                           check=validate.choice, choices=PLACEMENTS)
    include_throttled: bool = param(False, "Count runs the S3 server throttled in the speed-ups and verdicts too.",
                                    check=validate.flag, option="--include-throttled/--leave-throttled-out")
    copy_methods: list[str] = param(help="The break-even's copy to HDFS: the fastest of these counts.",
                                    factory=lambda: list(COPY_METHODS), check=validate.names,
                                    choices=list(TRANSFER_METHODS), empty_ok=True)
    accounting: bool = param(True, "Count each run's requests and bytes at the storages and at the engine.",
                             check=validate.flag)
    prices: str | None = param(None, "A YAML file of your own prices (perfkit.prices); default: the shipped AWS "
                               "list prices.")

    def __post_init__(self):
        """Validate everything before anything runs (notebook parameters arrive as any YAML type)."""
        check_fields(self)
        for name in self.engines:
            engine_class(name)  # an unknown engine is named with the choices
        self.price_table = PriceTable.load(self.prices)  # a bad price file fails here, before anything runs
        self.io_sources: list = []  # the storages' own counters (watch_storages)
        self.copy_cost = None  # measured once, by copy_to_hdfs()
        unknown = [s for s in self.storages if s not in STORAGES]
        if unknown or len(self.storages) < 2:
            raise PerfkitError(f"storages {self.storages!r}: give two or more distinct storages of "
                               f"{', '.join(STORAGES)}")
        if self.baseline not in self.storages:
            raise PerfkitError(f"baseline {self.baseline!r} is not one of the storages {', '.join(self.storages)}")
        try:
            self.protocol = Protocol(self.warmup, self.runs, self.cold_cache)
            self.dataset = TaxiDataset(self.rows, self.files, self.seed)
        except ValueError as err:
            raise PerfkitError(f"{EXPERIMENT}: {err}") from None
        self.suite_spec = open_suite(self.suite, self.queries)
        self.suite_queries = self.suite_spec.queries
        self.source = self._source()
        self.placed: PlacedDataset | None = None  # the taxi files, when the data is the taxi dataset
        self.tableset: TableSet | None = None
        self.results: ResultSet | None = None

    def _source(self) -> str:
        """Where the tables come from: the user's `tables`, or the suite's dataset; checked against every query."""
        from perfkit.datasets import user_tables

        if self.tables is not None:
            if isinstance(self.tables, str):
                self.tables = user_tables.read_tables_file(self.tables)
            names = user_tables.normalize(self.tables, self.placed_storages)[self.placed_storages[0]]
            source = "tables"
        else:
            source = self.suite_spec.dataset or "taxi"
            names = generator_class(source).tables if source in GENERATORS else [DEFAULT_TABLE]
            # a write target is made by the run, not read: only the tables the queries read must be the taxi table
            read = {n for q in self.suite_queries for n in q.table_names()} - set(self.suite_spec.targets)
            if source == "taxi" and self.suite_spec.dataset is None and read - {DEFAULT_TABLE}:
                raise PerfkitError(f"suite {self.suite}: its queries name tables ({{table:NAME}}): give `tables`, "
                                   "each storage's locations of those tables (the generated taxi data is one "
                                   "table: {table})")
        for query in self.suite_queries:  # a placeholder the tables lack is named now, not mid-run
            query.for_tables({n: n for n in [*names, *self.suite_spec.targets]})
        self._check_targets(names)
        if source in GENERATORS:
            self.scale = generator_class(source).checked_scale(self.scale)
        return source

    def _check_targets(self, names: list[str]) -> None:
        """A write target `{like: TABLE}` names a table of the data: else every run of it would fail mid-run."""
        for target, spec in self.suite_spec.targets.items():
            if "like" in spec and spec["like"] not in names:
                raise PerfkitError(f"suite {self.suite}: write target {target!r} is like {spec['like']!r}, which the "
                                   f"data has not (it has {', '.join(names)}; the bare {{table}} is "
                                   f"{DEFAULT_TABLE!r}). Fix: name one of those, or give its columns: "
                                   "{columns: [[NAME, TYPE], ...]}")

    def parameters(self) -> dict:
        return {**super().parameters(), "queries": [q.id for q in self.suite_queries]}  # None resolved to the suite's

    def preflight(self) -> None:
        """Every storage and engine this run needs answers: one that does not is named, with its fix, before any
        work."""
        hdfs_storage.check_hdfs(self.profile)
        s3_storage.check_s3(self.profile)
        for name in self.engines:
            engine_class(name)(self.profile).check()

    def prepare(self, progress: bool = True) -> TableSet:
        self.preflight()
        if self.source == "tables":
            from perfkit.datasets.user_tables import user_tables

            self.tableset = user_tables(self.profile, self.tables, self.placed_storages)
        elif self.source == "taxi":
            self.placed = place_taxi(self.dataset, self.profile, self.file_format, progress=progress)
            self.tableset = taxi_tables(self.profile, self.placed, self.placed_storages)
        else:
            from perfkit.datasets.generate import place_generated
            from perfkit.datasets.generator import get_generator

            with get_generator(self.source, self.profile, self.scale) as gen:
                self.tableset = place_generated(gen, self.file_format, self.placed_storages, progress,
                                                method=self.placement)
        self.tableset = with_tiers(self.tableset, self.storages, self.profile)
        return self.tableset

    @property
    def placed_storages(self) -> list[str]:
        """Where the data must be: the compared storages that hold files, and S3 behind any cache tier."""
        needed = {BACKING if is_tier(s) else s for s in self.storages}
        return [s for s in PLACED if s in needed]

    def config(self) -> dict:
        """What every record of the run carries, and all its report needs besides the records (QueryReport): the
        dataset as placed, the queries' titles, how S3 was counted."""
        return provenance.run_config(self.profile, self.parameters(), network=self.s3_network(),
                                     dataset=self.dataset_record(),
                                     query_titles={q.id: q.title for q in self.suite_queries},
                                     write_queries=[q.id for q in self.suite_queries if getattr(q, "writes", None)],
                                     **self.accounting_record())

    def accounting_record(self) -> dict:
        """How the run's S3 requests were counted, as its report says: run by run from the S3 server's own log, or
        not by the server at all (only per window where CloudWatch counts them)."""
        return {"s3_counted_run_by_run": self.profile.provider.s3_request_log() is not None}

    def dataset_record(self) -> dict:
        """The placed data as the run records it: its name and verification, its table on every storage, one copy's
        bytes (every storage holds the same files) and the replication its files have on HDFS."""
        tableset = self.tableset
        dataset = {"name": tableset.name, "verified": tableset.verified, **tableset.details,
                   "summary": self._dataset_summary(),
                   "one_copy_bytes": sum(t.bytes for t in next(iter(tableset.tables.values())).values()),
                   "hdfs_replication": self._hdfs_replication(tableset.tables.get("hdfs", {}))}
        if self.placed is not None:
            placed = self.placed
            dataset.update({"format": placed.file_format, "files": len(placed.files), "bytes": placed.total_bytes,
                            "replaced": placed.replaced, **asdict(self.dataset)})
        return dataset

    def _dataset_summary(self) -> list[dict]:
        """One row per storage and table, for the report's dataset table; the taxi files say which were re-placed."""
        rows = self.tableset.summary()
        if self.placed is not None:
            for row in rows:
                row["re-placed"] = ", ".join(r for r in self.placed.replaced
                                             if r.startswith(f"{row['storage']}/")) or "none"
        return rows

    def _hdfs_replication(self, hdfs_tables: dict) -> int | None:
        """What the dataset's HDFS files have (a one-DataNode lab keeps 1); None where none is on HDFS."""
        from urllib.parse import urlsplit

        from perfkit.storages import Location

        for table in hdfs_tables.values():
            found = get_storage("hdfs", self.profile).replication(Location("hdfs", urlsplit(table.location).path))
            if found:
                return found
        return None

    def report(self) -> QueryReport:
        """This run's report, from its records (QueryReport; a subclass's Report adds its own tables)."""
        return self.Report(self._results())

    def run_report(self, progress: bool = True) -> QueryReport:
        """Measure (the data placed, the runs, and the break-even's copy where HDFS and S3 are both compared), then
        the report. QueryReport.load(path).run_report() is a stored run's report, measuring nothing."""
        self.run(progress)
        if self.BREAK_EVEN and {"hdfs", "s3"} <= set(self.storages):
            self.copy_to_hdfs(progress)
        return self.report()

    def run(self, progress: bool = True) -> ResultSet:
        """Warm-up then interleaved measured runs, per engine and query; a failing run is recorded, not fatal."""
        total = len(self.engines) * len(self.suite_queries) * self.protocol.count(self.storages)
        with self._recording(progress) as (results, tableset), \
                progress_bar(total=total, desc=self.experiment, unit="query", disable=not progress) as bar:
            for engine_name in self.engines:
                self.run_engine(results, engine_name, tableset, bar)
        return results

    @contextlib.contextmanager
    def _recording(self, progress: bool):
        """The data placed, a new ResultSet, the storages watched, S3's request window open; what was measured is
        saved whatever happens, marked interrupted on Ctrl-C, SIGTERM or a service gone, and this run's own writes
        are cleaned up."""
        results_dir_checked(self.experiment)  # a results folder that cannot be written fails now, not after measuring
        tableset = self.tableset or self.prepare(progress)
        with network_in_use():  # the S3 network cannot change under a run: the record must say what it ran behind
            config = self.config()
            for where in filter(is_tier, self.storages):  # the files may have been placed again since it looked
                tier(where, self.profile).refresh([t.location for t in tableset.tables[BACKING].values()])
            self.watch_storages(tableset)
            with recording(self.experiment, config, cleanup=self.cleanup) as results:
                self.results = results
                # on a cluster that asks for it, S3's own count of the runs' requests (CloudWatch, per window); where
                # HDFS's daemons refresh their JMX too seldom to read it around each run, HDFS's count per window
                with s3_request_window(self.profile, results, self.accounting and BACKING in self.placed_storages), \
                        hdfs_read_window(self.profile, results, self.accounting and "hdfs" in self.placed_storages):
                    yield results, tableset

    @staticmethod
    def _engine_unusable(results: ResultSet, engine_name: str, err: Exception) -> None:
        """An engine that cannot run this suite (its tables could not be registered): one failed record, go on."""
        results.add(subject=engine_name, storage="all", case="register tables", phase="measured",
                    iteration=0, started_at=now(), wall_s=None, ok=False, error=root_cause(err, 500))

    @contextlib.contextmanager
    def engine_with_tables(self, results: ResultSet, engine_name: str, tableset: TableSet):
        """The engine open, its version recorded and the run's tables registered: (engine, {storage: tables}); or
        (None, None) when it cannot run this suite, recorded as one failed record, so the run goes on without it. A
        PerfkitError (a service down, a bad setting) stops the run: it names its fix."""
        with contextlib.ExitStack() as stack:
            try:
                engine = stack.enter_context(get_engine(engine_name, self.profile, self.query_timeout_s))
                provenance.record_engine(results.config, engine)
                tables = self.register_tables(engine, tableset)
            except PerfkitError:
                raise
            except Exception as err:  # noqa: BLE001 - the engine cannot run this suite: recorded, the others go on
                self._engine_unusable(results, engine_name, err)
                engine = tables = None
            yield engine, tables

    def run_engine(self, results: ResultSet, engine_name: str, tableset: TableSet, bar) -> None:
        with self.engine_with_tables(results, engine_name, tableset) as (engine, tables):
            if engine is None:
                bar.update(len(self.suite_queries) * self.protocol.count(self.storages))
                return
            for query in self.suite_queries:
                bar.set_postfix_str(f"{engine_name} {query.id}")
                for step in self.protocol.steps(self.storages):
                    self.measure(results, engine, query, step, tables[step.storage])
                    bar.update()
                results.save()

    def watch_storages(self, tableset: TableSet) -> None:
        """The health probes measure() runs around each run; each storage's may ask for one of its data files (HDFS's
        has a DataNode compute its checksum)."""
        self.io_sources = server_sources(self.profile) if self.accounting else []
        first_files = {where: next((t.first_file for t in tableset.tables.get(where, {}).values() if t.first_file), "")
                       for where in self.placed_storages}
        self.probes = storage_probes(self.profile, self.placed_storages, first_files)
        for where in filter(is_tier, self.storages):  # a tier is healthy when S3 and the tier's service are
            self.probes[where] = tier(where, self.profile).probe(self.probes[BACKING])

    def register_tables(self, engine, tableset: TableSet) -> dict[str, dict[str, str]]:
        """One external table per (storage, table): storage -> {placeholder name: the engine's table}.

        Shared, read-only and made once: a table's name ends with a digest of what it is (engine, location, format,
        columns, and a partitioned table's partition columns and partitions), so runs at once on the same files use
        the same table and no run drops a table another reads."""
        tables: dict[str, dict[str, str] | None] = {}
        for where in self.storages:
            if is_tier(where):
                tables[where] = self.register_tier(engine, tableset, where)
                continue
            tables[where] = {}
            for name, table in tableset.tables[where].items():
                registered = self.register_table(engine, registered_name(tableset.name, name, where), table,
                                                 _label(name, where))
                tables[where][name] = f"{DATABASE}.{registered}"
        return tables

    def register_table(self, engine, base: str, table: Table, label: str) -> str:
        """One shared external table (Engine.register_shared_table: named `base` and the digest of its definition,
        partitions included, made only when no run has made it yet); a partitioned one is then counted by the engine
        and checked against the rows in its files' footers (a partition the engine missed stops the run here).
        Returns the table's bare name.

        The check runs on every registration, not only when this run made the table: it is a count(*) per table,
        the footers are read afresh by each run, and a table made by another run (one on another machine still
        adding its partitions, or files replaced since) is caught before any timing instead of skewing it."""
        registered = engine.register_shared_table(base, table.location, table.file_format, table.columns,
                                                  table.partitioning)
        if table.partitioning is not None:
            check_rows(engine, f"{DATABASE}.{registered}", label, table.location, table.partitioning,
                       self.query_timeout_s)
        return registered

    def register_tier(self, engine, tableset: TableSet, where: str) -> dict[str, str] | None:
        """The tables read through a cache tier; None when this engine cannot read through it."""
        cache = tier(where, self.profile)
        if cache.unavailable() or not cache.reads_through(engine.name):
            return None
        tables = {}
        for name, table in tableset.tables[where].items():
            through_cache = cache.name == "trino-cache"  # the S3 table itself, read through the cache's catalog
            at = BACKING if through_cache else where
            bare = self.register_table(engine, registered_name(tableset.name, name, at), table, _label(name, at))
            registered = f"{DATABASE}.{bare}"
            tables[name] = cache.table(registered) if through_cache else registered
        return tables

    def unavailable_reason(self, engine_name: str, where: str, query) -> str | None:
        """Why this engine does not run this query on this storage (a tier it cannot read through), or None."""
        if not is_tier(where):
            return None
        cache = tier(where, self.profile)
        if cache.unavailable():
            return cache.unavailable()
        if not cache.reads_through(engine_name):
            return f"{where} is read through {', '.join(cache.engines)} only, not {engine_name}"
        if getattr(query, "writes", None):
            return f"{where} is a read cache: write workloads are compared on hdfs and s3"
        return None

    def write_target(self, engine, query: Query, step, tables: dict[str, str]) -> dict[str, str]:
        """A write workload's table, created empty at a fresh folder under this run's prefix (cleaned up after).

        Its name has the digest of that folder: this run's and this step's own, dropped once the run is measured."""
        spec = self.suite_spec.targets[query.writes]
        by_name = self.tableset.tables[step.storage]
        columns = by_name[spec["like"]].all_columns if "like" in spec else [tuple(c) for c in spec["columns"]]
        file_format = next(iter(by_name.values())).file_format
        folder = locations.profile_location(self.profile, step.storage, "runs", self.results.run_id, engine.name,
                                            query.id, f"{step.phase}-{step.iteration}")
        locations.make_folder(self.profile, folder)
        registered = engine.register_shared_table(registered_name(f"{self.tableset.name}_out", query.writes,
                                                                  step.storage), folder.url(self.profile),
                                                  file_format, columns)
        return {**tables, query.writes: f"{DATABASE}.{registered}"}

    def cleanup(self) -> None:
        """Delete what write workloads wrote: this run's own folder on each storage, and nothing else."""
        if self.results is None or not any(q.writes for q in self.suite_queries):
            return
        for where in self.placed_storages:
            locations.delete_tree(self.profile, locations.profile_location(
                self.profile, where, "runs", self.results.run_id))

    def measure(self, results: ResultSet, engine, query, step, tables: dict[str, str]) -> None:
        """One run, watched: a storage that was unhealthy before, during or after it fails the run."""
        reason = self.unavailable_reason(engine.name, step.storage, query)
        if reason:  # once per engine, storage and query: not a failure, and nothing to time
            if not any(r.subject == engine.name and r.storage == step.storage and r.case == query.id
                       for r in results.records):
                results.add_unavailable(engine.name, step.storage, query.id, reason)
            return
        params = {"cache": drop_page_cache()} if step.cold else {}
        if not getattr(query, "writes", None):
            return self._measure(results, engine, query, step, tables, params)
        params["writes"] = query.writes
        try:
            tables = self.write_target(engine, query, step, tables)
        except Exception as err:  # noqa: BLE001 - the target cannot be made on this engine: this run fails
            results.add(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                        iteration=step.iteration, params=params, started_at=now(), wall_s=None, ok=False,
                        error=f"creating the write target: {root_cause(err, 400)}")
            return
        try:
            self._measure(results, engine, query, step, tables, params)
        finally:
            # the table only (its files go with the run's folder at cleanup); an engine that died mid-run cannot
            # drop it, and that run is recorded as failed already: a leftover table is no reason to stop
            with contextlib.suppress(Exception):
                engine.drop_own_table(tables[query.writes].split(".", 1)[1])

    def _measure(self, results: ResultSet, engine, query, step, tables: dict[str, str], params: dict) -> None:
        """Times the engine's call; the observers (attempt.py) add the storage's health, the run's I/O and S3's
        throttled requests to its record."""
        record = dict(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                      iteration=step.iteration, params=params)
        with Watched(self.observers(results, engine, step.storage)) as watched:
            if watched.refused:
                results.add(**record, started_at=now(), wall_s=None, ok=False, error=watched.refused)
                return
            # started_at + wall_s is the timed interval: the observers' snapshots are outside both
            started, t0 = now(), time.perf_counter()
            try:
                rows = engine.execute(query.for_tables(tables, engine.name), timeout_s=self.query_timeout_s)
                error = None
                watched.answered()
            except Exception as err:  # noqa: BLE001 - any engine error fails this run only
                error = get_storage(step.storage, self.profile).explain(str(err)) or root_cause(err, 500)
            except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the run in flight is recorded, not a sample
                results.add(**record, started_at=started, wall_s=None, ok=False,
                            error=f"interrupted ({stop or 'Ctrl-C'}) after {time.perf_counter() - t0:.1f} s: "
                                  "not a sample")
                raise
            wall = time.perf_counter() - t0
            watched.stop()
            writes = getattr(query, "writes", None)
            digest = result_hash(rows) if error is None and not writes else None
            run = watched.end(Run(record, error))
        if run.error:
            results.add(**record, io=run.io, started_at=started, wall_s=wall, ok=False, error=run.error)
            return
        if writes:  # what was written, read back outside the timing
            rows = engine.execute(f"SELECT * FROM {tables[writes]}")
            digest = result_hash(rows)
        results.add(**record, io=run.io, started_at=started, wall_s=wall, rows=len(rows), result_hash=digest)

    def observers(self, results: ResultSet, engine, where: str) -> list[Observer]:
        """What watches each run on `where`: the storage's health, S3's throttled requests and, where asked, the
        run's I/O (S3Faults reads what RunIo counted: it ends after it)."""
        accounting = self.run_accounting(engine, where)
        return [StorageHealth({where: self.probes[where]}, self.health_interval_s),
                S3Faults(self.profile, results.config, engine, where, counted=accounting is not None),
                *([RunIo(accounting)] if accounting else [])]

    def run_accounting(self, engine, where: str) -> RunAccounting | None:
        """The snapshots around one run on `where`: the storages' own counters and the engine's, of the storage the
        run reads (a tier reads S3); a stand-in engine may count only throttled S3 requests, or nothing."""
        if not self.accounting:
            return None
        storage = backing_of(where) or where  # a tier reads its backing storage
        counts = getattr(engine, "io_counters", None) or getattr(engine, "s3_counters", None)
        if counts is not None and "storage" in inspect.signature(counts).parameters:  # an engine that can narrow them
            counts = functools.partial(counts, storage=where)
        source = engine.io_source() if hasattr(engine, "io_source") else f"{engine.name}'s S3 client statistics"
        settle = getattr(engine, "settle", None)
        return RunAccounting(self.io_sources, counts, source if counts else "", storage=storage, settle=settle)

    def copy_to_hdfs(self, progress: bool = False):
        """The copy half of the break-even, measured once after the query runs, behind the same network: the S3
        tables' files copied to HDFS by each of copy_methods (verified; saved with the transfer runs)."""
        from perfkit.experiments.copy_cost import measure_copy

        if self.copy_cost is None:
            if "s3" not in self.tableset.tables:
                raise PerfkitError("break-even: the data is not on S3 in this run: add s3 to storages")
            locations = [t.location for t in self.tableset.tables["s3"].values()]
            self.copy_cost = measure_copy(self.profile, locations, self.copy_methods, progress=progress,
                                          calibration=self.measured_network)
            if self.results is not None:  # the report reads it from the run's records
                self.results.config["copy"] = asdict(self.copy_cost)
                self.results.save()
        return self.copy_cost

    @property
    def has_reference(self) -> bool:
        """TPC-H at a scale small enough for the independent check (DuckDB over tpchgen-cli's data, on the driver)."""
        from perfkit.datasets.tpch_reference import REFERENCE_MAX_SCALE

        return self.source == "tpch" and float(self.scale) <= REFERENCE_MAX_SCALE

    def reference_check(self, progress: bool = True) -> pd.DataFrame:
        """Every engine's answer on every storage against an independent generator and engine, per read query.

        Engines agreeing across storages shows they read the same files alike; this shows the answers are TPC-H's.
        The verdicts are saved with the run's records."""
        from perfkit.datasets import tpch_reference

        if not self.has_reference:
            raise PerfkitError(f"suite {self.suite} at scale {self.scale}: the independent check is for TPC-H up to "
                               f"sf {tpch_reference.REFERENCE_MAX_SCALE:g}")
        results = self._results()
        scale = float(self.scale)
        answers = tpch_reference.reference_answers(self.suite_spec.reads, scale, progress)
        table = reference_table(results.to_frame(), answers, tpch_reference.reference_by(scale))
        results.config["reference"] = {"by": table.attrs["by"],
                                       "verdicts": dict(zip(table["query"], table["verdict"]))}
        results.save()
        return table


def taxi_tables(profile: Profile, placed: PlacedDataset, storages: list[str]) -> TableSet:
    """The generated taxi files as the one table of the taxi suites."""
    columns = [(name, hive) for name, _, hive in SCHEMA]
    first = sorted(placed.files)[0]
    by_storage = {where: Table(placed.locations[where], placed.file_format, columns, len(placed.files),
                               placed.total_bytes,
                               f"{get_storage(where, profile).folder('datasets', placed.name, placed.file_format).path}"
                               f"/{first}")
                 for where in storages}
    return single_table(f"taxi_{placed.file_format}", by_storage, placed.verified, {})


def _label(table: str, where: str) -> str:
    return f"the table on {where}" if table == DEFAULT_TABLE else f"table {table} on {where}"


def with_tiers(tableset: TableSet, storages: list[str], profile: Profile) -> TableSet:
    """The placed tables, plus each cache tier's view of the S3 tables (the same files, read through the tier)."""
    tables = dict(tableset.tables)
    for where in filter(is_tier, storages):
        cache = tier(where, profile)
        tables[where] = {name: replace(t, location=cache.location(t.location), first_file="")
                         for name, t in tableset.tables[BACKING].items()}
    return replace(tableset, tables=tables)


def reference_table(frame: pd.DataFrame, answers: dict, by: str) -> pd.DataFrame:
    """Per query: the reference answer's rows and hash, the successful runs compared with it, and a verdict.

    `answers` maps query id -> ReferenceAnswer; `by` (who answered) is kept in the frame's attrs."""
    ok = frame[frame["ok"].astype(bool) & frame["result_hash"].notna()] if len(frame) else frame
    rows = []
    for query, answer in answers.items():
        mine = ok[ok["case"] == query] if len(ok) else ok
        if answer.error:
            verdict = f"no reference: {answer.error}"
        elif mine.empty:
            verdict = "no run returned a result"
        else:
            differ = sorted({f"{r.subject}/{r.storage}"
                             for r in mine.itertuples() if r.result_hash != answer.result_hash})
            verdict = f"DIFFERS ({', '.join(differ)})" if differ else "agrees"
        rows.append({"query": query, "reference rows": answer.rows, "reference hash": answer.result_hash,
                     "runs compared": len(mine), "verdict": verdict})
    table = pd.DataFrame(rows, columns=["query", "reference rows", "reference hash", "runs compared", "verdict"])
    table.attrs["by"] = by
    return table


def raise_for_reference(table: pd.DataFrame) -> None:
    """A batch run fails when any engine's answer differs from the independent reference."""
    differ = table[table["verdict"].str.startswith("DIFFERS")]
    if len(differ):
        listed = "; ".join(f"{r.query} {r.verdict[len('DIFFERS '):]}" for r in differ.itertuples())
        raise PerfkitError(f"TPC-H answers differ from the independent reference ({table.attrs.get('by', '?')}): "
                           f"{listed}. An engine or the data is wrong there: compare that engine's rows with the "
                           "reference's before trusting its times")
