"""A folder of data files on HDFS or S3, seen by perfkit itself: list it, read one file's footer, delete what is ours.

perfkit reads a user's location (listing, a footer's few KB) and never writes or deletes there; only the
folders it generated itself (see perfkit.datasets.generate) are ever deleted, through `delete_tree`.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from hdfs.util import HdfsError

from perfkit import storage
from perfkit.config import Profile
from perfkit.errors import PerfkitError

STORAGE_OF_SCHEME = {"hdfs": "hdfs", "s3": "s3", "s3a": "s3", "s3n": "s3"}
HIDDEN = re.compile(r"^[._]")  # _SUCCESS, .crc, _committed_...: not data, as Hive and Spark skip them


@dataclass(frozen=True)
class Location:
    storage: str  # hdfs | s3
    path: str  # HDFS: an absolute path; S3: the key prefix, no trailing slash
    bucket: str = ""

    def url(self, profile: Profile) -> str:
        """The URL every engine reads: the profile's HDFS URI and S3 scheme (s3a in the lab, s3 on EMR)."""
        if self.storage == "hdfs":
            return profile.hdfs_url_of(self.path)
        return f"{profile.s3_scheme}://{self.bucket}/{self.path}"

    def __str__(self) -> str:
        return f"hdfs://{self.path}" if self.storage == "hdfs" else f"s3://{self.bucket}/{self.path}"


def parse_location(url: str, where: str) -> Location:
    """hdfs://[host:port]/path, s3://bucket/prefix (s3a, s3n alike); anything else is named with the forms."""
    parts = urlparse(str(url).strip())
    kind = STORAGE_OF_SCHEME.get(parts.scheme)
    if kind is None or not parts.path.strip("/") and kind == "hdfs" or kind == "s3" and not parts.netloc:
        raise PerfkitError(f"{where}: {url!r} is not a table location: give hdfs:///path/to/folder or "
                           "s3://bucket/prefix/ (a folder of ORC or Parquet files)")
    if kind == "hdfs":
        return Location("hdfs", "/" + parts.path.strip("/"))
    return Location("s3", parts.path.strip("/"), parts.netloc)


def profile_location(profile: Profile, storage_name: str, *parts: str) -> Location:
    """A folder under the profile's prefix on one storage: where perfkit puts what it generates."""
    if storage_name == "hdfs":
        return Location("hdfs", profile.hdfs_path(*parts))
    return Location("s3", profile.s3_key(*parts), profile.s3_bucket)


def list_files(profile: Profile, loc: Location) -> dict[str, int] | None:
    """{name: bytes} of the data files directly in the folder (hidden ones left out); None if it does not exist."""
    if loc.storage == "hdfs":
        try:
            entries = storage.webhdfs_client(profile).list(loc.path, status=True)
        except HdfsError as err:
            if "does not exist" in str(err):
                return None
            raise
        found = {name: st["length"] for name, st in entries if st["type"] == "FILE"}
    else:
        s3 = storage.shared_s3_client(profile)
        found, prefix, any_key = {}, loc.path + "/", False
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=prefix, Delimiter="/"):
            any_key = any_key or bool(page.get("Contents") or page.get("CommonPrefixes"))
            found.update({o["Key"][len(prefix):]: o["Size"] for o in page.get("Contents", [])})
        if not any_key:
            return None
    return {name: size for name, size in found.items() if name and not HIDDEN.match(name)}


def open_file(profile: Profile, loc: Location, name: str, size: int) -> io.BufferedReader:
    """A seekable reader of one file that fetches only the ranges read (a footer is a few KB of a large file)."""
    if loc.storage == "hdfs":
        client, path = storage.webhdfs_client(profile), f"{loc.path}/{name}"

        def read(offset: int, length: int) -> bytes:
            with client.read(path, offset=offset, length=length) as reader:
                return reader.read()
    else:
        s3, key = storage.shared_s3_client(profile), f"{loc.path}/{name}"

        def read(offset: int, length: int) -> bytes:
            rng = f"bytes={offset}-{offset + length - 1}"
            return s3.get_object(Bucket=loc.bucket, Key=key, Range=rng)["Body"].read()
    return io.BufferedReader(_RangeReader(f"{loc}/{name}", size, read), buffer_size=256 * 1024)


class _RangeReader(io.RawIOBase):
    def __init__(self, name: str, size: int, read):
        self.name, self.size, self._read, self.pos = name, size, read, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence] + offset
        return self.pos

    def readinto(self, buffer) -> int:
        length = min(len(buffer), self.size - self.pos)
        if length <= 0:
            return 0
        data = self._read(self.pos, length)
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def delete_tree(profile: Profile, loc: Location) -> None:
    """Delete a folder perfkit generated (its callers check perfkit's marker there first)."""
    if loc.storage == "hdfs":
        storage.webhdfs_client(profile).delete(loc.path, recursive=True)
        return
    s3 = storage.shared_s3_client(profile)
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=loc.bucket, Prefix=loc.path + "/"):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=loc.bucket, Delete={"Objects": keys, "Quiet": True})


def make_folder(profile: Profile, loc: Location) -> None:
    """An empty folder for an engine to write into (HDFS; on S3 a prefix needs no making)."""
    if loc.storage == "hdfs":
        storage.webhdfs_client(profile).makedirs(loc.path)


def read_text(profile: Profile, loc: Location, name: str) -> str | None:
    """A small file of perfkit's (a dataset marker), or None when it is not there."""
    try:
        if loc.storage == "hdfs":
            with storage.webhdfs_client(profile).read(f"{loc.path}/{name}") as reader:
                return reader.read().decode()
        body = storage.shared_s3_client(profile).get_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}")["Body"]
        return body.read().decode()
    except HdfsError as err:
        if "does not exist" in str(err) or "not found" in str(err):
            return None
        raise
    except Exception as err:  # noqa: BLE001 - botocore's NoSuchKey is a ClientError subclass made at runtime
        if getattr(err, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise


def write_text(profile: Profile, loc: Location, name: str, text: str) -> None:
    if loc.storage == "hdfs":
        storage.webhdfs_client(profile).write(f"{loc.path}/{name}", text.encode(), overwrite=True)
    else:
        storage.shared_s3_client(profile).put_object(Bucket=loc.bucket, Key=f"{loc.path}/{name}", Body=text.encode())
