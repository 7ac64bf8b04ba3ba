"""Copy a generated table's files from HDFS to S3, each byte read once, and prove every copy identical.

The bytes stream from WebHDFS into an S3 upload through the driver's memory (never its disk). On the way,
StreamDigest computes the checksums both storages keep, so nothing is read a second time:
- the bytes read are the source file: HDFS's own file checksum (from the CRCs its DataNodes keep) matches;
- the object written holds those bytes: S3's ETag matches the MD5s of perfkit's upload parts.
The engines' tables over the two folders then read the same files, byte for byte.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.compat import zip_strict
from perfkit.config import Profile
from perfkit.storages.digest import UPLOAD_CONFIG, StreamDigest, hdfs_checksum_params
from perfkit.datasets.locations import Location
from perfkit.errors import PerfkitError

# method "copy" generates on SOURCE and copies byte for byte into TARGET: the checksums that prove a copy are these
# two storages' own (HDFS's file checksum of its CRCs, S3's ETag of the upload's parts), read while streaming
SOURCE, TARGET = "hdfs", "s3"
COPY_THREADS = 4  # files copied at once; each upload also runs s3transfer's own part threads
VERIFIED = "byte copies: HDFS's file checksum and S3's ETag both match the digests of the bytes copied"


@dataclass(frozen=True)
class CopiedFile:
    name: str
    size: int
    md5: str


class _DigestingReader:
    """A file-like over a WebHDFS response that digests what is read; read(n) returns n bytes until the end
    (s3transfer cuts a non-seekable stream into parts by what each read returns)."""

    def __init__(self, raw, digest: StreamDigest):
        self.raw, self.digest = raw, digest

    def read(self, amount: int = -1) -> bytes:
        chunks, wanted = [], amount
        while wanted != 0:
            data = self.raw.read(wanted if wanted > 0 else 8 << 20)
            if not data:
                break
            chunks.append(data)
            wanted = wanted - len(data) if wanted > 0 else wanted
        data = b"".join(chunks)
        self.digest.update(data)
        return data


def copy_hdfs_to_s3(profile: Profile,
                    folders: list[tuple[Location, Location, dict[str, int]]]) -> list[list[CopiedFile]]:
    """Copy each (HDFS folder, S3 prefix, {name: bytes}) folder's files, verified; the copies of each folder."""
    if any((src.storage, dst.storage) != (SOURCE, TARGET) for src, dst, _ in folders):
        raise PerfkitError(f"perfkit copies generated files from {SOURCE} to {TARGET} only")
    hdfs, s3 = hdfs_storage.webhdfs_client(profile), s3_storage.shared_s3_client(profile)
    jobs = [(index, src, dst, name, size) for index, (src, dst, files) in enumerate(folders)
            for name, size in sorted(files.items())]
    with ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="copy") as pool:
        copies = list(pool.map(lambda job: _copy_one(hdfs, s3, *job[1:]), jobs))
    return [[c for (index, *_), c in zip_strict(jobs, copies) if index == i] for i in range(len(folders))]


def _copy_one(hdfs, s3, src: Location, dst: Location, name: str, size: int) -> CopiedFile:
    path, key = f"{src.path}/{name}", f"{dst.path}/{name}"
    source_sum = hdfs.checksum(path)
    params = hdfs_checksum_params(source_sum)
    digest = StreamDigest(*(params[0], params[2]) if params else ())
    with hdfs.read(path) as raw:
        s3.upload_fileobj(_DigestingReader(raw, digest), dst.bucket, key, Config=UPLOAD_CONFIG)
    if digest.size != size:
        raise PerfkitError(f"copy of {src}/{name}: read {digest.size} bytes of {size}. Fix: check that nothing "
                           "writes into that folder, then run again (perfkit makes the dataset again)")
    if not digest.hdfs_checksum_matches(source_sum):
        raise PerfkitError(f"copy of {src}/{name}: the bytes read do not match HDFS's checksum of the file. "
                           "Fix: run again; if it repeats, check the DataNodes' logs for corrupt blocks")
    etag = s3.head_object(Bucket=dst.bucket, Key=key)["ETag"].strip('"')
    if etag != digest.s3_etag():
        raise PerfkitError(f"copy of {src}/{name} to {dst}/{name}: S3 stored other bytes (ETag {etag}, the "
                           f"bytes sent {digest.s3_etag()}). Fix: run again; check the S3 endpoint")
    return CopiedFile(name, digest.size, digest.md5)
