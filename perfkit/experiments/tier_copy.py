"""The study's microbenchmark: copy a prefix of N objects to local disk from S3 directly (`aws s3 cp --recursive`)
and through Alluxio (`alluxio fs copyToLocal`), cold, warm and hot, every byte checked; and the same with boto3 in
this process, from S3 directly and through Alluxio's S3 API (no tool start-up at all).

    bench = TierCopy(load_profile("lab"), objects=8, object_mb=16, rounds=2)
    run_report(bench).copy_table()  # the objects placed, every copy, the table (tier_copy_report)

Per round (the readers' order rotates): the tier is freed and the page cache dropped where permitted, then three
copies with nothing emptied between them. Each copy lands in a fresh local folder, every file's MD5 is checked
against the bytes written to S3, and the folder is deleted. Both tools are command-line programs: their start-up
(a JVM for Alluxio's shell, Python for the aws CLI) is inside each time, and measured apart as "start-up (s)".
"""
from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from perfkit import provenance, validate
from perfkit.storages import s3 as s3_storage
from perfkit.tiers.alluxio_client import AlluxioClient
from perfkit.compat import file_digest
from perfkit.config import Profile
from boto3.s3.transfer import TransferConfig

from perfkit.storages.digest import UPLOAD_CONFIG
from perfkit.errors import PerfkitError, root_cause
from perfkit.experiments.attempt import Observer, Run, StorageHealth, Watched
from perfkit.experiments.base import Experiment
from perfkit.parameters import check_fields, param
from perfkit.protocol import TRIES, drop_page_cache
from perfkit.results import now
from perfkit.storages import storage_probes
from perfkit.tiers import Alluxio
from perfkit.extras import missing
from perfkit.transfer import aws_env
from perfkit.transfer.cli import aws_command
from perfkit.progress import progress_bar

EXPERIMENT = "tier_copy"
READERS = {"aws s3 cp": "s3", "alluxio fs copyToLocal": "alluxio", "boto3": "s3",
           "boto3 via Alluxio's S3 API": "alluxio"}  # reader -> the storage it reads
# whole-object GETs: Alluxio caches a block only when it is read whole (its S3 API's ranged reads are not cached)
WHOLE_OBJECTS = TransferConfig(multipart_threshold=1 << 40, max_concurrency=4)


@dataclass
class TierCopy(Experiment):
    REPORT_DEFAULTS = {"objects": 4, "rounds": 1}  # the cache-tier report's: a JVM starts for every Alluxio copy
    profile: Profile
    objects: int = param(8, "objects under one S3 prefix, copied to local disk", check=validate.whole)
    object_mb: float = param(16, "MB per object", check=validate.number, above=0, unit="MB per object")
    rounds: int = param(2, "rounds of cold, warm, hot per reader", check=validate.whole)
    seed: int = param(7, "the objects' random bytes (the same seed reuses the objects on S3)", check=validate.whole,
                      minimum=0)
    readers: list[str] = param(help="the readers, in order", factory=lambda: list(READERS), check=validate.names,
                               choices=list(READERS))
    experiment = EXPERIMENT
    unit = "copies"
    expected: dict[str, str] = field(default_factory=dict, init=False, repr=False)  # object name -> MD5
    part_of: str | None = field(default=None, init=False, repr=False)  # the run this bench belongs to (run_report)

    def __post_init__(self):
        check_fields(self)
        if "aws s3 cp" in self.readers and (why := missing("awscli", "the reader 'aws s3 cp'")):
            raise PerfkitError(f"tier_copy: {why}, or leave that reader out (readers=...)")
        self.tier = Alluxio(self.profile)
        reason = self.tier.unavailable()
        if reason:
            raise PerfkitError(f"tier_copy: {reason}")

    @property
    def object_bytes(self) -> int:
        return int(self.object_mb * 1_000_000)

    @property
    def prefix(self) -> str:
        """The objects' S3 key prefix: named by their shape and seed, so the same request reuses them."""
        return self.profile.s3_key("datasets", f"tier-copy-{self.objects}x{self.object_mb:g}MB-seed{self.seed}")

    def _object(self, i: int) -> bytes:
        return np.random.default_rng([self.seed, i]).bytes(self.object_bytes)

    def prepare(self, progress: bool = True) -> None:
        """The objects on S3 (written once; an object of another size or content is written again)."""
        s3 = s3_storage.shared_s3_client(self.profile)
        for i in progress_bar(range(self.objects), desc="objects on S3", unit="object", disable=not progress):
            name, data = f"part-{i:04d}.bin", self._object(i)
            self.expected[name] = hashlib.md5(data).hexdigest()
            key = f"{self.prefix}/{name}"
            try:
                head = s3.head_object(Bucket=self.profile.s3_bucket, Key=key)
                if head["ContentLength"] == len(data) and head["Metadata"].get("md5") == self.expected[name]:
                    continue
            except s3.exceptions.ClientError as err:
                if err.response["Error"]["Code"] not in ("404", "NoSuchKey", "NotFound"):
                    raise PerfkitError(f"S3 object {key}: {root_cause(err, 200)}") from None
            s3.upload_fileobj(io.BytesIO(data), self.profile.s3_bucket, key, Config=UPLOAD_CONFIG,
                              ExtraArgs={"Metadata": {"md5": self.expected[name]}})

    def control(self):
        """The drift control: a small read of the first object on S3."""
        from perfkit.experiments.control import files_control
        from perfkit.storages.base import Location

        folder = Location("s3", self.prefix, self.profile.s3_bucket)
        return files_control(self.profile, {"s3": (folder, "part-0000.bin")})

    # the two readers ---------------------------------------------------------------------------------------------
    def command(self, reader: str, local: Path) -> list[str]:
        s3_url = f"s3://{self.profile.s3_bucket}/{self.prefix}"
        if reader == "aws s3 cp":
            return aws_command(self.profile, "s3", "cp", "--recursive", s3_url, str(local))
        return AlluxioClient(self.profile).command("copyToLocal", self.tier.location(s3_url), str(local))

    def start_up(self, reader: str) -> float:
        """Seconds the tool takes to start and do almost nothing (aws --version; alluxio fs ls of the mount); 0 for
        boto3, which runs in this process."""
        if reader.startswith("boto3"):
            return 0.0
        argv = aws_command(self.profile, "--version") if reader == "aws s3 cp" else AlluxioClient(self.profile).command(
            "ls", self.tier.mount)
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=aws_env(self.profile), timeout=600)
        return time.perf_counter() - t0

    def s3_client(self, reader: str):
        """boto3's client for S3 directly, or for Alluxio's S3 API (path-style; it names the user by the access key)."""
        if reader == "boto3":
            return s3_storage.shared_s3_client(self.profile)
        if not self.profile.alluxio_s3_endpoint:
            raise PerfkitError("the profile names no Alluxio S3 API (alluxio_s3_endpoint): start Alluxio's proxy "
                               "and name its address, e.g. http://master:39999/api/v1/s3")
        import boto3
        from botocore.config import Config

        env = aws_env(self.profile)
        return boto3.client("s3", endpoint_url=self.profile.alluxio_s3_endpoint, region_name=self.profile.s3_region,
                            aws_access_key_id=env.get("AWS_ACCESS_KEY_ID"),
                            aws_secret_access_key=env.get("AWS_SECRET_ACCESS_KEY"),
                            config=Config(s3={"addressing_style": "path"}, retries={"mode": "standard"}))

    def _boto3_copy(self, reader: str, local: Path) -> None:
        client = self.s3_client(reader)
        names = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.profile.s3_bucket,
                                                                     Prefix=self.prefix + "/"):
            names += [obj["Key"] for obj in page.get("Contents", []) if not obj["Key"].endswith("/")]
        local.mkdir(parents=True)
        for key in names:
            client.download_file(self.profile.s3_bucket, key, str(local / key.rsplit("/", 1)[1]), Config=WHOLE_OBJECTS)

    def copy_once(self, reader: str) -> tuple[float, int]:
        """One timed copy into a fresh local folder; (seconds, bytes), the files' MD5s checked, the folder removed."""
        work = Path(tempfile.mkdtemp(prefix="perfkit-tier-copy-"))
        local = work / "copy"
        try:
            if reader.startswith("boto3"):
                t0 = time.perf_counter()
                try:
                    self._boto3_copy(reader, local)
                except Exception as err:
                    if isinstance(err, PerfkitError):
                        raise
                    raise PerfkitError(f"{reader} failed: {root_cause(err, 300)}") from None
                return time.perf_counter() - t0, self._verify(local)
            t0 = time.perf_counter()
            run = subprocess.run(self.command(reader, local), capture_output=True, text=True,
                                 env=aws_env(self.profile, {"AWS_EC2_METADATA_DISABLED": "true"}), timeout=3600)
            seconds = time.perf_counter() - t0
            if run.returncode != 0:
                said = "\n".join(x for x in (run.stderr + run.stdout).splitlines() if not x.startswith("SLF4J"))
                raise PerfkitError(f"{reader} failed (exit {run.returncode}): {root_cause(said or 'no output', 300)}")
            return seconds, self._verify(local)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _verify(self, local: Path) -> int:
        found = {p.name: p for p in local.rglob("*") if p.is_file()}
        if sorted(found) != sorted(self.expected):
            missing, extra = set(self.expected) - set(found), set(found) - set(self.expected)
            raise PerfkitError(f"the copy in {local} holds other files than the prefix: missing {sorted(missing)}, "
                               f"extra {sorted(extra)}")
        for name, path in found.items():
            with open(path, "rb") as f:
                got = file_digest(f, "md5").hexdigest()
            if got != self.expected[name]:
                raise PerfkitError(f"{name} copied with MD5 {got}, but {self.expected[name]} was written to S3")
        return sum(p.stat().st_size for p in found.values())

    # the protocol: its steps and one attempt (perfkit.experiments.runner owns the loop) ----------------------------
    step_unit = "copy"

    def ready(self, progress: bool = True) -> None:
        if not self.expected:
            self.prepare(progress)

    def begin(self) -> dict:
        """The run's config (with Alluxio's version, read from its shell); S3's and the tier's probes."""
        self.client = AlluxioClient(self.profile)
        config = provenance.run_config(self.profile, self.parameters(), network=self.s3_network(),
                                       part_of=self.part_of)
        config["versions"]["alluxio"] = self.client.version()
        s3_probe = storage_probes(self.profile, ["s3"])["s3"]
        self.probes = {"s3": s3_probe, "alluxio": self.tier.probe(s3_probe)}
        self.emptied: dict[str, str] = {}
        self.start_ups: dict[str, float] = {}
        return config

    def steps(self) -> list[tuple[int, str, str]]:
        """Per round, each reader (in the run's order: seeded, rotated each round) copies cold, warm, hot: (round,
        reader, try)."""
        return [(round_, reader, try_) for round_ in range(self.rounds)
                for reader in self.in_run_order(list(self.readers), round_, "readers") for try_ in TRIES]

    def label(self, step: tuple[int, str, str]) -> str:
        return f"{step[1]} {step[2]}"

    def record_of(self, step: tuple[int, str, str]) -> dict:
        round_, reader, try_ = step
        return dict(subject=reader, storage=READERS[reader], case=self.case, phase="measured", iteration=round_,
                    params={"try": try_})

    def attempt(self, step: tuple[int, str, str]) -> None:
        """One copy, watched by the storage's health and, through Alluxio, by its worker's byte counters; a cold
        copy frees the tier and drops the page cache first, and times the tool's start-up apart."""
        round_, reader, try_ = step
        where = READERS[reader]
        if try_ == "cold":
            self.emptied[reader] = "; ".join(([self.tier.empty()] if where == "alluxio" else [])
                                             + [drop_page_cache()])
            self.start_ups[reader] = self.start_up(reader)
        params = {"try": try_, "emptied": self.emptied[reader] if try_ == "cold" else "nothing (after cold)",
                  "start_up_s": round(self.start_ups[reader], 3)}
        record = {**self.record_of(step), "params": params}
        observers = [StorageHealth({where: self.probes[where]}, interval_s=1.0, said_by=reader)]
        if where == "alluxio":
            observers.insert(0, WorkerBytes(self.client))
        with Watched(observers) as watched:
            started = now()
            if watched.refused:
                self.results.add(**record, started_at=started, wall_s=None, ok=False, error=watched.refused)
                return
            try:
                seconds, size = self.copy_once(reader)
                error = None
            except PerfkitError as err:
                error = str(err)
            watched.stop()
            run = watched.end(Run(record, error))
        if run.error:
            self.results.add(**record, started_at=started, wall_s=None, ok=False, error=run.error)
        else:
            self.results.add(**record, started_at=started, wall_s=seconds, bytes=size)

    @property
    def case(self) -> str:
        return f"{self.objects} x {self.object_mb:g} MB"

    def measure_for_report(self, part_of: str | None = None, progress: bool = True):
        """The objects placed, then every copy; `part_of` (a run id) is recorded, so the report of the run it belongs
        to finds this one (perfkit.presenting.tier_copy_report.CopyReport.load)."""
        self.part_of = part_of
        self.prepare(progress)
        return self.run(progress)

class WorkerBytes(Observer):
    """Alluxio's worker counters around one copy: the bytes it served from its cache and fetched from S3."""

    def __init__(self, client: AlluxioClient):
        self.client = client
        self.before = None

    def start(self) -> None:
        self.before = self.client.worker_counters()

    def end(self, run: Run) -> None:
        if run.error is None and self.before is not None:
            after = self.client.worker_counters()
            if after is not None:
                run.record["params"].update(cache_bytes=after[0] - self.before[0], s3_bytes=after[1] - self.before[1])
