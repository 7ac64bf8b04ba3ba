"""The local stand-in for CloudWatch's EBS metrics: /proc/diskstats of the block device under a path.

Same schema as the CloudWatch fetcher: VolumeReadBytes/WriteBytes/ReadOps/WriteOps as sums per
period, VolumeQueueLength as the average number of requests in flight (weighted I/O time / time).
"""
from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.metrics import SCHEMA

SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own sector size
# field positions after "major minor name" (Documentation/admin-guide/iostats.rst)
READS, SECTORS_READ, WRITES, SECTORS_WRITTEN, WEIGHTED_MS = 0, 2, 4, 6, 10


def device_of(path: str | Path) -> str:
    """The block device (as named in /proc/diskstats) that holds `path`."""
    try:
        dev = os.stat(path).st_dev
    except FileNotFoundError:
        raise PerfkitError(f"{path} does not exist: give a path on the disk to watch") from None
    link = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if not link.exists():
        raise PerfkitError(f"{path} is not on a block device (device {os.major(dev)}:{os.minor(dev)} is virtual, "
                           "e.g. tmpfs or overlay): give a path on a disk")
    return link.resolve().name


def read_counters(device: str, source: Path = Path("/proc/diskstats")) -> list[int]:
    for line in source.read_text().splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[2] == device:
            return [int(v) for v in parts[3:]]
    raise PerfkitError(f"block device {device} is not in {source}")


def deltas_to_frame(device: str, samples: list[tuple[datetime, float, list[int]]], period: float) -> pd.DataFrame:
    """Tidy rows from consecutive (wall time, monotonic seconds, counters) samples, sums scaled to `period`."""
    rows = []
    for (t0, m0, c0), (_, m1, c1) in zip(samples, samples[1:]):
        elapsed = m1 - m0
        if elapsed <= 0:
            continue
        scale = period / elapsed
        d = [b - a for a, b in zip(c0, c1)]
        rows += [
            (device, "VolumeReadBytes", t0, d[SECTORS_READ] * SECTOR * scale, "Bytes"),
            (device, "VolumeWriteBytes", t0, d[SECTORS_WRITTEN] * SECTOR * scale, "Bytes"),
            (device, "VolumeReadOps", t0, d[READS] * scale, "Count"),
            (device, "VolumeWriteOps", t0, d[WRITES] * scale, "Count"),
            (device, "VolumeQueueLength", t0, d[WEIGHTED_MS] / (elapsed * 1000), "Count"),
        ]
    frame = pd.DataFrame(rows, columns=SCHEMA)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame


class DiskStatsSampler:
    """Samples the device under `path` every `period` seconds in a background thread.

        with DiskStatsSampler("/data", period=1) as sampler:
            run_the_workload()
        frame = sampler.frame()
    """

    def __init__(self, path: str | Path, period: float = 1.0):
        if period <= 0:
            raise PerfkitError(f"sampling period must be positive (got {period})")
        self.device, self.period = device_of(path), period
        self.samples: list[tuple[datetime, float, list[int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="diskstats", daemon=True)

    def _sample(self) -> None:
        self.samples.append((datetime.now(timezone.utc), time.monotonic(), read_counters(self.device)))

    def _run(self) -> None:
        self._sample()
        while not self._stop.wait(self.period):
            self._sample()
        self._sample()  # the last, partial period

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def frame(self) -> pd.DataFrame:
        return deltas_to_frame(self.device, self.samples, self.period)
