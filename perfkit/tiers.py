"""Cache tiers in front of S3, compared as storages: the same S3 objects, read through a cache.

- `trino-cache`: Trino's file-system cache (Alluxio's caching library inside Trino, pages on local disk), as a
  catalog of its own over the shared metastore: the S3 tables read through it. Only Trino reads through it.
- `alluxio`: an Alluxio cluster whose namespace mounts the S3 bucket; tables over alluxio:// locations, read by
  Spark, Hive and Trino alike (perfkit.alluxio talks to it).

Each tier can be emptied (before a cold read, and only then) and reports its own counters: bytes served from the
cache and bytes fetched from S3, so a "hot" read that did not hit the cache shows.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from perfkit.config import Profile
from perfkit import storages
from perfkit.errors import PerfkitError, ServiceError
from perfkit.storages import Location, Storage, get_storage
from perfkit.storages.base import refuse_write
from perfkit.waiting import WaitTimeout, poll_until

BACKING = "s3"  # every tier caches the S3 copy of the data
SETTLE_TIMEOUT_S = 120.0  # the longest wait for a tier's background fill between tries
SETTLE_POLL_S = 0.5


@dataclass(frozen=True)
class Counters:
    cache_bytes: int  # served from the tier
    s3_bytes: int  # fetched from S3 by the tier

    def __sub__(self, before: "Counters") -> "Counters":
        return Counters(self.cache_bytes - before.cache_bytes, self.s3_bytes - before.s3_bytes)


class Tier(Storage):
    """A storage that reads the backing storage's copy through a cache: listed, read and checked as that copy,
    never written through; engines read its url()."""

    name = "?"
    backing = BACKING
    engines: tuple[str, ...] | None = None  # the engines that can read through it; None: every engine
    restarts_engine = False  # emptying it restarts the engine that reads through it
    service = "?"  # what serves it (the lab service of that name)

    @property
    def copy(self) -> Storage:
        return get_storage(self.backing, self.profile)

    def folder(self, *parts: str) -> Location:
        return self.copy.folder(*parts)

    def url(self, loc: Location) -> str:
        return self.location(self.copy.url(loc))

    def list_files(self, loc: Location) -> dict[str, int] | None:
        return self.copy.list_files(loc)

    def read_range(self, loc: Location, name: str, offset: int, length: int) -> bytes:
        return self.copy.read_range(loc, name, offset, length)

    def read_text(self, loc: Location, name: str) -> str | None:
        return self.copy.read_text(loc, name)

    def checksum_matches(self, loc: Location, local: Path, digest) -> bool:
        return self.copy.checksum_matches(loc, local, digest)

    def upload(self, loc: Location, local: Path) -> None:
        raise refuse_write(self)

    def write_text(self, loc: Location, name: str, text: str) -> None:
        raise refuse_write(self)

    def delete_tree(self, loc: Location) -> None:
        raise refuse_write(self)

    def check(self) -> None:
        """The backing storage answers, the tier is configured, and its own service answers."""
        self.copy.check()
        why = self.unavailable() or self.probe(lambda: None)()
        if why:
            raise ServiceError(f"cache tier {self.name}", why, self.profile.provider.fix(
                self.service, "check the tier's settings in the profile and that its service runs"))

    def snapshot(self, engine=None) -> dict[str, float]:
        if self.engines and getattr(engine, "name", None) not in self.engines:
            return {}  # its counters are read through an engine that reads through it
        found = self.counters(engine)
        return asdict(found) if found is not None else {}

    def reads_through(self, engine: str) -> bool:
        return self.engines is None or engine in self.engines

    def location(self, s3_url: str) -> str:
        """Where an engine reads the table whose files are at `s3_url`, through this tier."""
        return s3_url

    def empty(self) -> str:
        """Empty the tier; say what was emptied."""
        raise NotImplementedError

    def probe(self, backing):
        """The health probe of a read through the tier: S3's (a tier with a service of its own adds its own)."""
        return backing

    def counters(self, engine=None) -> Counters:
        raise NotImplementedError

    def cached_bytes(self) -> int | None:
        """How much the tier holds now, where it can tell."""
        return None

    def settle(self, timeout_s: float = SETTLE_TIMEOUT_S) -> str | None:
        """Wait until the fill a read started in the background is done, so that the next try reads what the
        tier holds rather than racing its own fill; say what was waited for (None: nothing to wait for)."""
        return None

    def size_note(self, data_bytes: int) -> str | None:
        """A warning when the tier cannot hold `data_bytes`, or None."""
        return None


class TrinoCache(Tier):
    """Trino's file-system cache, over the same tables as the plain hive catalog."""

    name = "trino-cache"
    service = "trino"
    engines = ("trino",)
    restarts_engine = True  # emptying restarts Trino: its first query after that is a cold JVM's
    STATS = "io.trino.filesystem.alluxio:type=alluxiocachestats,name={c},catalog={c}"

    @property
    def catalog(self) -> str:
        return self.profile.trino_cache_catalog

    def unavailable(self) -> str | None:
        if not self.catalog:
            return ("the profile names no Trino catalog with the file-system cache (trino_cache_catalog): add one "
                    "(fs.cache.enabled=true) to the cluster's Trino and name it in the profile")
        return None

    def table(self, registered: str) -> str:
        """The S3 table `registered` (database.table) read through the cache catalog."""
        return f"{self.catalog}.{registered}"

    def empty(self) -> str:
        """Trino's cache emptied by the profile's provider: in the lab by a restart with an empty cache folder (pages
        deleted under a running Trino are neither read nor cached again); on a cluster it says it cannot."""
        return self.profile.provider.empty_trino_cache()

    def counters(self, engine=None) -> Counters:
        """Trino's own cache counters, summed over its nodes (JMX, through the jmx catalog)."""
        if engine is None or engine.name != "trino":
            raise PerfkitError("trino-cache counters are read through a Trino engine")
        table = 'jmx.current."' + self.STATS.format(c=self.catalog) + '"'
        row = engine.execute(f'SELECT sum("cachereads.alltime.total"), sum("externalreads.alltime.total") FROM {table}')[0]
        return Counters(int(row[0] or 0), int(row[1] or 0))


class Alluxio(Tier):
    """An Alluxio cluster whose namespace mounts the profile's S3 bucket: the same objects at alluxio:// paths,
    read by every engine (the path has no host: each client is configured with the master's address)."""

    name = "alluxio"
    service = "alluxio"

    def unavailable(self) -> str | None:
        if not (self.profile.alluxio_master and self.profile.alluxio_s3_mount):
            return ("the profile names no Alluxio master with the S3 bucket mounted (alluxio_master, "
                    "alluxio_s3_mount): mount the bucket in the cluster's Alluxio and name both in the profile")
        return None

    @property
    def mount(self) -> str:
        return "/" + self.profile.alluxio_s3_mount.strip("/")

    def location(self, s3_url: str) -> str:
        """s3a://<bucket>/<key> -> alluxio://<master>/<mount>/<key>: the same object through Alluxio. The master's
        address stays in the URL: Hive and Spark store alluxio:///x as alluxio:/x, which Trino refuses."""
        scheme, _, rest = s3_url.partition("://")
        bucket, _, key = rest.partition("/")
        if scheme not in ("s3", "s3a", "s3n") or bucket != self.profile.s3_bucket:
            bucket_url = f"s3://{self.profile.s3_bucket}"
            raise PerfkitError(f"{s3_url} is not on the S3 bucket the Alluxio tier mounts ({bucket_url} at "
                               f"alluxio://{self.mount}): give a location on that bucket, or mount its "
                               "bucket in Alluxio and name it in the profile (alluxio_s3_mount)")
        base = f"alluxio://{self.profile.alluxio_master}{self.mount}"
        return f"{base}/{key.strip('/')}" if key.strip("/") else base

    def empty(self) -> str:
        """`alluxio fs free` of the whole mount: every cached block of the bucket evicted (nothing deleted). The
        workers drop blocks at their next heartbeat: wait until the store is empty, and say so if it is not."""
        from perfkit.alluxio import AlluxioClient

        client = AlluxioClient(self.profile)
        client.free(self.mount)
        held = []  # bytes the workers hold, at each look
        try:
            poll_until(lambda: held.append(client.store()[0]) or held[-1] <= 0, 15, 0.5,
                       what="Alluxio's workers to drop the freed blocks")
        except WaitTimeout:
            return (f"Alluxio freed {self.mount} (the bucket's mount), yet its workers still hold "
                    f"{held[-1] / 1e6:.1f} MB")
        return f"Alluxio freed {self.mount} (the bucket's mount)"

    def counters(self, engine=None) -> Counters | None:
        """The workers' own counters, summed over the workers: bytes served from their cache, bytes read from S3."""
        from perfkit.alluxio import AlluxioClient

        return Counters(*AlluxioClient(self.profile).worker_counters())

    def cached_bytes(self) -> int | None:
        from perfkit.alluxio import AlluxioClient

        return AlluxioClient(self.profile).store()[0]

    def settle(self, timeout_s: float = SETTLE_TIMEOUT_S) -> str | None:
        """A read of part of a block makes the worker fetch the whole block from S3 in the background (Alluxio's
        async caching). Wait until the workers have no cache request left and what they hold stopped growing."""
        from perfkit.alluxio import AlluxioClient

        client = AlluxioClient(self.profile)
        started = time.monotonic()
        last, quiet = None, 0
        while time.monotonic() - started < timeout_s:
            info = client.master_info()  # one look at the master for both
            tasks, held = client.caching_tasks(info), client.store(info)[0]
            quiet = quiet + 1 if tasks == 0 and held == last else 0
            if quiet >= 2:  # idle twice in a row with nothing added: the fill is done
                return f"Alluxio's background caching done after {time.monotonic() - started:.1f} s"
            last = held
            time.sleep(SETTLE_POLL_S)
        return f"Alluxio's background caching still busy after {timeout_s:g} s: the next try races it"

    def size_note(self, data_bytes: int) -> str | None:
        """The workers' store smaller than the data: reads cannot all come from the cache (said, not failed)."""
        from perfkit.alluxio import AlluxioClient

        store = AlluxioClient(self.profile).store()
        if store[1] >= data_bytes:
            return None
        return (f"the Alluxio workers' store holds {store[1] / 1e6:.1f} MB, less than the {data_bytes / 1e6:.1f} MB "
                "of data read: warm and hot reads fetch the rest from S3 (see the counters). Fix: a larger store "
                "(PERFKIT_LAB_ALLUXIO_STORE in the lab) or less data")

    def probe(self, backing):
        """S3 answers and so does the Alluxio master (a TCP connection to its RPC port)."""
        import socket

        host, _, port = self.profile.alluxio_master.rpartition(":")

        def probe() -> str | None:
            try:
                socket.create_connection((host, int(port)), timeout=10).close()
            except OSError as err:
                return f"the Alluxio master at {self.profile.alluxio_master} does not answer ({err.strerror or err})"
            return backing()

        return probe

    def s3_location(self, alluxio_url: str) -> str:
        """The inverse of location(), for alluxio://<master>/..., alluxio:///... and alluxio:/... alike."""
        path = None
        if alluxio_url.startswith("alluxio://"):
            path = "/" + alluxio_url.removeprefix("alluxio://").partition("/")[2]
        elif alluxio_url.startswith("alluxio:/"):
            path = alluxio_url.removeprefix("alluxio:")
        if path is None or not (path.rstrip("/") + "/").startswith(self.mount + "/"):
            raise PerfkitError(f"{alluxio_url} is not under the Alluxio folder where the S3 bucket is mounted "
                               f"(alluxio://{self.profile.alluxio_master}{self.mount})")
        key = path[len(self.mount):].strip("/")
        return f"{self.profile.s3_scheme}://{self.profile.s3_bucket}" + (f"/{key}" if key else "")


def is_tier(storage: str) -> bool:
    """A registered storage that reads another's copy through a cache (perfkit.storages.REGISTRY names them)."""
    return storage in storages.REGISTRY and storages.storage_class(storage).backing is not None


def tier(storage: str, profile: Profile) -> Tier:
    return storages.get_storage(storage, profile)
