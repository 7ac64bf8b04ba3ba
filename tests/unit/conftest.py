import pytest


@pytest.fixture(autouse=True)
def _own_state_folders(own_state_folders):
    """Every unit test in folders of its session's (tests/conftest.py)."""
