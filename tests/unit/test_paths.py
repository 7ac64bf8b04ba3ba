"""Output folders are proven writable before any work whose result goes there."""
import os
import tempfile

import pytest

from perfkit import paths
from perfkit.errors import PerfkitError


def test_a_missing_folder_is_created_and_left_empty(tmp_path):
    folder = tmp_path / "a" / "b"
    assert paths.ensure_writable_dir(folder, "reports folder") == folder
    assert folder.is_dir() and list(folder.iterdir()) == []  # the probe file is gone


@pytest.mark.parametrize("where, problem", [
    ("afile", "is not a folder"),
    ("afile/sub", "cannot be created (Not a directory)"),
])
def test_a_path_that_cannot_be_a_folder_is_named_with_the_fix(tmp_path, where, problem):
    (tmp_path / "afile").write_text("")
    with pytest.raises(PerfkitError) as caught:
        paths.ensure_writable_dir(tmp_path / where, "reports folder", "set PERFKIT_REPORTS to a writable folder")
    assert str(caught.value) == f"reports folder {tmp_path / where} {problem}: set PERFKIT_REPORTS to a writable folder"


def test_a_folder_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    def refused(*args, **kwargs):  # as root a chmod would not stop the write: refuse it as a read-only mount does
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(PerfkitError, match=r"^results folder .* is not writable \(Read-only file system\): make it a "
                                           r"writable folder$"):
        paths.ensure_writable_dir(tmp_path, "results folder")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path):
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(PerfkitError, match="is not writable"):
            paths.ensure_writable_dir(tmp_path, "reports folder")
    finally:
        tmp_path.chmod(0o755)


def test_the_results_folder_check_names_its_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    assert paths.results_dir_checked() == tmp_path / "results"
    assert paths.results_dir_checked("st1_throughput_burst") == tmp_path / "results" / "st1_throughput_burst"
    assert (tmp_path / "results" / "st1_throughput_burst").is_dir()

    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "afile"))
    with pytest.raises(PerfkitError, match=r"results folder .*afile is not a folder: set PERFKIT_RESULTS to a "):
        paths.results_dir_checked("st1_throughput_burst")
