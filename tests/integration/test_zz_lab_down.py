from pathlib import Path

import pytest

MARKERS = ("org.apache.hadoop.hdfs.server", "HiveThriftServer2", "versitygw", "rclone")


def _lab_processes(home: Path) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmdline for m in MARKERS) and str(home) in cmdline:
            found.append(f"{proc.name}: {cmdline[:120]}")
    return found


@pytest.mark.lab_lifecycle
def test_lab_down_leaves_no_lab_process(lab):
    assert _lab_processes(lab.home)  # the lab was running
    stopped = lab.down()
    assert set(stopped) >= {"namenode", "datanode", "s3", "nfs", "spark-thrift", "fuse-hdfs"}
    assert _lab_processes(lab.home) == []
    assert lab.pids() == [] and not any(row.healthy for row in lab.status())
    mounts = Path("/proc/self/mounts").read_text()
    assert str(lab.home / "mnt" / "hdfs") not in mounts  # the FUSE mount is gone too
