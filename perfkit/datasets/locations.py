"""A folder of data files on a storage, seen by perfkit itself: list it, read one file's footer, delete what is ours.

perfkit reads a user's location (listing, a footer's few KB) and never writes or deletes there; only the
folders it generated itself (see perfkit.datasets.generate) are ever deleted, through `delete_tree`. What each
storage does is its class's (perfkit.storages); these functions name the storage by the location.
"""
from __future__ import annotations

import io

from perfkit.config import Profile
from perfkit.storages import Location, get_storage, storage_of_url
from perfkit.storages.base import HIDDEN

__all__ = ["HIDDEN", "Location", "delete_tree", "list_files", "list_tree", "make_folder", "open_file", "parse_location",
           "profile_location", "read_text", "write_text"]


def parse_location(url: str, where: str) -> Location:
    """hdfs://[host:port]/path, s3://bucket/prefix (s3a, s3n alike); anything else is named with the forms."""
    return storage_of_url(url, where)


def profile_location(profile: Profile, storage_name: str, *parts: str) -> Location:
    """A folder under the profile's prefix on one storage: where perfkit puts what it generates."""
    return get_storage(storage_name, profile).folder(*parts)


def list_files(profile: Profile, loc: Location) -> dict[str, int] | None:
    """{name: bytes} of the data files directly in the folder (hidden ones left out); None if it does not exist."""
    return get_storage(loc.storage, profile).list_files(loc)


def list_tree(profile: Profile, loc: Location) -> dict[str, int] | None:
    """{path below the folder: bytes} of every data file at any depth (partition folders); None if it does not exist."""
    return get_storage(loc.storage, profile).list_tree(loc)


def open_file(profile: Profile, loc: Location, name: str, size: int) -> io.BufferedReader:
    """A seekable reader of one file that fetches only the ranges read (a footer is a few KB of a large file)."""
    return get_storage(loc.storage, profile).open_file(loc, name, size)


def delete_tree(profile: Profile, loc: Location) -> None:
    """Delete a folder perfkit generated (its callers check perfkit's marker there first)."""
    get_storage(loc.storage, profile).delete_tree(loc)


def make_folder(profile: Profile, loc: Location) -> None:
    """An empty folder for an engine to write into (HDFS; on S3 a prefix needs no making)."""
    get_storage(loc.storage, profile).make_folder(loc)


def read_text(profile: Profile, loc: Location, name: str) -> str | None:
    """A small file of perfkit's (a dataset marker), or None when it is not there."""
    return get_storage(loc.storage, profile).read_text(loc, name)


def write_text(profile: Profile, loc: Location, name: str, text: str) -> None:
    get_storage(loc.storage, profile).write_text(loc, name, text)
