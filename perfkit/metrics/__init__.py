"""Volume metrics in one tidy schema, from CloudWatch (EBS) or from the local /proc/diskstats.

Every source returns a frame with the columns of SCHEMA: one row per (volume, metric, timestamp).
"""
from __future__ import annotations

import pandas as pd

SCHEMA = ["volume", "metric", "timestamp", "value", "unit"]
MiB = 1 << 20

# CloudWatch's EBS metrics, the statistic that makes sense for each, and its unit
EBS_METRICS = {
    "VolumeReadBytes": ("Sum", "Bytes"),
    "VolumeWriteBytes": ("Sum", "Bytes"),
    "VolumeReadOps": ("Sum", "Count"),
    "VolumeWriteOps": ("Sum", "Count"),
    "VolumeTotalReadTime": ("Sum", "Seconds"),
    "VolumeTotalWriteTime": ("Sum", "Seconds"),
    "VolumeIdleTime": ("Sum", "Seconds"),
    "VolumeQueueLength": ("Average", "Count"),
    "BurstBalance": ("Average", "Percent"),
    "VolumeThroughputPercentage": ("Average", "Percent"),
    "VolumeConsumedReadWriteOps": ("Sum", "Count"),
}
DEFAULT_METRICS = ["VolumeReadBytes", "VolumeWriteBytes", "VolumeReadOps", "VolumeWriteOps",
                   "VolumeQueueLength", "BurstBalance"]


def empty_frame() -> pd.DataFrame:
    return pd.DataFrame(columns=SCHEMA)


def with_throughput(frame: pd.DataFrame, period: int) -> pd.DataFrame:
    """Add ReadThroughput and WriteThroughput (MiB/s) = Sum(Volume{Read,Write}Bytes) / period, as the study did."""
    derived = []
    for source, name in (("VolumeReadBytes", "ReadThroughput"), ("VolumeWriteBytes", "WriteThroughput")):
        rows = frame[frame["metric"] == source]
        if len(rows):
            derived.append(rows.assign(metric=name, value=rows["value"] / period / MiB, unit="MiB/Second"))
    return pd.concat([frame, *derived], ignore_index=True) if derived else frame
