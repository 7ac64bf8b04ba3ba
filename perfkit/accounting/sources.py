"""The storages' own counters a profile offers, found the same way in the lab and on a cluster."""
from __future__ import annotations

from perfkit.accounting.hdfs_jmx import HdfsJmx
from perfkit.accounting.s3_access_log import S3AccessLog


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
        found.append(HdfsJmx(profile.webhdfs_url, profile.provider.metrics_period_s()))
    return found
