"""The same SQL on the same files, on HDFS and on S3, through one or more engines.

    cmp = QueryComparison(load_profile("lab"), engines=["spark", "trino", "hive"], rows=200_000)
    report = run_report(cmp); report.recap()

The data is a suite's dataset (taxi rows, TPC-H at a scale factor, HiBench at a scale), generated and
verified equal on every storage, or the user's own tables (`tables`: each storage's locations).
"""
from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import asdict, dataclass

import pandas as pd

from perfkit import provenance
from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.experiments.base import Experiment
from perfkit.experiments import query_tables
from perfkit.experiments.query_data import dataset_record, place_data
from perfkit.experiments.attempt import Observer
from perfkit.experiments.query_attempt import run_accounting, run_observers, timed_run
from perfkit.experiments.query_reference import has_reference, reference_check
from perfkit.experiments.query_parameters import QueryParameters
from perfkit.datasets import locations
from perfkit.datasets.placement import PlacedDataset
from perfkit.datasets.tables import TableSet
from perfkit.engines import engine_class, get_engine
from perfkit.errors import PerfkitError, root_cause
from perfkit.accounting.sources import ServerSources, server_sources
from perfkit.accounting.windows import storage_windows
from perfkit.protocol import QueryStep, drop_page_cache
from perfkit.results import ResultSet, now
from perfkit.suites import Query
from perfkit.storages import break_even_pair, get_storage, storage_probes
from perfkit.tiers import is_tier, tier

EXPERIMENT = "hdfs_vs_s3_queries"


@dataclass
class QueryComparison(QueryParameters, Experiment):
    experiment = EXPERIMENT
    unit = "query runs"
    BREAK_EVEN = True  # measure_for_report() measures the break-even's copy too, where HDFS and S3 are both compared
    # what the report asks for where it differs from the fields' defaults (perfkit.parameters), and why: a shared
    # report is read for its verdicts, so it measures more than a quick `perfkit queries`: 30 rounds, with which its
    # paired, family-corrected verdicts caught a planted +10% in 15 to 20 of 20 trials per taxi query and raised no
    # false alarm in 20 (bench/power.py, Trino; 12 rounds caught 4 to 12 of 20), on 1 M rows in 8 ORC files (87 MB)
    REPORT_DEFAULTS = {"rows": 1_000_000, "files": 8, "runs": 30}

    def __post_init__(self):
        super().__post_init__()  # the parameters checked (QueryParameters)
        self.io_sources = ServerSources()  # the storages' own counters (watch_storages)
        self.copy_cost = None  # measured once, by copy_to_hdfs()
        self.placed: PlacedDataset | None = None  # the taxi files, when the data is the taxi dataset
        self.tableset: TableSet | None = None
        self.results: ResultSet | None = None

    def preflight(self) -> None:
        """Every storage and engine this run needs answers: one that does not is named, with its fix, before any
        work."""
        hdfs_storage.check_hdfs(self.profile)
        s3_storage.check_s3(self.profile)
        for name in self.engines:
            engine_class(name)(self.profile).check()

    def prepare(self, progress: bool = True) -> TableSet:
        """The services checked, then the data placed and verified on every storage (query_data.place_data)."""
        self.preflight()
        self.tableset, self.placed = place_data(
            self.profile, self.source, self.storages, tables=self.tables, dataset=self.dataset,
            file_format=self.file_format, scale=self.scale, placement=self.placement, progress=progress)
        return self.tableset

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
        """The placed data as the run records it (query_data.dataset_record)."""
        return dataset_record(self.profile, self.tableset, self.placed, self.dataset)

    def measure_for_report(self, progress: bool = True) -> ResultSet:
        """The data placed, the runs, and the break-even's copy where HDFS and S3 are both compared (the report:
        perfkit.presenting.run_report; a stored run's: QueryReport.load(path))."""
        self.run(progress)
        if self.BREAK_EVEN and break_even_pair(self.storages):
            self.copy_to_hdfs(progress)
        return self.results

    # -- the run: its steps and one attempt (perfkit.experiments.runner owns the loop) -----------------------------
    step_unit = "query"
    ENGINES_ONE_AT_A_TIME = True  # each engine's runs together, then it closes: its JVM does not idle through others'

    def steps(self) -> list[QueryStep]:
        """Per engine and query, warm-up then measured rounds across the storages, each round in the run's order
        (perfkit.protocol.run_order: seeded, a different first storage per query and round)."""
        return [QueryStep(engine, query, step) for engine in self.engines for query in self.suite_queries
                for step in self.protocol.steps(self.storages, f"{engine}/{query.id}", self.order_seed or 0)]

    def control(self):
        """The drift control: a small read of a data file of the run on each storage holding files."""
        from perfkit.experiments.control import table_control

        return table_control(self.profile, self.tableset, self.placed_storages)

    def label(self, step: QueryStep) -> str:
        return f"{step.engine} {step.query.id}"

    def record_of(self, step: QueryStep) -> dict:
        return step.record()

    def ready(self, progress: bool = True) -> None:
        if self.tableset is None:
            self.prepare(progress)

    def begin(self) -> dict:
        """The run's config; the tiers told of the files as placed now; the storages' probes and counters found."""
        config = self.config()
        for cache in (tier(where, self.profile) for where in filter(is_tier, self.storages)):
            # the files may have been placed again since it looked
            cache.refresh([t.location for t in self.tableset.tables[cache.backing].values()])
        self.watch_storages(self.tableset)
        return config

    @contextlib.contextmanager
    def session(self, results: ResultSet):
        """The engines, each opened on its first step; on a cluster that asks for it, S3's own count of the runs'
        requests (CloudWatch, per window), and HDFS's where its daemons refresh their JMX too seldom to read it
        around each run."""
        with storage_windows(self.profile, results, self.placed_storages, self.accounting), \
                OpenEngines(functools.partial(self.engine_with_tables, results, tableset=self.tableset),
                            self.ENGINES_ONE_AT_A_TIME) as engines:
            self.open_engines = engines
            yield

    def conditions_watch(self):
        """The provider's view of the cluster, and the open engines' own (Spark's executors on a cluster manager)."""
        from perfkit.experiments.conditions import ConditionsWatch

        return ConditionsWatch(lambda: self.profile.provider.conditions(self.profile),
                               engines=lambda: self.open_engines.conditions(), after_loss=self.after_datanode_loss)

    def attempt(self, step: QueryStep) -> None:
        engine, tables = self.open_engines.get(step.engine)
        if engine is not None:  # else the engine cannot run this suite: recorded once, when it was opened
            self.measure(self.results, engine, step.query, step.step, tables[step.storage])

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
                self.warm_up(results, engine, tables)
            except PerfkitError:
                raise
            except Exception as err:  # noqa: BLE001 - the engine cannot run this suite: recorded, the others go on
                self._engine_unusable(results, engine_name, err)
                engine = tables = None
            yield engine, tables

    WARM_UP_SQL = "SELECT * FROM {table} LIMIT 1"  # cheap in every engine, yet it plans, lists and opens a file

    def warm_up(self, results: ResultSet, engine, tables: dict) -> None:
        """Before the engine's first timed run: each of its tables read once on every storage it reads directly, in
        the run's order, so that no storage's first run pays the engine's own cold start (its JIT, metadata and
        listing caches, its connections). A tier is left cold: its cold state is what it measures. Untimed, not a
        sample: the seconds it took are kept in the run's config ("engine_warm_up"), and a failure is said there (the
        timed runs then fail with their own cause)."""
        done = {}
        for where in self.in_run_order([s for s in self.storages if not is_tier(s) and tables.get(s)], 0,
                                       f"warm-up/{engine.name}"):
            t0 = time.perf_counter()
            try:
                for table in tables[where].values():
                    engine.execute(self.WARM_UP_SQL.format(table=table), timeout_s=self.query_timeout_s)
                done[where] = round(time.perf_counter() - t0, 3)
            except Exception as err:  # noqa: BLE001 - recorded; the timed runs say their own failure
                done[where] = f"failed: {root_cause(err, 200)}"
        results.config.setdefault("engine_warm_up", {})[engine.name] = done

    def watch_storages(self, tableset: TableSet) -> None:
        """The health probes measure() runs around each run; each storage's may ask for one of its data files (HDFS's
        has a DataNode compute its checksum)."""
        self.io_sources = server_sources(self.profile) if self.accounting else ServerSources()
        first_files = {where: next((t.first_file for t in tableset.tables.get(where, {}).values() if t.first_file), "")
                       for where in self.placed_storages}
        self.probes = storage_probes(self.profile, self.placed_storages, first_files)
        for where in filter(is_tier, self.storages):  # healthy when its backing storage and its service are
            cache = tier(where, self.profile)
            self.probes[where] = cache.probe(self.probes[cache.backing])

    def register_tables(self, engine, tableset: TableSet) -> dict[str, dict[str, str] | None]:
        """The engine's tables of this run (perfkit.experiments.query_tables): storage -> {name: table}."""
        return query_tables.register_tables(engine, tableset, self.storages, self.profile, self.query_timeout_s)

    def unavailable_reason(self, engine_name: str, where: str, query) -> str | None:
        """Why this engine does not run this query on this storage (a tier it cannot read through), or None."""
        return query_tables.unavailable_reason(engine_name, where, query, self.profile)

    def write_target(self, engine, query: Query, step, tables: dict[str, str]) -> dict[str, str]:
        """A write workload's fresh table under this run's own folder (query_tables.write_target)."""
        return query_tables.write_target(engine, query, step, tables, self.tableset,
                                         self.suite_spec.targets[query.writes], self.results.run_id, self.profile)

    def cleanup(self) -> None:
        """Delete what write workloads wrote: this run's own folder on each storage, and nothing else."""
        if self.results is None or not any(q.writes for q in self.suite_queries):
            return
        for where in self.placed_storages:
            locations.delete_tree(self.profile, locations.profile_location(
                self.profile, where, "runs", self.results.run_id))

    def measure(self, results: ResultSet, engine, query, step, tables: dict[str, str], params: dict | None = None,
                observers: tuple[Observer, ...] = ()) -> None:
        """One run, watched: a storage that was unhealthy before, during or after it fails the run. `params`: what
        the record says besides (a cache tier's try); `observers`: watch this run too, first to start, last to end."""
        reason = self.unavailable_reason(engine.name, step.storage, query)
        if reason:  # once per engine, storage and query: not a failure, and nothing to time
            if not any(r.subject == engine.name and r.storage == step.storage and r.case == query.id
                       for r in results.records):
                results.add_unavailable(engine.name, step.storage, query.id, reason)
            return
        params = {**(params or {}), **({"cache": drop_page_cache()} if step.cold else {})}
        if not getattr(query, "writes", None):
            return self._measure(results, engine, query, step, tables, params, observers)
        params["writes"] = query.writes
        try:
            tables = self.write_target(engine, query, step, tables)
        except Exception as err:  # noqa: BLE001 - the target cannot be made on this engine: this run fails
            results.add(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                        iteration=step.iteration, params=params, started_at=now(), wall_s=None, ok=False,
                        error=f"creating the write target: {root_cause(err, 400)}")
            return
        try:
            self._measure(results, engine, query, step, tables, params, observers)
        finally:
            # the table only (its files go with the run's folder at cleanup); an engine that died mid-run cannot
            # drop it, and that run is recorded as failed already: a leftover table is no reason to stop
            with contextlib.suppress(Exception):
                engine.drop_own_table(tables[query.writes].split(".", 1)[1])

    def _measure(self, results: ResultSet, engine, query, step, tables: dict[str, str], params: dict,
                 observers: tuple[Observer, ...]) -> None:
        """One timed run (query_attempt.timed_run), watched by the storage's health, S3's throttled requests and,
        where asked, the run's I/O."""
        accounting = run_accounting(engine, step.storage, self.io_sources) if self.accounting else None
        observers = [*observers, *run_observers(self.profile, results, engine, step.storage,
                                                self.probes[step.storage], self.health_interval_s, accounting)]
        record = dict(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                      iteration=step.iteration, params=params)
        writes = getattr(query, "writes", None)
        timed_run(results, record, engine, query.for_tables(tables, engine.name), observers, self.query_timeout_s,
                  get_storage(step.storage, self.profile).explain, read_back=tables[writes] if writes else None)

    def copy_to_hdfs(self, progress: bool = False):
        """The copy half of the break-even, measured once after the query runs, behind the same network: the S3
        tables' files copied to HDFS by each of copy_methods (verified; saved with the transfer runs)."""
        from perfkit.experiments.copy_cost import measure_copy

        if self.copy_cost is None:
            remote = (break_even_pair(self.storages) or (None,))[0]
            if remote not in self.tableset.tables:
                raise PerfkitError("break-even: the data is on no storage read remotely in this run: add s3 to "
                                   "storages")
            locations = [t.location for t in self.tableset.tables[remote].values()]
            self.copy_cost = measure_copy(self.profile, locations, self.copy_methods, progress=progress,
                                          calibration=self.measured_network)
            if self.results is not None:  # the report reads it from the run's records
                self.results.config["copy"] = asdict(self.copy_cost)
                self.results.save()
        return self.copy_cost

    @property
    def has_reference(self) -> bool:
        """TPC-H at a scale small enough for the independent check (query_reference)."""
        return has_reference(self.source, self.scale)

    def reference_check(self, progress: bool = True) -> pd.DataFrame:
        """Every engine's answer on every storage against an independent generator and engine, per read query; the
        verdicts saved with the run's records (query_reference.reference_check)."""
        return reference_check(self._results(), self.suite, self.suite_spec.reads, self.source, self.scale, progress)


class OpenEngines:
    """A run's engines, each opened (its tables registered) on its first step and held until the run ends, or, one at
    a time, until a step of another engine: (engine, tables), or (None, None) for one that cannot run the suite."""

    def __init__(self, open_engine, one_at_a_time: bool):
        self.open_engine = open_engine  # name -> a context manager of (engine, tables)
        self.one_at_a_time = one_at_a_time
        self.held: dict[str, tuple[contextlib.ExitStack, object, dict]] = {}
        self.unusable: set[str] = set()

    def get(self, name: str) -> tuple:
        if name in self.unusable:
            return None, None
        if name not in self.held:
            if self.one_at_a_time:
                self.close()
            stack = contextlib.ExitStack()
            engine, tables = stack.enter_context(self.open_engine(name))
            if engine is None:
                stack.close()
                self.unusable.add(name)
                return None, None
            self.held[name] = (stack, engine, tables)
        _, engine, tables = self.held[name]
        return engine, tables

    def conditions(self) -> dict:
        """What the open engines see of their own cluster (an engine's conditions(), where it has one)."""
        found: dict = {}
        for _, engine, _ in self.held.values():
            if (read := getattr(engine, "conditions", None)) is not None:
                found.update(read())
        return found

    def close(self, *exc) -> None:
        while self.held:
            _, (stack, _, _) = self.held.popitem()
            stack.__exit__(*(exc or (None, None, None)))

    def __enter__(self) -> OpenEngines:
        return self

    def __exit__(self, *exc) -> None:
        self.close(*exc)
