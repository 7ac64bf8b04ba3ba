"""EBS st1 throughput and burst balance: TestDFSIO measured (lab or cluster), CloudWatch or diskstats
metrics over its window, and the st1 model for the volume configurations being compared.

    study = St1Study(load_profile("lab"))                      # TestDFSIO on the lab, diskstats sampled
    study = St1Study(load_profile("emr", bucket=...), source="cloudwatch", cluster_id="j-...")
    study.run(); study.table(); study.metrics()
"""
from __future__ import annotations

import contextlib
import tempfile
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from perfkit import validate
from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.base import Experiment
from perfkit.findings import Findings, duration, plural, where
from perfkit.health import HealthWatch
from perfkit.storages import storage_probes
from perfkit.metrics import MiB, empty_frame, with_throughput
from perfkit.metrics import cloudwatch as cw
from perfkit.metrics.st1 import MAX_GIB, MIN_GIB, Configuration, model_table
from perfkit.storages.pricing import price_table
from perfkit.protocol import drop_page_cache
from perfkit.results import ResultSet, now
from perfkit.testdfsio import DfsioResult, TestDfsio
from perfkit.parameters import check_fields, param

EXPERIMENT = "st1_throughput_burst"
SOURCES = ("lab", "cloudwatch")
MAX_STEPS = 100_000  # points per modelled series: plenty for a plot


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
        self.configs = [Configuration(v, s, self.nodes) for v, s in self.configurations]
        self.dfsio: dict[str, DfsioResult] = {}
        self.cache_note = ""
        self.window: tuple[datetime, datetime] | None = None
        self._metrics = None
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

    @contextlib.contextmanager
    def session(self, results: ResultSet):
        """TestDFSIO's work folder (removed after), and on the lab the DataNodes' disk sampled throughout (this
        machine's: diskstats); the window the figures are read over, given or TestDFSIO's own."""
        with contextlib.ExitStack() as stack:
            sampler = None
            if self.run_testdfsio:
                work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="perfkit-testdfsio-")))
                self.bench = TestDfsio(self.profile, self.files, self.file_mb, work, run_id=results.run_id)
                self.bench_started = False
                stack.callback(self._remove_testdfsio_folder)
                blocks = self.profile.provider.hdfs_blocks()
            if self.run_testdfsio and self.source == "lab" and blocks is not None:  # the DataNodes' disk: this one's
                from perfkit.metrics.diskstats import DiskStatsSampler

                sampler = stack.enter_context(DiskStatsSampler(blocks, period=min(self.period, 1)))
            yield
        if sampler is not None:
            self._metrics = with_throughput(sampler.frame(), sampler.period)
        if self.window_start:
            self.window = (_utc(self.window_start), _utc(self.window_end))

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
        if operation == "read":
            self.cache_note = (f"{drop_page_cache()} before the read" if self.source == "lab"
                               else "page cache kept: a cluster's nodes are not this machine")
        started, error = now(), None
        with HealthWatch(storage_probes(self.profile, ["hdfs"])) as watch:
            if not watch.problem:
                try:
                    result, t0, t1 = self.bench.run(operation)
                except Exception as err:  # noqa: BLE001 - recorded as this operation's failure
                    error = _why(err)
        if watch.problem:  # TestDFSIO's figures through an HDFS outage are not a measurement
            error = watch.problem + (f"; TestDFSIO said: {error}" if error else "")
        if error:
            results.add(**self.record_of(operation), started_at=started, wall_s=None, ok=False, error=error)
            return
        self.dfsio[operation] = result
        self.window = (_epoch(t0) if operation == "write" else self.window[0], _epoch(t1))
        results.add(**self.record_of(operation), started_at=started, wall_s=result.exec_seconds,
                    bytes=int(result.total_mb * MiB), mb_per_s=result.cluster_mib_s * MiB / 1e6,
                    params={"files": result.files, "throughput_mb_s": result.throughput_mb_s,
                            "average_io_rate_mb_s": result.average_io_rate_mb_s})

    def volumes(self) -> pd.DataFrame:
        if self.cluster_id:
            return cw.volumes_of_cluster(self.cluster_id, self.region)
        return cw.describe_volumes(self.volume_ids, region=self.region)

    def metrics(self) -> pd.DataFrame:
        """Measured metrics: diskstats of the lab's disk, or CloudWatch for the volumes over the window."""
        if self.source == "lab":
            self._results()  # the lab's metrics are sampled by run()
        if self._metrics is None and self.source == "cloudwatch":
            if self.window is None:
                raise PerfkitError("no window yet: run() first, or give window_start and window_end")
            start, end = self.window
            # CloudWatch aligns periods: widen the window to whole periods around the run
            start = start - timedelta(seconds=start.timestamp() % self.period)
            end = min(end + timedelta(seconds=self.period), datetime.now(timezone.utc))
            frame = cw.fetch_ebs_metrics(list(self.volumes()["volume"]), start, end, self.period, region=self.region)
            self._metrics = with_throughput(frame, self.period)
        # nothing measured (no TestDFSIO run on the lab): an empty frame that still has the schema's columns
        return self._metrics if self._metrics is not None else empty_frame()

    # -- tables -----------------------------------------------------------------------------
    def workload_mib(self) -> float:
        return self.workload_files * self.workload_file_gb * 1e9 / MiB

    def price_basis(self) -> str:
        """What the cost column is priced at, and from where."""
        if self.price_given:
            return f"st1 at {self.price_per_gb_month:g} USD per GB-month (price_per_gb_month, as given)"
        return f"st1 at {self.price_per_gb_month:g} {self.price_table.texts['currency']} per GB-month: " \
               f"{self.price_table.basis()}"

    def model(self) -> pd.DataFrame:
        return model_table(self.configs, self.workload_mib(), self.price_per_gb_month, self.replication,
                           self.node_cap_mib_s)

    def table(self) -> pd.DataFrame:
        """The published shape: volumes per node, cluster size, read and write time and cluster MiB/s, cost.
        (model() alone needs no run.)"""
        self._results()
        rows = []
        if self.dfsio:
            w, r = self.dfsio.get("write"), self.dfsio.get("read")
            rows.append({"source": f"measured ({self.source}, TestDFSIO {self.files} × {self.file_mb} MB)",
                         "configuration": self._measured_label(), "volumes per node": np.nan, "cluster size": "",
                         "read time (s)": r.exec_seconds if r else np.nan,
                         "write time (s)": w.exec_seconds if w else np.nan,
                         "read MiB/s": r.cluster_mib_s if r else np.nan,
                         "write MiB/s": w.cluster_mib_s if w else np.nan, "cost per month (USD)": np.nan})
        for m in self.model().to_dict("records"):
            rows.append({"source": f"modelled ({self.workload_files} × {self.workload_file_gb:g} GB)",
                         "configuration": m["configuration"], "volumes per node": m["volumes per node"],
                         "cluster size": f"{m['nodes']} nodes, {m['cluster GiB'] / 1024:g} TiB",
                         "read time (s)": m["read seconds"], "write time (s)": m["write seconds"],
                         "read MiB/s": m["read MiB/s"], "write MiB/s": m["write MiB/s"],
                         "cost per month (USD)": m["cost per month (USD)"]})
        return pd.DataFrame(rows).round(1)

    def _measured_label(self) -> str:
        if self.source == "lab":
            return "lab: one local disk"
        vols = self.volumes()
        per_node = vols.groupby("instance").size()
        return f"{int(per_node.median())} × {int(vols['size_gib'].median())} GiB ({vols['type'].iloc[0]})"

    # -- findings ---------------------------------------------------------------------------
    def findings(self) -> Findings:
        """What this run found, first in its report: TestDFSIO's measured MiB/s (and that the lab's disk is no st1
        volume), then what the st1 model gives each configuration: baseline, burst, how long a full bucket bursts,
        the workload's write and read times, the monthly cost."""
        frame = self._frame()
        measured = frame[frame["ok"].astype(bool)].set_index("case")
        sentences, undecided = [], []
        if len(measured):
            sentences.append(f"TestDFSIO measured ({self._measured_where()}): "
                             + ", ".join(_operation_phrase(op, measured.loc[op]) for op in ("write", "read")
                                         if op in measured.index)
                             + "; cluster throughput = total MiB ÷ execution seconds.")
            if self.source == "lab":
                sentences.append("The lab's figures are this machine's disk as /proc/diskstats sees it, not an st1 "
                                 "volume: they say nothing of st1's baseline, burst or bucket.")
        elif not self.run_testdfsio:
            undecided.append("Nothing measured: run_testdfsio is off; the figures below are the model's alone")
        undecided += [f"TestDFSIO {r.case}: {r.error}" for r in frame[~frame["ok"].astype(bool)].itertuples()]
        if len(measured):
            undecided.append("Whether TestDFSIO's figures are steady: one write and one read, no repeat")
        sentences += [self._model_sentence(m) for m in self.model().to_dict("records")]
        return Findings(sentences, self._conditions(), undecided)

    def _model_sentence(self, m: dict) -> str:
        config = next(c for c in self.configs if c.label == m["configuration"])
        bursts = config.volume.drain_seconds(config.volume.burst)
        lasting = "bursts without end" if bursts == float("inf") else f"{duration(bursts)} of burst from a full bucket"
        return (f"Modelled {m['configuration']} per node on {plural(m['nodes'], 'node')}: "
                f"{m['baseline MiB/s per volume']:.0f} MiB/s baseline, {m['burst MiB/s per volume']:.0f} MiB/s burst "
                f"per volume, {lasting}; writes the workload in {duration(m['write seconds'])} and reads it in "
                f"{duration(m['read seconds'])} ({m['write MiB/s']:.1f} and {m['read MiB/s']:.1f} MiB/s in all); "
                f"{m['cost per month (USD)']:,.2f} USD per month.")

    def _measured_where(self) -> str:
        if self.source == "lab":
            return "the lab"
        return f"cluster {self.cluster_id}" if self.cluster_id else f"volumes {', '.join(self.volume_ids)}"

    def _conditions(self) -> str:
        measured = (f"TestDFSIO {plural(self.files, 'file')} × {self.file_mb} MB, one write then one read"
                    + (f", {self.cache_note}" if self.cache_note else "") if self.run_testdfsio else "no TestDFSIO run")
        metrics = "/proc/diskstats" if self.source == "lab" else f"CloudWatch ({self.region}, {self.period} s periods)"
        model = (f"modelled workload {self.workload_files} × {self.workload_file_gb:g} GB, "
                 f"{plural(self.replication, 'replica')} written, every volume moving its even share")
        return "; ".join([measured, f"metrics from {metrics}", model, f"cost: {self.price_basis()}",
                          where(self.profile)])

    def modelled_series(self, step_s: float = 10.0) -> pd.DataFrame:
        """Per configuration, one volume's delivered MiB/s and BurstBalance while the workload is written
        (with its replicas) and then read, then ten idle minutes."""
        frames = []
        for c in self.configs:
            write_s, read_s = c.write_then_read(self.workload_mib(), self.replication, self.node_cap_mib_s)
            demand = c.demand(self.node_cap_mib_s) or c.volume.burst
            step_s = max(step_s, (write_s + read_s + 600) / MAX_STEPS)  # a huge workload: coarser, not out of memory
            steps = int(np.ceil((write_s + read_s + 600) / step_s))
            series = np.where(np.arange(steps) * step_s < write_s + read_s, demand, 0.0)
            frames.append(c.volume.simulate(series, step_s).assign(configuration=c.label))
        return pd.concat(frames, ignore_index=True)


def _operation_phrase(operation: str, record: pd.Series) -> str:
    """'write 25.6 MiB/s (256 MiB in 10.0 s)' from a TestDFSIO record: its bytes over its execution seconds."""
    mib = record["bytes"] / MiB
    return f"{operation} {mib / record['wall_s']:.1f} MiB/s ({mib:,.0f} MiB in {record['wall_s']:.1f} s)"


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
