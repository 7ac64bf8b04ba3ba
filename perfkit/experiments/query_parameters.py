"""What a query comparison is asked: each parameter declared once, with its help text and its check, and checked
together before anything runs (notebook parameters arrive as any YAML type). The suite is opened, the data's source
found and every query checked against the tables it will have."""
from __future__ import annotations

from dataclasses import dataclass

from perfkit import validate
from perfkit.config import Profile
from perfkit.datasets.generate import METHODS as PLACEMENTS
from perfkit.datasets.generator import REGISTRY as GENERATORS, generator_class
from perfkit.datasets.taxi import FORMATS, TaxiDataset
from perfkit.engines import engine_class
from perfkit.errors import PerfkitError
from perfkit.experiments.copy_cost import COPY_METHODS
from perfkit.experiments.query_data import PLACED, data_source, placed_storages
from perfkit.parameters import check_fields, param, recorded
from perfkit.storages.pricing import price_table
from perfkit.protocol import Protocol
from perfkit.storages import tiers
from perfkit.suites import open_suite
from perfkit.transfer import REGISTRY as TRANSFER_METHODS

STORAGES = PLACED + tiers()  # and the cache tiers in front of S3, which read the S3 copy


def _optional_names(name: str, value) -> list[str] | None:
    return None if value is None else validate.names(name, value)


@dataclass
class QueryParameters:
    """The fields of QueryComparison and its subclasses (perfkit.parameters: the CLI's options and the recorded
    parameters come from them)."""

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
        self.price_table = price_table(self.prices)  # a bad price file fails here, before anything runs
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
            raise PerfkitError(f"{self.experiment}: {err}") from None
        self.suite_spec = open_suite(self.suite, self.queries)
        self.suite_queries = self.suite_spec.queries
        if isinstance(self.tables, str):  # a YAML file of the map
            from perfkit.datasets.user_tables import read_tables_file

            self.tables = read_tables_file(self.tables)
        self.source = data_source(self.suite, self.suite_spec, self.tables, self.placed_storages)
        if self.source in GENERATORS:
            self.scale = generator_class(self.source).checked_scale(self.scale)

    def parameters(self) -> dict:
        """What the run was asked to do, as recorded with it: the fields, the queries resolved to the suite's."""
        return {**recorded(self), "queries": [q.id for q in self.suite_queries]}

    @property
    def placed_storages(self) -> list[str]:
        """Where the data must be: the compared storages that hold files, and S3 behind any cache tier."""
        return placed_storages(self.storages)
