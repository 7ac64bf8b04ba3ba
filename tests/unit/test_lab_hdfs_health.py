"""HDFS health asks each DataNode itself: the NameNode still counts a killed one as live for minutes."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit.lab.hdfs import Hdfs
from perfkit.lab.settings import LabPorts


class FakeJmx(BaseHTTPRequestHandler):
    """Answers the NameNode's and the DataNode's /jmx queries from the class attributes."""

    namenode = {"NumLiveDataNodes": 1, "FSState": "Operational"}
    datanode: dict | None = None

    def do_GET(self):
        bean = self.namenode if "service=NameNode" in self.path else self.datanode
        if bean is None:
            self.send_error(404)
            return
        body = json.dumps({"beans": [bean]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def hdfs(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeJmx)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    yield Hdfs(tmp_path, LabPorts(namenode_http=port, datanode_http=port), datanodes=1)
    server.shutdown()
    server.server_close()
    FakeJmx.datanode = None


def _actors(*states):
    return {"BPServiceActorInfo": json.dumps([{"ActorState": s, "NamenodeAddress": "x"} for s in states])}


def test_a_datanode_the_namenode_still_counts_but_that_does_not_answer_is_not_healthy(hdfs):
    FakeJmx.datanode = None  # killed: its web endpoint is gone, the NameNode has not noticed
    assert hdfs.health() == (False, "datanode web endpoint does not answer")


def test_a_restarted_datanode_is_healthy_only_once_registered_again(hdfs):
    FakeJmx.datanode = {}
    assert hdfs.health() == (False, "datanode not registered with the NameNode (starting)")
    FakeJmx.datanode = _actors("CONNECTING")
    assert hdfs.health() == (False, "datanode not registered with the NameNode (CONNECTING)")
    FakeJmx.datanode = _actors("RUNNING")
    assert hdfs.health() == (True, "1 live DataNode")


def test_each_daemon_knows_its_own_ports(tmp_path):
    hdfs = Hdfs(tmp_path, LabPorts(namenode_rpc=19000, namenode_http=19870, datanode=19866, datanode_http=19864,
                                   datanode_ipc=19867), datanodes=2)
    assert hdfs.namenode.ports == {"namenode_rpc": 19000, "namenode_http": 19870}
    assert hdfs.datanodes[1].ports == {"datanode": 19876, "datanode_http": 19874, "datanode_ipc": 19877}
    assert set(hdfs.ports_needed().values()) == {19000, 19870, 19866, 19864, 19867, 19876, 19874, 19877}
