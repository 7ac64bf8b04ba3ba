import pytest


@pytest.fixture(autouse=True)
def _own_state_folders(tmp_path_factory, monkeypatch):
    """Dataset locks, records kept after a failed save, and the lab's home in folders of the test session's: not the
    user's ~/.local/state/perfkit nor the machine's temporary folder (a lab there, with its S3 endpoint setting,
    would change what these tests see)."""
    from perfkit import keep

    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(base / "lab-home"))
    monkeypatch.setenv("PERFKIT_LOCK_DIR", str(base / "locks"))
    monkeypatch.setattr(keep, "fallback_folders", lambda: [base / "kept-home", base / "kept-tmp"])
