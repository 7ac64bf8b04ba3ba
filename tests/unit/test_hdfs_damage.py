"""HDFS's damaged files: what the NameNode knows about a file's blocks (GET_BLOCK_LOCATIONS), and an engine's
checksum error named as a corrupt block in its file."""
from __future__ import annotations

import dataclasses
from urllib.parse import parse_qs, urlsplit

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.storages import Location
from perfkit.storages.hdfs import Hdfs

GOOD = {"block": {"blockId": 1}, "startOffset": 0, "isCorrupt": False, "locations": [{"hostName": "dn1"}]}
BLOCKS = {  # path -> the NameNode's located blocks
    "/d/fine.orc": [GOOD, {**GOOD, "block": {"blockId": 2}, "startOffset": 134217728}],
    "/d/corrupt.orc": [GOOD, {"block": {"blockId": 7}, "startOffset": 134217728, "isCorrupt": True,
                              "locations": [{"hostName": "dn1"}]}],
    "/d/lost.orc": [{"block": {"blockId": 9}, "startOffset": 0, "isCorrupt": False, "locations": []}],
}


@pytest.fixture
def namenode(json_server):
    def located_blocks(path, headers):
        parts = urlsplit(path)
        blocks = BLOCKS.get(parts.path.removeprefix("/webhdfs/v1"))
        if blocks:
            return 200, {"LocatedBlocks": {"locatedBlocks": blocks}}
        return 404, {"RemoteException": {"message": "File does not exist"}}

    port, requests = json_server(located_blocks)
    profile = dataclasses.replace(load_profile("emr", bucket="b"), webhdfs_url=f"http://127.0.0.1:{port}")
    yield Hdfs(profile), lambda: [(urlsplit(p).path, parse_qs(urlsplit(p).query)) for p, _ in requests]


def test_the_namenode_names_corrupt_and_missing_blocks_one_request_per_file(namenode):
    hdfs, asked = namenode
    found = hdfs.damaged(Location("hdfs", "/d"), {"fine.orc": 200_000_000, "corrupt.orc": 200_000_000, "lost.orc": 5})
    assert found == {"corrupt.orc": "block 7 at byte 134217728 is corrupt (every replica failed its checksum)",
                     "lost.orc": "block 9 at byte 0 has no live replica"}
    assert sorted(path for path, _ in asked()) == ["/webhdfs/v1/d/corrupt.orc", "/webhdfs/v1/d/fine.orc",
                                                 "/webhdfs/v1/d/lost.orc"]
    query = dict(asked()[0][1])
    assert query["op"] == ["GET_BLOCK_LOCATIONS"] and query["offset"] == ["0"]


def test_a_namenode_that_cannot_list_the_blocks_is_named_with_the_file(namenode):
    hdfs, _ = namenode
    with pytest.raises(PerfkitError, match=r"cannot list the blocks of /d/gone.orc \(404"):
        hdfs.damaged(Location("hdfs", "/d"), {"gone.orc": 1})


@pytest.mark.parametrize("error, said", [
    ("org.apache.hadoop.fs.ChecksumException: Checksum error: /perfkit/datasets/taxi/orc/part-00001.orc at 1048576 "
     "exp: 123 got: -456", "corrupt block in /perfkit/datasets/taxi/orc/part-00001.orc (HDFS checksum error)"),
    ("Error opening Hive split hdfs://127.0.0.1:9000/p/x.orc (offset=0, length=5): Checksum error: "
     "hdfs://127.0.0.1:9000/p/x.orc at 0 exp: 1 got: 2", "corrupt block in /p/x.orc (HDFS checksum error)"),
    ("org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block: BP-1:blk_1073741825_1001 file=/p/a.orc "
     "No live nodes contain current block", "missing block in /p/a.orc (no DataNode holds a replica)"),
    ("java.net.ConnectException: Connection refused", None),
])
def test_an_engines_checksum_error_is_named_as_a_corrupt_block_in_its_file(namenode, error, said):
    hdfs, _ = namenode  # it knows no file /p/a.orc: the missing block is not known corrupt
    assert hdfs.explain(error) == said


def test_a_block_missing_because_its_only_replica_failed_its_checksum_is_named_corrupt(namenode):
    hdfs, _ = namenode
    said = hdfs.explain("org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block: BP-1:blk_7_1001 "
                        "file=/d/corrupt.orc No live nodes contain current block")
    assert said == "corrupt block in /d/corrupt.orc (HDFS checksum error)"
