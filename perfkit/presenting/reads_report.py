"""The NFS vs HDFS parallel reads' report, built from its records alone.

    report = run_report(ReadComparison(profile, ...))  # places the file sets, measures, then reports
    report = ReadReport.load("data/results/nfs_vs_hdfs_reads/RUN.jsonl")  # the same report again, measuring nothing

Everything a report shows comes from the run's records and the config they share: the parameters, the live DataNodes,
the page cache before each test (dropped, or kept and why), the file sets as placed and verified, the profile the run
measured on. So a results file renders the same Findings and tables anywhere, with no lab and no cluster.
"""
from __future__ import annotations


import pandas as pd

from perfkit.errors import shorten
from perfkit.presenting.base import StoredReport
from perfkit.findings import Findings, plural, times
from perfkit.provenance import recorded_environment
from perfkit.reads.aggregate import aggregate
from perfkit.results import UNAVAILABLE, ResultSet

AGGREGATE_COLUMNS = ["test", "access", "storage", "jobs", "ok", "MB", "seconds", "MB/s", "first done s",
                     "last done s", "median done s"]


class ReadReport(StoredReport):
    """The tables, plots' frames and Findings of one run of the NFS vs HDFS parallel reads (ReadComparison)."""
    NEEDED = ("methods", "protocols", "jobs")
    WHAT = "a run of the NFS vs HDFS reads (nfs_vs_hdfs_reads)"
    unit = "read jobs"

    def __init__(self, results: ResultSet):
        super().__init__(results)
        params = self.parameters
        self.methods, self.protocols, self.jobs = params["methods"], params["protocols"], params["jobs"]
        self.files_per_job, self.files = params.get("files_per_job"), params.get("files")
        self.mean_mb, self.large_file_mb = params.get("mean_mb"), params.get("large_file_mb")
        self.replicas, self.cold_cache = params.get("replicas", 1), bool(params.get("cold_cache", True))

    @property
    def datanodes(self) -> int:
        """HDFS's live DataNodes when the run began, as it recorded them (-1: not known)."""
        return self._results().config.get("datanodes", -1)

    @property
    def profile_name(self) -> str:
        """The profile the run measured on, as it recorded it (findings.where)."""
        return self._results().config.get("profile", {}).get("name", "")

    # ---- the tables ----------------------------------------------------------------------------------------
    def jobs_frame(self) -> pd.DataFrame:
        """Every job that was started (an unavailable method started none), with its start and end in seconds from the
        first job's start in the run ("start (s)", "end (s)": not epoch seconds, which read as a count)."""
        frame = self._frame()
        jobs = frame[frame["params"].map(lambda p: p.get("job") is not None)]
        start, end = (jobs["params"].map(lambda p, key=key: p[key]).astype(float) for key in ("start", "end"))
        zero = start.min() if len(start) else 0.0
        return jobs.assign(**{"start (s)": (start - zero).round(3), "end (s)": (end - zero).round(3)})

    def _epochs(self, jobs: pd.DataFrame) -> pd.DataFrame:
        """What perfkit.reads.aggregate reads: start, end (seconds on one clock), bytes, ok."""
        return jobs.rename(columns={"start (s)": "start", "end (s)": "end"})[["start", "end", "bytes", "ok"]]

    def table(self) -> pd.DataFrame:
        """The published shape: test, MB/s, data nodes, replicas, jobs, access, comment."""
        frame = self._frame()
        jobs = self.jobs_frame()
        rows = []
        for (protocol, name), group in frame.groupby(["case", "subject"], sort=False):
            mine = jobs[(jobs["case"] == protocol) & (jobs["subject"] == name)]
            if mine.empty:  # unavailable
                rows.append({"test": protocol, "MB/s": float("nan"), "data nodes": self.datanodes,
                             "replicas": self.replicas, "jobs": self.jobs, "access": name,
                             "comment": group["error"].iloc[0]})
                continue
            a = aggregate(self._epochs(mine))
            comment = (f"first done {a['first done s']:.2f} s, median {a['median done s']:.2f} s, "
                       f"last {a['last done s']:.2f} s")
            if a["ok"] < a["jobs"]:
                comment += (f"; {plural(a['jobs'] - a['ok'], 'job')} FAILED: "
                            f"{shorten(mine.loc[~mine['ok'], 'error'].iloc[0], 200)}")
            rows.append({"test": protocol, "MB/s": a["MB/s"], "data nodes": self.datanodes,
                         "replicas": self.replicas, "jobs": self.jobs,
                         "access": f"{name} ({mine['storage'].iloc[0]})", "comment": comment})
        return pd.DataFrame(rows).round({"MB/s": 1})

    def aggregates(self) -> pd.DataFrame:
        """One row per test and access method that read: its storage and aggregate(), fastest first in each test."""
        jobs = self.jobs_frame()
        rows = [{"test": protocol, "access": name, "storage": mine["storage"].iloc[0],
                 **aggregate(self._epochs(mine))}
                for (protocol, name), mine in jobs.groupby(["case", "subject"], sort=False)]
        table = pd.DataFrame(rows, columns=AGGREGATE_COLUMNS)
        return table.sort_values(["test", "MB/s"], ascending=[True, False], kind="stable").reset_index(drop=True)

    def files_table(self) -> pd.DataFrame:
        """Both file sets as prepare() placed them on NFS and on HDFS and verified them equal, as the run recorded
        them (no rows: the run was measured on file sets placed before, by another run)."""
        return pd.DataFrame(self._results().config.get("placed") or [])

    def environment(self) -> pd.DataFrame:
        """Versions, host, profile and parameters, as the run recorded them, as one two-column table."""
        return recorded_environment(self._results().config)

    # ---- the Findings --------------------------------------------------------------------------------------
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
        if note := self.drift_note():  # no verdict beyond noise here: the noise factor is the bar
            undecided.append(note)
        return Findings(sentences, self._conditions(), undecided)

    def _conditions(self) -> str:
        from perfkit.findings import where

        tests = []
        if "random-files" in self.protocols:
            tests.append(f"random-files: {plural(self.files_per_job, 'file')} per job drawn from "
                         f"{plural(self.files, 'file')} of {self.mean_mb:g} MB on average")
        if "large-file" in self.protocols:
            tests.append(f"large-file: one {self.large_file_mb} MB file read by every job")
        nodes = self.datanodes
        hdfs = f"HDFS {plural(self.replicas, 'replica')}" + (f" on {plural(nodes, 'DataNode')}" if nodes >= 0 else "")
        return "; ".join([f"{plural(self.jobs, 'job')}, each its own process", *tests, hdfs, self._cache(),
                          where(self.profile_name), self.control_phrase()])

    def _cache(self) -> str:
        """The page cache before the tests: dropped, or kept (off, or not permitted: the first reason recorded)."""
        if not self.cold_cache:
            return "page cache kept (cold_cache off)"
        notes = self._results().config.get("page_cache")
        if notes is None:  # a run of a perfkit that kept the page cache's state out of its records
            return "whether the page cache was dropped is not recorded"
        kept = [note for note in notes.values() if note != "page cache dropped"]
        return kept[0] if kept else "page cache dropped before each test"


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
