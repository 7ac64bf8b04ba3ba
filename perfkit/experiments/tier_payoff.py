"""Where a hot cache tier beats S3: hot reads of the cache-tier comparison's queries and of a scan of every column
(most of the table's bytes), with S3 at several round trips.

    report = run_report(TierPayoff(comparison, rtt_ms=[0, 60])); report.table(); report.sentences()

A hot tier reads nothing from S3, so its time should not move with S3's distance; S3's grows by a round trip per
request made in sequence and by bytes over bandwidth. Each distance is a recording of its own (the network cannot
change under a run, and each keeps its calibration): the network set, one untimed read per query and storage that
fills the tiers, then `runs` hot rounds with the storages' order rotating. Per engine, query and tier, a line through
each side's times against the round trip gives the round trip beyond which the tier is faster, with a bootstrap
interval over the runs at each distance. The network is set back to where it was when the sweep ends.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from perfkit import validate
from perfkit.datasets.taxi import SCHEMA
from perfkit.errors import PerfkitError
from perfkit.experiments.cache_tier import CacheTierComparison
from perfkit.experiments.attempt import TierCounters
from perfkit.experiments.base import Sweep
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.network import NetworkProfile, check
from perfkit.protocol import QueryStep, Step
from perfkit.suites import Query
from perfkit.tiers import is_tier, tier

EXPERIMENT = "cache_tier_payoff"
SCAN = "scan"
EC2_S3_MB_S = 85  # bandwidth per connection at every distance of the sweep: S3 from EC2 (perfkit.network)


def scan_query() -> Query:
    """Every column of the taxi table read: the max of each. No engine here answers an aggregate from ORC's column
    statistics, so the query reads the table's bytes, where q1 reads one column of 51."""
    maxima = ", ".join(f"max({name}) AS max_{name}" for name, _, _ in SCHEMA)
    return Query(SCAN, "max of every column (reads every column)", f"SELECT count(*) AS trips, {maxima} FROM {{table}}")


class PayoffPoint(QueryComparison):
    """One distance's hot reads, saved with the other distances of the sweep: the comparison's engines, storages and
    data (its tiers checked by the comparison), read hot."""

    experiment = EXPERIMENT
    fill = True  # the first distance's untimed read per query and storage; the tiers stay full for the others
    sweep: dict = {}  # TierPayoff.sweep_record(): recorded with the run, so the sweep's report can be read back

    def config(self) -> dict:
        return {**super().config(), "payoff": self.sweep}

    def steps(self) -> list[QueryStep]:
        """Per engine: the fill (the first distance only: one untimed read per storage and query), then `runs` hot
        rounds, the storages in the run's order (seeded, rotated each round)."""
        rounds = [("warmup", 0, "fill")] * self.fill + [("measured", i, "hot") for i in range(self.runs)]
        return [QueryStep(engine, query, Step(phase, iteration, where), try_)
                for engine in self.engines for n, (phase, iteration, try_) in enumerate(rounds)
                for where in self.in_run_order(self.storages, n, engine) for query in self.suite_queries]

    def label(self, step: QueryStep) -> str:
        return f"{step.engine} {step.query.id} {step.storage}"

    def progress_label(self) -> str:
        return f"{self.experiment} {self.profile_network()}"

    def begin(self) -> dict:
        self.tier_tables: dict[tuple[str, str], dict] = {}  # (engine, tier) -> its tables, once per engine
        return super().begin()  # no tier notes: the comparison's run gave them

    def attempt(self, step: QueryStep) -> None:
        """One read; through a tier, with the tier's counters around it, so a "hot" read that fetched from S3 shows
        (the fill's read waits for the tier's background fill, before the timed reads)."""
        engine, tables = self.open_engines.get(step.engine)
        if engine is None:
            return
        where, key = step.storage, (step.engine, step.storage)
        if self.unavailable_reason(engine.name, where, step.query):  # says why, once (before asking for the tier's
            return self.measure(self.results, engine, step.query, step.step, tables[where])  # tables: it has none)
        if key not in self.tier_tables:
            self.tier_tables[key] = (tier(where, self.profile).current_tables(tables[where]) if is_tier(where)
                                     else tables[where])
        watch = (TierCounters(tier(where, self.profile), engine, settle=step.try_ == "fill", details=False),) \
            if is_tier(where) else ()
        self.measure(self.results, engine, step.query, step.step, self.tier_tables[key], {"try": step.try_}, watch)

    def profile_network(self) -> str:
        found = self.profile.provider.network()
        return found.name if found is not None else "as it is"


@dataclass
class TierPayoff(Sweep):
    """The hot tiers of `comparison` against S3 read directly, at each round trip of `rtt_ms` (S3 from EC2's
    bandwidth per connection at each), on the comparison's first query (or `queries`) and a scan of every column
    (taxi data): the narrowest read and the widest."""
    experiment = EXPERIMENT

    comparison: CacheTierComparison
    rtt_ms: list[int] = field(default_factory=lambda: [0, 60])
    per_connection_mb_s: float = EC2_S3_MB_S
    runs: int = 3
    queries: list[str] | None = None  # of the comparison's; None: its first (the narrowest read of the report's)
    scan: bool = True  # add the scan of every column (the taxi dataset only)
    points: list[PayoffPoint] = field(default_factory=list, init=False)

    def __post_init__(self):
        self.rtt_ms = validate.wholes("rtt_ms", self.rtt_ms, minimum=0)
        self.runs = validate.whole("runs", self.runs)
        self.per_connection_mb_s = validate.number("per_connection_mb_s", self.per_connection_mb_s, above=0,
                                                   unit="MB/s")
        self.scan = validate.flag("scan", self.scan)
        self.movable = self.comparison.profile.provider.network() is not None
        if self.movable and len(set(self.rtt_ms)) == 1:
            raise PerfkitError(f"rtt_ms {self.rtt_ms!r}: give two or more round trips to find where the tier "
                               "overtakes S3, e.g. [0, 20, 60], or [] for no sweep")
        sweep = "the cache tier's pay-off sweep"
        self.settings = [check(NetworkProfile(f"rtt {rtt} ms", rtt_ms=rtt, per_connection_mb_s=self.per_connection_mb_s,
                                              source=sweep)) for rtt in self.rtt_ms] if self.movable else [None]
        if not self.rtt_ms:
            self.settings = []  # no sweep: the report says nothing of where the tier pays off
        known = {q.id: q for q in self.comparison.suite_queries}
        asked = validate.names("queries", self.queries) if self.queries is not None else list(known)[:1]
        if unknown := [q for q in asked if q not in known]:
            raise PerfkitError(f"queries {unknown!r}: the pay-off reads queries of the comparison's, "
                               f"{', '.join(known)}")
        self.queries = [known[q] for q in asked]
        if self.scan and self.comparison.source == "taxi":
            self.queries.append(scan_query())

    def ready(self, progress: bool = True) -> None:
        if self.settings and self.comparison.tableset is None:
            self.comparison.prepare(progress)  # the comparison's data, placed once for every distance

    @contextlib.contextmanager
    def session(self, results: None):
        """Each distance in turn; then the network the comparison ran behind."""
        provider = self.comparison.profile.provider
        was = provider.network()
        try:
            yield
        finally:
            if was is not None and self.settings:
                provider.use_network(was)

    def steps(self) -> list:
        """Each distance (on a cluster, S3 where it is: one)."""
        return list(self.settings)

    def label(self, network) -> str:
        return network.name if network is not None else "S3 where it is"

    def attempt(self, network) -> None:
        profile = self.comparison.profile
        if network is not None:  # the lab's S3 clients keep their endpoint: the profile stays true
            profile.provider.use_network(network)
        point = PayoffPoint(profile, **self._point_args())
        point.suite_queries = self.queries
        point.tableset, point.placed = self.comparison.tableset, self.comparison.placed
        point.fill, point.sweep = not self.points, self.sweep_record()
        point.run(self.progress)
        self.points.append(point)

    def _point_args(self) -> dict:
        c = self.comparison
        return dict(engines=c.engines, storages=c.storages, baseline=c.baseline, suite=c.suite, scale=c.scale,
                    tables=c.tables, rows=c.rows, files=c.files, queries=c.queries, runs=self.runs, warmup=0,
                    query_timeout_s=c.query_timeout_s, prices=c.prices)

    def sweep_record(self) -> dict:
        """What each distance's run records of the sweep it belongs to: its report is read back from these
        (PayoffReport.load)."""
        return {"of_run": self.comparison.results.run_id if self.comparison.results is not None else None,
                "rtt_ms": self.rtt_ms, "per_connection_mb_s": self.per_connection_mb_s, "runs": self.runs,
                "queries": [q.id for q in self.queries], "movable": self.movable}
