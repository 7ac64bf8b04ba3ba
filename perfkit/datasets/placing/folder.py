"""One storage's folder of a generated dataset: every storage operation the placement steps use, in one place.

The per-storage code (HDFS and S3 branches) is in perfkit.datasets.locations and replicate; a step never calls
them itself, so a storage class can later take this folder's place.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from perfkit.compat import zip_strict
from perfkit.config import Profile
from perfkit.datasets import locations
from perfkit.datasets.locations import Location
from perfkit.datasets.replicate import CopiedFile, copy_hdfs_to_s3
from perfkit.datasets.schema import read_rows
from perfkit.datasets.tables import Table
from perfkit.datasets.user_tables import inspect_location
from perfkit.storages import get_storage

MARKER = "_perfkit_dataset.json"
FOOTER_THREADS = 8  # footer reads are a few small ranged requests each


@dataclass(frozen=True)
class DatasetFolder:
    """datasets/<name>/<format>/ on one storage, with perfkit's marker of what it holds."""

    profile: Profile
    where: str  # hdfs | s3
    root: Location
    identity: dict  # the dataset made here (generator, scale, format, tables), as its marker records it

    @classmethod
    def under_prefix(cls, profile: Profile, where: str, rel: str, identity: dict) -> "DatasetFolder":
        """The folder `rel` under the profile's prefix on one storage."""
        return cls(profile, where, locations.profile_location(profile, where, rel), identity)

    def table(self, table: str) -> Location:
        return Location(self.root.storage, f"{self.root.path}/{table}", self.root.bucket)

    def table_url(self, table: str) -> str:
        return self.table(table).url(self.profile)

    def files(self, table: str) -> dict[str, int]:
        return locations.list_files(self.profile, self.table(table)) or {}

    def exists(self) -> bool:
        return locations.list_files(self.profile, self.root) is not None

    def delete(self) -> None:
        """Delete the folder: only ever called on perfkit's own (its marker said so)."""
        locations.delete_tree(self.profile, self.root)

    def damaged(self, tables) -> dict[str, str]:
        """table/file -> why, for the files the storage itself knows are damaged (HDFS: corrupt or missing blocks)."""
        storage = get_storage(self.where, self.profile)
        return {f"{t}/{name}": why
                for t in tables for name, why in storage.damaged(self.table(t), self.files(t)).items()}

    def read_marker(self) -> str | None:
        return locations.read_text(self.profile, self.root, MARKER)

    def start_marker(self) -> None:
        locations.write_text(self.profile, self.root, MARKER,
                             json.dumps({"complete": False, "identity": self.identity}))

    def finish_marker(self, checksums: dict, files: dict) -> None:
        locations.write_text(self.profile, self.root, MARKER, json.dumps({
            "complete": True, "identity": self.identity, "checksums": checksums, "files": files}))

    def inspect(self, table: str, file_format: str) -> Table:
        return inspect_location(self.profile, str(self.table(table)), file_format, self.where,
                                f"{table} on {self.where}")

    def footer_rows(self, tables, file_format: str) -> dict[str, int]:
        """Rows per table, summed from every file's footer (a few KB read per file, in parallel)."""
        files = [(t, self.table(t), name, size) for t in tables for name, size in self.files(t).items()]

        def rows(item) -> int:
            _, loc, name, size = item
            with locations.open_file(self.profile, loc, name, size) as handle:
                return read_rows(handle, file_format)

        with ThreadPoolExecutor(FOOTER_THREADS) as pool:
            counts = list(pool.map(rows, files))
        return {t: sum(n for (table, *_), n in zip_strict(files, counts) if table == t) for t in tables}

    def copy_in(self, source: "DatasetFolder", tables) -> dict[str, list[CopiedFile]]:
        """Byte copies of the source's tables into this folder, each proven identical; the files per table."""
        folders = [(source.table(t), self.table(t), source.files(t)) for t in tables]
        return dict(zip_strict(tables, copy_hdfs_to_s3(self.profile, folders)))
