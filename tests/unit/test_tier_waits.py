"""The tiers' waits (through perfkit.waiting.poll_until): what they return and say, with fake servers."""
import pytest

import perfkit.tiers.alluxio_client
from perfkit import tiers
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.lab.provider import _wait_for_catalog_nodes


class FakeTrino:
    def __init__(self, failures: int):
        self.failures, self.queries = failures, 0

    def query(self, sql):
        self.queries += 1
        if self.queries <= self.failures:
            raise RuntimeError("NO_NODES_AVAILABLE: no nodes available to run query")
        return [(5,)]


def test_a_restarted_trino_is_awaited_until_a_query_runs():
    server = FakeTrino(failures=1)
    _wait_for_catalog_nodes(server, timeout_s=10)
    assert server.queries == 2


def test_a_trino_that_never_runs_a_query_is_named_with_its_last_error():
    server = FakeTrino(failures=10**6)
    with pytest.raises(PerfkitError, match=r"Trino restarted but runs no query \(NO_NODES_AVAILABLE: no nodes "
                                           r"available to run query\)\. Fix: read its log"):
        _wait_for_catalog_nodes(server, timeout_s=0.1)
    assert server.queries == 2  # one look, and one more at the deadline


def test_emptying_alluxio_waits_until_the_workers_drop_the_blocks(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    held = iter([3_000_000, 0])

    class FakeClient:
        def __init__(self, profile):
            self.freed = None

        def free(self, path):
            self.freed = path

        def store(self):
            return next(held), 10**9

    monkeypatch.setattr(perfkit.tiers.alluxio_client, "AlluxioClient", FakeClient)
    assert tiers.Alluxio(load_profile("lab")).empty() == "Alluxio freed /perfkit-lab (the bucket's mount)"
