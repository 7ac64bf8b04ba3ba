"""perfkit's names for I/O counters, the same for every source (server log, JMX, CloudWatch, engine statistics)."""
from __future__ import annotations

import math
from collections.abc import Mapping

# S3 requests by type, as S3 prices and CloudWatch counts them (a multipart upload's parts are PUTs)
S3_REQUESTS = ("s3_get", "s3_head", "s3_list", "s3_put", "s3_copy", "s3_delete")

LABELS = {"s3_get": "GET", "s3_head": "HEAD", "s3_list": "LIST", "s3_put": "PUT", "s3_copy": "COPY",
          "s3_delete": "DELETE", "s3_bytes_read": "S3 MB read", "s3_bytes_written": "S3 MB written",
          "s3_throttled": "throttled", "s3_retried": "retried", "s3_errors": "errors",
          "hdfs_bytes_read": "HDFS MB read", "hdfs_read_ops": "block reads", "hdfs_bytes_written": "HDFS MB written",
          "hdfs_remote_bytes_read": "HDFS MB to remote readers",
          "hdfs_block_locations": "getBlockLocations", "hdfs_listings": "listings",
          "tier_bytes_read": "MB read through the tier"}


def difference(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """after - before for each counter both have; a counter that went down (its process restarted) is NaN:
    unknown, never a negative or a restart's partial count."""
    found = {}
    for name in after:
        if name in before:
            delta = after[name] - before[name]
            found[name] = delta if delta >= 0 else math.nan
    return found


def total(*counts: Mapping[str, float]) -> dict[str, float]:
    """The counters of several sources of one side summed (e.g. every DataNode's)."""
    found: dict[str, float] = {}
    for one in counts:
        for name, value in one.items():
            found[name] = found.get(name, 0) + value
    return found


def requests(counts: Mapping[str, float]) -> float:
    """S3 requests of every type; NaN when none was counted."""
    values = [counts[name] for name in S3_REQUESTS if name in counts]
    return math.fsum(values) if values else math.nan
