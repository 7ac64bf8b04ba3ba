"""What the S3 path a run is about to use measures: time of a small GET, MB/s of one large GET on one connection and
on several. Recorded with every run, with the network profile it was asked to emulate, so a report says what was
achieved, not only what was asked. On a cluster it measures the real path to S3 the same way.
"""
from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields

from botocore.config import Config
from botocore.exceptions import ClientError

from perfkit.storages import s3 as s3_storage
from perfkit.network import NetworkProfile

SMALL_BYTES = 1024
LARGE_BYTES = 32 * 1024 * 1024  # long enough for a rate: 0.4 s at 85 MB/s, short enough to cost nothing
SMALL_GETS = 9  # their median: one slow request (a collection pause) does not move it
CONNECTIONS = 4
FOLDER = "calibration"  # under the profile's prefix: perfkit's own objects, reused by every run
# achieved below this share of what was asked, a report says so: the emulator could not carry it here
SHORT_OF_ASKED = 0.8


@dataclass(frozen=True)
class Calibration:
    network: dict | None  # the NetworkProfile asked (as_dict), None: no emulation (a cluster's own path)
    endpoint: str  # where the S3 requests went
    small_get_ms: float  # median time of a 1 KiB GET on a kept-alive connection: one round trip + the server
    small_get_direct_ms: float | None  # the same straight to the S3 server, when an emulated network is in front
    one_connection_mb_s: float  # one GET of LARGE_BYTES
    parallel_mb_s: float  # CONNECTIONS GETs of it at once, in all
    connections: int

    @property
    def emulated(self) -> bool:
        return bool(self.network) and NetworkProfile(**self.network).emulated

    @property
    def added_ms(self) -> float | None:
        """What the emulated network adds to a small GET, measured (through it minus direct)."""
        return None if self.small_get_direct_ms is None else self.small_get_ms - self.small_get_direct_ms

    def measured(self) -> str:
        direct = f" ({self.small_get_direct_ms:.1f} ms direct)" if self.small_get_direct_ms is not None else ""
        return (f"measured {self.small_get_ms:.1f} ms per small GET{direct}, {self.one_connection_mb_s:.0f} MB/s on "
                f"one connection, {self.parallel_mb_s:.0f} MB/s on {self.connections}")

    @property
    def not_emulated(self) -> bool:
        """An emulated network was asked, and the path shows none of it: a small GET under half its round trip (the
        S3 clients went straight to the server)."""
        if not self.emulated:
            return False
        rtt_ms = NetworkProfile(**self.network).rtt_ms
        return bool(rtt_ms) and self.small_get_ms < rtt_ms / 2

    def headline(self) -> str:
        """One sentence a report title and recap carry: where S3 sat and what the path measured."""
        if self.network is None:
            where = "S3 as this cluster reaches it (no emulated network)"
        elif self.not_emulated:
            asked = NetworkProfile(**self.network)
            return (f"S3 not emulated: the network was set to {asked.describe()}, but a small GET took "
                    f"{self.small_get_ms:.1f} ms, under half that round trip, so S3's clients did not go through it: "
                    f"{self.measured()}")
        elif self.emulated:
            where = f"S3 behind an emulated network ({NetworkProfile(**self.network).describe()})"
        else:
            where = "S3 on this machine, no emulated network (network local)"
        shortfalls = self.shortfalls()
        return f"{where}: {self.measured()}" + (f". Not as asked: {'; '.join(shortfalls)}" if shortfalls else "")

    def shortfalls(self) -> list[str]:
        """Where the path is far from the profile (the proxy cannot carry the bandwidth on this machine)."""
        if not self.emulated:
            return []
        asked = NetworkProfile(**self.network)
        found = []
        if asked.per_connection_mb_s and self.one_connection_mb_s < SHORT_OF_ASKED * asked.per_connection_mb_s:
            found.append(f"one connection achieved {self.one_connection_mb_s:.0f} MB/s of the "
                         f"{asked.per_connection_mb_s:g} asked")
        if asked.total_mb_s and self.parallel_mb_s < SHORT_OF_ASKED * min(
                asked.total_mb_s, self.connections * (asked.per_connection_mb_s or asked.total_mb_s)):
            found.append(f"{self.connections} connections achieved {self.parallel_mb_s:.0f} MB/s in all of the "
                         f"{asked.total_mb_s:g} asked")
        if asked.rtt_ms and self.added_ms is not None and self.added_ms < SHORT_OF_ASKED * asked.rtt_ms:
            found.append(f"a small GET took {self.added_ms:.1f} ms more than direct, not {asked.rtt_ms:g}")
        return found

    def as_dict(self) -> dict:
        return {**asdict(self), "headline": self.headline()}

    @classmethod
    def from_dict(cls, recorded: dict) -> Calibration:
        """A calibration as a run recorded it (as_dict)."""
        return cls(**{f.name: recorded[f.name] for f in fields(cls)})


def s3_path(profile) -> tuple[dict | None, str]:
    """The S3 path a calibration measures: the network asked (as_dict; None: not emulated) and the endpoint."""
    network = profile.provider.network()
    return (network.as_dict() if network else None), profile.s3_endpoint or "AWS S3"


def calibrate(profile, connections: int = CONNECTIONS) -> Calibration:
    """Measure the S3 path of `profile` (its endpoint, as every engine of it uses it) before a run."""
    s3_storage.check_s3(profile)  # S3 down or refusing: one message with its fix, not a botocore trace
    network, endpoint = s3_path(profile)
    client = s3_storage.s3_client(profile, Config(max_pool_connections=connections + 1))
    small, large = _ensure_objects(client, profile)
    direct_endpoint = profile.provider.direct_s3_endpoint(profile)
    direct = None
    if direct_endpoint:
        from dataclasses import replace

        direct = s3_storage.s3_client(replace(profile, s3_endpoint=direct_endpoint))
    small_ms, direct_ms = _small_get_ms(client, profile.s3_bucket, small, direct)
    one = _get_rate(client, profile.s3_bucket, large, 1)
    many = _get_rate(client, profile.s3_bucket, large, connections)
    return Calibration(network=network, endpoint=endpoint,
                       small_get_ms=small_ms, small_get_direct_ms=direct_ms, one_connection_mb_s=one,
                       parallel_mb_s=many, connections=connections)


def _ensure_objects(client, profile) -> tuple[str, str]:
    """The two objects it reads, written once (deterministic bytes) and kept for every later run."""
    keys = []
    for size in (SMALL_BYTES, LARGE_BYTES):
        key = profile.s3_key(FOLDER, f"object-{size}")
        try:
            if client.head_object(Bucket=profile.s3_bucket, Key=key)["ContentLength"] == size:
                keys.append(key)
                continue
        except ClientError:
            pass
        client.put_object(Bucket=profile.s3_bucket, Key=key, Body=bytes(range(256)) * (size // 256))
        keys.append(key)
    return keys[0], keys[1]


def _small_get_ms(client, bucket: str, key: str, direct=None) -> tuple[float, float | None]:
    """The median ms of a small GET through `client`, and straight to the server through `direct` (None: not
    measured). The two alternate, GET by GET: a moment of load on a busy machine lands on both alike, so their
    difference is what the path in between adds."""
    clients = [client] if direct is None else [client, direct]
    for each in clients:
        each.get_object(Bucket=bucket, Key=key)["Body"].read()  # opens the connection: later GETs reuse it
    times: list[list[float]] = [[] for _ in clients]
    for _ in range(SMALL_GETS):
        for each, kept in zip(clients, times):
            started = time.perf_counter()
            each.get_object(Bucket=bucket, Key=key)["Body"].read()
            kept.append((time.perf_counter() - started) * 1000)
    medians = [statistics.median(kept) for kept in times]
    return medians[0], (medians[1] if direct is not None else None)


def _get_rate(client, bucket: str, key: str, connections: int) -> float:
    """MB/s (10^6 bytes) of `connections` whole GETs of the object at once."""
    def get(_):
        return len(client.get_object(Bucket=bucket, Key=key)["Body"].read())

    with ThreadPoolExecutor(connections) as pool:
        started = time.perf_counter()
        total = sum(pool.map(get, range(connections)))
        seconds = time.perf_counter() - started
    return total / seconds / 1e6
