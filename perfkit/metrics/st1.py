"""A model of EBS st1 (Throughput Optimized HDD) volumes, from the EBS user guide:

- baseline throughput 40 MiB/s per TiB, burst throughput 250 MiB/s per TiB, both capped at
  500 MiB/s per volume (baseline reaches the cap at 12.5 TiB, burst at 2 TiB);
- the burst bucket fills at the baseline rate and holds 1 TiB of credits per TiB of volume;
  while it holds credits the volume may run at burst, once empty at baseline;
- sizes from 125 GiB to 16 TiB; price per GB-month a parameter (default: perfkit's price table, perfkit.prices).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.prices import PriceTable

BASELINE_PER_TIB = 40.0  # MiB/s
BURST_PER_TIB = 250.0  # MiB/s
CAP = 500.0  # MiB/s per volume
MIN_GIB, MAX_GIB = 125, 16 * 1024
_SHIPPED = PriceTable.load()
PRICE_PER_GB_MONTH = _SHIPPED.ebs_per_gb_month("st1")  # USD, the shipped price table's (perfkit.prices)
PRICE_REGION = _SHIPPED.texts["region"]
MiB_PER_TiB = 1024 * 1024


@dataclass(frozen=True)
class St1Volume:
    size_gib: float

    def __post_init__(self):
        if not MIN_GIB <= self.size_gib <= MAX_GIB:
            raise PerfkitError(f"st1 volumes are {MIN_GIB} GiB to 16 TiB; {self.size_gib:g} GiB is outside that")

    @property
    def tib(self) -> float:
        return self.size_gib / 1024

    @property
    def baseline(self) -> float:
        return min(BASELINE_PER_TIB * self.tib, CAP)

    @property
    def burst(self) -> float:
        return min(BURST_PER_TIB * self.tib, CAP)

    @property
    def bucket_mib(self) -> float:
        return self.tib * MiB_PER_TiB

    def drain_seconds(self, demand: float) -> float:
        """Seconds for a full bucket to empty under a constant demand (MiB/s); inf if it never does."""
        net = min(demand, self.burst) - self.baseline
        return math.inf if net <= 0 else self.bucket_mib / net

    def simulate(self, demand, step_s: float = 60.0, start_balance: float = 1.0) -> pd.DataFrame:
        """Delivered MiB/s and BurstBalance (%) for a demand series (MiB/s per step of `step_s` seconds).

        Within a step the bucket may run dry: the step then delivers burst until it does and
        baseline after, and reports the average.
        """
        credits = self.bucket_mib * start_balance
        rows = []
        for i, want in enumerate(np.asarray(demand, dtype=float)):
            at_burst = min(want, self.burst)
            drain = at_burst - self.baseline  # credits spent per second at this rate (negative: refill)
            if drain > 0 and credits < drain * step_s:
                fast = credits / drain  # seconds until empty
                delivered = (at_burst * fast + min(want, self.baseline) * (step_s - fast)) / step_s
                credits = 0.0
            else:
                delivered = at_burst
                credits = min(self.bucket_mib, credits - drain * step_s)
            rows.append((i * step_s, want, delivered, 100.0 * credits / self.bucket_mib))
        return pd.DataFrame(rows, columns=["seconds", "demand_mib_s", "delivered_mib_s", "burst_balance_pct"])

    def move(self, mib: float, demand: float | None = None, start_balance: float = 1.0) -> tuple[float, float]:
        """(seconds, BurstBalance fraction after) to read or write `mib` at `demand` (default: as fast as allowed)."""
        rate = min(demand or self.burst, self.burst)
        drain = rate - self.baseline  # credits spent per second (negative: the bucket refills)
        credits = self.bucket_mib * start_balance
        if drain <= 0 or mib / rate * drain <= credits:
            seconds = mib / rate
            return seconds, min(self.bucket_mib, credits - drain * seconds) / self.bucket_mib
        fast = credits / drain
        return fast + (mib - rate * fast) / min(rate, self.baseline), 0.0

    def seconds_to_move(self, mib: float, demand: float | None = None, start_balance: float = 1.0) -> float:
        return self.move(mib, demand, start_balance)[0]


@dataclass(frozen=True)
class Configuration:
    """Volumes of one size on every node of a cluster."""

    volumes_per_node: int
    size_gib: float
    nodes: int = 5

    @property
    def label(self) -> str:
        size = f"{self.size_gib / 1024:g} TiB" if self.size_gib >= 1024 else f"{self.size_gib:g} GiB"
        return f"{self.volumes_per_node} × {size}"

    @property
    def volume(self) -> St1Volume:
        return St1Volume(self.size_gib)

    def monthly_cost(self, price_per_gb_month: float = PRICE_PER_GB_MONTH) -> float:
        return self.volumes_per_node * self.size_gib * self.nodes * price_per_gb_month

    def demand(self, node_cap_mib_s: float | None = None) -> float | None:
        """What one volume is asked for: all it can give, or its share of the node's EBS bandwidth."""
        return None if node_cap_mib_s is None else node_cap_mib_s / self.volumes_per_node

    def write_then_read(self, total_mib: float, replication: int = 3,
                        node_cap_mib_s: float | None = None) -> tuple[float, float]:
        """Seconds to write `total_mib` (each byte stored `replication` times) and then read it once, every
        volume moving its even share at once, the read starting with the bucket the write left."""
        volumes = self.nodes * self.volumes_per_node
        demand = self.demand(node_cap_mib_s)
        write_s, balance = self.volume.move(total_mib * replication / volumes, demand)
        read_s, _ = self.volume.move(total_mib / volumes, demand, balance)
        return write_s, read_s


PUBLISHED_CONFIGURATIONS = [Configuration(4, 512), Configuration(2, 1024), Configuration(1, 2048)]


def model_table(configurations: list[Configuration], total_mib: float, price_per_gb_month: float = PRICE_PER_GB_MONTH,
                replication: int = 3, node_cap_mib_s: float | None = None) -> pd.DataFrame:
    """Modelled write-then-read of `total_mib` per configuration; cluster MiB/s = total MiB / seconds, as
    the study computed it from TestDFSIO."""
    rows = []
    for c in configurations:
        write_s, read_s = c.write_then_read(total_mib, replication, node_cap_mib_s)
        rows.append({"configuration": c.label, "volumes per node": c.volumes_per_node, "volume GiB": c.size_gib,
                     "nodes": c.nodes, "cluster GiB": c.volumes_per_node * c.size_gib * c.nodes,
                     "write seconds": write_s, "read seconds": read_s,
                     "write MiB/s": total_mib / write_s, "read MiB/s": total_mib / read_s,
                     "baseline MiB/s per volume": c.volume.baseline, "burst MiB/s per volume": c.volume.burst,
                     "cost per month (USD)": round(c.monthly_cost(price_per_gb_month), 2)})
    return pd.DataFrame(rows)
