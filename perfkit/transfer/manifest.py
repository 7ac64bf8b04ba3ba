"""The list of files a transfer copies, built from an S3 prefix, and the check of a copy against it."""
from __future__ import annotations

from dataclasses import dataclass

from perfkit.storages import base as storage_base
from perfkit.storages import s3 as s3_storage
from perfkit.config import Profile
from perfkit.errors import PerfkitError


@dataclass(frozen=True)
class Manifest:
    bucket: str
    prefix: str  # key prefix without a trailing slash
    files: tuple[tuple[str, int], ...]  # (name below the prefix, bytes)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.files)

    def key(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def url(self, scheme: str, name: str = "") -> str:
        return f"{scheme}://{self.bucket}/{self.prefix}/{name}"


def build_manifest(profile: Profile, prefix: str) -> Manifest:
    """Every object directly below `prefix` in the profile's bucket (sub-folders are not copied)."""
    s3_storage.check_s3(profile)
    prefix = prefix.strip("/")
    listing = s3_storage.s3_listing(s3_storage.s3_client(profile), profile.s3_bucket, prefix)
    files = tuple(sorted((name, size) for name, size in listing.items() if "/" not in name))
    if not files:
        raise PerfkitError(
            f"no files under s3://{profile.s3_bucket}/{prefix}/: check the source prefix "
            "(it names a folder of objects, without the bucket)"
        )
    return Manifest(profile.s3_bucket, prefix, files)


def verify_copy(manifest: Manifest, found: dict[str, int]) -> None:
    """Raise unless the destination holds exactly the manifest's files with their sizes."""
    problems = storage_base.listing_problems(manifest.sizes, found)
    if problems:
        raise PerfkitError(f"verification failed: {problems}")
