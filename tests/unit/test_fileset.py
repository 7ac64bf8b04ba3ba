import numpy as np
import pytest

from perfkit.datasets.files import FileSet
from perfkit.errors import PerfkitError


@pytest.mark.parametrize("files, mean_mb, message", [
    (0, 16.0, "needs files, the number of files, to be a whole number >= 1, not 0"),
    (2.5, 16.0, "to be a whole number >= 1, not 2.5"),
    (4, float("nan"), "needs mean_mb, the mean file size in MB, to be a finite number > 0, not nan"),
    (4, float("inf"), "to be a finite number > 0, not inf"),
    (4, 0, "to be a finite number > 0, not 0"),
    (4, "16", "to be a finite number > 0, not '16'"),
    (True, 16.0, "to be a whole number >= 1, not True"),
    (10**6, 1.0, "a file set of files=1,000,000 is more than 100,000 files: give fewer, larger files"),
    (1, 1e9, "a file set of mean_mb=1e\\+09 has files up to 1,000,000,000 MB, more than half this machine's memory"),
])
def test_a_file_set_refuses_what_it_cannot_generate(files, mean_mb, message):
    with pytest.raises(PerfkitError, match=message):
        FileSet(files, mean_mb)


def test_numpy_numbers_are_numbers():
    fs = FileSet(np.int64(3), np.float64(0.5))
    assert len(fs.sizes()) == 3 and fs.name == "files_n3_m0.5_s42"


def test_a_file_set_must_fit_where_it_is_written(tmp_path):
    fs = FileSet(2, 1.0)
    fs.check_room(tmp_path)
    fs.check_room(tmp_path, missing=[])
    with pytest.raises(PerfkitError, match=r"^file set files_n2_m1_s42 needs 2.\d MB in .*/sub, which has 0.0 MB "
                                           r"free: free space there, or lower "):
        with _free(tmp_path, 1000):
            fs.check_room(tmp_path / "sub")  # not created yet: the space of where it will be


def _free(path, free):
    import shutil
    from unittest import mock

    usage = shutil.disk_usage(path)._replace(free=free)
    return mock.patch("perfkit.validate.shutil.disk_usage", return_value=usage)
