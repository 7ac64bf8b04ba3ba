"""Taxi-trip-like rows with the 51-column schema of the 1.1-billion-trip NYC taxi benchmark.

Deterministic: the same (rows, files, seed) always gives the same rows, and the same bytes on
disk. Each file is generated from its own seed, so a file never depends on how many came before.
A file is generated and written in batches of BATCH_ROWS rows (each batch its own seed: the file's, then the
batch's number), so a file of any size, up to the studies' 1.6 GB, streams through a batch's memory.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from perfkit import atomic
from perfkit.errors import PerfkitError
from perfkit.validate import whole

# (column, arrow type, Hive type), in the benchmark's order
SCHEMA: list[tuple[str, pa.DataType, str]] = [
    ("trip_id", pa.int64(), "bigint"),
    ("vendor_id", pa.string(), "string"),
    ("pickup_datetime", pa.timestamp("us"), "timestamp"),
    ("dropoff_datetime", pa.timestamp("us"), "timestamp"),
    ("store_and_fwd_flag", pa.string(), "string"),
    ("rate_code_id", pa.int16(), "smallint"),
    ("pickup_longitude", pa.float64(), "double"),
    ("pickup_latitude", pa.float64(), "double"),
    ("dropoff_longitude", pa.float64(), "double"),
    ("dropoff_latitude", pa.float64(), "double"),
    ("passenger_count", pa.int16(), "smallint"),
    ("trip_distance", pa.float64(), "double"),
    ("fare_amount", pa.float64(), "double"),
    ("extra", pa.float64(), "double"),
    ("mta_tax", pa.float64(), "double"),
    ("tip_amount", pa.float64(), "double"),
    ("tolls_amount", pa.float64(), "double"),
    ("ehail_fee", pa.float64(), "double"),
    ("improvement_surcharge", pa.float64(), "double"),
    ("total_amount", pa.float64(), "double"),
    ("payment_type", pa.string(), "string"),
    ("trip_type", pa.int16(), "smallint"),
    ("pickup", pa.string(), "string"),
    ("dropoff", pa.string(), "string"),
    ("cab_type", pa.string(), "string"),
    ("precipitation", pa.int16(), "smallint"),
    ("snow_depth", pa.int16(), "smallint"),
    ("snowfall", pa.int16(), "smallint"),
    ("max_temperature", pa.int16(), "smallint"),
    ("min_temperature", pa.int16(), "smallint"),
    ("average_wind_speed", pa.int16(), "smallint"),
] + [
    (f"{side}_{col}", typ, hive)
    for side in ("pickup", "dropoff")
    for col, typ, hive in [
        ("nyct2010_gid", pa.int16(), "smallint"),
        ("ctlabel", pa.string(), "string"),
        ("borocode", pa.int16(), "smallint"),
        ("boroname", pa.string(), "string"),
        ("ct2010", pa.string(), "string"),
        ("boroct2010", pa.string(), "string"),
        ("cdeligibil", pa.string(), "string"),
        ("ntacode", pa.string(), "string"),
        ("ntaname", pa.string(), "string"),
        ("puma", pa.string(), "string"),
    ]
]
ARROW_SCHEMA = pa.schema([(name, typ) for name, typ, _ in SCHEMA])
FORMATS = ("orc", "parquet")

FIRST_DAY = np.datetime64("2009-01-01T00:00:00", "us")
DAYS = 7 * 365  # pickups spread over 2009-2015, as in the benchmark
CAB_TYPES, CAB_P = ["yellow", "green", "uber"], [0.72, 0.2, 0.08]
PASSENGER_P = np.array([0.006, 0.70, 0.14, 0.04, 0.02, 0.06, 0.03, 0.002, 0.001, 0.001])
PAYMENT_TYPES, PAYMENT_P = ["CRD", "CSH", "NOC", "DIS", "UNK"], [0.52, 0.45, 0.015, 0.005, 0.01]
VENDORS = ["1", "2", "CMT", "VTS"]
BOROUGHS = [(1, "Manhattan"), (2, "Bronx"), (3, "Brooklyn"), (4, "Queens"), (5, "Staten Island")]
BOROUGH_P = [0.8, 0.04, 0.08, 0.075, 0.005]
TRACTS_PER_BOROUGH = 40


def _tracts() -> dict[str, np.ndarray]:
    """A fixed table of census tracts, the lookup the benchmark joins trips against."""
    rows = []
    for code, name in BOROUGHS:
        for i in range(TRACTS_PER_BOROUGH):
            ct = f"{(i + 1) * 100:06d}"
            rows.append({
                "nyct2010_gid": code * 1000 + i, "ctlabel": f"{i + 1}", "borocode": code, "boroname": name,
                "ct2010": ct, "boroct2010": f"{code}{ct}", "cdeligibil": "E" if i % 3 else "I",
                "ntacode": f"{name[:2].upper()}{i % 20:02d}", "ntaname": f"{name} area {i % 20}",
                "puma": f"{3700 + code * 100 + i % 10}",
            })
    return {key: np.array([r[key] for r in rows]) for key in rows[0]}


TRACTS = _tracts()
TRACT_COLUMNS = {key: pa.array(values) for key, values in TRACTS.items()}  # taken by index, in Arrow


# A batch is generated in memory: measured ~2-3 KB of peak memory per row (numpy columns, then Arrow), so a batch
# of 250,000 rows stays under 1 GB whatever the file's size. Batch 0 draws from the file's own seed as files did when
# each was generated whole, so a file of up to BATCH_ROWS rows (make report's, the notebooks') keeps its bytes.
BATCH_ROWS = 250_000
PARALLEL_FROM_ROWS = 1_000_000
MAX_ROWS = 2**63 - 1  # trip_id is a bigint


@dataclass(frozen=True)
class TaxiDataset:
    rows: int
    files: int = 4
    seed: int = 42

    def __post_init__(self):
        rows = whole("rows", self.rows, maximum=MAX_ROWS, why="trip_id is a bigint")
        files = whole("files", self.files, maximum=rows, why="at most one file per row")
        object.__setattr__(self, "rows", rows)  # frozen: store the ints (1e5 -> 100000) the name and files use
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "seed", whole("seed", self.seed, minimum=0))

    @property
    def name(self) -> str:
        return f"taxi_r{self.rows}_f{self.files}_s{self.seed}"

    def rows_in_file(self, index: int) -> tuple[int, int]:
        """(first trip_id, row count) of file `index`: rows split as evenly as possible."""
        base, extra = divmod(self.rows, self.files)
        return index * base + min(index, extra), base + (index < extra)

    def batches(self, index: int) -> Iterator[pa.Table]:
        """File `index`'s rows, BATCH_ROWS at a time, each batch from its own seed."""
        first, count = self.rows_in_file(index)
        for batch, start in enumerate(range(0, count, BATCH_ROWS)):
            rng = np.random.default_rng([self.seed, index] if batch == 0 else [self.seed, index, batch])
            yield generate(rng, first + start, min(BATCH_ROWS, count - start))

    def table(self, index: int) -> pa.Table:
        """File `index` whole, in memory: for small files (write() streams)."""
        return pa.concat_tables(self.batches(index))

    def write(self, folder: Path, file_format: str = "orc") -> list[Path]:
        """Write every file of the dataset into `folder` (skipping files already complete); files of more than a
        batch in all go to one process per core (generation and ORC's zlib are CPU-bound, one core each)."""
        if file_format not in FORMATS:
            raise PerfkitError(f"unknown file format {file_format!r}: use one of {', '.join(FORMATS)}")
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / f"part-{index:05d}.{file_format}" for index in range(self.files)]
        todo = [index for index, path in enumerate(paths) if not path.exists()]
        workers = min(len(todo), os.cpu_count() or 1)
        if workers < 2 or self.rows < PARALLEL_FROM_ROWS:
            for index in todo:
                self.write_file(index, paths[index], file_format)
            return paths
        # spawned, not forked: the caller may hold threads (an engine's client, a progress bar) a fork would copy
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for done in [pool.submit(self.write_file, index, paths[index], file_format) for index in todo]:
                done.result()  # a worker's error, raised here
        return paths

    def write_file(self, index: int, path: Path, file_format: str) -> None:
        """File `index`, a batch at a time, under a temporary name of this write's own (a concurrent run writing the
        same file cannot move it away), then renamed into place whole."""
        with atomic.replacing(path) as tmp, _writer(tmp, file_format) as writer:
            for batch in self.batches(index):
                writer.write(batch)


@contextmanager
def _writer(path: Path, file_format: str):
    """A file writer taking one batch at a time: ORC (zlib) or Parquet (snappy), as the studies wrote them."""
    writer = (orc.ORCWriter(str(path), compression="zlib") if file_format == "orc"
              else pq.ParquetWriter(str(path), ARROW_SCHEMA, compression="snappy"))
    try:
        yield writer
    finally:
        writer.close()


def generate(rng: np.random.Generator, first_id: int, n: int) -> pa.Table:
    cab = rng.choice(CAB_TYPES, n, p=CAB_P)
    pickup = FIRST_DAY + rng.integers(0, DAYS * 86_400, n).astype("timedelta64[s]")
    minutes = np.clip(rng.lognormal(2.4, 0.6, n), 1, 240)
    dropoff = pickup + np.round(minutes * 60).astype("timedelta64[s]")
    distance = np.round(np.clip(rng.lognormal(0.7, 0.8, n), 0.01, 80.0), 2)  # right-skewed, median ~2 mi
    passengers = rng.choice(10, n, p=PASSENGER_P / PASSENGER_P.sum()).astype(np.int16)
    payment = rng.choice(PAYMENT_TYPES, n, p=PAYMENT_P)
    fare = np.round(2.5 + 2.5 * distance + 0.3 * minutes + rng.normal(0, 0.5, n).clip(-1, 1), 2)
    extra = rng.choice([0.0, 0.5, 1.0], n, p=[0.5, 0.35, 0.15])
    mta_tax = np.full(n, 0.5)
    tip = np.where(payment == "CRD", np.round(fare * rng.uniform(0.0, 0.3, n), 2), 0.0)
    tolls = np.where(rng.random(n) < 0.05, 5.54, 0.0)
    surcharge = np.where(pickup >= np.datetime64("2015-01-01", "us"), 0.3, 0.0)
    total = np.round(fare + extra + mta_tax + tip + tolls + surcharge, 2)
    ehail = np.where(cab == "green", 0.0, np.nan)

    day = ((pickup - FIRST_DAY) // np.timedelta64(1, "D")).astype(np.int64)
    season = np.cos(2 * np.pi * (day % 365) / 365)  # weather is a function of the day, as in the join
    max_temp = np.round(62 - 22 * season + _day_noise(day, 1) * 8).astype(np.int16)

    lon0, lat0 = -73.98, 40.75
    columns = {
        "trip_id": np.arange(first_id, first_id + n, dtype=np.int64),
        "vendor_id": rng.choice(VENDORS, n),
        "pickup_datetime": pickup.astype("datetime64[us]"),
        "dropoff_datetime": dropoff.astype("datetime64[us]"),
        "store_and_fwd_flag": np.where(rng.random(n) < 0.01, "Y", "N"),
        "rate_code_id": rng.choice([1, 2, 3, 4, 5, 6], n, p=[0.97, 0.015, 0.005, 0.004, 0.005, 0.001]).astype(np.int16),
        "pickup_longitude": np.round(lon0 + rng.normal(0, 0.03, n), 6),
        "pickup_latitude": np.round(lat0 + rng.normal(0, 0.025, n), 6),
        "dropoff_longitude": np.round(lon0 + rng.normal(0, 0.04, n), 6),
        "dropoff_latitude": np.round(lat0 + rng.normal(0, 0.03, n), 6),
        "passenger_count": passengers,
        "trip_distance": distance,
        "fare_amount": fare,
        "extra": extra,
        "mta_tax": mta_tax,
        "tip_amount": tip,
        "tolls_amount": tolls,
        "ehail_fee": ehail,
        "improvement_surcharge": surcharge,
        "total_amount": total,
        "payment_type": payment,
        "trip_type": np.where(cab == "green", rng.choice([1, 2], n, p=[0.97, 0.03]), -1).astype(np.int16),
        "cab_type": cab,
        "precipitation": np.clip(np.round(_day_noise(day, 2) * 40), 0, None).astype(np.int16),
        "snow_depth": np.where(season > 0.6, np.clip(np.round(_day_noise(day, 3) * 6), 0, None), 0).astype(np.int16),
        "snowfall": np.where(season > 0.7, np.clip(np.round(_day_noise(day, 4) * 4), 0, None), 0).astype(np.int16),
        "max_temperature": max_temp,
        "min_temperature": (max_temp - 10 - np.abs(np.round(_day_noise(day, 5) * 5))).astype(np.int16),
        "average_wind_speed": np.round(4 + np.abs(_day_noise(day, 6)) * 6).astype(np.int16),
    }
    for side in ("pickup", "dropoff"):
        borough = rng.choice(len(BOROUGHS), n, p=BOROUGH_P)
        tract = borough * TRACTS_PER_BOROUGH + rng.integers(0, TRACTS_PER_BOROUGH, n)
        tract = pa.array(tract)
        for key, values in TRACT_COLUMNS.items():
            columns[f"{side}_{key}"] = values.take(tract)
        lon, lat = (_as_text(columns[f"{side}_{axis}"]) for axis in ("longitude", "latitude"))
        columns[side] = pc.binary_join_element_wise("POINT(", lon, " ", lat, ")", "")
    arrays = []
    for name, typ, _ in SCHEMA:
        values = columns[name]
        if isinstance(values, pa.Array):  # built in Arrow already (text: numpy's is ten times slower)
            arrays.append(values.cast(typ))
            continue
        mask = None
        if name == "ehail_fee":
            mask = np.isnan(values)
        elif name == "trip_type":
            mask = values < 0
        arrays.append(pa.array(values, type=typ, mask=mask))
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def _as_text(values: np.ndarray) -> pa.Array:
    """Each coordinate as numpy's str() writes it (-74.0, not Arrow's -74), made by Arrow. Coordinates only: numpy
    writes a float below 1e-4 in exponent form, Arrow does not."""
    text = pc.cast(pa.array(values), pa.string())
    whole_number = pa.array(np.floor(values) == values)
    return pc.if_else(whole_number, pc.binary_join_element_wise(text, ".0", ""), text)


def _day_noise(day: np.ndarray, salt: int) -> np.ndarray:
    """A repeatable value in [-1, 1) per (day, salt): same day, same weather, in every file."""
    keys, each_day = np.unique(day, return_inverse=True)
    digests = [hashlib.blake2b(f"{k}:{salt}".encode(), digest_size=4).digest() for k in keys]
    values = np.array([int.from_bytes(d, "big") for d in digests])
    return (values / 2**31 - 1.0)[each_day]
