"""Every registered storage, on the lab, through the same conformance checks (perfkit.storages.conformance)."""
import pytest

from perfkit import storages
from perfkit.storages.conformance import check_storage

pytestmark = pytest.mark.lab


@pytest.mark.parametrize("name", sorted(storages.REGISTRY))
def test_every_registered_storage_passes_the_conformance_checks(name, profile, tmp_path):
    storage = storages.get_storage(name, profile)
    done = check_storage(storage, tmp_path)
    if storage.backing is None:  # a storage that holds data: every check of the suite ran
        assert len(done) == 9, done
    else:
        assert done[0] == "answers its health check" and "refuses writes" in done
