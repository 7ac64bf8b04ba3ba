"""The tiers' waits (through perfkit.waiting.poll_until): what they return and say, with fake servers."""
import perfkit.tiers.alluxio_client
from perfkit import tiers
from perfkit.config import load_profile


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
