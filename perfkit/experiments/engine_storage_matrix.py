"""Every engine on every storage for every query of a suite: the on-prem study's engine x storage matrix.

    m = EngineStorageMatrix(load_profile("lab"), engines=["spark", "trino", "hive"], suite="tpch", scale=0.01)
    report = run_report(m); report.ranking(); report.speedups(); report.unsupported()

A cell is one (engine, storage). Runs are interleaved across every cell (query by query, one round of all
cells after another), so a drift in the machine's load hits every cell alike. The ranking orders cells by
the geometric mean of their median times over the read queries that every cell completed: a query one engine
cannot run is listed apart (as the study skipped q19 and q22), never averaged as a zero or a penalty.
"""
from __future__ import annotations

from dataclasses import dataclass

from perfkit.errors import PerfkitError
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.protocol import QueryStep, Step
from perfkit.results import RUN_GROUP, run_group

EXPERIMENT = "engine_storage_matrix"


def cell_name(engine: str, storage: str) -> str:
    return f"{engine}/{storage}"


@dataclass
class EngineStorageMatrix(QueryComparison):
    experiment = EXPERIMENT
    BREAK_EVEN = False  # the matrix ranks engines and storages: no copy measured
    group = None  # the suites run together (matrices()): recorded with each, not a parameter

    suite: str = "tpch"
    baseline_cell: str = ""  # "engine/storage" speed-ups are against; default: the first engine on the baseline storage

    def __post_init__(self):
        super().__post_init__()
        self.baseline_cell = str(self.baseline_cell or cell_name(self.engines[0], self.baseline))
        if self.baseline_cell not in self.cells():
            raise PerfkitError(f"baseline_cell {self.baseline_cell!r} is not one of the cells "
                               f"{', '.join(self.cells())}: give ENGINE/STORAGE of the run")

    def config(self) -> dict:
        """A suite's run says which run of suites it is part of: a stored report rebuilds them all (RUN_GROUP)."""
        return {**super().config(), **({RUN_GROUP: self.group} if self.group else {})}

    def cells(self) -> list[str]:
        return [cell_name(e, s) for e in self.engines for s in self.storages]

    def measure_for_report(self, progress: bool = True):
        """The runs, then TPC-H's independent check where the scale allows it (its table in the report)."""
        self.run(progress)
        if self.has_reference:
            self.reference_check(progress)
        return self.results

    ENGINES_ONE_AT_A_TIME = False  # every round visits every engine: all are held open

    def steps(self) -> list[QueryStep]:
        """Per query, warm-up then measured rounds, each round visiting every cell in the run's order (seeded, a
        different order per query, rotated round by round: perfkit.protocol.run_order)."""
        rounds = [("warmup", i) for i in range(self.warmup)] + [("measured", i) for i in range(self.runs)]
        cells = [(engine, where) for engine in self.engines for where in self.storages]
        return [QueryStep(engine, query, Step(phase, iteration, where, cold=self.cold_cache and phase == "measured"))
                for query in self.suite_queries for n, (phase, iteration) in enumerate(rounds)
                for engine, where in self.in_run_order(cells, n, query.id)]


def matrices(profile, suites, scale=None, queries=None, **options) -> list[EngineStorageMatrix]:
    """One matrix per suite (a name, a folder, or a list of them); `scale` and `queries` one value for every suite or
    {suite: value} (a suite not named: its default scale, every query; one named but not run: ignored, as the notebook's
    default scales name TPC-H and HiBench). All are built, so every bad parameter is named, before any of them runs."""
    suites = [suites] if isinstance(suites, str) else list(suites or [])
    if not suites:
        raise PerfkitError("suite: give a built-in suite (tpch, hibench, taxi), a folder of .sql files, or a list")
    scales = scale if isinstance(scale, dict) else {name: scale for name in suites}
    chosen = queries if isinstance(queries, dict) else {name: queries for name in suites}
    made = [EngineStorageMatrix(profile, suite=name, scale=scales.get(name), queries=chosen.get(name), **options)
            for name in suites]
    for matrix, group in zip(made, run_group([matrix.suite for matrix in made])):
        matrix.group = group
    return made
