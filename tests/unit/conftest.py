import pytest


@pytest.fixture(autouse=True)
def _own_state_folders(tmp_path_factory, monkeypatch):
    """Dataset locks, and records kept after a failed save, in folders of the test session's: not the user's
    ~/.local/state/perfkit nor the machine's temporary folder."""
    from perfkit import keep

    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("PERFKIT_LOCK_DIR", str(base / "locks"))
    monkeypatch.setattr(keep, "fallback_folders", lambda: [base / "kept-home", base / "kept-tmp"])
