"""An Alluxio cluster in front of S3 as a tier: the bucket mounted in its namespace, alluxio:// for every engine."""
from __future__ import annotations

import time

from perfkit.errors import PerfkitError
from perfkit.waiting import WaitTimeout, poll_until
from perfkit.tiers.base import SETTLE_POLL_S, SETTLE_TIMEOUT_S, Counters, Tier


class Alluxio(Tier):
    """An Alluxio cluster whose namespace mounts the profile's S3 bucket: the same objects at alluxio:// paths,
    read by every engine (the path has no host: each client is configured with the master's address)."""

    name = "alluxio"
    service = "alluxio"
    hadoop_scheme = "alluxio"  # its client's statistics count what Spark's tasks read through it

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
        return f"alluxio://{self.profile.alluxio_master}{self.namespace_path(s3_url)}"

    def namespace_path(self, s3_url: str) -> str:
        """s3a://<bucket>/<key> -> /<mount>/<key>: where the object is in Alluxio's namespace."""
        scheme, _, rest = s3_url.partition("://")
        bucket, _, key = rest.partition("/")
        if scheme not in self.copy.schemes or bucket != self.profile.s3_bucket:
            bucket_url = f"s3://{self.profile.s3_bucket}"
            raise PerfkitError(f"{s3_url} is not on the S3 bucket the Alluxio tier mounts ({bucket_url} at "
                               f"alluxio://{self.mount}): give a location on that bucket, or mount its "
                               "bucket in Alluxio and name it in the profile (alluxio_s3_mount)")
        return f"{self.mount}/{key.strip('/')}" if key.strip("/") else self.mount

    def empty(self) -> str:
        """A free of the whole mount: every cached block of the bucket evicted (nothing deleted). The workers drop
        blocks at their next heartbeat and the master hears of it at the one after: wait until the master counts
        nothing held (looked at every 0.1 s: the lab's heartbeats are 0.2 s apart), and say so if it does not."""
        from perfkit.tiers.alluxio_client import AlluxioClient

        client = AlluxioClient(self.profile)
        client.free(self.mount)
        held = []  # bytes the workers hold, at each look
        try:
            poll_until(lambda: held.append(client.store()[0]) or held[-1] <= 0, 15, 0.1,
                       what="Alluxio's workers to drop the freed blocks")
        except WaitTimeout:
            return (f"Alluxio freed {self.mount} (the bucket's mount), yet its workers still hold "
                    f"{held[-1] / 1e6:.1f} MB")
        return f"Alluxio freed {self.mount} (the bucket's mount)"

    def refresh(self, s3_urls: list[str]) -> None:
        """The master's metadata of each folder synced with S3: it keeps each file's length from its first look
        (no sync by default), and a file placed again since reads as corrupt ("Malformed ORC file"). Nothing to
        sync where the profile names no Alluxio: its runs are recorded as unavailable."""
        from perfkit.tiers.alluxio_client import AlluxioClient

        if self.unavailable():
            return

        client = AlluxioClient(self.profile)
        for url in s3_urls:
            client.sync_metadata(self.namespace_path(url))

    def counters(self, engine=None) -> Counters | None:
        """The workers' own counters, summed over the workers: bytes served from their cache, bytes read from S3."""
        from perfkit.tiers.alluxio_client import AlluxioClient

        return Counters(*AlluxioClient(self.profile).worker_counters())

    def activity(self) -> dict[str, int]:
        """The work behind reads: the master's count of each metadata RPC a client's read makes, the blocks the
        workers opened and the bytes they sent to clients."""
        from perfkit.tiers.alluxio_client import AlluxioClient

        client = AlluxioClient(self.profile)
        metrics = client.worker_metrics()
        return {**{f"master {rpc}": n for rpc, n in client.master_rpcs().items()},
                "worker blocks read": int(metrics.get("Worker.BlocksAccessed", 0)),
                "worker cache failed blocks": int(metrics.get("Worker.CacheFailedBlocks", 0)),
                "worker blocks evicted": int(metrics.get("Worker.BlocksEvicted", 0)),
                "worker blocks promoted": int(metrics.get("Worker.BlocksPromoted", 0)),  # to a faster level
                "worker bytes sent": int(metrics.get("Worker.BytesReadRemote", 0)
                                         + metrics.get("Worker.BytesReadDomain", 0))}

    def cached_bytes(self) -> int | None:
        from perfkit.tiers.alluxio_client import AlluxioClient

        return AlluxioClient(self.profile).store()[0]

    def capacity_bytes(self) -> int | None:
        from perfkit.tiers.alluxio_client import AlluxioClient

        return AlluxioClient(self.profile).store()[1]

    def settle(self, timeout_s: float = SETTLE_TIMEOUT_S) -> str | None:
        """A read of part of a block makes the worker fetch the whole block from S3 in the background (Alluxio's
        async caching). Wait until the workers have no cache request left and what they hold stopped growing."""
        from perfkit.tiers.alluxio_client import AlluxioClient

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
        from perfkit.tiers.alluxio_client import AlluxioClient

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
