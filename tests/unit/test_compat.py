"""perfkit.compat gives Python 3.9 what 3.10 and 3.11 have built in, with the same answers and the same errors."""
import hashlib
import re
from datetime import datetime, timedelta, timezone

import pytest

from perfkit.compat import file_digest, fromisoformat, zip_strict


def test_zip_strict_zips_iterables_of_equal_length():
    assert list(zip_strict([1, 2], "ab", iter((None, True)))) == [(1, "a", None), (2, "b", True)]
    assert list(zip_strict()) == [] and list(zip_strict([])) == [] and list(zip_strict([], "")) == []


@pytest.mark.parametrize("iterables, message", [
    (([1, 2], [1]), "zip() argument 2 is shorter than argument 1"),
    (([1], [1, 2]), "zip() argument 2 is longer than argument 1"),
    (([1, 2], [1, 2], [1]), "zip() argument 3 is shorter than arguments 1-2"),
    (([1], [1], [1, 2]), "zip() argument 3 is longer than arguments 1-2"),
])
def test_zip_strict_refuses_iterables_of_different_lengths_as_zip_strict_does(iterables, message):
    zipped = zip_strict(*iterables)
    assert next(zipped) == tuple(it[0] for it in iterables)  # lazily: the pairs before the end come out first
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        next(zipped)


def test_file_digest_hashes_a_file_in_chunks(tmp_path):
    data = bytes(range(256)) * 5000  # several chunks
    path = tmp_path / "data"
    path.write_bytes(data)
    with open(path, "rb") as f:
        assert file_digest(f, "md5").hexdigest() == hashlib.md5(data).hexdigest()


def test_fromisoformat_takes_a_z_after_a_time_as_utc():
    utc = datetime(2026, 11, 20, 14, tzinfo=timezone.utc)
    assert fromisoformat("2026-11-20T14:00:00Z") == fromisoformat("2026-11-20T14:00:00+00:00") == utc
    assert fromisoformat("2026-11-20T14:00:00.250+01:00") == utc - timedelta(hours=1) + timedelta(milliseconds=250)
    for bad in ("2026-11-20Z", "yesterday", ""):
        with pytest.raises(ValueError):
            fromisoformat(bad)
    with pytest.raises(TypeError):
        fromisoformat(None)
