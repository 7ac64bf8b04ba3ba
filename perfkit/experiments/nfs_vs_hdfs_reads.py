"""NFS vs HDFS: J parallel jobs read a random selection of a file set, or one large file, through
each access method; aggregate MB/s = bytes / (last end - first start), as the published study did.

    cmp = ReadComparison(load_profile("lab"), jobs=8)
    cmp.prepare(); cmp.run(); cmp.table()
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
from perfkit.errors import PerfkitError, shorten
from perfkit.experiments.base import Experiment
from perfkit.findings import Findings, plural, times
from perfkit.health import HealthWatch
from perfkit.protocol import drop_page_cache
from perfkit.reads import REGISTRY, get_method, method_class
from perfkit.reads.aggregate import aggregate
from perfkit.reads.runner import run_jobs
from perfkit.results import UNAVAILABLE, ResultSet
from perfkit.storages import get_storage, storage_probes
from perfkit.validate import check_free_space, flag, names, number, whole
from perfkit.progress import progress_bar
from perfkit.parameters import check_fields, param

EXPERIMENT = "nfs_vs_hdfs_reads"
PROTOCOLS = ("random-files", "large-file")


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

    # -- running: the steps and one attempt (perfkit.experiments.runner owns the loop) --------------------------
    behind_s3_network = False  # NFS and HDFS: S3's network is not read
    step_unit = "test"

    def ready(self, progress: bool = True) -> None:
        """Nothing: the file sets are placed by prepare(), which the report calls first to show them."""

    def begin(self) -> dict:
        return provenance.run_config(self.profile, self.parameters(), datanodes=self.datanodes())

    def steps(self) -> list[tuple[str, str]]:
        """Each protocol's file set read by each access method in turn: (protocol, method)."""
        return [(protocol, name) for protocol in self.protocols for name in self.methods]

    def label(self, step: tuple[str, str]) -> str:
        return " ".join(step)

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
            self.notes[f"{protocol}/{name}"] = drop_page_cache()
        relative = self.plan(protocol)
        plan = [[method.location(rel) for rel in job] for job in relative]
        # the HDFS probe reads a file of this test through a DataNode
        probes = storage_probes(self.profile, [method.storage], {"hdfs": "/" + relative[0][0].lstrip("/")})
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
            comment = (f"first done {a['first done s']:.2f} s, median {a['median done s']:.2f} s, "
                       f"last {a['last done s']:.2f} s")
            if a["ok"] < a["jobs"]:
                comment += (f"; {a['jobs'] - a['ok']} jobs FAILED: "
                            f"{shorten(mine.loc[~mine['ok'], 'error'].iloc[0], 200)}")
            rows.append({"test": protocol, "MB/s": a["MB/s"], "data nodes": self.results.config["datanodes"],
                         "replicas": self.replicas, "jobs": self.jobs,
                         "access": f"{name} ({method_class(name).storage})", "comment": comment})
        return pd.DataFrame(rows).round({"MB/s": 1})

    # -- findings -----------------------------------------------------------------------------
    def aggregates(self) -> pd.DataFrame:
        """One row per test and access method that read: its storage and aggregate(), fastest first in each test."""
        jobs = self.jobs_frame()
        rows = [{"test": protocol, "access": name, "storage": mine["storage"].iloc[0],
                 **aggregate(mine[["start", "end", "bytes", "ok"]])}
                for (protocol, name), mine in jobs.groupby(["case", "subject"], sort=False)]
        table = pd.DataFrame(rows, columns=["test", "access", "storage", "jobs", "ok", "MB", "seconds", "MB/s",
                                            "first done s", "last done s", "median done s"])
        return table.sort_values(["test", "MB/s"], ascending=[True, False], kind="stable").reset_index(drop=True)

    def findings(self) -> Findings:
        """What this run found, first in its report: per test, each access method's aggregate MB/s, NFS's fastest
        against HDFS's, and when the first and the last job finished; methods unavailable here, failed jobs."""
        sentences, undecided = [], []
        for protocol, rows in self.aggregates().groupby("test", sort=False):
            read = rows[rows["ok"] > 0]
            if read.empty:
                continue
            sentences.append(f"{protocol}, {plural(self.jobs, 'job')}: "
                             + ", ".join(f"{name} {rate:.1f} MB/s" for name, rate in zip(read["access"], read["MB/s"]))
                             + " (aggregate, fastest first).")
            sentences += _storage_sentences(protocol, read)
            undecided += [f"{protocol} through {r.access}: {r.jobs - r.ok} of {plural(r.jobs, 'job')} failed "
                          "(listed under Failures)" for r in rows.itertuples() if r.ok < r.jobs]
        frame = self._frame()
        for row in frame[frame["error"].fillna("").str.startswith(UNAVAILABLE)].itertuples():
            undecided.append(f"{row.case} through {row.subject}: {row.error}")
        if sentences:
            undecided.append("Whether the differences are beyond noise: one test per access method, no repeat")
        return Findings(sentences, self._conditions(), undecided)

    def _conditions(self) -> str:
        from perfkit.findings import where  # here: prepare() names its storages `where`

        tests = []
        if "random-files" in self.protocols:
            tests.append(f"random-files: {plural(self.files_per_job, 'file')} per job drawn from "
                         f"{plural(self.files, 'file')} of {self.mean_mb:g} MB on average")
        if "large-file" in self.protocols:
            tests.append(f"large-file: one {self.large_file_mb} MB file read by every job")
        nodes = self._results().config.get("datanodes", -1)
        hdfs = f"HDFS {plural(self.replicas, 'replica')}" + (f" on {plural(nodes, 'DataNode')}" if nodes >= 0 else "")
        return "; ".join([f"{plural(self.jobs, 'job')}, each its own process", *tests, hdfs, self._cache(),
                          where(self.profile)])

    def _cache(self) -> str:
        if not self.cold_cache:
            return "page cache kept (cold_cache off)"
        kept = [note for note in self.notes.values() if note != "page cache dropped"]
        return kept[0] if kept else "page cache dropped before each test"


def _data(found: dict[str, int] | None) -> dict[str, int]:
    """The file set's files in an NFS folder listing (earlier versions left `*.tmp` files of interrupted writes)."""
    return {name: size for name, size in (found or {}).items() if name.endswith(".bin")}


def _storage_sentences(protocol: str, read: pd.DataFrame) -> list[str]:
    """NFS's fastest access method against HDFS's, and when the first and the last of each one's jobs finished."""
    best = {storage: rows.iloc[0] for storage, rows in read.groupby("storage", sort=False)}
    if not {"nfs", "hdfs"} <= set(best):
        return []
    nfs, hdfs = best["nfs"], best["hdfs"]
    ratio = nfs["MB/s"] / hdfs["MB/s"]
    faster = (f"NFS {times(ratio)} the MB/s of HDFS" if ratio >= 1 else f"HDFS {times(1 / ratio)} the MB/s of NFS")
    ends = ", ".join(f"{r['access']} {r['first done s']:.2f} → {r['last done s']:.2f} s" for r in (nfs, hdfs))
    return [f"{protocol}: {faster}, fastest of each ({nfs['access']} {nfs['MB/s']:.1f} against {hdfs['access']} "
            f"{hdfs['MB/s']:.1f} MB/s); first job done → last job done: {ends}."]


def _not_run() -> dict:
    """A job that was not started because its storage was unhealthy before the test."""
    return {"ok": False, "error": None, "start": time.time(), "end": time.time(), "bytes": 0}
