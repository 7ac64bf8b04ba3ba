"""The same SQL on the same files, on HDFS and on S3, through one or more engines.

    cmp = QueryComparison(load_profile("lab"), engines=["spark", "trino", "hive"], rows=200_000)
    report = cmp.run_report(); report.recap()

The data is a suite's dataset (taxi rows, TPC-H at a scale factor, HiBench at a scale), generated and
verified equal on every storage, or the user's own tables (`tables`: each storage's locations).
"""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

import pandas as pd

from perfkit import provenance, validate
from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.experiments.base import Experiment
from perfkit.experiments import query_tables
from perfkit.experiments.copy_cost import COPY_METHODS
from perfkit.experiments.query_data import (PLACED, data_source, dataset_record, place_data,
                                            placed_storages)
from perfkit.experiments.query_attempt import run_accounting, run_observers, timed_run
from perfkit.experiments.query_report import QueryReport
from perfkit.experiments.recording import recording
from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.generate import METHODS as PLACEMENTS
from perfkit.datasets.generator import REGISTRY as GENERATORS, generator_class
from perfkit.datasets.placement import PlacedDataset
from perfkit.datasets.tables import TableSet
from perfkit.datasets.taxi import FORMATS, TaxiDataset
from perfkit.engines import engine_class, get_engine
from perfkit.errors import PerfkitError, root_cause
from perfkit.accounting.sources import server_sources
from perfkit.accounting.hdfs_window import hdfs_read_window
from perfkit.accounting.window import s3_request_window
from perfkit.prices import PriceTable
from perfkit.locks import network_in_use
from perfkit.protocol import Protocol, drop_page_cache
from perfkit.paths import results_dir_checked
from perfkit.results import ResultSet, now
from perfkit.suites import Query, open_suite
from perfkit.transfer import REGISTRY as TRANSFER_METHODS
from perfkit.storages import get_storage, storage_probes, tiers
from perfkit.tiers import BACKING, is_tier, tier
from perfkit.progress import progress_bar
from perfkit.parameters import check_fields, param

EXPERIMENT = "hdfs_vs_s3_queries"
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
        if isinstance(self.tables, str):  # a YAML file of the map
            from perfkit.datasets.user_tables import read_tables_file

            self.tables = read_tables_file(self.tables)
        self.source = data_source(self.suite, self.suite_spec, self.tables, self.placed_storages)
        if self.source in GENERATORS:
            self.scale = generator_class(self.source).checked_scale(self.scale)
        self.placed: PlacedDataset | None = None  # the taxi files, when the data is the taxi dataset
        self.tableset: TableSet | None = None
        self.results: ResultSet | None = None

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
        """The services checked, then the data placed and verified on every storage (query_data.place_data)."""
        self.preflight()
        self.tableset, self.placed = place_data(
            self.profile, self.source, self.storages, tables=self.tables, dataset=self.dataset,
            file_format=self.file_format, scale=self.scale, placement=self.placement, progress=progress)
        return self.tableset

    @property
    def placed_storages(self) -> list[str]:
        """Where the data must be: the compared storages that hold files, and S3 behind any cache tier."""
        return placed_storages(self.storages)

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
        """One timed run (query_attempt.timed_run), watched by the storage's health, S3's throttled requests and,
        where asked, the run's I/O."""
        accounting = run_accounting(engine, step.storage, self.io_sources) if self.accounting else None
        observers = run_observers(self.profile, results, engine, step.storage, self.probes[step.storage],
                                  self.health_interval_s, accounting)
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
