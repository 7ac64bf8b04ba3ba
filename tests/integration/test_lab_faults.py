"""The lab heals: kill -9 one HDFS daemon, `status` tells the dead from the live, `up` restarts only
the dead one, and what HDFS held before the kill is still there after."""
import hashlib
import os
import signal
import time
import uuid

import pytest
from click.testing import CliRunner

from perfkit.storages import hdfs as hdfs_storage
from perfkit.cli import main

FAULT_DIR = f"/perfkit-tests/faults-{uuid.uuid4().hex[:8]}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def hdfs_file(lab, profile):
    """A file written (and closed) before any kill: its path and content checksum."""
    client = hdfs_storage.webhdfs_client(profile)
    data = os.urandom(3 * 1024 * 1024 + 17)
    path = f"{FAULT_DIR}/before-the-kill.bin"
    client.write(path, data, overwrite=True)
    yield path, _sha256(data)
    if lab.is_up():
        client.delete(FAULT_DIR, recursive=True)


@pytest.fixture
def healed(lab):
    """Whatever a test does, the lab is healthy again afterwards for the tests that follow."""
    yield
    if not lab.is_up():
        lab.up()


def _kill(daemon) -> int:
    pid = daemon.pid()
    assert pid, f"{daemon.name} is not running before the test"
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while daemon.pid() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert daemon.pid() is None, f"{daemon.name} (pid {pid}) survived SIGKILL"
    return pid


@pytest.mark.parametrize("victim", ["namenode", "datanode"])
def test_a_killed_hdfs_daemon_is_restarted_alone_and_the_data_survives(lab, profile, hdfs_file, healed, victim):
    path, checksum = hdfs_file
    hdfs = next(s for s in lab.services if s.name == "hdfs")
    daemon = next(d for d in hdfs.daemons if d.name == victim)
    before = {row.service: row.pid for row in lab.status()}
    assert all(before.values()) and lab.is_up()

    killed = _kill(daemon)

    rows = {row.service: row for row in lab.status()}
    assert rows[victim].pid is None and not rows[victim].healthy and rows[victim].detail == "not running"
    for sibling in (d.name for d in hdfs.daemons if d is not daemon):
        assert rows[sibling].pid == before[sibling] and rows[sibling].running, rows[sibling]
        assert not rows[sibling].healthy and f"{victim} not running" in rows[sibling].detail
    cli = CliRunner().invoke(main, ["lab", "status"])
    lines = {line.split()[0]: line for line in cli.output.splitlines()}
    assert cli.exit_code == 1
    assert " DOWN " in lines[victim] and lines[victim].endswith("(not running)")
    assert " running " in lines["namenode" if victim != "namenode" else "datanode"]

    started = time.monotonic()
    lab.up()
    print(f"\nrecovery after kill -9 of the {victim}: {time.monotonic() - started:.1f} s")

    rows = {row.service: row for row in lab.status()}
    assert all(row.healthy for row in rows.values()), [r for r in rows.values() if not r.healthy]
    assert rows[victim].pid not in (None, killed)
    assert {n: p for n, p in before.items() if n != victim} == {n: r.pid for n, r in rows.items() if n != victim}
    with hdfs_storage.webhdfs_client(profile).read(path) as reader:
        assert _sha256(reader.read()) == checksum


def test_a_frozen_datanode_fails_the_hdfs_probe_of_a_file_it_holds_and_a_thawed_one_passes(lab, profile, hdfs_file,
                                                                                            monkeypatch):
    """SIGSTOP: the NameNode still lists the DataNode as live; only the DataNode's own answer shows it frozen."""
    from perfkit import health
    from perfkit.storages.hdfs import hdfs_probe

    monkeypatch.setattr(health, "PROBE_TIMEOUT_S", 1.0)  # the probes read it when they run
    path, _ = hdfs_file
    probe = hdfs_probe(profile, path)
    assert probe() is None
    datanode = next(s for s in lab.services if s.name == "hdfs").datanodes[0]
    pid = datanode.pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        reason = probe()
        namenode_alone = hdfs_probe(profile)()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert namenode_alone is None
    assert reason.startswith(f"HDFS at {profile.webhdfs_url} cannot read {path}: its DataNode at http://127.0.0.1:")
    assert "does not answer (" in reason
    assert probe() is None  # thawed: its DataNodes looked up again, and it answers
