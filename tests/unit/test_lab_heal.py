"""The lab tells live daemons from dead ones and restarts only the dead: fake daemons, no real lab."""
import json
import os
import socket
import subprocess
import shutil
import sys

import pytest

from perfkit.cli import _print_status
from perfkit.errors import PerfkitError
from perfkit.keep import mount_point
from perfkit.lab import Lab, process, settings, tools
from perfkit.lab.process import Daemon, port_owner
from perfkit.lab.service import Service
from perfkit.lab.settings import JAVA_OPTIONS_ENV, JAVA_OPTIONS_FILE, LabPorts
from perfkit.waiting import poll_until


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FakeService(Service):
    """A service of two daemons (a 'namenode' and a 'datanode'): sleepers that carry a marker."""

    name = "toyfs"

    def __init__(self, home, ports: dict[str, dict[str, int]]):
        super().__init__(home, LabPorts())
        self.daemons = [Daemon(n, home, f"perfkit-fake-{n}", ports=ports.get(n, {})) for n in ("namenode", "datanode")]
        self.started: list[str] = []

    def addresses(self):
        return {d.name: f"127.0.0.1:{next(iter(d.ports.values()), 0)}" for d in self.daemons}

    def argv(self, daemon=None):
        return ["bash", "-c", f"exec -a perfkit-fake-{(daemon or self.daemon).name} sleep 60"]

    def start(self):
        for daemon in self.daemons:
            if daemon.pid() is None:
                daemon.start(self.argv(daemon))
                self.started.append(daemon.name)

    def health(self):
        return (True, "all answer") if all(d.pid() for d in self.daemons) else (False, "web endpoint does not answer")


@pytest.fixture
def toy(tmp_path, monkeypatch):
    for tool in ("java_home", "hadoop_lib", "versitygw", "rclone", "spark_home"):
        monkeypatch.setattr(tools, tool, lambda: None)  # no downloads: the fake service needs none
    monkeypatch.setattr(Lab, "fetch_tools", staticmethod(lambda: None))
    nn_port, dn_port = _free_port(), _free_port()
    lab = Lab(home=tmp_path, ports=LabPorts(namenode_rpc=nn_port, datanode=dn_port))
    service = FakeService(tmp_path, {"namenode": {"namenode_rpc": nn_port}, "datanode": {"datanode": dn_port}})
    lab.services = [service]
    yield lab, service
    service.stop()


def test_status_shows_a_live_daemon_as_running_when_its_sibling_died(toy, capsys):
    lab, service = toy
    service.start()
    namenode, datanode = service.daemons
    dn_pid = datanode.pid()
    os.kill(namenode.pid(), 9)
    _wait_dead(namenode)

    rows = {r.service: r for r in lab.status()}
    assert rows["namenode"].pid is None and not rows["namenode"].running and not rows["namenode"].healthy
    assert rows["namenode"].detail == "not running"
    assert rows["datanode"].pid == dn_pid and rows["datanode"].running and not rows["datanode"].healthy
    assert ("namenode not running" in rows["datanode"].detail
            and "web endpoint does not answer" in rows["datanode"].detail)

    _print_status(list(rows.values()))
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "DOWN" in lines["namenode"] and "pid -" in lines["namenode"] and lines["namenode"].endswith("(not running)")
    assert " running " in lines["datanode"] and f"pid {dn_pid}" in lines["datanode"] and "DOWN" not in lines["datanode"]


def test_status_all_live_and_healthy(toy):
    lab, service = toy
    service.start()
    rows = lab.status()
    assert all(r.healthy and r.running and r.detail == "all answer" for r in rows)


def test_up_restarts_only_the_dead_daemon_though_the_live_one_holds_its_port(toy):
    lab, service = toy
    service.start()
    namenode, datanode = service.daemons
    dn_pid = datanode.pid()
    with socket.socket() as held:  # stands in for the live DataNode listening on its own port
        held.bind(("127.0.0.1", datanode.ports["datanode"]))
        held.listen()
        os.kill(namenode.pid(), 9)
        _wait_dead(namenode)
        service.started.clear()
        rows = lab.up()
    assert service.started == ["namenode"]
    assert datanode.pid() == dn_pid  # the survivor was left alone
    assert all(r.healthy for r in rows)


def test_a_busy_port_of_a_daemon_to_start_is_refused_with_its_owner(toy):
    lab, service = toy
    namenode = service.daemons[0]
    with socket.socket() as other:  # another program on the NameNode's port
        other.bind(("127.0.0.1", namenode.ports["namenode_rpc"]))
        other.listen()
        with pytest.raises(PerfkitError) as err:
            lab.up()
    text = str(err.value)
    port = namenode.ports["namenode_rpc"]
    assert f"namenode (toyfs) cannot start: port {port} (namenode_rpc) on 127.0.0.1" in text
    assert f"in use by pid {os.getpid()} (" in text  # this test process holds it
    assert "log" not in text  # nothing ran yet: no log to name
    assert "Fix: stop that program, or move the lab with PERFKIT_LAB_PORT_NAMENODE_RPC=<free port>" in text
    assert service.started == []  # refused before anything started


def test_the_port_message_names_the_log_once_it_exists_and_the_offset_of_later_datanodes(tmp_path):
    base = _free_port()
    lab = Lab(home=tmp_path, ports=LabPorts(datanode_http=base))
    daemon = Daemon("datanode2", tmp_path, "x", ports={"datanode_http": base + 20})
    text = lab._port_taken(lab.services[0], daemon, "datanode_http", base + 20)
    assert "log" not in text and "datanode2 (hdfs) cannot start" in text
    assert "PERFKIT_LAB_PORT_DATANODE_HTTP=<free port> (datanode2 listens on that port + 20)" in text
    daemon.log.parent.mkdir(parents=True)
    daemon.log.write_text("old run\n")
    assert f"(last log of datanode2: {daemon.log})" in lab._port_taken(lab.services[0], daemon, "datanode_http", base)


def test_port_owner_finds_a_listener_in_another_process_and_nothing_on_a_free_port():
    port = _free_port()
    assert port_owner("127.0.0.1", port) is None
    code = ("import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); "
            "print('ready', flush=True); time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        pid, cmdline = port_owner("127.0.0.1", port)
        assert pid == proc.pid and "import socket" in cmdline
    finally:
        proc.kill()
        proc.wait()


def test_a_reused_pid_is_not_ours(tmp_path):
    daemon = Daemon("sleeper", tmp_path, "perfkit-sleeper")
    pid = daemon.start(["bash", "-c", "exec -a perfkit-sleeper sleep 60"])
    try:
        record = json.loads(daemon.pid_file.read_text())
        assert daemon.pid() == pid and record["started"]
        # same pid and marker, another start time: a different process that got our pid
        daemon.pid_file.write_text(json.dumps({**record, "started": record["started"] - 1}))
        assert daemon.pid() is None and daemon.stop() is False
    finally:
        os.kill(pid, 9)


def test_a_daemon_caught_inside_exec_is_still_ours(tmp_path, monkeypatch):
    """While a process exec()s (a bash wrapper becoming java), its command line reads empty for an instant."""
    daemon = Daemon("wrapper", tmp_path, "perfkit-wrapped")
    pid = daemon.start(["bash", "-c", "exec -a perfkit-wrapped sleep 60"])
    try:
        reads = iter(["", "perfkit-wrapped 60"])
        monkeypatch.setattr(process, "command_line", lambda _pid: next(reads))
        assert daemon.pid() == pid and daemon.pid_file.exists()
    finally:
        os.kill(pid, 9)


def _wait_dead(daemon: Daemon, timeout: float = 5) -> None:
    poll_until(lambda: daemon.pid() is None, timeout, 0.05, what=f"{daemon.name} to die")


def test_lab_up_takes_service_names_and_adds_what_they_need(tmp_path):
    from perfkit.errors import PerfkitError
    from perfkit.lab import Lab

    lab = Lab(home=tmp_path)
    assert [s.name for s in lab.select(["fuse-hdfs"])] == ["hdfs", "fuse-hdfs"]  # the mount needs HDFS
    assert [s.name for s in lab.select(["s3", "namenode"])] == ["hdfs", "s3"]  # a daemon names its service
    # S3 is its under-filesystem, reached through the emulated network
    assert [s.name for s in lab.select(["alluxio-worker"])] == ["s3", "s3-network", "alluxio"]
    # all of them but YARN, Livy and the EMR stand-in, which only the cluster shape runs
    assert [s.name for s in lab.select(None)] == [s.name for s in lab.services if not s.cluster_only]
    with pytest.raises(PerfkitError, match=r"lab: no service presto: the lab's services are hdfs, s3, s3-network, "
                                           r"alluxio, nfs, yarn, hive-metastore, hiveserver2, spark-thrift, trino, "
                                           r"fuse-hdfs, livy, emr-notebooks"):
        lab.select(["presto"])


class _NoJavaService(Service):
    """A service whose start finds no Java new enough (as Trino without Java 24+)."""

    name, needs = "javaless", ()

    def __init__(self, home):
        super().__init__(home, LabPorts())
        self.daemons = [Daemon("javaless", home, "perfkit-fake-javaless")]

    def addresses(self):
        return {"javaless": "127.0.0.1:1"}

    def start(self):
        from perfkit.lab.java import MissingJava

        raise MissingJava("trino: needs Java 24.0.1+ and found none. Fix: install a JDK 24.0.1+")


class _NeedsIt(_NoJavaService):
    name, needs = "dependent", ("javaless",)

    def __init__(self, home):
        Service.__init__(self, home, LabPorts())
        self.daemons = [Daemon("dependent", home, "perfkit-fake-dependent")]
        self.started = False

    def start(self):
        self.started = True


def test_a_service_without_its_java_is_named_in_one_line_and_the_others_come_up(toy, capsys):
    lab, service = toy
    javaless, dependent = _NoJavaService(lab.home), _NeedsIt(lab.home)
    lab.services = [service, javaless, dependent]
    rows = lab.up()
    out = capsys.readouterr().out
    assert "lab: javaless not started: trino: needs Java 24.0.1+ and found none. Fix: install a JDK 24.0.1+\n" in out
    assert "lab: dependent not started: it needs javaless\n" in out and not dependent.started
    healthy = {r.service for r in rows if r.healthy}
    assert healthy == {"namenode", "datanode"}  # the toy service came up all the same
    assert lab.skipped_daemons() == {"javaless", "dependent"}


def test_up_with_a_network_sets_it_after_the_tools_and_before_any_service_starts(toy, monkeypatch):
    from perfkit.network import PROFILES

    lab, service = toy
    order = []
    monkeypatch.setattr(Lab, "fetch_tools", staticmethod(lambda: order.append("tools")))
    monkeypatch.setattr(lab, "set_network", lambda network: order.append(f"network {network.name}"))
    real_start = service.start
    monkeypatch.setattr(service, "start", lambda: order.append("start") or real_start())
    lab.up(network=PROFILES["ec2-s3"])
    assert order == ["tools", "network ec2-s3", "start"]


def test_the_java_options_are_noted_by_the_start_that_uses_them_not_by_an_up_that_starts_nothing(toy, monkeypatch):
    lab, service = toy
    monkeypatch.delenv(JAVA_OPTIONS_ENV, raising=False)
    lab.up()  # the whole lab, full JIT
    monkeypatch.setenv(JAVA_OPTIONS_ENV, "-XX:TieredStopAtLevel=1")
    lab.up()  # every daemon runs already: none starts with the options
    assert not (lab.home / JAVA_OPTIONS_FILE).exists()
    os.kill(service.daemons[0].pid(), 9)
    _wait_dead(service.daemons[0])
    lab.up()  # the dead one starts with them
    assert (lab.home / JAVA_OPTIONS_FILE).read_text().split() == ["-XX:TieredStopAtLevel=1"]
    lab.down()
    assert not (lab.home / JAVA_OPTIONS_FILE).exists()


def test_a_disk_too_full_for_the_daemons_is_refused_before_anything_starts(toy, monkeypatch):
    lab, service = toy
    total = 100 * 1024**3
    full = shutil._ntuple_diskusage(total, total - 1024**3, 1024**3)  # 1 GiB free, 99% used
    monkeypatch.setattr(settings.shutil, "disk_usage", lambda path: full)
    with pytest.raises(PerfkitError) as err:
        lab.up()
    text = str(err.value)
    assert f"the lab home {lab.home.absolute()} is on a disk with 1.0 GiB free (99.0% used)" in text
    assert "needs 2 GiB free and at most 97% used" in text
    assert f"Fix: free space on {mount_point(lab.home)} " in text
    assert "uv cache prune" in text and "PERFKIT_LAB_HOME" in text
    assert service.started == []


@pytest.mark.parametrize("free_gib, needed", [(4, False), (2.5, True)])
def test_room_is_refused_by_share_used_as_well_as_by_bytes_free(tmp_path, monkeypatch, free_gib, needed):
    total = (100 if not needed else 1000) * 1024**3  # 2.5 GiB of 1000 is 99.75% used: refused
    free = int(free_gib * 1024**3)
    monkeypatch.setattr(settings.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(total, total - free, free))
    if needed:
        with pytest.raises(PerfkitError, match="2.5 GiB free \\(99.8% used\\)"):
            settings.check_room(tmp_path)
    else:
        settings.check_room(tmp_path)  # 4 GiB free of 100: 96% used
