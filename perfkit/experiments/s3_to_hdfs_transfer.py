"""S3 -> HDFS copy methods, timed, verified and compared on the same manifest.

    cmp = TransferComparison(load_profile("lab"), methods=["stream", "distcp"], concurrency=[1, 4])
    report = run_report(cmp); report.recap()  # TransferReport.load(path): a saved run's report, measuring nothing

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

from perfkit import provenance, validate
from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.config import Profile
from perfkit.datasets.files import FileSet, place_fileset
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.base import Experiment
from perfkit.experiments.attempt import Run, StorageHealth, Watched
from perfkit.storages import storage_probes
from perfkit.results import ResultSet, new_run_id, now
from perfkit.transfer import REGISTRY, get_method, method_class
from perfkit.transfer.manifest import Manifest, build_manifest, verify_copy
from perfkit.parameters import check_fields, param

EXPERIMENT = "s3_to_hdfs_transfer"
STORAGE = "s3→hdfs"
ORDERS = ("given", "rotate", "shuffle")
MAX_CONCURRENCY = 256


def _optional_text(name: str, value) -> str | None:
    return validate.text(name, value, none_ok=True) or None


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
    order: str = param("rotate", "given, rotate (a seeded random order, each repeat starting one method later) or "
                       "shuffle (seeded by `seed`).",
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

    def plan(self) -> list[tuple[int, str, int]]:
        """(repeat, method, concurrency) in run order."""
        steps = []
        rng = random.Random(self.seed)
        for repeat in range(self.repeats):
            names = list(self.methods)
            if self.order == "rotate":
                names = self.in_run_order(names, repeat, "methods")
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

    @property
    def order_design(self) -> str:
        return {"given": "as given", "rotate": "randomised (seeded by the run's order seed), rotated each repeat",
                "shuffle": "shuffled each repeat (seeded by seed)"}[self.order]

    def control(self):
        """The drift control: a small read of the source's first object on S3 (the copies' HDFS side is new)."""
        from perfkit.experiments.control import files_control
        from perfkit.storages.base import Location

        if not self.manifest or not self.manifest.files:
            return None
        folder = Location("s3", self.manifest.prefix, self.manifest.bucket)
        return files_control(self.profile, {"s3": (folder, self.manifest.files[0][0])})

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

    def config(self) -> dict:
        """What every record of the run carries, and all its report needs besides the records (TransferReport): the
        manifest copied, which methods copy several files at once, where S3 sat."""
        return provenance.run_config(self.profile, self.parameters(), network=self.s3_network(),
                                     dataset=manifest_record(self.manifest),
                                     parallel_methods=[name for name in self.methods if method_class(name).parallel])

    def begin(self) -> dict:
        """The run's config (the source's files and bytes); both storages' probes; a local scratch folder."""
        config = self.config()
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
            with Watched([StorageHealth(self.probes, self.health_interval_s, said_by=method.name)]) as watched:
                if watched.refused:
                    raise PerfkitError(watched.refused)
                t0 = time.perf_counter()
                per_file = method.copy(manifest, dest, scratch)
                wall = time.perf_counter() - t0
                watched.stop()
                if problem := watched.end(Run({}, None)).error:  # a copy that waited out an outage: no measurement
                    raise PerfkitError(problem)
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


def manifest_record(manifest: Manifest) -> dict:
    """The files every method copies, as the run records them (TransferReport's manifest table and conditions)."""
    sizes = [size for _, size in manifest.files]
    return {"source": f"s3://{manifest.bucket}/{manifest.prefix}", "files": len(manifest.files),
            "bytes": manifest.total_bytes, "smallest_bytes": min(sizes), "largest_bytes": max(sizes)}


def _remove_quietly(hdfs, path: str) -> None:
    """Delete a folder of this run; if HDFS cannot, say what is left behind instead of raising over the real error."""
    try:
        hdfs.delete(path, recursive=True)
    except Exception as err:  # noqa: BLE001 - WebHDFS and requests raise several types
        print(f"perfkit: could not remove {path} ({root_cause(err, 160)}): remove it once HDFS is back, "
              f"e.g. hdfs dfs -rm -r {path}", file=sys.stderr, flush=True)
