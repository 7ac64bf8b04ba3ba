"""The per-window counts an experiment's runs get: each storage's own count over the window of the runs, where it is
not counted around each run (S3's CloudWatch request metrics, HDFS's JMX where its daemons refresh it too seldom)."""
from __future__ import annotations

import contextlib

from perfkit.accounting import cloudwatch_s3, hdfs_window, window

OPENERS = ((cloudwatch_s3.COUNTED, window.s3_request_window), (hdfs_window.HDFS, hdfs_window.hdfs_read_window))


@contextlib.contextmanager
def storage_windows(profile, results, storages, wanted: bool = True):
    """Around an experiment's runs: the window of each storage in `storages` (the placed ones) that its provider
    counts per window; each saved in results.config as it closes (perfkit.accounting.counted_window)."""
    with contextlib.ExitStack() as stack:
        for counted, opener in OPENERS:
            stack.enter_context(opener(profile, results, wanted and counted in storages))
        yield
