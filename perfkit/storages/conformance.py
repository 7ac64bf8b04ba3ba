"""The checks every storage passes (as fsspec ships its abstract tests): run on each registered storage against
the lab (tests/integration/test_storage_conformance.py) and on any new storage before it is registered.

Everything is written under a folder of its own below the profile's prefix and deleted at the end.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import urlparse

from perfkit.storages.digest import digest_file
from perfkit.errors import PerfkitError
from perfkit.storages.base import Location, Storage

SIZE = 300_000  # a few ranged reads' worth, below any multipart threshold


def check_storage(storage: Storage, scratch: Path) -> list[str]:
    """Run the checks; return what was checked (one line each); raise AssertionError naming the first failure."""
    done = []
    storage.check()
    problem = storage.health_probe()()
    assert problem is None, f"its health probe says {problem!r} while check() passed"
    done.append("answers its health check")
    if storage.backing is not None:
        return done + _check_tier(storage)
    folder = storage.folder("conformance", uuid.uuid4().hex[:12])
    assert storage.list_files(folder) is None, f"{folder} exists before anything was written"
    back = type(storage).parse(urlparse(str(folder)))
    assert back == folder, f"{folder} parses back as {back}"
    assert urlparse(storage.url(folder)).scheme in storage.schemes, f"{storage.url(folder)}: not a {storage.name} URL"
    done.append("names a new folder that does not exist yet, and its URLs")
    local = scratch / "part-00000.bin"
    local.write_bytes(os.urandom(SIZE))
    try:
        storage.upload(folder, local)
        storage.write_text(folder, "_marker.json", '{"by": "perfkit"}')
        listed = storage.list_files(folder)
        assert listed == {local.name: SIZE}, f"listing {listed}, not the one uploaded file (hidden files left out)"
        done.append("lists an uploaded file with its size, hidden files left out")
        partition = Location(folder.storage, f"{folder.path}/k=1", folder.bucket)
        storage.upload(partition, local)
        storage.write_text(Location(folder.storage, f"{folder.path}/_temporary", folder.bucket), local.name, "x")
        tree = storage.list_tree(folder)
        assert tree == {local.name: SIZE, f"k=1/{local.name}": SIZE}, (
            f"listing below the folder gives {tree}, not the file in it and the one in k=1/ (hidden folders left out)")
        assert storage.list_files(folder) == listed, "a folder below changed the listing of the folder's own files"
        done.append("lists the files below a folder at any depth (partition folders), hidden folders left out")
        assert storage.read_text(folder, "_marker.json") == '{"by": "perfkit"}'
        assert storage.read_text(folder, "_absent.json") is None
        done.append("reads back a small file, and None for one that is not there")
        data = local.read_bytes()
        with storage.open_file(folder, local.name, SIZE) as reader:
            reader.seek(-1000, os.SEEK_END)
            assert reader.read() == data[-1000:], "the last 1000 bytes read by range differ"
            reader.seek(1234)
            assert reader.read(100) == data[1234:1334], "100 bytes at 1234 read by range differ"
        done.append("reads ranges of a file")
        assert storage.checksum_matches(folder, local, digest_file(local)), "its checksum does not match the file"
        other = scratch / "other" / local.name
        other.parent.mkdir(exist_ok=True)
        other.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # the same size, one bit flipped
        assert not storage.checksum_matches(folder, other, digest_file(other)), "a changed file passes its checksum"
        done.append("keeps a checksum that tells the file from a one-bit change")
        assert isinstance(storage.snapshot(), dict)
        done.append("takes a snapshot of its counters")
    finally:
        storage.delete_tree(folder)
    assert storage.list_files(folder) is None, f"{folder} is still there after delete_tree"
    done.append("deletes the folder it made")
    return done


def _check_tier(tier: Storage) -> list[str]:
    copy_folder = tier.folder("conformance")
    assert copy_folder.storage == tier.backing, f"a tier's folders are its backing storage's, not {copy_folder}"
    assert tier.url(copy_folder), "no URL for engines to read through the tier"
    try:
        tier.write_text(copy_folder, "_x", "x")
    except PerfkitError as err:
        assert tier.backing in str(err)
    else:
        raise AssertionError("a tier accepted a write")
    snapshot = tier.snapshot()
    assert all(isinstance(v, (int, float)) for v in snapshot.values()), f"counters not numbers: {snapshot}"
    return ["reads its backing storage's folders through its own URL", "refuses writes",
            f"takes a snapshot of its counters ({', '.join(snapshot) or 'none'})"]
