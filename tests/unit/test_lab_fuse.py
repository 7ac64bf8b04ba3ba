"""The FUSE mount's check reads the mount table (through psutil), never stat()."""
from pathlib import Path

from perfkit.lab.fuse import is_mounted


def test_is_mounted_reads_the_mount_table(tmp_path):
    assert is_mounted(Path("/proc"))  # every Linux mounts it
    assert not is_mounted(tmp_path)  # a plain folder
    assert not is_mounted(tmp_path / "absent")
