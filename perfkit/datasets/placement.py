"""Put the same files on HDFS and on S3, and prove they are the same (count, names, bytes)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from perfkit import storage
from perfkit.config import Profile
from perfkit.datasets.taxi import TaxiDataset
from perfkit.errors import PerfkitError
from perfkit.paths import project_root


@dataclass(frozen=True)
class PlacedDataset:
    name: str
    file_format: str
    files: dict[str, int]  # name -> bytes, identical on both storages
    locations: dict[str, str]  # storage -> URL the engines read

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


def staging_dir() -> Path:
    return project_root() / "data" / "generated"


def place_taxi(dataset: TaxiDataset, profile: Profile, file_format: str = "orc", progress: bool = True) -> PlacedDataset:
    """Generate the dataset once, upload what is missing to each storage, then verify both."""
    local = dataset.write(staging_dir() / dataset.name / file_format, file_format)
    expected = {p.name: p.stat().st_size for p in local}
    rel = f"datasets/{dataset.name}/{file_format}"
    hdfs, s3 = storage.webhdfs_client(profile), storage.s3_client(profile)
    hdfs_dir, s3_prefix = profile.hdfs_path(rel), profile.s3_key(rel)

    have_hdfs = storage.hdfs_listing(hdfs, hdfs_dir)
    have_s3 = storage.s3_listing(s3, profile.s3_bucket, s3_prefix)
    todo = [(p, "hdfs") for p in local if have_hdfs.get(p.name) != expected[p.name]]
    todo += [(p, "s3") for p in local if have_s3.get(p.name) != expected[p.name]]
    for path, where in tqdm(todo, desc=f"placing {dataset.name}", unit="file", disable=not progress or not todo):
        if where == "hdfs":
            storage.upload_to_hdfs(hdfs, path, f"{hdfs_dir}/{path.name}")
        else:
            storage.upload_to_s3(s3, path, profile.s3_bucket, f"{s3_prefix}/{path.name}")

    verify_same_files(expected, {
        "hdfs": storage.hdfs_listing(hdfs, hdfs_dir),
        "s3": storage.s3_listing(s3, profile.s3_bucket, s3_prefix),
    })
    return PlacedDataset(dataset.name, file_format, expected, {"hdfs": profile.hdfs_url(rel), "s3": profile.s3_url(rel)})


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
