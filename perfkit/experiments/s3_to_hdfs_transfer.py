"""S3 -> HDFS copy methods, timed, verified and compared on the same manifest.

    cmp = TransferComparison(load_profile("lab"), methods=["stream", "distcp"], concurrency=[1, 4])
    cmp.prepare(); results = cmp.run(); cmp.recap()

Each copy goes into a fresh folder under the run's own prefix ({prefix}/transfers/<run_id>/...);
cleanup removes that prefix and nothing else.
"""
from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from perfkit import provenance, validate
from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.config import Profile
from perfkit.datasets.files import FileSet, place_fileset
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.base import Experiment
from perfkit.findings import Findings, plural, times, where
from perfkit.health import HealthWatch
from perfkit.storages import storage_probes
from perfkit.results import UNAVAILABLE, ResultSet, new_run_id, now
from perfkit.transfer import REGISTRY, get_method, method_class
from perfkit.transfer.manifest import Manifest, build_manifest, verify_copy
from perfkit.parameters import check_fields, param

EXPERIMENT = "s3_to_hdfs_transfer"
STORAGE = "s3→hdfs"
ORDERS = ("given", "rotate", "shuffle")
MAX_CONCURRENCY = 256


def _optional_text(name: str, value) -> str | None:
    return validate.text(name, value, none_ok=True) or None
PLAIN_CLI = "cli-sequential"  # the published one-file-at-a-time copy: aws s3 cp, then hadoop fs -put


@dataclass
class TransferComparison(Experiment):
    experiment = EXPERIMENT
    unit = "copies"
    REPORT_DEFAULTS = {"files": 8}  # the report's: every method at every concurrency in minutes

    profile: Profile
    methods: list[str] = param(help="Copy methods.", factory=lambda: list(REGISTRY), check=validate.names)
    concurrency: list[int] = param(help="Levels for the parallel methods.", factory=lambda: [1, 4],
                                   check=validate.wholes)
    repeats: int = param(1, "Rounds of every method.", check=validate.whole)
    order: str = param("rotate", "given, rotate (each repeat starts one method later) or shuffle (seeded).",
                       check=validate.choice, choices=ORDERS)
    source_prefix: str | None = param(None, "S3 prefix to copy (default: a generated file set).",
                                      check=_optional_text, option="--source")
    files: int = param(24, "Generated file set: number of files.", check=validate.whole)
    mean_mb: float = param(16.0, "Generated file set: mean file size (MB).", check=validate.number, above=0,
                           unit="MB")
    checksum: bool = param(False, "Also compare every copy's MD5 with its source, read back.", check=validate.flag)
    seed: int = param(42, "The file set's and the shuffle's seed.", check=validate.whole, minimum=0)
    health_interval_s: float = param(1.0, "How often both storages are probed during each copy (seconds).",
                                     check=validate.number, above=0, unit="seconds")

    def __post_init__(self):
        check_fields(self)
        for name in self.methods:
            method_class(name)  # an unknown method is named with the choices
        if max(self.concurrency) > MAX_CONCURRENCY:  # each level is threads or processes on this machine
            raise PerfkitError(f"concurrency {max(self.concurrency)} is more than {MAX_CONCURRENCY} parallel copies: "
                               f"give levels from 1 to {MAX_CONCURRENCY}")
        self.fileset = None if self.source_prefix else FileSet(self.files, self.mean_mb, self.seed)
        self.run_id = new_run_id()
        self.run_root = self.profile.hdfs_path("transfers", self.run_id)
        self.manifest: Manifest | None = None
        self.results: ResultSet | None = None

    def prepare(self, progress: bool = True) -> Manifest:
        hdfs_storage.check_hdfs(self.profile)
        prefix = self.source_prefix or place_fileset(self.fileset, self.profile, progress)
        self.manifest = build_manifest(self.profile, prefix)
        return self.manifest

    def manifest_table(self) -> pd.DataFrame:
        m = self.manifest or self.prepare()
        return pd.DataFrame({"source": f"s3://{m.bucket}/{m.prefix}/", "files": len(m.files),
                             "MB": round(m.total_bytes / 1e6, 1),
                             "smallest MB": round(min(s for _, s in m.files) / 1e6, 1),
                             "largest MB": round(max(s for _, s in m.files) / 1e6, 1)}, index=[0])

    def plan(self) -> list[tuple[int, str, int]]:
        """(repeat, method, concurrency) in run order."""
        steps = []
        rng = random.Random(self.seed)
        for repeat in range(self.repeats):
            names = list(self.methods)
            if self.order == "rotate":
                shift = repeat % len(names)
                names = names[shift:] + names[:shift]
            elif self.order == "shuffle":
                rng.shuffle(names)
            for name in names:
                levels = self.concurrency if method_class(name).parallel else [1]
                steps += [(repeat, name, c) for c in levels]
        return steps

    def destination(self, name: str, concurrency: int, repeat: int) -> str:
        return f"{self.run_root}/{name}-c{concurrency}-r{repeat}"

    # -- the run: its steps and one attempt (perfkit.experiments.runner owns the loop) -----------------------------
    step_unit = "copy"

    def steps(self) -> list[tuple[int, str, int]]:
        return self.plan()

    def label(self, step: tuple[int, str, int]) -> str:
        repeat, name, level = step
        return f"{name} c={level} r={repeat}"

    def record_of(self, step: tuple[int, str, int]) -> dict:
        repeat, name, level = step
        return dict(subject=name, storage=STORAGE, case="total", phase="measured", iteration=repeat,
                    params={"concurrency": level})

    def ready(self, progress: bool = True) -> None:
        if self.manifest is None:
            self.prepare(progress)

    def begin(self) -> dict:
        """The run's config (the source's files and bytes); both storages' probes; a local scratch folder."""
        manifest = self.manifest
        config = provenance.run_config(self.profile, self.parameters(), network=self.s3_network(), dataset={
            "source": f"s3://{manifest.bucket}/{manifest.prefix}", "files": len(manifest.files),
            "bytes": manifest.total_bytes})
        self.hdfs = hdfs_storage.webhdfs_client(self.profile)
        self.probes = storage_probes(self.profile, ["hdfs", "s3"])
        self.unavailable: dict[str, str] = {}  # method -> why it cannot copy here ("" when it can)
        self.scratch_root = Path(tempfile.mkdtemp(prefix=f"perfkit-transfer-{self.run_id}-"))
        return config

    def attempt(self, step: tuple[int, str, int]) -> None:
        """One copy by one method at one concurrency; a method unavailable here is recorded once, and skipped."""
        repeat, name, level = step
        method = get_method(name, self.profile, level)
        if name not in self.unavailable:
            self.unavailable[name] = method.unavailable()
            if self.unavailable[name]:
                self.results.add_unavailable(name, STORAGE, "total", self.unavailable[name],
                                             params={"concurrency": level})
        if not self.unavailable[name]:
            self.copy_once(self.results, method, self.manifest, self.destination(name, level, repeat), repeat,
                           self.scratch_root, self.hdfs)

    def copy_once(self, results: ResultSet, method, manifest: Manifest, dest: str, repeat: int,
                  scratch_root: Path, hdfs) -> None:
        """One timed copy, verified; recorded as ok only after verification passed."""
        if not dest.startswith(self.run_root + "/"):
            raise PerfkitError(f"destination {dest} is outside this run's prefix {self.run_root}: refused")
        scratch = scratch_root / Path(dest).name
        scratch.mkdir()
        params = {"concurrency": method.concurrency}
        started = now()
        try:
            hdfs.makedirs(dest)
            with HealthWatch(self.probes, self.health_interval_s) as watch:
                if watch.problem:
                    raise PerfkitError(watch.problem)
                t0 = time.perf_counter()
                per_file = method.copy(manifest, dest, scratch)
                wall = time.perf_counter() - t0
            if watch.problem:  # a copy that waited out an outage is not a measurement of the method
                raise PerfkitError(watch.problem)
            verify_copy(manifest, hdfs_storage.hdfs_listing(hdfs, dest))
            if self.checksum:
                self.verify_checksums(manifest, dest, hdfs)
        except Exception as err:  # noqa: BLE001 - a failed copy is recorded and the run goes on
            message = str(err) if isinstance(err, PerfkitError) else f"{type(err).__name__}: {err}"
            results.add(subject=method.name, storage=STORAGE, case="total", phase="measured", iteration=repeat,
                        started_at=started, wall_s=None, ok=False, error=message[:1000], params=params)
            return
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            _remove_quietly(hdfs, dest)  # inside the run's prefix; keeps HDFS from filling up
        results.add(subject=method.name, storage=STORAGE, case="total", phase="measured", iteration=repeat,
                    started_at=started, wall_s=wall, bytes=manifest.total_bytes, params=params)
        for name, seconds in per_file.items():
            results.add(subject=method.name, storage=STORAGE, case="file", phase="measured", iteration=repeat,
                        started_at=started, wall_s=seconds, bytes=manifest.sizes[name],
                        params={**params, "file": name})

    def verify_checksums(self, manifest: Manifest, dest: str, hdfs) -> None:
        import hashlib

        s3 = s3_storage.s3_client(self.profile)
        for name, _ in manifest.files:
            source = hashlib.md5(s3.get_object(Bucket=manifest.bucket, Key=manifest.key(name))["Body"].read())
            with hdfs.read(f"{dest}/{name}") as reader:
                copied = hashlib.md5(reader.read())
            if source.digest() != copied.digest():
                raise PerfkitError(f"verification failed: {name} differs from its source (MD5)")

    def cleanup(self, hdfs=None) -> None:
        """Remove this run's own prefix and scratch folder, and nothing else (HDFS down: say what is left, do not hide
        the run's error)."""
        if scratch := getattr(self, "scratch_root", None):
            shutil.rmtree(scratch, ignore_errors=True)
        _remove_quietly(hdfs or getattr(self, "hdfs", None) or hdfs_storage.webhdfs_client(self.profile),
                        self.run_root)

    def summary(self) -> pd.DataFrame:
        return summarise_transfers(self._frame())

    def recap(self) -> pd.DataFrame:
        return recap_table(self.summary())

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
        """One row per copy (per-file rows left out), with its concurrency."""
        frame = self._frame()
        totals = frame[frame["case"] == "total"]
        return totals.assign(concurrency=totals["params"].map(lambda p: p.get("concurrency")))[
            ["subject", "concurrency", "iteration", "started_at", "wall_s", "bytes", "mb_per_s", "ok", "error"]]

    def findings(self) -> Findings:
        """What this run found, first in its report: the fastest verified copy with its time and MB/s, how much faster
        it was than the slowest and than the plain CLI, what concurrency changed; methods that could not copy here."""
        summary = self.summary()
        copied = summary[summary["runs"] > 0].sort_values("seconds").reset_index(drop=True)
        sentences, undecided = [], []
        if len(copied):
            sentences += _ranking_sentences(copied)
            beyond_noise, undecided = self._against_runner_up(copied)
            sentences += beyond_noise + _concurrency_sentences(copied)
        for row in summary[summary["status"] != "ok"].itertuples():
            undecided.append(f"{_label(row.method, row.concurrency)}: {row.status}")
        return Findings(sentences, self._conditions(), undecided)

    def _against_runner_up(self, copied: pd.DataFrame) -> tuple[list[str], list[str]]:
        """Is the fastest ahead of the runner-up beyond noise? Only when every copy of it beat every copy of the other;
        one copy each tells nothing of noise. Returns (sentences, undecided)."""
        if len(copied) < 2:
            return [], []
        first, second = copied.iloc[0], copied.iloc[1]
        names = (_label(first["method"], first["concurrency"]), _label(second["method"], second["concurrency"]))
        fewest = int(min(first["runs"], second["runs"]))
        if fewest < 2:
            return [], [f"Whether {names[0]} beats {names[1]} beyond noise: {plural(fewest, 'copy')} each is no "
                        "measure of noise (repeats ≥ 3 would tell)"]
        if self._wall_times(first).max() < self._wall_times(second).min():
            return [f"Every copy by {names[0]} was faster than every copy by {names[1]}, the runner-up."], []
        return [], [f"Whether {names[0]} beats {names[1]}: their copies' times overlap"]

    def _wall_times(self, row: pd.Series) -> pd.Series:
        copies = self.copies()
        return copies.loc[(copies["subject"] == row["method"]) & (copies["concurrency"] == row["concurrency"])
                          & copies["ok"].astype(bool), "wall_s"]

    def _conditions(self) -> str:
        config = self._results().config
        dataset = config.get("dataset", {})
        data = (f"{plural(dataset['files'], 'file')}, {dataset['bytes'] / 1e6:,.1f} MB in all"
                if dataset else "the manifest's files")
        verified = "verified by file count, sizes and MD5" if self.checksum else "verified by file count and sizes"
        return (f"{data}; {plural(self.repeats, 'copy')} per method and concurrency ({self.order} order), "
                f"no warm-up, {verified}; {where(self.profile, self.measured_network)}")


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


def _label(method: str, concurrency: int) -> str:
    return f"{method} ({concurrency} at once)" if method_class(method).parallel else method


def _copy_phrase(row) -> str:
    """'stream (4 at once): 3.0 s, 100.0 MB/s'; 'median of 3 copies' where there were several."""
    median = f", median of {row['runs']} copies" if row["runs"] > 1 else ""
    return f"{_label(row['method'], row['concurrency'])}: {row['seconds']:.1f} s, {row['MB/s']:.1f} MB/s{median}"


def _ranking_sentences(copied: pd.DataFrame) -> list[str]:
    """The fastest verified copy; the slowest, and the plain CLI (aws s3 cp then hadoop fs -put, file by file),
    as multiples of the fastest's time. The same sentences whatever the ranking (the plain CLI's says where it
    stands), so two runs of one report make the same findings."""
    fastest = copied.iloc[0]
    found = [f"Fastest verified copy: {_copy_phrase(fastest)}."]
    if len(copied) > 1:
        slowest = copied.iloc[-1]
        found.append(f"Slowest verified copy: {_copy_phrase(slowest)}, "
                     f"{times(slowest['seconds'] / fastest['seconds'])} the fastest's time.")
    plain = copied[copied["method"] == PLAIN_CLI]
    if len(plain) and len(copied) > 1:
        place = plain.index[0]
        ratio = times(plain.iloc[0]["seconds"] / fastest["seconds"])
        found.append(f"The plain CLI, {_copy_phrase(plain.iloc[0])}, "
                     + ("was the fastest." if place == 0 else
                        f"was the slowest: {ratio} the fastest's time." if place == len(copied) - 1 else
                        f"{ratio} the fastest's time."))
    return found


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


def recap_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The published shape, fastest first: Duration | Method | MB/s (unavailable methods last, with why)."""
    s = summary.sort_values("seconds", na_position="last").reset_index(drop=True)
    return pd.DataFrame({
        "Duration": [_duration(v) for v in s["seconds"]],
        "Method": [m if not parallel_label else f"{m} ({c} at once)"
                   for m, c, parallel_label in zip(s["method"], s["concurrency"],
                                                   [method_class(m).parallel for m in s["method"]])],
        "MB/s": s["MB/s"].round(1),
        "status": s["status"],
    })


def _duration(seconds: float) -> str:
    if seconds != seconds:  # NaN
        return "–"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:04.1f}s"


def _remove_quietly(hdfs, path: str) -> None:
    """Delete a folder of this run; if HDFS cannot, say what is left behind instead of raising over the real error."""
    try:
        hdfs.delete(path, recursive=True)
    except Exception as err:  # noqa: BLE001 - WebHDFS and requests raise several types
        print(f"perfkit: could not remove {path} ({root_cause(err, 160)}): remove it once HDFS is back, "
              f"e.g. hdfs dfs -rm -r {path}", file=sys.stderr, flush=True)
