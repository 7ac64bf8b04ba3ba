"""Content digests of generated files, and the same digests as each storage reports them.

A file's MD5 and CRC32C are recorded when it is generated (digests.json beside the files). Placement
then asks each storage for the checksum it already keeps, so no byte of the data is read back:
- S3: the object's ETag from HEAD, the MD5 of a single-part upload or the MD5 of the parts' MD5s
  for a multipart one (the part size is perfkit's own upload setting, so it can be computed here).
- HDFS: WebHDFS GETFILECHECKSUM, computed by the DataNodes from the CRCs they keep beside every
  block (about 1% of the data, read on the DataNodes): MD5 of the blocks' MD5s of their chunk CRCs
  (HDFS's default), or COMPOSITE-CRC32C, the CRC32C of the whole file, where a cluster is set so.
Both scale with the number of files (one small request each), not with their bytes.
"""
from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import crc32c
from boto3.s3.transfer import TransferConfig

from perfkit import atomic

MiB = 1024 * 1024
READ_CHUNK = 8 * MiB
# perfkit's own S3 uploads use these sizes, so the expected multipart ETag can be computed locally
UPLOAD_PART = 8 * MiB
UPLOAD_CONFIG = TransferConfig(multipart_threshold=UPLOAD_PART, multipart_chunksize=UPLOAD_PART)
BOOK = "digests.json"


@dataclass(frozen=True)
class FileDigest:
    size: int
    mtime_ns: int
    md5: str
    crc32c: int


def digest_file(path: Path) -> FileDigest:
    md5, crc = hashlib.md5(), 0
    with open(path, "rb") as handle:
        while block := handle.read(READ_CHUNK):
            md5.update(block)
            crc = crc32c.crc32c(block, crc)
    stat = path.stat()
    return FileDigest(stat.st_size, stat.st_mtime_ns, md5.hexdigest(), crc)


def recorded_digests(paths: list[Path]) -> tuple[dict[str, FileDigest], list[Path]]:
    """The digests recorded for these files (recording new ones), and the files changed since.

    A file whose size or modification time differs from its record was changed after it was
    generated: it is returned for regeneration, never trusted.
    """
    if not paths:
        return {}, []
    book_path = paths[0].parent / BOOK
    book = {name: FileDigest(**d) for name, d in _read_book(book_path).items()}
    changed, added = [], False
    for path in paths:
        known = book.get(path.name)
        stat = path.stat()
        if known is None:
            book[path.name] = digest_file(path)
            added = True
        elif (known.size, known.mtime_ns) != (stat.st_size, stat.st_mtime_ns):
            changed.append(path)
            del book[path.name]
    if not (added or changed):
        return book, changed
    atomic.write_text(book_path, json.dumps({name: asdict(d) for name, d in sorted(book.items())}, indent=1))
    return book, changed


def _read_book(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {}


def s3_etag(path: Path, digest: FileDigest, part: int = UPLOAD_PART) -> str:
    """The ETag S3 gives this file uploaded with perfkit's settings (s3transfer: multipart from `part` bytes)."""
    if digest.size < part:
        return digest.md5
    parts = []
    with open(path, "rb") as handle:
        while block := handle.read(part):
            parts.append(hashlib.md5(block).digest())
    return f"{hashlib.md5(b''.join(parts)).hexdigest()}-{len(parts)}"


MD5MD5CRC = re.compile(r"^MD5-of-(\d+)MD5-of-(\d+)(CRC32C?)$")


def hdfs_checksum_matches(path: Path, digest: FileDigest, checksum: dict) -> bool:
    """Does HDFS's file checksum (WebHDFS JSON: algorithm, bytes, length) describe this local file?"""
    params = hdfs_checksum_params(checksum)
    if params is None:  # COMPOSITE-CRC32C: the CRC32C of the whole file, recorded at generation
        return bytes.fromhex(checksum["bytes"])[:4] == struct.pack(">I", digest.crc32c)
    bytes_per_crc, _, crc_type = params
    stream = StreamDigest(bytes_per_crc, crc_type)
    with open(path, "rb") as handle:
        while block := handle.read(READ_CHUNK):
            stream.update(block)
    return stream.hdfs_checksum_matches(checksum)


def hdfs_checksum_params(checksum: dict) -> tuple[int, int, str] | None:
    """(bytes per CRC, CRCs per block, CRC32C or CRC32) of an MD5MD5CRC file checksum; None for COMPOSITE-CRC32C."""
    algorithm, raw = checksum.get("algorithm", ""), bytes.fromhex(checksum.get("bytes", ""))
    if algorithm == "COMPOSITE-CRC32C":
        return None
    match = MD5MD5CRC.match(algorithm)
    if not match or len(raw) < 28:
        raise ValueError(f"unknown HDFS checksum algorithm {algorithm!r}")
    bytes_per_crc, crc_per_block = struct.unpack(">iq", raw[:12])
    return bytes_per_crc, crc_per_block, match.group(3)


class StreamDigest:
    """The digests both storages keep, computed over bytes as they stream past (a copy reads each byte once).

    - MD5 of the whole, and of each `part` bytes: S3's ETag of an upload with perfkit's part size;
    - the CRC of every `bytes_per_crc` chunk: HDFS's MD5-of-MD5-of-CRC file checksum, and the whole CRC32C
      (COMPOSITE-CRC32C).
    """

    def __init__(self, bytes_per_crc: int = 512, crc_type: str = "CRC32C", part: int = UPLOAD_PART):
        self.bytes_per_crc, self.crc_type, self.part = bytes_per_crc, crc_type, part
        self._crc = crc32c.crc32c if crc_type == "CRC32C" else zlib.crc32
        self.size, self.whole_crc32c = 0, 0
        self._md5, self._part_md5, self._part_left = hashlib.md5(), hashlib.md5(), part
        self.part_md5s: list[bytes] = []
        self._chunk_crcs: list[bytes] = []
        self._pending = b""  # the start of a CRC chunk not yet complete

    def update(self, data: bytes) -> None:
        self.size += len(data)
        self._md5.update(data)
        self.whole_crc32c = crc32c.crc32c(data, self.whole_crc32c)
        view = memoryview(data)
        while view:
            take = min(self._part_left, len(view))
            self._part_md5.update(view[:take])
            self._part_left -= take
            view = view[take:]
            if self._part_left == 0:
                self.part_md5s.append(self._part_md5.digest())
                self._part_md5, self._part_left = hashlib.md5(), self.part
        data = self._pending + data
        whole = len(data) - len(data) % self.bytes_per_crc
        step, crc = self.bytes_per_crc, self._crc
        self._chunk_crcs += [struct.pack(">I", crc(data[i:i + step])) for i in range(0, whole, step)]
        self._pending = data[whole:]

    @property
    def md5(self) -> str:
        return self._md5.hexdigest()

    def s3_etag(self) -> str:
        """The ETag S3 gives these bytes uploaded with perfkit's settings (s3transfer: multipart from `part`)."""
        if self.size < self.part:
            return self.md5
        parts = self.part_md5s + ([self._part_md5.digest()] if self._part_left < self.part else [])
        return f"{hashlib.md5(b''.join(parts)).hexdigest()}-{len(parts)}"

    def md5_of_md5_of_crc(self, crc_per_block: int) -> bytes:
        crcs = self._chunk_crcs + ([struct.pack(">I", self._crc(self._pending))] if self._pending else [])
        per_block = crc_per_block or max(len(crcs), 1)  # 0 means a single block
        block_md5s = [hashlib.md5(b"".join(crcs[i:i + per_block])).digest() for i in range(0, len(crcs), per_block)]
        return hashlib.md5(_as_hdfs_buffer(b"".join(block_md5s))).digest()

    def hdfs_checksum_matches(self, checksum: dict) -> bool:
        """Does HDFS's file checksum (WebHDFS JSON) describe the bytes seen?"""
        params = hdfs_checksum_params(checksum)
        raw = bytes.fromhex(checksum.get("bytes", ""))
        if params is None:
            return raw[:4] == struct.pack(">I", self.whole_crc32c)
        bytes_per_crc, crc_per_block, crc_type = params
        if (bytes_per_crc, crc_type) != (self.bytes_per_crc, self.crc_type):
            raise ValueError(f"HDFS checksums {bytes_per_crc}-byte chunks with {crc_type}, the digest was made "
                             f"for {self.bytes_per_crc}-byte chunks with {self.crc_type}")
        return raw[12:28] == self.md5_of_md5_of_crc(crc_per_block)


def md5_of_md5_of_crc(path: Path, bytes_per_crc: int, block_size: int, crc_type: str = "CRC32C") -> bytes:
    """HDFS's MD5MD5CRC file checksum of a local file: MD5 over each block's MD5 of its chunk CRCs."""
    stream = StreamDigest(bytes_per_crc, crc_type)
    with open(path, "rb") as handle:
        while data := handle.read(READ_CHUNK):
            stream.update(data)
    return stream.md5_of_md5_of_crc(block_size // bytes_per_crc)


def _as_hdfs_buffer(data: bytes) -> bytes:
    """The bytes HDFS digests: its DataOutputBuffer's whole backing array, zero-padded past the data.

    The buffer starts at 32 bytes and grows to max(twice, needed) as each 16-byte block MD5 is
    appended; MD5Hash.digest(getData()) hashes all of it (checked against a DataNode's answer).
    """
    capacity = 32
    for written in range(16, len(data) + 1, 16):
        if written > capacity:
            capacity = max(capacity * 2, written)
    return data + bytes(capacity - len(data))

