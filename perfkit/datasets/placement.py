"""Put the same files on HDFS and on S3, and prove they are the same: names, sizes and content.

Content is checked against the digests recorded at generation, through the checksums each storage
keeps (see perfkit.datasets.digest): a same-size but different file is found before any timing,
re-placed once, and if it still differs the run stops.
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from perfkit import storage
from perfkit.config import Profile
from perfkit.datasets.digest import UPLOAD_CONFIG, FileDigest, hdfs_checksum_matches, recorded_digests, s3_etag
from perfkit.datasets.taxi import TaxiDataset
from perfkit.errors import PerfkitError
from perfkit.paths import project_root


@dataclass(frozen=True)
class PlacedDataset:
    name: str
    file_format: str
    files: dict[str, int]  # name -> bytes, identical on both storages
    locations: dict[str, str]  # storage -> URL the engines read
    verified: str = ""  # how equality was proven
    replaced: list[str] = field(default_factory=list)  # "storage/name" re-placed because their content differed

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


def staging_dir() -> Path:
    return project_root() / "data" / "generated"


VERIFIED = "names, sizes, and content: S3 ETag and HDFS file checksum against digests recorded at generation"
CHECK_THREADS = 8  # checksum requests are small and independent


def place_taxi(dataset: TaxiDataset, profile: Profile, file_format: str = "orc", progress: bool = True) -> PlacedDataset:
    """Generate the dataset once, upload what is missing to each storage, then verify both, content included."""
    folder = staging_dir() / dataset.name / file_format
    local = dataset.write(folder, file_format)
    digests, changed = recorded_digests(local)
    if changed:  # a staged file edited after generation is regenerated, never uploaded as the dataset
        for path in changed:
            path.unlink()
        local = dataset.write(folder, file_format)
        digests, _ = recorded_digests(local)
    expected = {p.name: p.stat().st_size for p in local}
    rel = f"datasets/{dataset.name}/{file_format}"
    target = _Target(profile, rel)

    todo = [(p, "hdfs") for p in local if target.listing("hdfs").get(p.name) != expected[p.name]]
    todo += [(p, "s3") for p in local if target.listing("s3").get(p.name) != expected[p.name]]
    target.upload(todo, f"placing {dataset.name}", progress)
    verify_same_files(expected, {where: target.listing(where) for where in ("hdfs", "s3")})

    differ = content_mismatches(target, local, digests)
    if differ:
        names = ", ".join(f"{where}/{path.name}" for path, where in differ)
        print(f"perfkit: {len(differ)} placed file(s) differ in content from the generated ones ({names}): "
              "re-placing them", file=sys.stderr, flush=True)
        target.upload(differ, f"re-placing {dataset.name}", progress)
        still = content_mismatches(target, local, digests)
        if still:
            names = ", ".join(f"{where}/{path.name}" for path, where in still)
            raise PerfkitError(
                f"dataset {dataset.name}: {names} still differ in content after re-placing them "
                f"(checked by {VERIFIED}); the storages would not be compared on equal data. Fix: check "
                "that nothing else writes under the prefix, delete the folder and run again")
    return PlacedDataset(dataset.name, file_format, expected, {"hdfs": profile.hdfs_url(rel), "s3": profile.s3_url(rel)},
                         VERIFIED, [f"{where}/{path.name}" for path, where in differ])


class _Target:
    """The dataset's folder on HDFS and its prefix on S3."""

    def __init__(self, profile: Profile, rel: str):
        self.profile = profile
        self.hdfs, self.s3 = storage.webhdfs_client(profile), storage.s3_client(profile)
        self.hdfs_dir, self.s3_prefix = profile.hdfs_path(rel), profile.s3_key(rel)

    def listing(self, where: str) -> dict[str, int]:
        if where == "hdfs":
            return storage.hdfs_listing(self.hdfs, self.hdfs_dir)
        return storage.s3_listing(self.s3, self.profile.s3_bucket, self.s3_prefix)

    def upload(self, todo: list[tuple[Path, str]], desc: str, progress: bool) -> None:
        for path, where in tqdm(todo, desc=desc, unit="file", disable=not progress or not todo):
            if where == "hdfs":
                storage.upload_to_hdfs(self.hdfs, path, f"{self.hdfs_dir}/{path.name}")
            else:
                storage.upload_to_s3(self.s3, path, self.profile.s3_bucket, f"{self.s3_prefix}/{path.name}",
                                     UPLOAD_CONFIG)  # the part size the expected ETag assumes

    def content_matches(self, path: Path, where: str, digest: FileDigest) -> bool:
        if where == "hdfs":
            return hdfs_checksum_matches(path, digest, self.hdfs.checksum(f"{self.hdfs_dir}/{path.name}"))
        head = self.s3.head_object(Bucket=self.profile.s3_bucket, Key=f"{self.s3_prefix}/{path.name}")
        return head["ETag"].strip('"') == s3_etag(path, digest)


def content_mismatches(target: _Target, local: list[Path], digests: dict[str, FileDigest]) -> list[tuple[Path, str]]:
    """(file, storage) pairs whose stored content is not the generated file's."""
    pairs = [(path, where) for where in ("hdfs", "s3") for path in local]
    with ThreadPoolExecutor(CHECK_THREADS) as pool:
        same = list(pool.map(lambda pair: target.content_matches(*pair, digests[pair[0].name]), pairs))
    return [pair for pair, ok in zip(pairs, same, strict=True) if not ok]


def verify_same_files(expected: dict[str, int], found_by_storage: dict[str, dict[str, int]]) -> None:
    """Raise unless every storage holds exactly the expected files with the expected sizes."""
    for where, found in found_by_storage.items():
        problems = storage.listing_problems(expected, found)
        if problems:
            raise PerfkitError(
                f"dataset on {where} differs from the generated files ({problems}): "
                f"{len(found)} files / {sum(found.values())} bytes instead of {len(expected)} / "
                f"{sum(expected.values())}. Fix: delete that folder and run again to re-upload"
            )
