"""S3A's statistics (org.apache.hadoop.fs.s3a.Statistic) under perfkit's counter names (perfkit.accounting.counters).

Spark's S3A file system gives them as IOStatistics (through py4j), HiveServer2's as its metrics source in JMX; both
name them alike. Exact with the classic input stream, which the lab sets (perfkit.s3_retries): Hadoop 3.5's default
`analytics` stream does not count its GETs."""
from __future__ import annotations

from collections.abc import Mapping

S3A_FAULTS = {"s3_throttled": "store_io_throttled", "s3_retried": "store_io_retry"}
S3A_IO = {"s3_get": ("action_http_get_request",), "s3_head": ("action_http_head_request",),
          "s3_list": ("object_list_request", "object_continue_list_request"),
          "s3_put": ("object_put_request",), "s3_copy": ("object_copy_requests",),
          "s3_delete": ("object_delete_request", "object_bulk_delete_request"),
          "s3_bytes_read": ("stream_read_total_bytes",), "s3_bytes_written": ("object_put_bytes",),
          **{name: (key,) for name, key in S3A_FAULTS.items()}}


def io_counters(s3a: Mapping) -> dict[str, int]:
    """perfkit's counters from S3A's statistics by name (a missing one counts 0)."""
    return {name: sum(int(s3a.get(key) or 0) for key in keys) for name, keys in S3A_IO.items()}


def fault_counters(s3a: Mapping) -> dict[str, int]:
    """The throttled and retried requests alone."""
    return {name: int(s3a.get(key) or 0) for name, key in S3A_FAULTS.items()}
