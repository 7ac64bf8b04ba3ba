import logging
import socket
from dataclasses import replace

import pytest

from perfkit.config import load_profile
from perfkit.engines.hive import HiveEngine
from perfkit.errors import ServiceError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def test_hiveserver2_down_gives_only_perfkits_message(capsys, caplog):
    port = _closed_port()
    engine = HiveEngine(replace(load_profile("lab"), hive_port=port))
    with caplog.at_level(logging.DEBUG), pytest.raises(ServiceError) as caught:
        engine.open()
    assert str(caught.value) == (f"HiveServer2 at 127.0.0.1:{port}: not reachable (TTransportException: "
                                 "[Errno 111] Connection refused). Fix: start it with `perfkit lab up hiveserver2`")
    assert not [r for r in caplog.records if r.name.startswith("thrift")]
    assert "Could not connect" not in capsys.readouterr().err
    assert not logging.getLogger("thrift.transport.TSocket").disabled  # silenced only while connecting


def test_an_unknown_host_names_the_profile_settings_to_fix(caplog):
    profile = load_profile("emr", bucket="b", master="no-such-host.invalid")
    with caplog.at_level(logging.DEBUG), pytest.raises(ServiceError, match=(
            r"HiveServer2 at no-such-host.invalid:10000: not reachable \(TTransportException: .+\)\. "
            r"Fix: check hive_host/hive_port in the profile")):
        HiveEngine(profile).open()
    assert not [r for r in caplog.records if r.name.startswith("thrift")]
