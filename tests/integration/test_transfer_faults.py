"""A DataNode killed during a transfer: the copies are failures, the run's prefix goes, nothing else is touched."""
import os
import signal
import threading
import time

from perfkit.storages import hdfs as hdfs_storage
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.lab.hdfs import Hdfs


def _tree(hdfs, root: str, skip: str) -> dict[str, int]:
    """{path: size} of every file under root on HDFS, leaving out the `skip` folder."""
    found = {}
    for folder, _, files in hdfs.walk(root):
        if folder.startswith(skip):
            continue
        for name in files:
            found[f"{folder}/{name}"] = hdfs.status(f"{folder}/{name}")["length"]
    return found


def test_datanode_killed_during_a_transfer(lab, profile):
    # stream first (order="given"): the DataNode dies under its first file, and hdfs-cp then finds it dead too
    cmp = TransferComparison(profile, methods=["stream", "hdfs-cp"], concurrency=[2], files=12, mean_mb=8, seed=77,
                             order="given")
    cmp.prepare(progress=False)
    hdfs = hdfs_storage.webhdfs_client(profile)
    transfers = profile.hdfs_path("transfers")
    before = _tree(hdfs, profile.hdfs_path(), skip=transfers)
    datanode = next(s for s in lab.services if isinstance(s, Hdfs)).datanodes[0]
    killed = {}

    def kill_when_copying():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            if hdfs_storage.hdfs_listing(hdfs, cmp.destination("stream", 2, 0)):  # the first file is being written
                os.kill(datanode.pid(), signal.SIGKILL)
                killed["at"] = time.monotonic()
            time.sleep(0.02)

    killer = threading.Thread(target=kill_when_copying)
    killer.start()
    try:
        results = cmp.run(progress=False)
    finally:
        killer.join()
        lab.up()  # restarts the dead DataNode alone
    assert killed, "the DataNode was killed while the copy ran"
    totals = [r for r in results.records if r.case == "total"]
    assert totals and not any(r.ok for r in totals), [(r.subject, r.ok, r.error) for r in totals]
    assert all(r.error and "\n" not in r.error for r in totals)
    assert not hdfs.status(cmp.run_root, strict=False), "the run's own prefix is removed"
    assert _tree(hdfs, profile.hdfs_path(), skip=transfers) == before, "nothing else on HDFS was touched"
    assert lab.is_up()
