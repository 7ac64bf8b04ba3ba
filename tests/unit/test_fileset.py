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
])
def test_a_file_set_refuses_what_it_cannot_generate(files, mean_mb, message):
    with pytest.raises(PerfkitError, match=message):
        FileSet(files, mean_mb)


def test_numpy_numbers_are_numbers():
    fs = FileSet(np.int64(3), np.float64(0.5))
    assert len(fs.sizes()) == 3 and fs.name == "files_n3_m0.5_s42"
