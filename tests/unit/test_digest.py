import hashlib
import os
import struct

import pytest

from perfkit.storages import digest


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
    block_md5 = [hashlib.md5(b"".join(struct.pack(">I", crc32c.crc32c(b[i:i + 512]))
                                      for i in range(0, len(b), 512))).digest()
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


def _stream(data: bytes, piece: int, **kwargs) -> digest.StreamDigest:
    d = digest.StreamDigest(**kwargs)
    for i in range(0, len(data), piece):
        d.update(data[i:i + piece])
    return d


@pytest.mark.parametrize("piece", [1, 7, 511, 513, 4096])
def test_a_stream_digest_fed_in_any_pieces_gives_both_storages_checksums(files, piece):
    import crc32c

    data = files[2].read_bytes()  # 3079 bytes: parts of 1024, blocks of 2 CRCs of 512
    d = _stream(data, piece, part=1024)
    assert d.size == len(data) and d.md5 == hashlib.md5(data).hexdigest()
    assert d.whole_crc32c == crc32c.crc32c(data)
    parts = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    assert d.s3_etag() == hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-4"
    blocks = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    block_md5 = [hashlib.md5(b"".join(struct.pack(">I", crc32c.crc32c(b[i:i + 512]))
                                      for i in range(0, len(b), 512))).digest()
                 for b in blocks]
    md5 = hashlib.md5(b"".join(block_md5)).digest()
    assert d.hdfs_checksum_matches(_hdfs_json("MD5-of-2MD5-of-512CRC32C", 512, 2, md5))
    assert not d.hdfs_checksum_matches(_hdfs_json("MD5-of-2MD5-of-512CRC32C", 512, 2, bytes(16)))
    assert d.hdfs_checksum_matches({"algorithm": "COMPOSITE-CRC32C",
                                    "bytes": struct.pack(">I", crc32c.crc32c(data)).hex()})


def test_a_stream_digest_etag_single_part_below_the_part_size_and_one_part_at_it():
    assert _stream(b"x" * 1023, 100, part=1024).s3_etag() == hashlib.md5(b"x" * 1023).hexdigest()
    # s3transfer uploads a stream of exactly the threshold as a one-part multipart upload
    one = hashlib.md5(hashlib.md5(b"x" * 1024).digest()).hexdigest() + "-1"
    assert _stream(b"x" * 1024, 100, part=1024).s3_etag() == one


def test_a_stream_digest_refuses_a_checksum_of_other_chunks():
    d = _stream(b"abc", 3)
    with pytest.raises(ValueError, match="1024-byte chunks with CRC32C, the digest was made for 512-byte"):
        d.hdfs_checksum_matches(_hdfs_json("MD5-of-0MD5-of-1024CRC32C", 1024, 0, bytes(16)))


def test_the_digesting_reader_returns_whole_parts_from_a_trickling_stream():
    import io

    from perfkit.datasets.replicate import _DigestingReader

    class Trickle(io.RawIOBase):
        def __init__(self, data):
            self.data = data

        def read(self, n=-1):
            out, self.data = self.data[:min(n, 3)], self.data[min(n, 3):]
            return out

    d = digest.StreamDigest(part=4)
    reader = _DigestingReader(Trickle(b"0123456789"), d)
    assert [reader.read(4), reader.read(4), reader.read(4), reader.read(4)] == [b"0123", b"4567", b"89", b""]
    assert d.md5 == hashlib.md5(b"0123456789").hexdigest() and d.size == 10
