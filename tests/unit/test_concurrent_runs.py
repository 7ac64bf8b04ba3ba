"""Two runs at once on data not yet generated: each write has a temporary name of its own."""
from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

import perfkit
from perfkit.datasets import taxi
from perfkit.datasets.taxi import TaxiDataset


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_writers_of_the_same_taxi_file_both_finish_with_the_same_bytes(tmp_path, monkeypatch):
    """Run B writes the whole file while run A is half-way: with a fixed temporary name B moved A's file away and
    A died with FileNotFoundError part-00000.tmp -> part-00000.orc."""
    dataset, folder = TaxiDataset(rows=50, files=1), tmp_path / "taxi"
    TaxiDataset(rows=50, files=1).write(tmp_path / "alone")  # the bytes one writer alone makes
    real_writer, inside = taxi._writer, []

    @contextmanager
    def writer(where, file_format):
        with real_writer(where, file_format) as opened:
            yield opened
        if not inside:  # A has written its temporary file; now B runs from start to end
            inside.append(where)
            assert dataset.write(folder) == [folder / "part-00000.orc"]
            inside.append("B done")

    monkeypatch.setattr(taxi, "_writer", writer)
    assert dataset.write(folder) == [folder / "part-00000.orc"]  # A finishes too
    assert inside[-1] == "B done"
    assert [p.name for p in folder.iterdir()] == ["part-00000.orc"]  # no temporary file left
    assert _sha256(folder / "part-00000.orc") == _sha256(tmp_path / "alone" / "part-00000.orc")


def test_no_module_writes_a_temporary_file_of_its_own():
    """Every replace-a-file-whole write goes through perfkit.atomic (unique temporary names, fsync, the umask)."""
    root = Path(perfkit.__file__).parent
    hand_written = re.compile(r'\.tmp"|with_suffix\("\.tmp"\)|os\.replace\(|\btmp\.replace\(')
    found = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py")) if path.name != "atomic.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if hand_written.search(line)]
    assert found == []


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_a_placed_file_has_the_users_umask(tmp_path, umask):
    import os

    old = os.umask(umask)
    try:
        path = TaxiDataset(rows=10, files=1).write(tmp_path)[0]
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
