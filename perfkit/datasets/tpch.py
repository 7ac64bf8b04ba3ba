"""TPC-H at any scale factor from Trino's tpch connector (dbgen's Java port), written by CTAS into a storage.

The connector makes the rows on Trino's workers as they are read: at scale factor 100 on a cluster the
866 M rows go from the workers straight to HDFS or S3. Types stay the connector's (bigint and integer keys,
double prices, dates); varchar(n) becomes varchar, which every engine reads as a string.
"""
from __future__ import annotations

import uuid

from perfkit.datasets.generator import Generator
from perfkit.engines import DATABASE, OWNER_PROPERTY
from perfkit.engines.trino import TrinoEngine
from perfkit.errors import PerfkitError

TABLES = ("nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem")
DEFAULT_SCALE = 0.01


def scale_factor(value) -> float:
    """A positive number (0.01 is TPC-H's smallest meaningful one, Trino's `tiny`)."""
    try:
        sf = float(value)
    except (TypeError, ValueError):
        sf = float("nan")
    if not sf > 0 or sf == float("inf") or isinstance(value, bool):
        raise PerfkitError(f"scale {value!r}: the TPC-H scale factor must be a positive number, e.g. 0.01 "
                           "(about 10 MB), 1 (about 1 GB) or 100")
    return sf


class TpchGenerator(Generator):
    dataset = "tpch"
    tables = TABLES

    def __init__(self, profile, scale):
        super().__init__(profile, scale_factor(scale))
        self.engine = TrinoEngine(profile)
        self.engine.open()
        self.columns: dict[str, list[tuple[str, str]]] = {}
        self.produced: dict[str, int] = {}  # table -> rows the connector produced, as the first CTAS reported
        self.scratch_id = uuid.uuid4().hex[:8]

    @classmethod
    def checked_scale(cls, scale) -> float:
        return scale_factor(DEFAULT_SCALE if scale is None else scale)

    @property
    def name(self) -> str:
        return f"tpch-sf{self.scale:g}"

    def describe(self) -> dict:
        return {"generator": "tpch", "scale": self.scale,
                "by": f"Trino's tpch connector ({self.engine.versions()['trino']}), CTAS into each storage"}

    def close(self) -> None:
        self.engine.close()

    def source(self, table: str) -> str:
        return f'tpch."sf{self.scale:g}".{table}'

    def source_columns(self, table: str) -> list[tuple[str, str]]:
        if table not in self.columns:
            rows = self.engine.execute(f"SHOW COLUMNS FROM {self.source(table)}")
            self.columns[table] = [(str(r[0]), str(r[1])) for r in rows]
        return self.columns[table]

    def _select(self, table: str) -> str:
        cols = [f"CAST({n} AS varchar) AS {n}" if t.startswith("varchar") else n for n, t in self.source_columns(table)]
        return f"SELECT {', '.join(cols)} FROM {self.source(table)}"

    def _create(self, table: str, url: str, file_format: str, select: str = "") -> str:
        """A scratch table of perfkit's over `url` (filled by CTAS when `select` is given)."""
        scratch = f"perfkit_gen_{table}_{self.scratch_id}"  # this generator's own: a concurrent one has another
        self.engine.drop_own_table(scratch)
        cols = "" if select else " (" + ", ".join(
            f"{n} {'varchar' if t.startswith('varchar') else t}" for n, t in self.source_columns(table)) + ")"
        result = self.engine.execute(f"CREATE TABLE {DATABASE}.{scratch}{cols} WITH (format = '{file_format.upper()}', "
                                     f"external_location = '{url}', "
                                     f"extra_properties = MAP(ARRAY['{OWNER_PROPERTY}'], ARRAY['true']))"
                                     + (f" AS {select}" if select else ""))
        if select:  # a CTAS answers with the rows it wrote: what the connector produced
            self.produced.setdefault(table, int(result[0][0]))
        return f"{DATABASE}.{scratch}"

    def write(self, table: str, url: str, file_format: str) -> None:
        """CTAS into a scratch table at `url`, then drop the table: it is external, the files stay."""
        self.engine.execute(f"DROP TABLE {self._create(table, url, file_format, self._select(table))}")

    def place(self, table: str, url: str, file_format: str) -> list:
        """CTAS, then the checksum read back through the same scratch table, then drop it."""
        scratch = self._create(table, url, file_format, self._select(table))
        try:
            return self._checksum(scratch, table)
        finally:
            self.engine.execute(f"DROP TABLE {scratch}")

    def expected_rows(self, table: str) -> int:
        """The rows the connector makes for the table: as a CTAS of it reported them, else counted."""
        if table not in self.produced:
            self.produced[table] = int(self.engine.execute(f"SELECT count(*) FROM {self.source(table)}")[0][0])
        return self.produced[table]

    def _checksum(self, relation: str, table: str) -> list:
        names = [n for n, _ in self.source_columns(table)]
        row = self.engine.execute(f"SELECT count(*), to_hex(checksum(ROW({', '.join(names)}))) FROM {relation}")[0]
        return [int(row[0]), str(row[1])]

    def written_checksum(self, table: str, url: str, file_format: str) -> list:
        scratch = self._create(table, url, file_format)
        try:
            return self._checksum(scratch, table)
        finally:
            self.engine.execute(f"DROP TABLE {scratch}")
