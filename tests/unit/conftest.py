import pytest


@pytest.fixture(autouse=True)
def _own_lock_dir(tmp_path_factory, monkeypatch):
    """Dataset locks in a folder of the test session's, not the user's ~/.local/state/perfkit/locks."""
    monkeypatch.setenv("PERFKIT_LOCK_DIR", str(tmp_path_factory.getbasetemp() / "locks"))
