"""The S3 -> HDFS copies' report, built from their records alone (perfkit.experiments.s3_to_hdfs_transfer measures).

    report = run_report(TransferComparison(profile, ...))  # measures, then reports
    report = TransferReport.load("data/results/s3_to_hdfs_transfer/RUN.jsonl")  # the same again, measuring nothing

Everything a report shows comes from the run's records and the config they share: the parameters (methods, repeats,
order, checksum), which of the methods copy several files at once, the manifest copied (its source, files, bytes,
smallest and largest file), where S3 sat and what its path measured, the profile's name and the versions. So a results
file renders the same Findings and tables anywhere, with no lab and no cluster.
"""
from __future__ import annotations


import pandas as pd

from perfkit import drift
from perfkit.calibration import Calibration
from perfkit.errors import root_cause
from perfkit.presenting.base import StoredReport
from perfkit.findings import Findings, plural, times, where
from perfkit.provenance import recorded_environment
from perfkit.results import UNAVAILABLE, ResultSet

PLAIN_CLI = "cli-sequential"  # the published one-file-at-a-time copy: aws s3 cp, then hadoop fs -put
COPY_COLUMNS = {"subject": "method", "iteration": "repeat", "started_at": "started at", "wall_s": "seconds",
                "mb_per_s": "MB/s"}  # copies(): a record's names, as a reader reads them


class TransferReport(StoredReport):
    """The tables, plots' frames and Findings of one run of the S3 -> HDFS copies."""
    NEEDED = ("methods", "repeats", "order", "checksum")  # the parameters it reads
    WHAT = "a run of the S3 -> HDFS copies (s3_to_hdfs_transfer)"
    unit = "copies"

    def __init__(self, results: ResultSet):
        super().__init__(results)
        config, params = results.config, self.parameters
        self.methods, self.repeats = list(params["methods"]), params["repeats"]
        self.order, self.checksum = params["order"], bool(params["checksum"])
        self.dataset: dict = config.get("dataset") or {}
        self.parallel = parallel_methods(config, [*self.methods, *{r.subject for r in results.records}])
        self.measured_network = Calibration.from_dict(config["network"]) if config.get("network") else None

    def network_headline(self):
        """The report's first line: where S3 sat (the network, emulated or not) and what its path measured."""
        from IPython.display import Markdown

        if self.measured_network is None:
            return Markdown("**S3's path was not measured in this run.**")
        return Markdown(f"**{self.measured_network.headline()}**")

    @property
    def profile_name(self) -> str:
        """The profile the run copied on, as it recorded it (findings.where)."""
        return self._results().config.get("profile", {}).get("name", "")

    def label(self, method: str, concurrency: int) -> str:
        """'stream (4 at once)' for a method that copies several files at once; the name alone for the others."""
        return f"{method} ({concurrency} at once)" if method in self.parallel else method

    # ---- the tables ----------------------------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """One row per (method, concurrency): median duration over repeats, MB/s from it, status."""
        return summarise_transfers(self._frame())

    def recap(self) -> pd.DataFrame:
        return recap_table(self.summary(), self.parallel)

    def per_file_times(self) -> pd.DataFrame:
        """Seconds per file (rows) for each method and concurrency that copies file by file (columns)."""
        frame = self._frame()
        files = frame[(frame["case"] == "file") & frame["ok"].astype(bool)]
        if files.empty:
            return pd.DataFrame()
        files = files.assign(file=files["params"].map(lambda p: p["file"]),
                             concurrency=files["params"].map(lambda p: p["concurrency"]))
        return files.pivot_table(index="file", columns=["subject", "concurrency"], values="wall_s").round(2)

    def copies(self) -> pd.DataFrame:
        """One row per copy (per-file rows left out), with its concurrency, under plain headers: method, concurrency,
        repeat (from 1), started at, seconds, bytes, MB/s, ok, error."""
        frame = self._frame()
        totals = frame[frame["case"] == "total"]
        totals = totals.assign(concurrency=totals["params"].map(lambda p: p.get("concurrency")),
                               iteration=totals["iteration"] + 1, mb_per_s=totals["mb_per_s"].round(1))
        return totals[["subject", "concurrency", "iteration", "started_at", "wall_s", "bytes", "mb_per_s", "ok",
                       "error"]].rename(columns=COPY_COLUMNS)

    def manifest_table(self) -> pd.DataFrame:
        """The files every method copied, as the run recorded them: source, count, MB, smallest and largest file."""
        d = self.dataset
        if not d:
            return pd.DataFrame({"source": ["not recorded by this run"]})
        table = {"source": f"{d['source']}/", "files": d["files"], "MB": round(d["bytes"] / 1e6, 1)}
        for column, key in (("smallest MB", "smallest_bytes"), ("largest MB", "largest_bytes")):
            if key in d:  # a run of an older perfkit did not record them
                table[column] = round(d[key] / 1e6, 1)
        return pd.DataFrame(table, index=[0])

    def environment(self) -> pd.DataFrame:
        """Versions, host, profile and parameters, as the run recorded them, as one two-column table."""
        return recorded_environment(self._results().config)

    # ---- the Findings --------------------------------------------------------------------------------------
    def findings(self) -> Findings:
        """What this run found, first in its report: the fastest verified copy with its time and MB/s, how much faster
        it was than the slowest and than the plain CLI, what concurrency changed; methods that could not copy here."""
        summary = self.summary()
        copied = summary[summary["runs"] > 0].sort_values("seconds").reset_index(drop=True)
        sentences, undecided = [], []
        smallest = drift.NOISE_FACTOR  # the only verdict beyond noise: the fastest against the runner-up
        if len(copied):
            sentences += self._ranking_sentences(copied)
            beyond_noise, undecided = self._against_runner_up(copied)
            if beyond_noise:
                smallest = drift.smallest_effect([copied.iloc[1]["seconds"] / copied.iloc[0]["seconds"]])
                beyond_noise = [drift.mark(s, smallest, self.drift_bound(smallest)) for s in beyond_noise]
            sentences += beyond_noise + _concurrency_sentences(copied)
        for row in summary[summary["status"] != "ok"].itertuples():
            undecided.append(f"{self.label(row.method, row.concurrency)}: {row.status}")
        if note := self.drift_note(smallest):
            undecided.append(note)
        return Findings(sentences, self._conditions(), undecided)

    def _copy_phrase(self, row) -> str:
        """'stream (4 at once): 3.0 s, 100.0 MB/s'; 'median of 3 copies' where there were several."""
        median = f", median of {row['runs']} copies" if row["runs"] > 1 else ""
        name = self.label(row["method"], row["concurrency"])
        return f"{name}: {row['seconds']:.1f} s, {row['MB/s']:.1f} MB/s{median}"

    def _ranking_sentences(self, copied: pd.DataFrame) -> list[str]:
        """The fastest verified copy; the slowest, and the plain CLI (aws s3 cp then hadoop fs -put, file by file),
        as multiples of the fastest's time. The same sentences whatever the ranking (the plain CLI's says where it
        stands), so two runs of one report make the same findings."""
        fastest = copied.iloc[0]
        found = [f"Fastest verified copy: {self._copy_phrase(fastest)}."]
        if len(copied) > 1:
            slowest = copied.iloc[-1]
            found.append(f"Slowest verified copy: {self._copy_phrase(slowest)}, "
                         f"{times(slowest['seconds'] / fastest['seconds'])} the fastest's time.")
        plain = copied[copied["method"] == PLAIN_CLI]
        if len(plain) and len(copied) > 1:
            place = plain.index[0]
            ratio = times(plain.iloc[0]["seconds"] / fastest["seconds"])
            found.append(f"The plain CLI, {self._copy_phrase(plain.iloc[0])}, "
                         + ("was the fastest." if place == 0 else
                            f"was the slowest: {ratio} the fastest's time." if place == len(copied) - 1 else
                            f"{ratio} the fastest's time."))
        return found

    def _against_runner_up(self, copied: pd.DataFrame) -> tuple[list[str], list[str]]:
        """Is the fastest ahead of the runner-up beyond noise? Only when every copy of it beat every copy of the other;
        one copy each tells nothing of noise. Returns (sentences, undecided)."""
        if len(copied) < 2:
            return [], []
        first, second = copied.iloc[0], copied.iloc[1]
        names = (self.label(first["method"], first["concurrency"]), self.label(second["method"], second["concurrency"]))
        fewest = int(min(first["runs"], second["runs"]))
        if fewest < 2:
            return [], [f"Whether {names[0]} beats {names[1]} beyond noise: {plural(fewest, 'copy')} each is no "
                        "measure of noise (repeats ≥ 3 would tell)"]
        if self._wall_times(first).max() < self._wall_times(second).min():
            return [f"Every copy by {names[0]} was faster than every copy by {names[1]}, the runner-up."], []
        return [], [f"Whether {names[0]} beats {names[1]}: their copies' times overlap"]

    def _wall_times(self, row: pd.Series) -> pd.Series:
        copies = self.copies()
        return copies.loc[(copies["method"] == row["method"]) & (copies["concurrency"] == row["concurrency"])
                          & copies["ok"].astype(bool), "seconds"]

    def _conditions(self) -> str:
        dataset = self.dataset
        data = (f"{plural(dataset['files'], 'file')}, {dataset['bytes'] / 1e6:,.1f} MB in all"
                if dataset else "the manifest's files")
        verified = "verified by file count, sizes and MD5" if self.checksum else "verified by file count and sizes"
        return (f"{data}; {plural(self.repeats, 'copy')} per method and concurrency ({self.order} order), "
                f"no warm-up, {verified}; {where(self.profile_name, self.measured_network)}; {self.control_phrase()}")


def parallel_methods(config: dict, methods: list[str]) -> set[str]:
    """The methods that copy several files at once, as the run recorded them (config `parallel_methods`); a run of an
    older perfkit did not: the transfer registry's word today, for those of its methods it still knows."""
    if "parallel_methods" in config:
        return set(config["parallel_methods"])
    from perfkit.transfer import REGISTRY, method_class

    return {name for name in methods if name in REGISTRY and method_class(name).parallel}


def summarise_transfers(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, concurrency): median duration over repeats, MB/s from it, status."""
    totals = frame[frame["case"] == "total"].copy()
    totals["concurrency"] = totals["params"].map(lambda p: p.get("concurrency", 1))
    rows = []
    for (method, level), group in totals.groupby(["subject", "concurrency"], sort=False):
        ok = group[group["ok"].astype(bool)]
        errors = group.loc[~group["ok"].astype(bool), "error"].dropna()
        seconds = ok["wall_s"].median() if len(ok) else float("nan")
        rows.append({"method": method, "concurrency": level, "runs": len(ok), "seconds": seconds,
                     "min_seconds": ok["wall_s"].min() if len(ok) else float("nan"),
                     "MB/s": ok["bytes"].iloc[0] / 1e6 / seconds if len(ok) else float("nan"),
                     "status": _status(len(group), len(ok), errors)})
    return pd.DataFrame(rows)


def recap_table(summary: pd.DataFrame, parallel: set[str]) -> pd.DataFrame:
    """The published shape, fastest first: Duration | Method | MB/s (unavailable methods last, with why); a method
    of `parallel` is named with its concurrency."""
    s = summary.sort_values("seconds", na_position="last").reset_index(drop=True)
    return pd.DataFrame({
        "Duration": [_duration(v) for v in s["seconds"]],
        "Method": [f"{m} ({c} at once)" if m in parallel else m for m, c in zip(s["method"], s["concurrency"])],
        "MB/s": [f"{v:.1f}" if v == v else "—" for v in s["MB/s"]],
        "status": s["status"],
    })


def _concurrency_sentences(copied: pd.DataFrame) -> list[str]:
    """Per parallel method copied at two or more levels: its highest level against its lowest."""
    found = []
    for method, levels in copied.groupby("method", sort=False):
        if len(levels) < 2:
            continue
        low, high = levels.sort_values("concurrency").iloc[[0, -1]].to_dict("records")
        ratio = low["seconds"] / high["seconds"]
        change = f"{times(ratio)} faster" if ratio >= 1 else f"{times(1 / ratio)} slower"
        found.append(f"{method}: {high['concurrency']} at once {change} than {low['concurrency']} "
                     f"({low['MB/s']:.1f} → {high['MB/s']:.1f} MB/s).")
    return found


def _status(copies: int, ok: int, errors: pd.Series) -> str:
    """ok | unavailable: why | failed[ n of m]: the root cause of the first failure, on one line."""
    if ok == copies:
        return "ok"
    # records of older runs may hold a whole Java trace: the recap shows only its root cause
    reason = root_cause(errors.iloc[0]) if len(errors) else "no reason recorded"
    if reason.startswith(UNAVAILABLE):
        return reason
    return f"failed{f' {copies - ok} of {copies}' if ok else ''}: {reason}"


def _duration(seconds: float) -> str:
    if seconds != seconds:  # NaN
        return "—"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:04.1f}s"
