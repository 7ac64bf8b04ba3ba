"""An EBS st1 study's report, built from its records alone.

    report = run_report(St1Study(profile, ...))  # measures (TestDFSIO, the volumes' metrics), then reports
    report = St1Report.load("data/results/st1_throughput_burst/RUN.jsonl")  # the same report again, measuring nothing

Everything the report shows comes from the run's records and the config they share (St1Study records it): the
parameters (the price per GB-month as the run resolved it), TestDFSIO's figures (one record per operation), the note
the read made of the page cache, the volumes' metrics as the run sampled them (the lab's /proc/diskstats) or fetched
them (CloudWatch, with the volumes EC2 described, or why they could not be read), the cost's price basis and where the
run happened. So a results file renders the same Findings, tables and plots anywhere, with no lab and no AWS call.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from perfkit.experiments.base import FAILURE_COLUMNS
from perfkit.presenting.base import StoredReport
from perfkit.findings import Findings, duration, plural, where
from perfkit.metrics import SCHEMA, MiB, empty_frame, with_throughput
from perfkit.metrics.st1 import Configuration, model_table
from perfkit.provenance import recorded_environment
from perfkit.results import ResultSet

MAX_STEPS = 100_000  # points per modelled series: plenty for a plot
OPERATIONS = ("write", "read")  # TestDFSIO's, in the order they run
# the parameters the report reads: a run whose records lack one is not an st1 study's


class St1Report(StoredReport):
    """The tables, the plots' frames and the Findings of one run of the st1 study."""
    NEEDED = ("source", "configurations", "nodes", "workload_files", "workload_file_gb", "replication",
              "price_per_gb_month", "files", "file_mb", "run_testdfsio")  # the parameters it reads
    WHAT = "a run of st1_throughput_burst"

    def __init__(self, results: ResultSet):
        super().__init__(results)
        config, params = results.config, self.parameters
        self.source, self.run_testdfsio = params["source"], bool(params["run_testdfsio"])
        self.cluster_id, self.volume_ids = params.get("cluster_id", ""), list(params.get("volume_ids") or [])
        self.region, self.period = params.get("region", ""), params.get("period")
        self.files, self.file_mb = params["files"], params["file_mb"]
        self.nodes, self.replication = params["nodes"], params["replication"]
        self.workload_files, self.workload_file_gb = params["workload_files"], params["workload_file_gb"]
        self.price_per_gb_month, self.node_cap_mib_s = params["price_per_gb_month"], params.get("node_cap_mib_s")
        self.configs = [Configuration(v, s, self.nodes) for v, s in params["configurations"]]
        self.cache_note = config.get("cache_note", "")

    @property
    def profile_name(self) -> str:
        """The profile the run measured on, as it recorded it (findings.where)."""
        return self._results().config.get("profile", {}).get("name", "")

    # -- the volumes' metrics, as the run recorded them ------------------------------------------------------------
    def metrics(self) -> pd.DataFrame:
        """Measured metrics (perfkit.metrics.SCHEMA, with Read/WriteThroughput in MiB/s): the lab's disk as
        /proc/diskstats showed it while TestDFSIO ran, or CloudWatch's for the volumes over the run's window; an empty
        frame with the schema's columns when nothing was measured (or CloudWatch could not be read: see failures())."""
        found = self._results().config.get("metrics") or {}
        if not found.get("rows"):
            return empty_frame()
        frame = pd.DataFrame(found["rows"], columns=found.get("columns", SCHEMA))
        frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True, format="ISO8601")
        frame["value"] = frame["value"].astype(float)
        return with_throughput(frame, found["period"])

    def volumes(self) -> pd.DataFrame:
        """The watched volumes as EC2 described them in the run (source cloudwatch): volume, instance, size, type."""
        return pd.DataFrame(self._results().config.get("volumes") or [],
                            columns=["volume", "instance", "size_gib", "type"])

    def problems(self) -> pd.DataFrame:
        """The volumes' metrics, when CloudWatch (or EC2) could not be read at the end of the run."""
        error = self._metrics_error()
        if not error:
            return super().problems()
        return pd.DataFrame([{"subject": "cloudwatch", "storage": "ebs", "case": "metrics", "phase": "measured",
                              "iteration": None, "error": f"the volumes' metrics were not read: {error}"}],
                            columns=FAILURE_COLUMNS)

    def _metrics_error(self) -> str:
        """Why the run could not read the volumes' metrics (CloudWatch, EC2), or ""."""
        return (self._results().config.get("metrics") or {}).get("error", "")

    def environment(self) -> pd.DataFrame:
        """Versions, host, profile and parameters, as the run recorded them, as one two-column table."""
        return recorded_environment(self._results().config)

    # -- tables -----------------------------------------------------------------------------------------------------
    def workload_mib(self) -> float:
        return self.workload_files * self.workload_file_gb * 1e9 / MiB

    def price_basis(self) -> str:
        """What the cost column is priced at, and from where, as the run resolved it; a run that recorded the price
        table's S3 basis for its EBS price ("S3 Standard", S3's pricing page) is named for the EBS product it is."""
        recorded = self._results().config.get("price_basis")
        if not recorded:
            return (f"st1 at {self.price_per_gb_month:g} per GB-month (the run did not record where that price came "
                    "from)")
        return ebs_named(recorded)

    def model(self) -> pd.DataFrame:
        return model_table(self.configs, self.workload_mib(), self.price_per_gb_month, self.replication,
                           self.node_cap_mib_s)

    def measured(self) -> pd.DataFrame:
        """TestDFSIO's operations that worked, one row each, by operation: wall_s (its execution seconds) and
        bytes."""
        frame = self._frame()
        return frame[frame["ok"].astype(bool)].set_index("case")

    def table(self) -> pd.DataFrame:
        """The published shape: volumes per node, cluster size, read and write time and cluster MiB/s, cost."""
        measured = self.measured()
        rows = []
        if len(measured):
            seconds = {op: measured.loc[op, "wall_s"] for op in OPERATIONS if op in measured.index}
            rates = {op: measured.loc[op, "bytes"] / MiB / seconds[op] for op in seconds}
            rows.append({"source": f"measured ({self.source}, TestDFSIO {self.files} × {self.file_mb} MB)",
                         "configuration": self._measured_label(), "volumes per node": np.nan, "cluster size": "",
                         "read time (s)": seconds.get("read", np.nan), "write time (s)": seconds.get("write", np.nan),
                         "read MiB/s": rates.get("read", np.nan), "write MiB/s": rates.get("write", np.nan),
                         "cost per month (USD)": np.nan})
        for m in self.model().to_dict("records"):
            rows.append({"source": f"modelled ({self.workload_files} × {self.workload_file_gb:g} GB)",
                         "configuration": m["configuration"], "volumes per node": m["volumes per node"],
                         "cluster size": f"{plural(m['nodes'], 'node')}, {m['cluster GiB'] / 1024:g} TiB",
                         "read time (s)": m["read seconds"], "write time (s)": m["write seconds"],
                         "read MiB/s": m["read MiB/s"], "write MiB/s": m["write MiB/s"],
                         "cost per month (USD)": m["cost per month (USD)"]})
        return pd.DataFrame(rows).round(1)

    def _measured_label(self) -> str:
        if self.source == "lab":
            return "lab: one local disk"
        vols = self.volumes()
        if vols.empty:
            return "volumes not described (see Failures)"
        per_node = vols.groupby("instance").size()
        return f"{int(per_node.median())} × {int(vols['size_gib'].median())} GiB ({vols['type'].iloc[0]})"

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

    # -- findings ---------------------------------------------------------------------------------------------------
    def findings(self) -> Findings:
        """What this run found, first in its report: TestDFSIO's measured MiB/s (and that the lab's disk is no st1
        volume), then what the st1 model gives each configuration: baseline, burst, how long a full bucket bursts,
        the workload's write and read times, the monthly cost."""
        frame = self._frame()
        measured = self.measured()
        sentences, undecided = [], []
        if len(measured):
            sentences.append(f"TestDFSIO measured ({self._measured_where()}): "
                             + ", ".join(_operation_phrase(op, measured.loc[op]) for op in OPERATIONS
                                         if op in measured.index)
                             + "; cluster throughput = total MiB ÷ execution seconds.")
            if self.source == "lab":
                sentences.append("The lab's figures are this machine's disk as /proc/diskstats sees it, not an st1 "
                                 "volume: they say nothing of st1's baseline, burst or bucket.")
        elif not self.run_testdfsio:
            undecided.append("Nothing measured: run_testdfsio is off; the figures below are the model's alone")
        undecided += [f"TestDFSIO {r.case}: {r.error}" for r in frame[~frame["ok"].astype(bool)].itertuples()]
        if error := self._metrics_error():
            undecided.append(f"The volumes' metrics over the run: not read from CloudWatch ({error})")
        if len(measured):
            undecided.append("Whether TestDFSIO's figures are steady: one write and one read, no repeat")
        sentences += [self._model_sentence(m) for m in self.model().to_dict("records")]
        if note := self.drift_note():  # one write and one read: no verdict beyond noise, the noise factor is the bar
            undecided.append(note)
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
                          where(self.profile_name), self.control_phrase()])


def ebs_named(basis: str, volume_type: str = "st1") -> str:
    """A price basis with "S3 Standard" (the S3 class PriceTable.basis() names) put right for an EBS price: the EBS
    product (perfkit.prices.ebs_product), S3's pricing page left out of its sources."""
    from perfkit.prices import ebs_product

    if "S3 Standard" not in basis:
        return basis
    basis = basis.replace("S3 Standard", ebs_product(volume_type))
    return re.sub(r"\((https?://[^;()]*s3/pricing[^;()]*); ", "(", basis)


def _operation_phrase(operation: str, record: pd.Series) -> str:
    """'write 25.6 MiB/s (256 MiB in 10.0 s)' from a TestDFSIO record: its bytes over its execution seconds."""
    mib = record["bytes"] / MiB
    return f"{operation} {mib / record['wall_s']:.1f} MiB/s ({mib:,.0f} MiB in {record['wall_s']:.1f} s)"
