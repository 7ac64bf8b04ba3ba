"""The storages' own counters a profile offers, found the same way in the lab and on a cluster."""
from __future__ import annotations

from perfkit.accounting.hdfs_jmx import HdfsJmx
from perfkit.accounting.s3_access_log import S3AccessLog


# HDFS's own counters are read around each run only where its daemons refresh their JMX at least this often: each
# read must wait a metrics period after the one before (perfkit.accounting.metrics_period), so at Hadoop's default
# 10 s a run on HDFS would be held up to 11 s by its after read, and the next one by its before read
PER_RUN_PERIOD_S = 0.1


class Counted:
    """A source that is a function returning cumulative counters."""

    def __init__(self, name: str, read, storage: str | None = None):
        self.name, self.read, self.storage = name, read, storage


def server_sources(profile) -> list:
    """The S3 server's request log where the provider has one on this machine (the lab's server; on AWS the
    server-side count is CloudWatch's, per window), and HDFS's NameNode and DataNode JMX."""
    found: list = []
    log = profile.provider.s3_request_log()
    if log is not None:
        found.append(S3AccessLog(log, skip_existing=True))
    try:
        wire = profile.provider.s3_wire_bytes()
    except Exception:  # noqa: BLE001 - no emulator to ask: S3's bytes are not counted at the server
        wire = None
    if wire is not None:
        found.append(Counted("S3 bytes counted by the network emulator (responses, headers included)", wire, "s3"))
    if profile.webhdfs_url:
        period = profile.hadoop_metrics_period_s
        found.append(HdfsJmx(profile.webhdfs_url, period) if hdfs_per_run(profile)
                     else NotPerRun(HdfsJmx.name, HdfsJmx.storage, hdfs_not_per_run(period)))
    return found


def hdfs_per_run(profile) -> bool:
    """Whether HDFS's own counters are read around each run (else over an experiment's window: hdfs_window)."""
    return profile.hadoop_metrics_period_s <= PER_RUN_PERIOD_S


class NotPerRun:
    """A storage's own counters that are not read around each run: a run on that storage says why (`why`)."""

    def __init__(self, name: str, storage: str, why: str):
        self.name, self.storage, self.why = name, storage, why


def hdfs_not_per_run(period_s: float) -> str:
    return (f"not counted per run but over the experiment's window (its HDFS window): HDFS's daemons refresh their "
            f"JMX every {period_s:g} s (the profile's hadoop_metrics_period_s), and a fresh read before and after each "
            f"run would hold it up to {1.1 * period_s:.3g} s. To count each run, set "
            f"*.periodMillis={PER_RUN_PERIOD_S * 1000:g} in "
            f"hadoop-metrics2.properties on the NameNode and the DataNodes, restart them, and set "
            f"hadoop_metrics_period_s: {PER_RUN_PERIOD_S:g} in the profile")
