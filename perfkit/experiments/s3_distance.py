"""What if S3 were further away: the same queries with S3 behind emulated networks of growing round trip and
shrinking bandwidth, HDFS measured alongside as the flat reference (it stays local, as with data locality).

Each network setting is one HDFS vs S3 comparison (QueryComparison) run behind it, saved as its own run with its
calibration. The fit per engine and query says how many seconds one millisecond of round trip costs, and whether
the query is latency-bound (time grows with the round trip) or bandwidth-bound (with less bandwidth).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from perfkit import validate
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.base import Sweep
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.network import NetworkProfile, check
from perfkit.parameters import check_fields, default_of, param
from perfkit.protocol import run_order
from perfkit.results import RUN_GROUP, run_group

EXPERIMENT = "s3_distance"
SWEEP = "s3_distance"  # the sweep's own parameters, in each setting's config


class DistancePoint(QueryComparison):
    """One network setting's HDFS vs S3 runs, saved with the other points of the sweep: each records the sweep's
    parameters and its run group, so the sweep's report is rebuilt from any one of its files (DistanceReport.load)."""

    experiment = EXPERIMENT
    sweep: dict = {}  # S3Distance.sweep_record()
    group: dict = {}  # this setting's part of the sweep's run group

    def config(self) -> dict:
        return {**super().config(), SWEEP: self.sweep, RUN_GROUP: self.group}


@dataclass
class S3Distance(Sweep):
    """The sweep's own parameters are checked here; the rest are each point's (QueryComparison's), checked by the
    first point made before any work, with the sweep's defaults (a sweep times more rows than one comparison)."""
    experiment = EXPERIMENT

    profile_name: str  # the profile is re-resolved at each setting: the lab's S3 endpoint changes with the network
    engines: list[str] = param(help="engines timed at each setting", factory=lambda: ["trino"])
    rtt_ms: list[int] = param(help="round trips to S3 (ms), at no bandwidth limit", factory=lambda: [0, 20, 40],
                              check=validate.wholes, minimum=0)
    per_connection_mb_s: list[float] = param(help="S3's bandwidth per connection (MB/s), at no added round trip",
                                             factory=lambda: [85, 40], check=validate.numbers, above=0, unit="MB/s")
    # each point's parameters: the HDFS vs S3 report's sizes, its comparison's defaults (declared there, once)
    rows: int = param(QueryComparison.REPORT_DEFAULTS["rows"], "taxi trips generated")
    files: int = param(QueryComparison.REPORT_DEFAULTS["files"], "files the rows are split into")
    runs: int = param(default_of(QueryComparison, "runs"), "measured runs per query, storage and setting")
    warmup: int = param(default_of(QueryComparison, "warmup"), "warm-up runs per query and storage at each setting")
    queries: list[str] | None = param(default_of(QueryComparison, "queries"),
                                      "the suite's queries to time (None: every one)")
    query_timeout_s: float | None = param(default_of(QueryComparison, "query_timeout_s"),
                                          "seconds before a run is cancelled (None: no limit)")
    copy_methods: list[str] = param(help="the break-even's copy, measured at every setting",
                                    factory=lambda: ["stream"])
    points: list[DistancePoint] = field(default_factory=list, init=False)

    def __post_init__(self):
        check_fields(self)
        if len(set(self.rtt_ms)) < 2:
            raise PerfkitError(f"rtt_ms {self.rtt_ms!r}: give two or more round trips to fit a slope, e.g. [0, 20, 40]")
        sweep = "the s3_distance sweep"
        self.settings = ([check(NetworkProfile(f"rtt {rtt} ms", rtt_ms=rtt, source=sweep)) for rtt in self.rtt_ms]
                         + [check(NetworkProfile(f"bandwidth {bw:g} MB/s", per_connection_mb_s=bw, source=sweep))
                            for bw in self.per_connection_mb_s])
        if load_profile(self.profile_name).provider.network() is None:
            raise PerfkitError(f"s3_distance puts the embedded lab's S3 at other distances; profile "
                               f"{self.profile_name!r} is a cluster's, where S3 is where it is. Fix: run it with "
                               "profile lab; on a cluster, the HDFS vs S3 report's break-even uses the cluster's "
                               "own numbers")
        self.point_args = dict(engines=self.engines, rows=self.rows, files=self.files, runs=self.runs,
                               warmup=self.warmup, queries=self.queries, query_timeout_s=self.query_timeout_s,
                               storages=["hdfs", "s3"], baseline="hdfs", copy_methods=self.copy_methods)
        DistancePoint(load_profile(self.profile_name), **self.point_args)  # every parameter checked before work
        self.groups = dict(zip((s.name for s in self.settings), run_group([s.name for s in self.settings])))

    def steps(self) -> list[NetworkProfile]:
        """The settings in a seeded random order: the lab's slow drift (an engine still warming, the machine's load)
        cannot pose as the round trip's cost, as it would with the round trips always run from near to far."""
        return run_order(self.settings, 0, "settings", self.order_seed or 0)

    def attempt(self, network: NetworkProfile) -> None:
        point = DistancePoint(load_profile(self.profile_name, network=network), **self.point_args)
        point.sweep, point.group = self.sweep_record(), self.groups[network.name]
        point.run(progress=self.progress)
        point.copy_to_hdfs()  # behind this setting's network, before the next one is set
        self.points.append(point)

    def sweep_record(self) -> dict:
        """The sweep's own parameters, recorded with each setting: its report is read back from them."""
        return {"rtt_ms": self.rtt_ms, "per_connection_mb_s": self.per_connection_mb_s, "rows": self.rows,
                "files": self.files, "runs": self.runs, "warmup": self.warmup,
                "order": {"seed": self.order_seed, "settings": [s.name for s in self.steps()]}}
