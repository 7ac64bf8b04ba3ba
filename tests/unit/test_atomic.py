"""perfkit.atomic.write_text: the new content whole, with its mode, or the old file untouched."""
import os
import stat

import pytest

from perfkit import atomic


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_a_write_leaves_the_text_with_the_mode_asked(tmp_path):
    shared = atomic.write_text(tmp_path / "sub" / "report.html", "<p>é</p>\n")  # the folder is made
    secret = atomic.write_text(tmp_path / "credentials.json", '{"secret_key": "x"}', mode=0o600)
    assert shared.read_text() == "<p>é</p>\n" and _mode(shared) == 0o644
    assert secret.read_text() == '{"secret_key": "x"}' and _mode(secret) == 0o600
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["credentials.json", "report.html", "sub"]


def test_a_write_replaces_the_old_file_whatever_its_mode(tmp_path):
    path = tmp_path / "index.html"
    path.write_text("old")
    path.chmod(0o600)
    atomic.write_text(path, "new")
    assert path.read_text() == "new" and _mode(path) == 0o644


def test_a_secret_is_never_readable_by_others_while_written(tmp_path, monkeypatch):
    seen = []
    real_fsync = os.fsync

    def fsync(fd):  # the text is in the temporary file, not yet moved into place
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    atomic.write_text(tmp_path / "credentials.json", "secret", mode=0o600)
    assert seen == [0o600]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failure_mid_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch, failure):
    path = tmp_path / "run.jsonl"
    path.write_text("old\n")

    def fsync(fd):  # the new text is half-way: written to the temporary file, not yet on disk
        raise failure

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(type(failure)):
        atomic.write_text(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]
