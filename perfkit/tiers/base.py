"""The cache tier interface: a storage that reads another storage's copy through a cache, with counters."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

from perfkit import storages
from perfkit.config import Profile
from perfkit.errors import ServiceError
from perfkit.storages import Location, Storage, get_storage
from perfkit.storages.base import WritesRefused

SETTLE_TIMEOUT_S = 120.0  # the longest wait for a tier's background fill between tries
SETTLE_POLL_S = 0.5


@dataclass(frozen=True)
class Counters:
    cache_bytes: int  # served from the tier
    s3_bytes: int  # fetched from S3 by the tier

    def __sub__(self, before: "Counters") -> "Counters":
        return Counters(self.cache_bytes - before.cache_bytes, self.s3_bytes - before.s3_bytes)


class Tier(WritesRefused, Storage):
    """A storage that reads the backing storage's copy through a cache: listed, read and checked as that copy,
    never written through; engines read its url()."""

    name = "?"
    backing = "s3"  # the storage whose copy it caches: S3 for every tier here
    engines: tuple[str, ...] | None = None  # the engines that can read through it; None: every engine
    service = "?"  # what serves it (the lab service of that name)
    hadoop_scheme: str | None = None  # the Hadoop file system Spark and Hive read it through, where it has its own
    # True: engines read the backing storage's own table through a catalog of the tier's (table()), registering
    # none of the tier's own; False: a table of its own is registered at location()
    reads_backing_table = False

    @cached_property
    def copy(self) -> Storage:
        return get_storage(self.backing, self.profile)

    def folder(self, *parts: str) -> Location:
        return self.copy.folder(*parts)

    def url(self, loc: Location) -> str:
        return self.location(self.copy.url(loc))

    def list_files(self, loc: Location) -> dict[str, int] | None:
        return self.copy.list_files(loc)

    def list_tree(self, loc: Location) -> dict[str, int] | None:
        return self.copy.list_tree(loc)

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        return self.copy.read_range(loc, name, offset, length)

    def read_text(self, loc: Location, name: str) -> str | None:
        return self.copy.read_text(loc, name)

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        return self.copy.checksum_matches(loc, local, digest)

    def check(self) -> None:
        """The backing storage answers, the tier is configured, and its own service answers."""
        self.copy.check()
        why = self.unavailable() or self.probe(lambda: None)()
        if why:
            raise ServiceError(f"cache tier {self.name}", why, self.profile.provider.fix(
                self.service, "check the tier's settings in the profile and that its service runs"))

    def health_probe(self, read_file: str | None = None):
        return self.probe(self.copy.health_probe())

    def snapshot(self, engine=None) -> dict[str, float]:
        if self.engines and getattr(engine, "name", None) not in self.engines:
            return {}  # its counters are read through an engine that reads through it
        found = self.counters(engine)
        return asdict(found) if found is not None else {}

    def activity(self) -> dict[str, int]:
        """What else the tier counts of the work reads ask of it, cumulative, by name (Alluxio: its master's RPCs,
        its workers' block reads); none by default. Read around the cache-tier comparison's tries only: a run's
        accounting needs the bytes alone."""
        return {}

    def reads_through(self, engine: str) -> bool:
        return self.engines is None or engine in self.engines

    def location(self, s3_url: str) -> str:
        """Where an engine reads the table whose files are at `s3_url`, through this tier."""
        return s3_url

    def empty(self) -> str:
        """Empty the tier; say what was emptied."""
        raise NotImplementedError

    def refresh(self, s3_urls: list[str]) -> None:
        """See the files at `s3_urls` as they are on S3 now: perfkit may have just placed them again. A tier that
        keeps its own view of S3's files (their lengths) would otherwise read new bytes by the old lengths."""

    def current_tables(self, tables: dict[str, str]) -> dict[str, str]:
        """The tables registered to read through this tier, as read after empty(): the same for most tiers."""
        return tables

    def probe(self, backing):
        """The health probe of a read through the tier: S3's (a tier with a service of its own adds its own)."""
        return backing

    def counters(self, engine=None) -> Counters:
        raise NotImplementedError

    def cached_bytes(self) -> int | None:
        """How much the tier holds now, where it can tell."""
        return None

    def capacity_bytes(self) -> int | None:
        """How much the tier can hold, where it can tell."""
        return None

    def settle(self, timeout_s: float = SETTLE_TIMEOUT_S) -> str | None:
        """Wait until the fill a read started in the background is done, so that the next try reads what the
        tier holds rather than racing its own fill; say what was waited for (None: nothing to wait for)."""
        return None

    def size_note(self, data_bytes: int) -> str | None:
        """A warning when the tier cannot hold `data_bytes`, or None."""
        return None


def is_tier(storage: str) -> bool:
    """A registered storage that reads another's copy through a cache (perfkit.storages.REGISTRY names them)."""
    return storage in storages.tiers()


def tier(storage: str, profile: Profile) -> Tier:
    return storages.get_storage(storage, profile)
