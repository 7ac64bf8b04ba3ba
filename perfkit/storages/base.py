"""One storage, one class: where a folder is, how it is listed and read, the checksum it keeps, how perfkit puts
files in, whether it answers, and its own counters. Engines read it through `url()`; perfkit itself through the rest.

A storage either holds the data (hdfs, s3: datasets are placed on it; nfs) or reads another storage's copy (a
cache tier: alluxio, trino-cache; a mount: fuse-hdfs; `backing` names that storage). Engines query tables on all
but the mounts (`queried`), which the NFS vs HDFS read experiment reads as files.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.storages.registry import get_storage

HIDDEN = re.compile(r"^[._]")  # _SUCCESS, .crc, _committed_...: not data, as Hive and Spark skip them
# the engines' storage clients whose own counters perfkit reads (Storage.engine_client): an S3 client (S3A, Trino's
# S3 file system) and Hadoop's HDFS client; a storage read through another (a tier's own) has none
S3_CLIENT, HDFS_CLIENT = "s3", "hdfs"


class Counted:
    """A source of a storage's own counters that is a function returning them, cumulative."""

    def __init__(self, name: str, read, storage: str | None = None):
        self.name, self.read, self.storage = name, read, storage


@dataclass
class ServerCounting:
    """What a storage's own servers count of a run, as the profile offers it: the sources read around each run
    (each with a `name`, the `storage` it counts and `read()`: cumulative counters named as perfkit.accounting.counters
    names them); else why its count is not read per run (`not_per_run`); and why one counter is blank
    (`not_counted`: {counter: why})."""
    read: list = field(default_factory=list)
    not_per_run: str | None = None
    not_counted: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Location:
    """A folder on one storage: an absolute path (HDFS, a mount) or a key prefix without trailing slash (S3)."""

    storage: str  # the registry name of the storage
    path: str
    bucket: str = ""

    def url(self, profile: Profile) -> str:
        """The URL every engine reads (the profile's HDFS URI, its S3 scheme: s3a in the lab, s3 on EMR)."""
        return get_storage(self.storage, profile).url(self)

    def __str__(self) -> str:
        return f"{self.storage}://{self.bucket}/{self.path}" if self.bucket else f"{self.storage}://{self.path}"


class Storage:
    """The interface; `perfkit.storages.REGISTRY` names every implementation, the conformance checks run them all."""

    name = "?"
    schemes: tuple[str, ...] = ()  # URL schemes that name it; the first is the one perfkit writes
    backing: str | None = None  # a cache tier or a mount: the storage whose copy it reads; None: it holds the data
    queried = True  # engines query tables on it; False: only read as files (the NFS and FUSE mounts)
    reads_through = "a cache"  # how it reads the backing storage's copy
    colour: str | None = None  # its colour in plots (matplotlib's); None: the next of the plot's cycle
    # what the first study traded: a storage whose reads cross the network to a remote store (reads_remote), whose
    # data can be copied once into one that is read locally (copy_target) by perfkit's transfer methods; a run
    # comparing the two measures that copy and says after how many runs it pays off (perfkit.breakeven)
    reads_remote = False
    copy_target = False
    engine_client: str | None = None  # the engines' client that reads it directly (S3_CLIENT, HDFS_CLIENT)
    # prices it ships beside AWS's list prices, as a section of a price file ({section: {figure: price, "source":
    # where from}}), which a user's price file may override (perfkit.storages.pricing.price_table)
    shipped_prices: dict | None = None

    def __init__(self, profile: Profile):
        self.profile = profile

    @classmethod
    def month_stored(cls, prices, bytes_: float, replication: int = 3,
                     volume_type: str = "st1") -> tuple[str, float, float] | None:
        """A month of one copy of `bytes_` on it at `prices` (perfkit.prices.PriceTable): (what it is stored as, GB
        stored, cost per month); None: perfkit has no price for it."""
        return None

    @classmethod
    def request_cost(cls, prices, counts) -> float | None:
        """What the requests of it among a run's `counts` (perfkit.accounting.counters' names) cost at `prices`;
        NaN where one was not counted; None: its requests have no price (HDFS's are the cluster's own)."""
        return None

    # -- where ---------------------------------------------------------------------------------------------------
    def folder(self, *parts: str) -> Location:
        """A folder under the profile's prefix: where perfkit puts what it generates."""
        raise NotImplementedError

    @classmethod
    def parse(cls, parts) -> Location | None:
        """The Location of a URL of one of its schemes, split by urllib (parts.netloc, parts.path); None when the
        URL names no folder."""
        return Location(cls.name, "/" + parts.path.strip("/")) if parts.path.strip("/") else None

    def url(self, loc: Location) -> str:
        raise NotImplementedError

    # -- reading -------------------------------------------------------------------------------------------------
    def list_files(self, loc: Location) -> dict[str, int] | None:
        """{name: bytes} of the data files directly in the folder (hidden ones left out); None if it does not exist."""
        raise NotImplementedError

    def list_tree(self, loc: Location) -> dict[str, int] | None:
        """{path below the folder: bytes} of every data file in it and in its folders, at any depth
        ("year=2024/month=1/part-0.parquet"), hidden files and folders left out at every level; None if it does
        not exist. Partitioned tables are found by it. A storage that cannot list below a folder keeps this
        default: its direct files only."""
        return self.list_files(loc)

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        raise NotImplementedError

    def open_file(self, loc: Location, name: str, size: int) -> io.BufferedReader:
        """A seekable reader of one file that fetches only the ranges read (a footer is a few KB of a large file)."""
        return io.BufferedReader(_RangeReader(f"{loc}/{name}", size, lambda offset, length: self.read_range(
            loc, name, offset, length)), buffer_size=256 * 1024)

    def read_text(self, loc: Location, name: str) -> str | None:
        """A small file of perfkit's (a dataset marker), or None when it is not there."""
        raise NotImplementedError

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        """Whether the stored file `local.name` has the content of `local`, by the checksum the storage keeps
        (`digest`: perfkit.storages.digest.FileDigest of the local file), with no data read back."""
        raise NotImplementedError

    def damaged(self, loc: Location, files: dict[str, int]) -> dict[str, str]:
        """The files of the folder (name -> bytes) the storage itself knows are damaged, name -> why (HDFS: blocks
        its NameNode knows corrupt or without a live replica); a checksum over the stored CRCs cannot tell."""
        return {}

    def explain(self, error: str) -> str | None:
        """What an engine's error says about this storage, in one line naming the file (a corrupt block), or None."""
        return None

    # -- writing (only under perfkit's own folders) ----------------------------------------------------------------
    def upload(self, loc: Location, local: Path) -> None:
        """Copy a local file into the folder under its own name (replacing one there)."""
        raise NotImplementedError

    def write_text(self, loc: Location, name: str, text: str) -> None:
        raise NotImplementedError

    def make_folder(self, loc: Location) -> None:
        """An empty folder for an engine to write into (a storage without folders needs none)."""

    def delete_tree(self, loc: Location) -> None:
        """Delete a folder perfkit made (its callers check perfkit's marker there first)."""
        raise NotImplementedError

    # -- health and counters -------------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ServiceError naming the storage, why, and the fix, unless it answers."""
        raise NotImplementedError

    def health_probe(self, read_file: str | None = None):
        """A cheap check to repeat during a run: a function returning None while healthy, else the problem.
        `read_file` (a path of this storage the run reads) lets the probe read through the data servers too."""
        def probe() -> str | None:
            try:
                self.check()
            except PerfkitError as err:
                return str(err)
            return None

        return probe

    def unavailable(self) -> str | None:
        """Why this storage cannot be used with this profile, or None."""
        return None

    def replication(self, loc: Location) -> int | None:
        """How many copies of each file in `loc` it keeps itself, where that is the file's own setting (HDFS);
        None: not its to say (S3 keeps its redundancy inside its price)."""
        return None

    def server_counting(self) -> ServerCounting | None:
        """What its own servers count of each run (perfkit.accounting.sources asks every storage data is placed on);
        None: they count nothing perfkit reads."""
        return None

    def snapshot(self, engine=None) -> dict[str, float]:
        """The storage's own counters now (requests, bytes; some read through the `engine` that queries it), for
        a difference before and after a run; {} when it keeps none that perfkit reads."""
        return {}


class _RangeReader(io.RawIOBase):
    def __init__(self, name: str, size: int, read):
        self.name, self.size, self._read, self.pos = name, size, read, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence] + offset
        return self.pos

    def readinto(self, buffer) -> int:
        length = min(len(buffer), self.size - self.pos)
        if length <= 0:
            return 0
        data = self._read(self.pos, length)
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def visible(found: dict[str, int]) -> dict[str, int]:
    return {name: size for name, size in found.items() if name and not HIDDEN.match(name)}


def visible_tree(found: dict[str, int]) -> dict[str, int]:
    """The paths of `found` none of whose folders or name is hidden (_temporary/..., .hive-staging/..., _SUCCESS)."""
    return {path: size for path, size in found.items()
            if path and all(part and not HIDDEN.match(part) for part in path.split("/"))}


class WritesRefused:
    """For a storage that reads another's copy (a cache tier, a read-only mount): perfkit never writes through it."""

    def upload(self, loc: Location, local: Path) -> None:
        raise refuse_write(self)

    def write_text(self, loc: Location, name: str, text: str) -> None:
        raise refuse_write(self)

    def delete_tree(self, loc: Location) -> None:
        raise refuse_write(self)


def refuse_write(storage: Storage) -> PerfkitError:
    return PerfkitError(f"storage {storage.name!r} reads the {storage.backing} copy through {storage.reads_through}: "
                        f"perfkit writes to {storage.backing}, never through {storage.name}")


def provider_fix(profile: Profile, setting: str, service: str) -> str:
    """The fix of a storage that does not answer: the provider's (the lab: start it), or the setting to check."""
    return profile.provider.fix(service, f"check the profile's {setting} and that the service runs")


def is_http_url(url: str | None) -> bool:
    try:
        parts = urlsplit(url or "")
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not re.search(r"\s", url)


def listing_problems(expected: dict[str, int], found: dict[str, int]) -> str | None:
    """What differs between two {name: size} listings, in words; None when they are equal."""
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    wrong = sorted(n for n in set(expected) & set(found) if expected[n] != found[n])
    parts = [f"{len(missing)} missing {missing[:3]}" if missing else "",
             f"{len(wrong)} of wrong size {wrong[:3]}" if wrong else "",
             f"{len(extra)} unexpected {extra[:3]}" if extra else ""]
    return ", ".join(p for p in parts if p) or None
