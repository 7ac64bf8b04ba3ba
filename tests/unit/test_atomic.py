"""perfkit.atomic.write_text: the new content whole, with its mode, or the old file untouched."""
import os
import stat
from pathlib import Path

import pytest

from perfkit import atomic


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_a_write_leaves_the_text_with_the_mode_asked(tmp_path):
    shared = atomic.write_text(tmp_path / "sub" / "report.html", "<p>é</p>\n")  # the folder is made
    secret = atomic.write_text(tmp_path / "credentials.json", '{"secret_key": "x"}', mode=0o600)
    assert shared.read_bytes() == "<p>é</p>\n".encode() and _mode(shared) == 0o666 & ~_umask()
    assert secret.read_text() == '{"secret_key": "x"}' and _mode(secret) == 0o600
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["credentials.json", "report.html", "sub"]


def test_a_write_replaces_the_old_file_whatever_its_mode(tmp_path):
    path = tmp_path / "index.html"
    path.write_text("old")
    path.chmod(0o600)
    atomic.write_text(path, "new")
    assert path.read_text() == "new" and _mode(path) == 0o666 & ~_umask()


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_a_shared_file_gets_the_users_umask_and_a_private_one_0600_whatever_it(tmp_path, umask):
    old = os.umask(umask)
    try:
        shared = atomic.write_text(tmp_path / "run.jsonl", "{}\n")
        private = atomic.write_text(tmp_path / "credentials.json", "{}", mode=atomic.PRIVATE)
    finally:
        os.umask(old)
    assert (_mode(shared), _mode(private)) == (0o666 & ~umask, 0o600)


def test_the_text_is_utf8_whatever_the_locale(tmp_path):
    import subprocess
    import sys

    # the C locale without PEP 538's coercion: open()'s default encoding is ASCII there
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
           "PYTHONPATH": str(Path(atomic.__file__).parents[1])}  # this perfkit, not the installed one
    code = f"import sys; from perfkit import atomic; atomic.write_text(sys.argv[1], {'Zürich → 東京'!a})"
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.txt")], env=env, check=True)
    assert (tmp_path / "r.txt").read_bytes() == "Zürich → 東京".encode("utf-8")


def test_each_write_has_its_own_temporary_name_beside_the_target(tmp_path, monkeypatch):
    names = []
    real_fsync = os.fsync

    def fsync(fd):
        names.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    for _ in range(2):
        atomic.write_text(tmp_path / "part-00000.orc", "x")
    assert len(set(names)) == 2 and all(n.startswith(str(tmp_path / ".part-00000.orc.")) for n in names)


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


def test_a_copy_replaces_the_file_whole_with_the_sources_bytes_and_the_mode_asked(tmp_path):
    """copy_file (the mounted storages' upload): the source's bytes, not its mode; the old file kept on failure."""
    source = tmp_path / "part-0.orc"
    source.write_bytes(bytes(range(256)) * 4096)
    source.chmod(0o600)
    target = tmp_path / "nfs" / "part-0.orc"
    target.parent.mkdir()
    target.write_bytes(b"old")
    assert atomic.copy_file(source, target) == target
    assert target.read_bytes() == source.read_bytes() and _mode(target) == 0o666 & ~_umask()
    with pytest.raises(FileNotFoundError):
        atomic.copy_file(tmp_path / "missing.orc", target)
    assert target.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["part-0.orc"]  # no temporary file left
