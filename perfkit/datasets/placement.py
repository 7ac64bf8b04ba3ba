"""Put the same files on HDFS and on S3, and prove they are the same: names, sizes and content.

Content is checked against the digests recorded at generation, through the checksums each storage
keeps (see perfkit.storages.digest): a same-size but different file is found before any timing,
re-placed once, and if it still differs the run stops.
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from perfkit.storages import base as storage_base
from perfkit.compat import zip_strict
from perfkit.config import Profile
from perfkit.storages.digest import FileDigest, recorded_digests
from perfkit.datasets.taxi import TaxiDataset
from perfkit.errors import PerfkitError
from perfkit.locks import dataset_lock
from perfkit.storages import Location, Storage, get_storage, placed
from perfkit.paths import project_root
from perfkit.progress import progress_bar


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


def place_taxi(dataset: TaxiDataset, profile: Profile, file_format: str = "orc", progress: bool = True,
               where: list[str] | None = None) -> PlacedDataset:
    """Generate the dataset once, upload what is missing to each storage that holds data (every placed storage of
    the registry unless `where` names some), then verify them all, content included.

    One run at a time per dataset and storage folders: a second run waits, then finds every file in place."""
    rel = f"datasets/{dataset.name}/{file_format}"
    targets = {name: _Target(get_storage(name, profile), rel) for name in (where or placed())}
    # keyed on the shared folders, not the local one: two checkouts on one lab upload to the same place
    with dataset_lock(dataset.name, file_format, [t.storage.url(t.folder) for t in targets.values()]):
        return _place(dataset, targets, file_format, progress)


def _place(dataset: TaxiDataset, targets: dict[str, "_Target"], file_format: str, progress: bool) -> PlacedDataset:
    folder = staging_dir() / dataset.name / file_format
    local = dataset.write(folder, file_format)
    digests, changed = recorded_digests(local)
    if changed:  # a staged file edited after generation is regenerated, never uploaded as the dataset
        for path in changed:
            path.unlink()
        local = dataset.write(folder, file_format)
        digests, _ = recorded_digests(local)
    expected = {p.name: p.stat().st_size for p in local}
    listed = {name: target.listing() for name, target in targets.items()}  # one listing per storage
    todo = [(path, name) for name in targets for path in local if listed[name].get(path.name) != expected[path.name]]
    _upload(targets, todo, f"placing {dataset.name}", progress)
    verify_same_files(expected, {name: target.listing() for name, target in targets.items()})

    damaged = damaged_files(targets, local)
    if damaged:  # HDFS's file checksum is computed from the stored CRCs: only the NameNode knows a block is bad
        print(f"perfkit: {len(damaged)} placed file(s) are damaged on their storage "
              f"({'; '.join(f'{where}/{path.name}: {why}' for (path, where), why in damaged.items())}): "
              "re-placing them", file=sys.stderr, flush=True)
        _upload(targets, list(damaged), f"re-placing {dataset.name}", progress)
        still = damaged_files(targets, local)
        if still:
            raise PerfkitError(f"dataset {dataset.name}: {', '.join(f'{w}/{p.name}' for p, w in still)} still "
                               "damaged after re-placing them. Fix: check the DataNodes' disks and logs "
                               "(hdfs fsck <folder> -list-corruptfileblocks), then run again")
    differ = [pair for pair in content_mismatches(targets, local, digests) if pair not in damaged]
    if differ:
        names = ", ".join(f"{where}/{path.name}" for path, where in differ)
        print(f"perfkit: {len(differ)} placed file(s) differ in content from the generated ones ({names}): "
              "re-placing them", file=sys.stderr, flush=True)
        _upload(targets, differ, f"re-placing {dataset.name}", progress)
        still = content_mismatches(targets, local, digests)
        if still:
            names = ", ".join(f"{where}/{path.name}" for path, where in still)
            raise PerfkitError(
                f"dataset {dataset.name}: {names} still differ in content after re-placing them "
                f"(checked by {VERIFIED}); the storages would not be compared on equal data. Fix: check "
                "that nothing else writes under the prefix, delete the folder and run again")
    return PlacedDataset(dataset.name, file_format, expected,
                         {name: target.storage.url(target.folder) for name, target in targets.items()},
                         VERIFIED, [f"{where}/{path.name}" for path, where in [*damaged, *differ]])


@dataclass(frozen=True)
class _Target:
    """The dataset's folder on one storage."""

    storage: Storage
    rel: str

    @property
    def folder(self) -> Location:
        return self.storage.folder(self.rel)

    def listing(self) -> dict[str, int]:
        return self.storage.list_files(self.folder) or {}


def _upload(targets: dict[str, _Target], todo: list[tuple[Path, str]], desc: str, progress: bool) -> None:
    for path, where in progress_bar(todo, desc=desc, unit="file", disable=not progress or not todo):
        targets[where].storage.upload(targets[where].folder, path)


def damaged_files(targets: dict[str, _Target], local: list[Path]) -> dict[tuple[Path, str], str]:
    """(file, storage) -> why, for the files a storage itself knows are damaged (HDFS: corrupt or missing blocks)."""
    by_name = {path.name: path for path in local}
    sizes = {path.name: path.stat().st_size for path in local}
    return {(by_name[name], where): why for where, target in targets.items()
            for name, why in target.storage.damaged(target.folder, sizes).items()}


def content_mismatches(targets: dict[str, _Target], local: list[Path],
                       digests: dict[str, FileDigest]) -> list[tuple[Path, str]]:
    """(file, storage) pairs whose stored content is not the generated file's, by the checksum each storage keeps."""
    pairs = [(path, where) for where in targets for path in local]

    def same(pair) -> bool:
        path, where = pair
        return targets[where].storage.checksum_matches(targets[where].folder, path, digests[path.name])

    with ThreadPoolExecutor(CHECK_THREADS) as pool:
        matches = list(pool.map(same, pairs))
    return [pair for pair, ok in zip_strict(pairs, matches) if not ok]


def verify_same_files(expected: dict[str, int], found_by_storage: dict[str, dict[str, int]]) -> None:
    """Raise unless every storage holds exactly the expected files with the expected sizes."""
    for where, found in found_by_storage.items():
        problems = storage_base.listing_problems(expected, found)
        if problems:
            raise PerfkitError(
                f"dataset on {where} differs from the generated files ({problems}): "
                f"{len(found)} files / {sum(found.values())} bytes instead of {len(expected)} / "
                f"{sum(expected.values())}. Fix: delete that folder and run again to re-upload"
            )
