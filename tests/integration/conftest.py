import pytest

from perfkit.config import load_profile
from perfkit.lab import Lab


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def lab():
    """The real lab, started if it is not up; stopped again at the end if these tests started it."""
    lab = Lab()
    started_here = not lab.is_up()
    lab.up()
    yield lab
    if started_here:
        lab.down()


@pytest.fixture(scope="session")
def profile(lab):
    return load_profile("lab")
