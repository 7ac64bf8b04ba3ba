"""EBS st1 throughput and burst balance: TestDFSIO measured (lab or cluster), CloudWatch or diskstats
metrics over its window, and the st1 model for the volume configurations being compared.

    study = St1Study(load_profile("lab"))                      # TestDFSIO on the lab, diskstats sampled
    study = St1Study(load_profile("emr", bucket=...), source="cloudwatch", cluster_id="j-...")
    report = run_report(study); report.table(); report.metrics()  # perfkit.presenting.st1_report

The study measures; its report (St1Report) is built from the run's records alone, so the run records all the report
needs: the price basis, the read's page-cache note, the lab's diskstats samples or CloudWatch's metrics (fetched at
the end of the run) and the volumes EC2 described.
"""
from __future__ import annotations

import contextlib
import tempfile
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from perfkit import validate
from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.base import Experiment
from perfkit.experiments.attempt import Run, StorageHealth, Watched
from perfkit.storages import storage_probes
from perfkit.metrics import SCHEMA, MiB
from perfkit.metrics import cloudwatch as cw
from perfkit.metrics.st1 import MAX_GIB, MIN_GIB
from perfkit.storages.pricing import price_table
from perfkit.protocol import drop_page_cache
from perfkit.results import ResultSet, now
from perfkit.testdfsio import DfsioResult, TestDfsio
from perfkit.parameters import check_fields, param

EXPERIMENT = "st1_throughput_burst"
SOURCES = ("lab", "cloudwatch")
HEALTH_INTERVAL_S = 1.0  # how often HDFS is probed while TestDFSIO runs


@dataclass
class St1Study(Experiment):
    experiment = EXPERIMENT

    profile: Profile
    source: str = param("lab", "where the volumes' figures come from", check=validate.choice, choices=SOURCES)
    cluster_id: str = param("", "cloudwatch: the EMR cluster whose volumes to watch ...", check=validate.text)
    volume_ids: list[str] = param(help="... or these volumes", factory=list, check=validate.names, empty_ok=True)
    region: str = param("us-east-1", "the volumes' AWS region", check=validate.text, empty_ok=False)
    window_start: str = param("", "ISO 8601 UTC; empty: the TestDFSIO run's own window", check=validate.iso_time)
    window_end: str = param("", "ISO 8601 UTC; empty with window_start", check=validate.iso_time)
    period: int = param(60, "seconds: CloudWatch's period, or the diskstats sampling period on the lab",
                        check=validate.whole)
    run_testdfsio: bool = param(True, "run TestDFSIO (write, then read) for the window", check=validate.flag)
    files: int = param(4, "TestDFSIO -nrFiles", check=validate.whole)
    file_mb: int = param(64, "TestDFSIO -size (MB)", check=validate.whole)
    configurations: list = param(help="the model's volume configurations: [volumes per node, GiB each] (checked "
                                      "in __post_init__)",
                                 factory=lambda: [[4, 512], [2, 1024], [1, 2048]])
    nodes: int = param(5, "DataNodes in the model", check=validate.whole)
    workload_files: int = param(400, "the modelled workload: TestDFSIO files ...", check=validate.whole)
    workload_file_gb: float = param(4, "... of this many GB each (the published 400 x 4 GB)", check=validate.number,
                                    above=0, unit="GB")
    replication: int = param(3, "HDFS replicas a write stores, in the model", check=validate.whole)
    price_per_gb_month: float | None = param(None, "USD per GB-month of st1; None: the price table's (prices)",
                                             check=validate.number, minimum=0, unit="USD",
                                             none_means="the price table's")
    prices: str | None = param(None, "a YAML file of your own prices (perfkit.prices); None: the shipped AWS list "
                                     "prices")
    node_cap_mib_s: float | None = param(None, "an instance's EBS bandwidth, if it should limit the model",
                                         check=validate.number, above=0, unit="MiB/s", none_means="no cap")

    def __post_init__(self):
        """Validate every parameter before anything runs (they may arrive as any YAML value)."""
        check_fields(self)
        if bool(self.window_start) != bool(self.window_end):
            raise PerfkitError("give both window_start and window_end (ISO 8601), "
                               "or neither for the TestDFSIO run's own window")
        if self.window_start and _utc(self.window_start) >= _utc(self.window_end):
            raise PerfkitError(f"window_start={self.window_start} is not before window_end={self.window_end}: "
                               "swap them, or widen the window")
        self.price_table = price_table(self.prices)
        self.price_given = self.price_per_gb_month is not None  # a price given by hand wins over the table's
        if self.price_per_gb_month is None:
            self.price_per_gb_month = self.price_table.ebs_per_gb_month("st1")
        self.configurations = _configurations(self.configurations)
        if self.source == "cloudwatch" and not (self.cluster_id or self.volume_ids):
            raise PerfkitError("source 'cloudwatch' needs a cluster_id or volume_ids")
        if self.source == "cloudwatch" and not self.run_testdfsio and not self.window_start:
            raise PerfkitError("without a TestDFSIO run, give window_start and window_end (ISO 8601, UTC)")
        self.dfsio: dict[str, DfsioResult] = {}  # TestDFSIO's figures of each operation that worked
        self.window: tuple[datetime, datetime] | None = None
        self.results: ResultSet | None = None

    # -- measuring: the steps and one attempt (perfkit.experiments.runner owns the loop) --------------------------
    behind_s3_network = False  # HDFS's disks only
    keep_empty = False  # nothing measured (run_testdfsio=false): no empty result file
    step_unit = "operation"

    def ready(self, progress: bool = True) -> None:
        """Nothing to place: TestDFSIO writes its own files."""

    def steps(self) -> list[str]:
        """TestDFSIO's write, then its read of what it wrote."""
        return ["write", "read"] if self.run_testdfsio else []

    def record_of(self, operation: str) -> dict:
        return dict(subject="testdfsio", storage="hdfs", case=operation, phase="measured", iteration=0)

    def control(self):
        """The drift control: TestDFSIO writes its own files, so none is there to read before it: a status call of
        HDFS's root to its NameNode (the same request each time) stands for HDFS's conditions."""
        from perfkit.experiments.control import READS, DriftControl
        from perfkit.storages import get_storage

        if not self.run_testdfsio:
            return None
        hdfs = get_storage("hdfs", self.profile)
        return DriftControl({"hdfs": lambda: hdfs.client.status("/")},
                            f"a status call of / to HDFS's NameNode, {READS} times at start and end")

    @contextlib.contextmanager
    def session(self, results: ResultSet):
        """TestDFSIO's work folder (removed after), and on the lab the DataNodes' disk sampled throughout (this
        machine's: diskstats), its samples recorded with the run whatever ends it; at the end, the window the
        figures are read over (given, or TestDFSIO's own) and, from CloudWatch, the volumes' metrics over it,
        recorded with the run."""
        sampler = None
        try:
            with contextlib.ExitStack() as stack:
                if self.run_testdfsio:
                    work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="perfkit-testdfsio-")))
                    self.bench = TestDfsio(self.profile, self.files, self.file_mb, work, run_id=results.run_id)
                    self.bench_started = False
                    stack.callback(self._remove_testdfsio_folder)
                    blocks = self.profile.provider.hdfs_blocks()
                if self.run_testdfsio and self.source == "lab" and blocks is not None:  # the DataNodes' disk: ours
                    from perfkit.metrics.diskstats import DiskStatsSampler

                    sampler = stack.enter_context(DiskStatsSampler(blocks, period=min(self.period, 1)))
                yield
        finally:
            if sampler is not None:  # stopped: what it sampled is the run's
                results.config["metrics"] = _metrics_record(sampler.frame(), sampler.period,
                                                            f"/proc/diskstats ({sampler.device})")
        if self.window_start:
            self.window = (_utc(self.window_start), _utc(self.window_end))
        if self.source == "cloudwatch":
            results.config.update(self._cloudwatch())

    def _remove_testdfsio_folder(self) -> None:
        if not self.bench_started:  # nothing of TestDFSIO's was written
            return
        try:
            self.bench.cleanup()
        except Exception as err:  # noqa: BLE001 - e.g. HDFS down: must not replace the run's own error
            warnings.warn(f"TestDFSIO's folder {self.bench.base} was not removed from HDFS ({root_cause(err)}): "
                          f"remove it with `hdfs dfs -rm -r {self.bench.base}`", stacklevel=2)

    def attempt(self, operation: str) -> None:
        """One TestDFSIO operation, HDFS watched throughout; a failure is recorded and ends the study's TestDFSIO
        (the read has nothing to read after a failed write)."""
        if operation == "read" and "write" not in self.dfsio:
            return
        self.bench_started = True
        results = self.results
        if operation == "read":  # the note is the run's: its report's conditions say it
            results.config["cache_note"] = (f"{drop_page_cache()} before the read" if self.source == "lab"
                                            else "page cache kept: a cluster's nodes are not this machine")
        started, error = now(), None
        # TestDFSIO's figures through an HDFS outage are not a measurement
        with Watched([StorageHealth(storage_probes(self.profile, ["hdfs"]), HEALTH_INTERVAL_S,
                                    said_by="TestDFSIO")]) as watched:
            if watched.refused:
                error = watched.refused
            else:
                try:
                    result, t0, t1 = self.bench.run(operation)
                except Exception as err:  # noqa: BLE001 - recorded as this operation's failure
                    error = _why(err)
                watched.stop()
                error = watched.end(Run({}, error)).error
        if error:
            results.add(**self.record_of(operation), started_at=started, wall_s=None, ok=False, error=error)
            return
        self.dfsio[operation] = result
        self.window = (_epoch(t0) if operation == "write" else self.window[0], _epoch(t1))
        results.add(**self.record_of(operation), started_at=started, wall_s=result.exec_seconds,
                    bytes=int(result.total_mb * MiB), mb_per_s=result.cluster_mib_s * MiB / 1e6,
                    params={"files": result.files, "throughput_mb_s": result.throughput_mb_s,
                            "average_io_rate_mb_s": result.average_io_rate_mb_s})

    # -- what the run records besides TestDFSIO's records: all its report needs (perfkit.presenting.st1_report) ----
    def begin(self) -> dict:
        """The run's config (versions, host, profile, parameters: the price per GB-month as resolved), and the cost's
        price basis: its report names it without reading a price file again."""
        return {**super().begin(), "price_basis": self._price_basis()}

    def _price_basis(self) -> str:
        """What the cost column is priced at, and from where."""
        if self.price_given:
            return f"st1 at {self.price_per_gb_month:g} USD per GB-month (price_per_gb_month, as given)"
        return f"st1 at {self.price_per_gb_month:g} {self.price_table.texts['currency']} per GB-month: " \
               f"{self.price_table.ebs_basis('st1')}"

    def volumes(self) -> pd.DataFrame:
        """The volumes to watch, as EC2 describes them now (source cloudwatch)."""
        if self.cluster_id:
            return cw.volumes_of_cluster(self.cluster_id, self.region)
        return cw.describe_volumes(self.volume_ids, region=self.region)

    def _cloudwatch(self) -> dict:
        """The volumes (EC2) and their metrics over the window (CloudWatch), read once at the end of the run and
        recorded with it, so that its report never calls AWS; what could not be read is recorded as the metrics'
        error (the report lists it among the failures). Nothing without a window: TestDFSIO measured nothing and
        none was given."""
        if self.window is None:
            return {}
        start, end = self.window
        # CloudWatch aligns periods: widen the window to whole periods around the run
        start = start - timedelta(seconds=start.timestamp() % self.period)
        end = min(end + timedelta(seconds=self.period), datetime.now(timezone.utc))
        found = {}
        try:
            volumes = self.volumes()
            found["volumes"] = [{"volume": str(v.volume), "instance": None if pd.isna(v.instance) else str(v.instance),
                                 "size_gib": int(v.size_gib), "type": str(v.type)} for v in volumes.itertuples()]
            frame = cw.fetch_ebs_metrics(list(volumes["volume"]), start, end, self.period, region=self.region)
        except Exception as err:  # noqa: BLE001 - recorded, as a failure of the run's, with what TestDFSIO measured
            return {**found, "metrics": {"source": "CloudWatch", "error": root_cause(err)}}
        return {**found, "metrics": _metrics_record(frame, self.period, "CloudWatch", (start, end))}

    # measure_for_report(): the run (TestDFSIO's write then read, the volumes' metrics over its window): Experiment's


def _metrics_record(frame: pd.DataFrame, period: float, source: str, window=None) -> dict:
    """A metrics frame (perfkit.metrics.SCHEMA) as a run's config records it, in JSON's own types: its rows, and the
    period its sums are over (the report derives Read/WriteThroughput from them, as with_throughput does)."""
    rows = [[str(volume), str(metric), pd.Timestamp(timestamp).isoformat(), float(value), str(unit)]
            for volume, metric, timestamp, value, unit in frame[SCHEMA].itertuples(index=False)]
    found = {"source": source, "period": period, "columns": SCHEMA, "rows": rows}
    return {**found, "window": [t.isoformat() for t in window]} if window else found


def _configurations(value) -> list[list]:
    """[[volumes per node, GiB per volume], ...]: whole volumes >= 1, sizes st1 offers."""
    example = "[[4, 512], [2, 1024]]"
    if not isinstance(value, (list, tuple)) or not value:
        raise PerfkitError(f"configurations={value!r}: give a non-empty list of [volumes per node, GiB per volume] "
                           f"pairs, e.g. configurations={example}")
    pairs = []
    for i, pair in enumerate(value):
        try:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise PerfkitError("not a pair")  # the message below says what a pair is
            pairs.append([validate.whole("volumes", pair[0]),
                          validate.number("size_gib", pair[1], minimum=MIN_GIB, maximum=MAX_GIB)])
        except PerfkitError:
            raise PerfkitError(f"configurations[{i}]={pair!r}: give [volumes per node (a whole number >= 1), GiB per "
                               f"volume ({MIN_GIB} to {MAX_GIB}, the sizes st1 offers)]") from None
    return pairs


def _why(err: Exception) -> str:
    """One line: TestDFSIO's "failed (exit N):" headline with the root cause of the stderr tail below it."""
    head, _, tail = str(err).partition("\n")
    return f"{head.rstrip(': ')}: {root_cause(tail)}" if tail.strip() else root_cause(err)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text)  # validated, with its zone, by iso_time in __post_init__


def _epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc)
