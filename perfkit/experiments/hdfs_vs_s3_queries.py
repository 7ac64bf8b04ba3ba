"""The same SQL on the same files, on HDFS and on S3, through one or more engines.

    cmp = QueryComparison(load_profile("lab"), engines=["spark", "hive"], rows=200_000)
    cmp.prepare(); results = cmp.run(); cmp.recap()
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import pandas as pd
from tqdm import (
    tqdm,  # plain text: readable in notebooks, terminals and rendered HTML alike
)

from perfkit import provenance, stats, storage
from perfkit.config import Profile
from perfkit.datasets.placement import PlacedDataset, place_taxi
from perfkit.datasets.taxi import FORMATS, SCHEMA, TaxiDataset
from perfkit.engines import engine_class, get_engine, result_hash
from perfkit.errors import PerfkitError
from perfkit.protocol import Protocol, drop_page_cache
from perfkit.results import ResultSet, now
from perfkit.suites import load_suite

EXPERIMENT = "hdfs_vs_s3_queries"
STORAGES = ["hdfs", "s3"]


@dataclass
class QueryComparison:
    profile: Profile
    engines: list[str] = field(default_factory=lambda: ["spark", "hive"])
    rows: int = 200_000
    files: int = 4
    file_format: str = "orc"
    runs: int = 3
    warmup: int = 1
    queries: list[str] | None = None
    suite: str = "taxi"
    seed: int = 42
    cold_cache: bool = False  # drop the page cache before every measured run (where permitted)

    def __post_init__(self):
        """Validate everything before anything runs."""
        if not self.engines:
            raise PerfkitError("no engine given: pass at least one of spark, hive")
        for name in self.engines:
            engine_class(name)
        if self.file_format not in FORMATS:
            raise PerfkitError(f"unknown file format {self.file_format!r}: use one of {', '.join(FORMATS)}")
        try:
            self.protocol = Protocol(self.warmup, self.runs, self.cold_cache)
            self.dataset = TaxiDataset(self.rows, self.files, self.seed)
        except ValueError as err:
            raise PerfkitError(f"{EXPERIMENT}: {err}") from None
        self.suite_queries = load_suite(self.suite, self.queries)
        self.placed: PlacedDataset | None = None
        self.results: ResultSet | None = None

    def parameters(self) -> dict:
        return {"engines": self.engines, "rows": self.rows, "files": self.files, "file_format": self.file_format,
                "runs": self.runs, "warmup": self.warmup, "queries": [q.id for q in self.suite_queries],
                "suite": self.suite, "seed": self.seed, "cold_cache": self.cold_cache}

    def environment(self) -> pd.DataFrame:
        return provenance.environment_table(self.profile, self.parameters())

    def preflight(self) -> None:
        storage.check_hdfs(self.profile)
        storage.check_s3(self.profile)

    def prepare(self, progress: bool = True) -> PlacedDataset:
        self.preflight()
        self.placed = place_taxi(self.dataset, self.profile, self.file_format, progress=progress)
        return self.placed

    def dataset_table(self) -> pd.DataFrame:
        placed = self.placed or self.prepare()
        return pd.DataFrame([{"storage": s, "location": url, "files": len(placed.files),
                              "MB": round(placed.total_bytes / 1e6, 2)} for s, url in placed.locations.items()])

    def config(self) -> dict:
        placed = self.placed
        return provenance.run_config(self.profile, self.parameters(), dataset={
            "name": placed.name, "format": placed.file_format, "files": len(placed.files),
            "bytes": placed.total_bytes, **asdict(self.dataset)})

    def run(self, progress: bool = True) -> ResultSet:
        """Warm-up then interleaved measured runs, per engine and query; a failing run is recorded, not fatal."""
        placed = self.placed or self.prepare(progress)
        results = self.results = ResultSet(EXPERIMENT, self.config())
        total = len(self.engines) * len(self.suite_queries) * self.protocol.count(STORAGES)
        with tqdm(total=total, desc=EXPERIMENT, unit="query", disable=not progress) as bar:
            for engine_name in self.engines:
                with get_engine(engine_name, self.profile) as engine:
                    results.config["versions"].update(engine.versions())
                    tables = self.register_tables(engine, placed)
                    for query in self.suite_queries:
                        bar.set_postfix_str(f"{engine_name} {query.id}")
                        for step in self.protocol.steps(STORAGES):
                            self.measure(results, engine, query, step, tables[step.storage])
                            bar.update()
                        results.save()
        results.save()
        return results

    def register_tables(self, engine, placed: PlacedDataset) -> dict[str, str]:
        columns = [(name, hive) for name, _, hive in SCHEMA]
        tables = {}
        for where in STORAGES:
            tables[where] = f"{self.suite}_{placed.file_format}_{where}"
            engine.register_table(tables[where], placed.locations[where], placed.file_format, columns)
        return tables

    def measure(self, results: ResultSet, engine, query, step, table: str) -> None:
        params = {"cache": drop_page_cache()} if step.cold else {}
        started = now()
        t0 = time.perf_counter()
        try:
            rows = engine.execute(query.for_table(table))
        except Exception as err:  # noqa: BLE001 - any engine error fails this run only
            message = (str(err).strip().splitlines() or [type(err).__name__])[0][:500]
            results.add(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                        iteration=step.iteration, started_at=started, wall_s=None, ok=False, error=message,
                        params=params)
            return
        wall = time.perf_counter() - t0
        results.add(subject=engine.name, storage=step.storage, case=query.id, phase=step.phase,
                    iteration=step.iteration, started_at=started, wall_s=wall, rows=len(rows),
                    result_hash=result_hash(rows), params=params)

    def comparison(self) -> pd.DataFrame:
        return stats.compare(self.results.to_frame())

    def recap(self) -> pd.DataFrame:
        return recap_table(self.comparison(), {q.id: q.title for q in self.suite_queries})

    def failures(self) -> pd.DataFrame:
        frame = self.results.to_frame()
        return frame.loc[~frame["ok"], ["subject", "storage", "case", "phase", "iteration", "error"]]

    def raise_for_failures(self) -> None:
        """For batch runs: fail loudly (non-zero exit) once everything is recorded and shown."""
        failed = self.results.failures
        if failed:
            cases = sorted({f"{r.subject}/{r.case}/{r.storage}" for r in failed})
            raise PerfkitError(f"{len(failed)} query runs failed ({', '.join(cases)}); "
                               f"the errors are in {self.results.path}")


def recap_table(comparison: pd.DataFrame, titles: dict[str, str]) -> pd.DataFrame:
    """The published shape: HDFS | S3 | speed-up | query, by median and by minimum, in seconds."""
    c = comparison
    return pd.DataFrame({
        "engine": c["subject"],
        "HDFS median (s)": c["hdfs_median"].round(3),
        "S3 median (s)": c["s3_median"].round(3),
        "speed-up (median)": c["speedup_median"].round(2),
        "HDFS min (s)": c["hdfs_min"].round(3),
        "S3 min (s)": c["s3_min"].round(3),
        "speed-up (min)": c["speedup_min"].round(2),
        "95% CI": [f"{lo:.2f}–{hi:.2f}" if lo == lo else "–" for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "verdict": c["verdict"],
        "query": [f"{case}: {titles.get(case, case)}" for case in c["case"]],
        "check": [_check(row) for row in c.itertuples()],
    })


def _check(row) -> str:
    notes = []
    if not row.results_match:
        notes.append("RESULTS DIFFER between storages")
    if row.failed_runs:
        notes.append(f"{row.failed_runs} failed runs")
    if row.noisy:
        notes.append("noisy (CV > 10%)")
    return "; ".join(notes) or "ok"
