"""NFS vs HDFS: J parallel jobs read a random selection of a file set, or one large file, through
each access method; aggregate MB/s = bytes / (last end - first start), as the published study did.

    cmp = ReadComparison(load_profile("lab"), jobs=8)
    cmp.prepare(); cmp.run(); cmp.table()
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from perfkit.progress import progress_bar

from perfkit import atomic, provenance, storage
from perfkit.config import Profile
from perfkit.datasets.files import FileSet
from perfkit.errors import PerfkitError, shorten
from perfkit.experiments.base import Experiment
from perfkit.health import HealthWatch, storage_probes
from perfkit.protocol import drop_page_cache
from perfkit.reads import REGISTRY, get_method, method_class
from perfkit.reads.aggregate import aggregate
from perfkit.reads.runner import run_jobs
from perfkit.paths import results_dir_checked
from perfkit.results import ResultSet
from perfkit.storages import get_storage
from perfkit.validate import check_free_space, flag, names, number, whole

EXPERIMENT = "nfs_vs_hdfs_reads"
PROTOCOLS = ("random-files", "large-file")


@dataclass
class ReadComparison(Experiment):
    experiment = EXPERIMENT
    unit = "read jobs"

    profile: Profile
    methods: list[str] = field(default_factory=lambda: list(REGISTRY))
    protocols: list[str] = field(default_factory=lambda: list(PROTOCOLS))
    jobs: int = 8
    files_per_job: int = 4  # random-files: files each job reads, drawn at random from the set
    files: int = 48  # the file set (published: ~4,600 files of 163 MB on average)
    mean_mb: float = 8.0
    large_file_mb: int = 256  # large-file: the file every job reads (published: 10 GB)
    replicas: int = 1
    cold_cache: bool = True
    seed: int = 42

    def __post_init__(self):
        """Validate every parameter before anything runs (they may arrive as any YAML value)."""
        self.methods = names("methods", self.methods, choices=REGISTRY)
        for name in self.methods:
            method_class(name)  # its module imports: a missing client library is named now
        self.protocols = names("protocols", self.protocols, choices=PROTOCOLS)
        for name in ("jobs", "files_per_job", "files", "large_file_mb", "replicas"):
            setattr(self, name, whole(name, getattr(self, name)))
        self.mean_mb = number("mean_mb", self.mean_mb, above=0, unit="MB")
        self.cold_cache = flag("cold_cache", self.cold_cache)
        self.seed = whole("seed", self.seed, minimum=0)
        self.fileset = FileSet(self.files, self.mean_mb, self.seed)
        self.large = FileSet(1, self.large_file_mb, self.seed + 1)
        self.results: ResultSet | None = None
        self.notes: dict[str, str] = {}

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
            for i in progress_bar(range(fileset.files), desc=f"placing {fileset.name}", unit="file", disable=not progress):
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
                problems = storage.listing_problems(sizes, found)
                if problems:
                    raise PerfkitError(f"file set {fileset.name} on {where} is not as generated ({problems})")
            rows.append({"file set": fileset.name, "files": fileset.files, "MB": sum(sizes.values()) / 1e6,
                         "NFS": on_nfs.path, "HDFS": on_hdfs.path, "replicas": self.replicas, "verified": "equal"})
        return pd.DataFrame(rows).round(1)

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

    # -- running ----------------------------------------------------------------------------
    def run(self, progress: bool = True) -> ResultSet:
        results_dir_checked(EXPERIMENT)  # a results folder that cannot be written fails now, not after measuring
        config = provenance.run_config(self.profile, self.parameters(), datanodes=self.datanodes())
        results = self.results = ResultSet(EXPERIMENT, config)
        steps = [(p, m) for p in self.protocols for m in self.methods]
        for protocol, name in progress_bar(steps, desc=EXPERIMENT, unit="test", disable=not progress):
            method = get_method(name, self.profile)
            reason = method.unavailable()
            if reason:
                results.add_unavailable(name, method.storage, protocol, reason, params={"job": None})
                continue
            if self.cold_cache:
                self.notes[f"{protocol}/{name}"] = drop_page_cache()
            relative = self.plan(protocol)
            plan = [[method.location(rel) for rel in job] for job in relative]
            # the HDFS probe reads a file of this test through a DataNode
            probes = storage_probes(self.profile, [method.storage],
                                    {"hdfs": "/" + relative[0][0].lstrip("/")})
            with HealthWatch(probes) as watch:
                jobs = run_jobs(name, self.profile, plan) if not watch.problem else [_not_run() for _ in plan]
            for j, job in enumerate(jobs):
                ok = job["ok"] and not watch.problem  # jobs that read through a storage outage are not samples
                error = "; ".join(e for e in (watch.problem, job["error"]) if e) or None
                results.add(subject=name, storage=method.storage, case=protocol, phase="measured", iteration=j,
                            started_at=pd.Timestamp(job["start"], unit="s", tz="UTC").isoformat(),
                            wall_s=job["end"] - job["start"] if ok else None, ok=ok,
                            error=error, bytes=job["bytes"],
                            params={"job": j, "start": job["start"], "end": job["end"], "files": len(plan[j])})
            results.save()
        results.save()
        return results

    # -- tables -------------------------------------------------------------------------------
    def jobs_frame(self) -> pd.DataFrame:
        frame = self._frame()
        jobs = frame[frame["params"].map(lambda p: p.get("job") is not None)]
        return jobs.assign(start=jobs["params"].map(lambda p: p["start"]), end=jobs["params"].map(lambda p: p["end"]))

    def table(self) -> pd.DataFrame:
        """The published shape: test, MB/s, data nodes, replicas, jobs, access, comment."""
        frame = self._frame()
        jobs = self.jobs_frame()
        rows = []
        for (protocol, name), group in frame.groupby(["case", "subject"], sort=False):
            mine = jobs[(jobs["case"] == protocol) & (jobs["subject"] == name)]
            if mine.empty:  # unavailable
                rows.append({"test": protocol, "MB/s": np.nan, "data nodes": self.results.config["datanodes"],
                             "replicas": self.replicas, "jobs": self.jobs, "access": name,
                             "comment": group["error"].iloc[0]})
                continue
            a = aggregate(mine[["start", "end", "bytes", "ok"]])
            comment = f"first done {a['first done s']:.2f} s, median {a['median done s']:.2f} s, last {a['last done s']:.2f} s"
            if a["ok"] < a["jobs"]:
                comment += f"; {a['jobs'] - a['ok']} jobs FAILED: {shorten(mine.loc[~mine['ok'], 'error'].iloc[0], 200)}"
            rows.append({"test": protocol, "MB/s": a["MB/s"], "data nodes": self.results.config["datanodes"],
                         "replicas": self.replicas, "jobs": self.jobs, "access": f"{name} ({method_class(name).storage})",
                         "comment": comment})
        return pd.DataFrame(rows).round({"MB/s": 1})


def _data(found: dict[str, int] | None) -> dict[str, int]:
    """The file set's files in an NFS folder listing (earlier versions left `*.tmp` files of interrupted writes)."""
    return {name: size for name, size in (found or {}).items() if name.endswith(".bin")}


def _not_run() -> dict:
    """A job that was not started because its storage was unhealthy before the test."""
    return {"ok": False, "error": None, "start": time.time(), "end": time.time(), "bytes": 0}
