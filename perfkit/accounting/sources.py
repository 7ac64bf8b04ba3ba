"""The storages' own counters a profile offers, found the same way in the lab and on a cluster."""
from __future__ import annotations

from perfkit.accounting.hdfs_jmx import HdfsJmx
from perfkit.accounting.metrics_period import fresh_after
from perfkit.accounting.s3_access_log import S3AccessLog
from perfkit.errors import root_cause


# HDFS's own counters are read around each run only where its daemons refresh their JMX at least this often: each
# read must wait a metrics period after the one before (perfkit.accounting.metrics_period), so at Hadoop's default
# 10 s a run on HDFS would be held up to 10 s by its after read, and the next one by its before read
PER_RUN_PERIOD_S = 0.1


class Counted:
    """A source that is a function returning cumulative counters."""

    def __init__(self, name: str, read, storage: str | None = None):
        self.name, self.read, self.storage = name, read, storage


def server_sources(profile) -> list:
    """The S3 server's request log where the provider has one on this machine (the lab's server; on AWS the
    server-side count is CloudWatch's, per window), and HDFS's NameNode and DataNode JMX; and what is not counted per
    run, with why (NotPerRun: a storage's whole count; NotCounted: one counter), which each run then says."""
    found: list = []
    log = profile.provider.s3_request_log()
    if log is not None:
        found.append(S3AccessLog(log, skip_existing=True))
    else:
        found.append(NotPerRun("S3's own request count", "s3", s3_not_per_run(profile)))
    try:
        wire, why_not = profile.provider.s3_wire_bytes(), None
    except Exception as err:  # noqa: BLE001 - the emulator cannot be asked: S3's bytes are not counted at the server
        wire, why_not = None, f"not counted: the network emulator could not be asked ({root_cause(err, 160)})"
    if wire is not None:
        found.append(Counted("S3 bytes counted by the network emulator (responses, headers included)", wire, "s3"))
    elif log is not None:  # the server counts each run's requests but not their bytes: its runs say why
        found.append(NotCounted("s3_bytes_read", "s3", why_not or profile.provider.s3_bytes_not_counted()))
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


class NotCounted:
    """A counter a storage's own count lacks (`counter`, perfkit's name): each run on that storage says why."""

    def __init__(self, counter: str, storage: str, why: str):
        self.counter, self.storage, self.why = counter, storage, why


def s3_not_per_run(profile) -> str:
    """Why a run on S3 has no server-side count where no S3 server logs each request for perfkit (AWS): S3's own count
    is CloudWatch's request metrics, per minute."""
    if profile.s3_request_metrics or profile.s3_request_metrics_filter:
        return ("not counted per run but over the experiment's window (its S3 window): S3 counts requests in "
                "CloudWatch per minute")
    return ("not counted: S3's own count is CloudWatch's request metrics, which this profile does not ask for; set "
            "s3_request_metrics: true in the profile (or name a filter: s3_request_metrics_filter) to count each "
            "experiment's window")


def hdfs_not_per_run(period_s: float) -> str:
    return (f"not counted per run but over the experiment's window (its HDFS window): HDFS's daemons refresh their "
            f"JMX every {period_s:g} s (the profile's hadoop_metrics_period_s), and a fresh read before and after each "
            f"run would hold it up to {fresh_after(period_s):.3g} s. To count each run, set "
            f"*.periodMillis={PER_RUN_PERIOD_S * 1000:g} in "
            f"hadoop-metrics2.properties on the NameNode and the DataNodes, restart them, and set "
            f"hadoop_metrics_period_s: {PER_RUN_PERIOD_S:g} in the profile")
