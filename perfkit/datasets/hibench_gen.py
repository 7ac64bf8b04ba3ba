"""HiBench's uservisits and rankings written by Spark straight into a storage (on a cluster: Spark on YARN).

Every row is a function of its id and the seed (perfkit.datasets.hibench), so each storage gets the same rows
whatever the partitioning, the count is the scale's; the checksum is order-insensitive: the row count and the sum
of every row's 64-bit hash folded into a prime (no overflow at any HiBench scale).
"""
from __future__ import annotations

from perfkit.datasets import hibench
from perfkit.datasets.generator import Generator
from perfkit.engines.spark import SparkEngine

CHECKSUM_MODULUS = 1_000_000_007
DEFAULT_SCALE = "tiny"


class HiBenchGenerator(Generator):
    dataset = "hibench"
    tables = hibench.TABLES

    def __init__(self, profile, scale, seed: int = 42):
        hibench.scale_rows(str(scale))
        super().__init__(profile, str(scale))
        self.seed = seed
        self.engine = SparkEngine(profile)

    @classmethod
    def checked_scale(cls, scale) -> str:
        scale = DEFAULT_SCALE if scale is None else str(scale)
        hibench.scale_rows(scale)
        return scale

    @property
    def spark(self):
        """The session, started on first use: a run that reuses a placed copy starts none."""
        if self.engine.spark is None:
            self.engine.open()
        return self.engine.spark

    @property
    def name(self) -> str:
        return f"hibench-{self.scale}"

    def describe(self) -> dict:
        return {"generator": "hibench", "scale": self.scale, "seed": self.seed,
                "by": "perfkit's HiBench generator on Spark, written into each storage"}

    def close(self) -> None:
        self.engine.close()

    def frame(self, table: str):
        make = {"uservisits": hibench.uservisits_frame, "rankings": hibench.rankings_frame}[table]
        return make(self.spark, self.scale, self.seed)

    def write(self, table: str, url: str, file_format: str) -> None:
        self.frame(table).write.format(file_format).mode("errorifexists").save(url)

    @staticmethod
    def _checksum(frame) -> list:
        from pyspark.sql import functions as F

        row = frame.agg(F.count(F.lit(1)), F.sum(F.pmod(F.xxhash64(*frame.columns), F.lit(CHECKSUM_MODULUS)))).first()
        return [int(row[0]), str(int(row[1] or 0))]

    def expected_rows(self, table: str) -> int:
        visits, pages = hibench.scale_rows(self.scale)
        return visits if table == "uservisits" else pages

    def written_checksum(self, table: str, url: str, file_format: str) -> list:
        return self._checksum(self.spark.read.format(file_format).load(url))
