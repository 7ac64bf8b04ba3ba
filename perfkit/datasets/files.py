"""A deterministic set of files with a size distribution (dozens of files of tens of MB), put on S3."""
from __future__ import annotations

import io
import math
import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfkit.storages import s3 as s3_storage
from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.validate import check_free_space, memory_bytes
from perfkit.progress import progress_bar

MB = 1_000_000
MAX_FILES = 100_000  # sizes are drawn for the whole set at once; the published set has ~4,600


@dataclass(frozen=True)
class FileSet:
    files: int = 24
    mean_mb: float = 16.0
    seed: int = 42

    def __post_init__(self):
        # NaN passes `<= 0` and inf passes any bound; both would fail deep inside numpy. A bool is an Integral.
        if not isinstance(self.files, numbers.Integral) or isinstance(self.files, bool) or self.files < 1:
            raise PerfkitError(f"a file set needs files, the number of files, to be a whole number >= 1, "
                               f"not {self.files!r}")
        if not isinstance(self.mean_mb, numbers.Real) or not math.isfinite(self.mean_mb) or self.mean_mb <= 0:
            raise PerfkitError(f"a file set needs mean_mb, the mean file size in MB, to be a finite number > 0, "
                               f"not {self.mean_mb!r}")
        if not isinstance(self.seed, numbers.Integral) or isinstance(self.seed, bool) or self.seed < 0:
            raise PerfkitError(f"a file set needs seed to be a whole number >= 0, not {self.seed!r}")
        if self.files > MAX_FILES:
            raise PerfkitError(f"a file set of files={self.files:,} is more than {MAX_FILES:,} files: "
                               f"give fewer, larger files (the published set: ~4,600 files)")
        largest, memory = max(self.sizes()), memory_bytes()
        if largest > memory // 2:  # a file is generated in memory, whole, before it is written
            raise PerfkitError(f"a file set of mean_mb={self.mean_mb:g} has files up to {largest / MB:,.0f} MB, more "
                               f"than half this machine's memory ({memory / MB:,.0f} MB): lower mean_mb and "
                               f"raise files to get as many bytes")

    def check_room(self, folder: Path, missing: list[int] | None = None) -> None:
        """Before writing: the files not there yet (indexes `missing`, default all) must fit in `folder`."""
        sizes = self.sizes()
        needed = sum(sizes[i] for i in (range(self.files) if missing is None else missing))
        check_free_space(f"file set {self.name}", needed, folder, "free space there, or lower files or mean_mb")

    @property
    def name(self) -> str:
        return f"files_n{self.files}_m{self.mean_mb:g}_s{self.seed}"

    def sizes(self) -> list[int]:
        """Right-skewed sizes around the mean, between a quarter and three times of it."""
        rng = np.random.default_rng([self.seed, 0])
        raw = rng.lognormal(0.0, 0.5, self.files)
        sizes = np.clip(raw / raw.mean(), 0.25, 3.0) * self.mean_mb * MB
        return [int(s) for s in sizes]

    def file_name(self, index: int) -> str:
        return f"part-{index:05d}.bin"

    def content(self, index: int) -> bytes:
        """Incompressible bytes: no storage layer can shortcut them."""
        return np.random.default_rng([self.seed, index + 1]).bytes(self.sizes()[index])


def place_fileset(fileset: FileSet, profile: Profile, progress: bool = True) -> str:
    """Upload the files that are missing (or of the wrong size) to S3; return their key prefix."""
    s3_storage.check_s3(profile)
    s3 = s3_storage.s3_client(profile)
    prefix = profile.s3_key("datasets", fileset.name)
    have = s3_storage.s3_listing(s3, profile.s3_bucket, prefix)
    sizes = fileset.sizes()
    todo = [i for i in range(fileset.files) if have.get(fileset.file_name(i)) != sizes[i]]
    disk = profile.provider.local_disk()
    if disk is not None:  # the storage keeps its objects on this machine's disk (the lab)
        fileset.check_room(disk, todo)
    for i in progress_bar(todo, desc=f"placing {fileset.name} on S3", unit="file", disable=not progress or not todo):
        s3.upload_fileobj(io.BytesIO(fileset.content(i)), profile.s3_bucket, f"{prefix}/{fileset.file_name(i)}")
    return prefix
