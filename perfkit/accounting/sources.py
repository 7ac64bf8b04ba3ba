"""The storages' own counters a profile offers, found the same way in the lab and on a cluster."""
from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass
class ServerSources:
    """The storages' own counters a profile offers: the sources read around each run (each with a `name`, the
    `storage` it counts, None for every storage, and `read()`), and what a run on a storage says instead: why that
    storage's own count is not read per run (`not_per_run`), why one counter of it is blank (`not_counted`)."""
    read: list = field(default_factory=list)
    not_per_run: dict[str, str] = field(default_factory=dict)  # storage -> why
    not_counted: dict[str, dict[str, str]] = field(default_factory=dict)  # storage -> {counter: why}

    def on(self, storage: str | None) -> ServerSources:
        """What a run on `storage` reads and says (None: every storage's): a snapshot costs round trips, and a run
        pays two."""
        if storage is None:
            return self
        return ServerSources([s for s in self.read if getattr(s, "storage", None) in (None, storage)],
                             {k: why for k, why in self.not_per_run.items() if k == storage},
                             {k: whys for k, whys in self.not_counted.items() if k == storage})


def server_sources(profile) -> ServerSources:
    """The S3 server's request log where the provider has one on this machine (the lab's server; on AWS the
    server-side count is CloudWatch's, per window), and HDFS's NameNode and DataNode JMX; and what is not counted per
    run, with why, which each run then says."""
    found = ServerSources()
    log = profile.provider.s3_request_log()
    if log is not None:
        found.read.append(S3AccessLog(log, skip_existing=True))
    else:
        found.not_per_run["s3"] = s3_not_per_run(profile)
    try:
        wire, why_not = profile.provider.s3_wire_bytes(), None
    except Exception as err:  # noqa: BLE001 - the emulator cannot be asked: S3's bytes are not counted at the server
        wire, why_not = None, f"not counted: the network emulator could not be asked ({root_cause(err, 160)})"
    if wire is not None:
        found.read.append(Counted("S3 bytes counted by the network emulator (responses, headers included)", wire, "s3"))
    elif log is not None:  # the server counts each run's requests but not their bytes: its runs say why
        found.not_counted["s3"] = {"s3_bytes_read": why_not or profile.provider.s3_bytes_not_counted()}
    if profile.webhdfs_url:
        period = profile.hadoop_metrics_period_s
        if hdfs_per_run(profile):
            found.read.append(HdfsJmx(profile.webhdfs_url, period))
        else:
            found.not_per_run[HdfsJmx.storage] = hdfs_not_per_run(period)
    return found


def hdfs_per_run(profile) -> bool:
    """Whether HDFS's own counters are read around each run (else over an experiment's window: hdfs_window)."""
    return profile.hadoop_metrics_period_s <= PER_RUN_PERIOD_S


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
