"""The HiveServer2 health probe has a time limit: a port that accepts but never answers cannot hang `lab up`."""
import socket
import time

from perfkit.lab.spark_thrift import SparkThriftServer
from perfkit.lab.settings import LabPorts


def test_a_silent_listener_is_unhealthy_within_the_limit(tmp_path, monkeypatch):
    with socket.socket() as silent:  # another program on the port: it accepts, then says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        server = SparkThriftServer(tmp_path, LabPorts(spark_thrift=silent.getsockname()[1]))
        monkeypatch.setattr(server, "answer_within_s", 1.0)
        began = time.monotonic()
        healthy, detail = server.health()
    assert not healthy and detail.startswith("SELECT 1 failed")
    assert time.monotonic() - began < 10
