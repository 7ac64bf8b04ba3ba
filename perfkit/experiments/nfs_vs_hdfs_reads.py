"""NFS vs HDFS: J parallel jobs read a random selection of a file set, or one large file, through
each access method; aggregate MB/s = bytes / (last end - first start), as the published study did.

    report = run_report(ReadComparison(load_profile("lab"), jobs=8))  # places, measures, then reports
    report.findings(); report.table()

What the report shows is built from the run's records alone (perfkit.presenting.reads_report.ReadReport): everything
it needs beyond the records is put in the run's config while it runs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfkit import atomic, provenance
from perfkit.storages import base as storage_base
from perfkit.config import Profile
from perfkit.datasets.files import FileSet
from perfkit.errors import PerfkitError
from perfkit.experiments.base import Experiment
from perfkit.experiments.attempt import Run, StorageHealth, Watched
from perfkit.protocol import drop_page_cache
from perfkit.reads import REGISTRY, get_method, method_class
from perfkit.reads.runner import run_jobs
from perfkit.results import ResultSet
from perfkit.storages import get_storage, storage_probes
from perfkit.validate import check_free_space, flag, names, number, whole
from perfkit.progress import progress_bar
from perfkit.parameters import check_fields, param

EXPERIMENT = "nfs_vs_hdfs_reads"
PROTOCOLS = ("random-files", "large-file")
HEALTH_INTERVAL_S = 1.0  # how often the storage is probed while the jobs read


@dataclass
class ReadComparison(Experiment):
    experiment = EXPERIMENT
    unit = "read jobs"
    REPORT_DEFAULTS = {"files_per_job": 2}  # the report's: hdfs-cli starts a JVM per file read

    profile: Profile
    methods: list[str] = param(help="How the jobs read.", factory=lambda: list(REGISTRY), check=names,
                               choices=REGISTRY)
    protocols: list[str] = param(help="random-files, large-file.", factory=lambda: list(PROTOCOLS), check=names,
                                 choices=PROTOCOLS)
    jobs: int = param(8, "Read jobs at once.", check=whole)
    files_per_job: int = param(4, "random-files: files each job reads, drawn at random from the set.", check=whole)
    files: int = param(48, "The file set (published: ~4,600 files of 163 MB on average).", check=whole)
    mean_mb: float = param(8.0, "The file set's mean file size (MB).", check=number, above=0, unit="MB")
    large_file_mb: int = param(256, "large-file: the file every job reads, in MB (published: 10 GB).", check=whole)
    replicas: int = param(1, "HDFS replicas of every file.", check=whole)
    cold_cache: bool = param(True, "Drop the page cache before every round (where permitted).", check=flag)
    seed: int = param(42, "The file sets' and the draws' seed.", check=whole, minimum=0)

    def __post_init__(self):
        """Validate every parameter before anything runs (they may arrive as any YAML value)."""
        check_fields(self)
        for name in self.methods:
            method_class(name)  # its module imports: a missing client library is named now
        self.fileset = FileSet(self.files, self.mean_mb, self.seed)
        self.large = FileSet(1, self.large_file_mb, self.seed + 1)
        self.results: ResultSet | None = None
        self.placed: pd.DataFrame | None = None  # the file sets as prepare() placed and verified them

    def measure_for_report(self, progress: bool = True) -> ResultSet:
        """Place the file sets (what is missing, verified), then measure every test (its report:
        perfkit.presenting.run_report)."""
        self.prepare(progress)
        return self.run(progress)

    # -- the files, on both storages ---------------------------------------------------------
    def folder(self, fileset: FileSet) -> str:
        """The same relative folder on the NFS export and on HDFS."""
        return f"{self.profile.prefix}/filesets/{fileset.name}"

    def nfs_root(self) -> Path:
        return get_storage("nfs", self.profile).root()

    def prepare(self, progress: bool = True) -> pd.DataFrame:
        """Write both file sets on NFS and on HDFS (what is missing), set the replicas, verify both equal."""
        nfs, hdfs = get_storage("nfs", self.profile), get_storage("hdfs", self.profile)
        hdfs.check()
        live = self.datanodes()
        if 0 <= live < self.replicas:  # HDFS would keep every block under-replicated, and the table would lie
            more = self.profile.provider.more_datanodes(self.replicas)
            raise PerfkitError(f"replicas={self.replicas} but HDFS has {live} live DataNode{'s' * (live != 1)}: "
                               f"{more}give replicas={max(live, 1)}")
        self._check_room(nfs, hdfs)
        rows = []
        for fileset in (self.fileset, self.large):
            on_nfs, on_hdfs = nfs.folder("filesets", fileset.name), hdfs.folder("filesets", fileset.name)
            sizes = {fileset.file_name(i): s for i, s in enumerate(fileset.sizes())}
            found_nfs, found_hdfs = _data(nfs.list_files(on_nfs)), hdfs.list_files(on_hdfs) or {}
            for i in progress_bar(range(fileset.files), desc=f"placing {fileset.name}", unit="file",
                                  disable=not progress):
                name = fileset.file_name(i)
                content = None
                if found_nfs.get(name) != sizes[name]:
                    content = fileset.content(i)
                    atomic.write_bytes(nfs.path(on_nfs, name), content)
                # HDFS's replication is a setting of each file: the experiment's `replicas`
                if found_hdfs.get(name) != sizes[name]:
                    hdfs.client.write(f"{on_hdfs.path}/{name}", data=content or fileset.content(i), overwrite=True,
                                      replication=self.replicas)
                else:
                    hdfs.client.set_replication(f"{on_hdfs.path}/{name}", self.replicas)
            for where, found in (("NFS", _data(nfs.list_files(on_nfs))), ("HDFS", hdfs.list_files(on_hdfs) or {})):
                problems = storage_base.listing_problems(sizes, found)
                if problems:
                    raise PerfkitError(f"file set {fileset.name} on {where} is not as generated ({problems})")
            rows.append({"file set": fileset.name, "files": fileset.files, "MB": sum(sizes.values()) / 1e6,
                         "NFS": on_nfs.path, "HDFS": on_hdfs.path, "replicas": self.replicas, "verified": "equal"})
        self.placed = pd.DataFrame(rows).round(1)
        return self.placed

    def _check_room(self, nfs, hdfs) -> None:
        """Before writing anything: the files still missing on NFS, and on the lab their HDFS replicas too (the
        lab's DataNodes keep them on this disk), must fit in the NFS folder's free space."""
        needed = 0
        hdfs_here = self.profile.provider.local_disk() is not None
        for fileset in (self.fileset, self.large):
            on_nfs = _data(nfs.list_files(nfs.folder("filesets", fileset.name)))
            on_hdfs = (hdfs.list_files(hdfs.folder("filesets", fileset.name)) or {}) if hdfs_here else {}
            for i, size in enumerate(fileset.sizes()):
                needed += size if on_nfs.get(fileset.file_name(i)) != size else 0
                if hdfs_here and on_hdfs.get(fileset.file_name(i)) != size:
                    needed += size * self.replicas
        check_free_space("the read file sets", needed, nfs.root(),
                         "free space there, or lower files, mean_mb or large_file_mb")

    def plan(self, protocol: str) -> list[list[str]]:
        """Relative paths per job: K distinct random files each (seeded), or the one large file."""
        if protocol == "large-file":
            return [[f"{self.folder(self.large)}/{self.large.file_name(0)}"] for _ in range(self.jobs)]
        rng = np.random.default_rng(self.seed)
        k = min(self.files_per_job, self.files)
        return [[f"{self.folder(self.fileset)}/{self.fileset.file_name(int(i))}"
                 for i in rng.choice(self.files, k, replace=False)] for _ in range(self.jobs)]

    def datanodes(self) -> int:
        import json
        import urllib.request

        url = f"{self.profile.webhdfs_url}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState"
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return int(json.load(resp)["beans"][0]["NumLiveDataNodes"])
        except (OSError, ValueError, KeyError, IndexError):
            return -1

    # -- running: the steps and one attempt (perfkit.experiments.runner owns the loop) --------------------------
    behind_s3_network = False  # NFS and HDFS: S3's network is not read
    step_unit = "test"

    def ready(self, progress: bool = True) -> None:
        """Nothing: the file sets are placed by prepare(), which run_report() calls first to show them."""

    def begin(self) -> dict:
        """What every record carries, and all the report needs besides the records (ReadReport): the live DataNodes,
        the file sets as prepare() placed them (when it ran), and (filled in by each test) the page cache's state."""
        placed = {"placed": self.placed.to_dict("records")} if self.placed is not None else {}
        return provenance.run_config(self.profile, self.parameters(), datanodes=self.datanodes(), page_cache={},
                                     **placed)

    def steps(self) -> list[tuple[str, str]]:
        """Each protocol's file set read by each access method in turn, the methods in the run's order (seeded, a
        different order per protocol): (protocol, method)."""
        return [(protocol, name) for protocol in self.protocols
                for name in self.in_run_order(list(self.methods), 0, protocol)]

    def label(self, step: tuple[str, str]) -> str:
        return " ".join(step)

    def control(self):
        """The drift control: a small read of the file set's first file on NFS and on HDFS."""
        from perfkit.experiments.control import files_control

        first = self.fileset.file_name(0)
        return files_control(self.profile, {where: (get_storage(where, self.profile).folder(
            "filesets", self.fileset.name), first) for where in ("nfs", "hdfs")})

    def record_of(self, step: tuple[str, str]) -> dict:
        protocol, name = step
        return dict(subject=name, storage=method_class(name).storage, case=protocol, phase="measured", iteration=0,
                    params={"job": None})

    def attempt(self, step: tuple[str, str]) -> None:
        self._test(self.results, *step)

    def _test(self, results: ResultSet, protocol: str, name: str) -> None:
        """One access method's parallel jobs on one protocol's file set, recorded job by job."""
        method = get_method(name, self.profile)
        reason = method.unavailable()
        if reason:
            results.add_unavailable(name, method.storage, protocol, reason, params={"job": None})
            return
        if self.cold_cache:
            results.config.setdefault("page_cache", {})[f"{protocol}/{name}"] = drop_page_cache()  # for the report
        relative = self.plan(protocol)
        plan = [[method.location(rel) for rel in job] for job in relative]
        # the HDFS probe reads a file of this test through a DataNode
        probes = storage_probes(self.profile, [method.storage], {"hdfs": "/" + relative[0][0].lstrip("/")})
        with Watched([StorageHealth(probes, HEALTH_INTERVAL_S, said_by=name)]) as watched:
            if watched.refused:
                jobs, problem = [_not_run() for _ in plan], watched.refused
            else:
                jobs = run_jobs(name, self.profile, plan)
                watched.stop()
                problem = watched.end(Run({}, None)).error
        for j, job in enumerate(jobs):
            ok = job["ok"] and not problem  # jobs that read through a storage outage are not samples
            error = "; ".join(e for e in (problem, job["error"]) if e) or None
            results.add(subject=name, storage=method.storage, case=protocol, phase="measured", iteration=j,
                        started_at=pd.Timestamp(job["start"], unit="s", tz="UTC").isoformat(),
                        wall_s=job["end"] - job["start"] if ok else None, ok=ok,
                        error=error, bytes=job["bytes"],
                        params={"job": j, "start": job["start"], "end": job["end"], "files": len(plan[j])})


def _data(found: dict[str, int] | None) -> dict[str, int]:
    """The file set's files in an NFS folder listing (earlier versions left `*.tmp` files of interrupted writes)."""
    return {name: size for name, size in (found or {}).items() if name.endswith(".bin")}


def _not_run() -> dict:
    """A job that was not started because its storage was unhealthy before the test."""
    return {"ok": False, "error": None, "start": time.time(), "end": time.time(), "bytes": 0}
