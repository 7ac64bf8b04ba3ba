import hashlib
import os
import struct

import pytest

from perfkit.datasets import digest


@pytest.fixture
def files(tmp_path):
    paths = []
    for i, size in enumerate((0, 1000, 3 * 1024 + 7)):
        path = tmp_path / f"part-{i}.orc"
        path.write_bytes(os.urandom(size))
        paths.append(path)
    return paths


def test_digest_is_md5_and_crc32c_of_the_bytes(files):
    d = digest.digest_file(files[1])
    data = files[1].read_bytes()
    assert d.size == 1000 and d.md5 == hashlib.md5(data).hexdigest()
    assert digest.digest_file(files[0]).crc32c == 0
    known = files[0].parent / "check.bin"
    known.write_bytes(b"123456789")
    assert digest.digest_file(known).crc32c == 0xE3069283  # the CRC32C check value (RFC 3720)


def test_digests_are_recorded_once_and_an_edited_file_is_reported(files):
    book, changed = digest.recorded_digests(files)
    assert changed == [] and set(book) == {p.name for p in files}
    assert (files[0].parent / digest.BOOK).exists()
    again, changed = digest.recorded_digests(files)
    assert again == book and changed == []
    data = bytearray(files[2].read_bytes())
    data[100] ^= 0xFF  # same size, other content, as a planted file would be
    files[2].write_bytes(bytes(data))
    os.utime(files[2], ns=(1, 1))
    _, changed = digest.recorded_digests(files)
    assert changed == [files[2]]


def test_s3_etag_single_part_is_the_md5_and_multipart_the_md5_of_part_md5s(files):
    path = files[2]
    d = digest.digest_file(path)
    assert digest.s3_etag(path, d) == d.md5
    data = path.read_bytes()
    parts = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    expected = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-4"
    assert digest.s3_etag(path, d, part=1024) == expected


def _hdfs_json(algorithm, bytes_per_crc, crc_per_block, md5: bytes):
    raw = struct.pack(">iq", bytes_per_crc, crc_per_block) + md5
    return {"algorithm": algorithm, "bytes": raw.hex(), "length": len(raw)}


def test_hdfs_md5md5crc_checksum_of_a_single_block_file(files):
    import crc32c

    path = files[2]
    data = path.read_bytes()
    crcs = b"".join(struct.pack(">I", crc32c.crc32c(data[i:i + 512])) for i in range(0, len(data), 512))
    md5 = hashlib.md5(hashlib.md5(crcs).digest() + bytes(16)).digest()  # HDFS pads its 32-byte buffer with zeros
    d = digest.digest_file(path)
    assert digest.hdfs_checksum_matches(path, d, _hdfs_json("MD5-of-0MD5-of-512CRC32C", 512, 0, md5))
    assert not digest.hdfs_checksum_matches(path, d, _hdfs_json("MD5-of-0MD5-of-512CRC32C", 512, 0, bytes(16)))


def test_hdfs_md5md5crc_checksum_of_a_multi_block_file(files):
    import crc32c

    path = files[2]  # 3079 bytes in blocks of 1024 (2 CRCs of 512 per block)
    data = path.read_bytes()
    blocks = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    block_md5 = [hashlib.md5(b"".join(struct.pack(">I", crc32c.crc32c(b[i:i + 512])) for i in range(0, len(b), 512))).digest()
                 for b in blocks]
    assert len(block_md5) == 4  # 64 bytes: the buffer grew 32 -> 64, no padding left
    md5 = hashlib.md5(b"".join(block_md5)).digest()
    d = digest.digest_file(path)
    assert digest.hdfs_checksum_matches(path, d, _hdfs_json("MD5-of-2MD5-of-512CRC32C", 512, 2, md5))


def test_hdfs_composite_crc_is_the_crc32c_of_the_file(files):
    d = digest.digest_file(files[1])
    good = {"algorithm": "COMPOSITE-CRC32C", "bytes": struct.pack(">I", d.crc32c).hex(), "length": 4}
    assert digest.hdfs_checksum_matches(files[1], d, good)
    with pytest.raises(ValueError, match="unknown HDFS checksum algorithm 'SHA-9'"):
        digest.hdfs_checksum_matches(files[1], d, {"algorithm": "SHA-9", "bytes": "00"})


def test_the_hdfs_buffer_grows_as_hadoops_dataoutputbuffer_does():
    assert len(digest._as_hdfs_buffer(bytes(16))) == 32
    assert len(digest._as_hdfs_buffer(bytes(48))) == 64
    assert len(digest._as_hdfs_buffer(bytes(80))) == 128
    assert digest._as_hdfs_buffer(b"\x01" * 16)[16:] == bytes(16)
