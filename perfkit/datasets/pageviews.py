"""The study's pageview shape: a table on S3 partitioned by year/month/day/hour, one Parquet file per partition,
deterministic for a seed. Small: it shows promotion and demotion, it is not a load test.

    table = place_pageviews(profile, hive, days=2, hours=3)   # perfkit.pageviews_2d3h_s5, partitions added
"""
from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from perfkit.storages import s3 as s3_storage
from perfkit.engines import DATABASE, OWNER_PROPERTY
from perfkit.errors import PerfkitError

FIRST_DAY = datetime(2026, 11, 1, tzinfo=timezone.utc)
COLUMNS = [("url", "string"), ("user_id", "bigint"), ("bytes", "bigint"), ("view_ts", "timestamp")]
KEYS = ("year", "month", "day", "hour")


def partition_names(days: int, hours: int) -> list[str]:
    names = []
    for d in range(days):
        for h in range(hours):
            t = FIRST_DAY + timedelta(days=d, hours=h)
            names.append(f"year={t.year}/month={t.month:02d}/day={t.day:02d}/hour={t.hour:02d}")
    return names


def _rows(seed: int, index: int, start: datetime, rows: int) -> pa.Table:
    rng = np.random.default_rng([seed, index])
    seconds = np.sort(rng.integers(0, 3600, rows))
    return pa.table({
        "url": pa.array([f"/page/{n}" for n in rng.integers(0, 500, rows)]),
        "user_id": pa.array(rng.integers(1, 10_000, rows), pa.int64()),
        "bytes": pa.array(rng.integers(200, 200_000, rows), pa.int64()),
        "view_ts": pa.array([start + timedelta(seconds=int(s)) for s in seconds], pa.timestamp("ms")),
    })


def place_pageviews(profile, engine, days: int = 2, hours: int = 3, rows: int = 2000, seed: int = 5) -> str:
    """Write the partitions to S3 (once; same request, same bytes), register the external partitioned table
    through `engine` (Hive), and return its name."""
    for name, value in (("days", days), ("hours", hours), ("rows", rows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise PerfkitError(f"{name}={value!r}: give a whole number of at least 1")
    if hours > 24:
        raise PerfkitError(f"hours={hours}: a day has 24 hours; give 1 to 24")
    table = f"pageviews_{days}d{hours}h_r{rows}_s{seed}"
    base = profile.s3_key("datasets", table)
    s3 = s3_storage.shared_s3_client(profile)
    present = s3_storage.s3_listing(s3, profile.s3_bucket, base)
    partitions = partition_names(days, hours)
    for i, name in enumerate(partitions):
        key = f"{name}/part-0.parquet"
        if key in present:
            continue
        start = FIRST_DAY + timedelta(days=i // hours, hours=i % hours)
        buffer = io.BytesIO()
        pq.write_table(_rows(seed, i, start, rows), buffer)
        s3.put_object(Bucket=profile.s3_bucket, Key=f"{base}/{key}", Body=buffer.getvalue())
    location = profile.s3_url("datasets", table)
    engine.drop_own_table(table)
    cols = ", ".join(f"`{n}` {t}" for n, t in COLUMNS)
    keys = ", ".join(f"`{k}` int" for k in KEYS)
    engine.execute(f"CREATE EXTERNAL TABLE {DATABASE}.{table} ({cols}) PARTITIONED BY ({keys}) STORED AS PARQUET "
                   f"LOCATION '{location}' TBLPROPERTIES ('{OWNER_PROPERTY}'='true')")
    adds = " ".join(
        f"PARTITION ({', '.join(f'`{k}`={int(v)}' for k, v in (p.split('=') for p in name.split('/')))}) "
        f"LOCATION '{location}/{name}'" for name in partitions)
    engine.execute(f"ALTER TABLE {DATABASE}.{table} ADD {adds}")
    return f"{DATABASE}.{table}"
