import socket
import sys

import pytest

from perfkit.errors import PerfkitError, ServiceError
from perfkit.lab import Lab
from perfkit.lab.process import Daemon, port_in_use, start_failure
from perfkit.lab.settings import LabPorts


def test_a_service_that_dies_at_start_names_itself_and_its_log(tmp_path):
    daemon = Daemon("toy", tmp_path, "perfkit-toy-daemon")
    daemon.start(["bash", "-c", "echo 'perfkit-toy-daemon: cannot bind'; exit 3"])
    with pytest.raises(ServiceError) as err:
        daemon.wait_until(lambda: False, 10, "free the port")
    text = str(err.value)
    assert text.startswith("toy: exited during start-up") and "cannot bind" in text
    assert str(daemon.log) in text and "Fix: free the port" in text
    assert daemon.pid() is None and not daemon.pid_file.exists()


def test_stop_ends_the_process_and_never_touches_a_foreign_pid(tmp_path):
    daemon = Daemon("sleeper", tmp_path, "perfkit-sleeper")
    pid = daemon.start(["bash", "-c", "exec -a perfkit-sleeper sleep 60"])
    assert daemon.pid() == pid
    assert daemon.stop() is True and daemon.pid() is None
    other = Daemon("other", tmp_path, "some-other-marker")
    other.pid_file.write_text('{"pid": 1}')  # pid 1 is not ours: its command line lacks our marker
    assert other.pid() is None and other.stop() is False


def test_a_busy_port_names_the_service_port_and_fix(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        lab = Lab(home=tmp_path, ports=LabPorts(s3=port))
        with pytest.raises(PerfkitError, match=rf"s3 cannot start: port {port} \(s3\) .* PERFKIT_LAB_PORT_S3"):
            lab._check_ports(lab.services[1])


def test_a_port_held_by_a_daemon_of_the_lab_itself_does_not_block_a_start(tmp_path):
    free = []
    for _ in range(2):  # the s3 port, held by the toy proxy, and the one the server moves to
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free.append(probe.getsockname()[1])
    port = free[0]
    lab = Lab(home=tmp_path, ports=LabPorts(s3=port, s3_behind_proxy=free[1]))
    proxy = lab.service("s3-network").daemon  # behind an emulated network its proxy holds the s3 port
    listen = f"import socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)"
    proxy.start([sys.executable, "-c", listen, "toxiproxy-server"])  # the proxy's marker on its command line
    try:
        proxy.wait_until(lambda: port_in_use("127.0.0.1", port), 10, "")
        lab._check_ports(lab.service("s3"))  # the S3 server moves behind it: no refusal
    finally:
        proxy.stop()


SPARK_BIND_FAILURE = """\
24/05/01 10:00:01 INFO HiveThriftServer2: Started daemon with process name: 4242@host
24/05/01 10:00:09 WARN ObjectStore: Failed to get database global_temp, returning NoSuchObjectException
24/05/01 10:00:12 ERROR HiveThriftServer2: Error starting HiveThriftServer2
org.apache.thrift.transport.TTransportException: Could not create ServerSocket on address /127.0.0.1:10001.
\tat org.apache.thrift.transport.TServerSocket.<init>(TServerSocket.java:109)
Caused by: java.net.BindException: Address already in use
\tat java.base/sun.nio.ch.Net.bind0(Native Method)
\t... 12 more
24/05/01 10:00:12 INFO ShutdownHookManager: Shutdown hook called
24/05/01 10:00:12 INFO ShutdownHookManager: Deleting directory /tmp/spark-1
"""


def test_a_daemon_that_cannot_bind_says_so_in_one_line_with_the_port_fix(tmp_path):
    daemon = Daemon("toy", tmp_path, "perfkit-toy-daemon", ports={"hiveserver2": 10001})
    daemon.log.parent.mkdir(parents=True)
    daemon.log.write_text("=== perfkit lab: starting toy at yesterday ===\n"
                          "Caused by: java.lang.OutOfMemoryError: old\n")
    (tmp_path / "spark.log").write_text(SPARK_BIND_FAILURE)
    daemon.start(["bash", "-c", f"cat {tmp_path / 'spark.log'}; : perfkit-toy-daemon; exit 1"])
    with pytest.raises(ServiceError) as err:
        daemon.wait_until(lambda: False, 10, "the generic fix")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("toy: exited during start-up: java.net.BindException: Address already in use (log: ")
    assert "OutOfMemoryError" not in text  # an earlier start's failure in the same log is not this one's
    assert "Fix: another program took port 10001 (hiveserver2): stop it, or move the lab with " \
           "PERFKIT_LAB_PORT_HIVESERVER2=<free port>" in text


def test_start_failure_prefers_an_error_line_then_the_last_line(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("=== perfkit lab: starting x ===\nserving\n2024/05/01 ERROR : listen tcp 127.0.0.1:1: bind: "
                   "address already in use\nexiting\n")
    assert start_failure(log) == "2024/05/01 ERROR : listen tcp 127.0.0.1:1: bind: address already in use"
    log.write_text("=== perfkit lab: starting x ===\nstarting\nno space left\n")
    assert start_failure(log) == "no space left"
    assert start_failure(tmp_path / "none.log") == "no log"


def test_listening_addresses_names_where_a_process_listens():
    import os
    import socket

    from perfkit.lab.process import listening_addresses

    with socket.socket() as loopback, socket.socket() as anywhere:
        loopback.bind(("127.0.0.1", 0))
        loopback.listen()
        anywhere.bind(("0.0.0.0", 0))
        anywhere.listen()
        expected = sorted([("127.0.0.1", loopback.getsockname()[1]), ("0.0.0.0", anywhere.getsockname()[1])])
        assert [a for a in listening_addresses(os.getpid()) if a in expected] == expected
    assert listening_addresses(None) == []


def test_start_ticks_are_the_ones_proc_stat_shows_so_older_pid_files_still_match():
    import os
    from pathlib import Path

    from perfkit.lab.process import start_ticks

    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    assert start_ticks(os.getpid()) == ticks
    assert start_ticks(2**22 + 1) is None  # above pid_max: no such process


def test_command_line_and_gone_for_a_live_a_zombie_and_a_missing_process():
    import subprocess
    import time

    from perfkit.lab.process import _gone, command_line
    from perfkit.waiting import poll_until

    child = subprocess.Popen(["bash", "-c", "exec -a perfkit-probe sleep 30"])
    try:
        poll_until(lambda: command_line(child.pid).startswith("perfkit-probe"), 5, 0.01, what="bash to exec sleep")
        assert command_line(child.pid) == "perfkit-probe 30" and not _gone(child.pid)
        child.kill()
        time.sleep(0.2)  # not reaped yet: a zombie
        assert _gone(child.pid)
    finally:
        child.kill()
        child.wait()
    assert _gone(child.pid) and command_line(child.pid) == ""


def test_a_large_log_is_set_aside_when_its_daemon_starts_and_one_older_copy_kept(tmp_path, monkeypatch):
    from perfkit.lab import process

    monkeypatch.setattr(process, "LOG_SET_ASIDE_BYTES", 1000)
    daemon = Daemon("toy", tmp_path, "perfkit-toy-daemon")
    daemon.log.parent.mkdir(parents=True)
    (tmp_path / "logs" / "toy.log.1").write_text("the oldest run\n")
    daemon.log.write_text("x" * 1001)
    daemon.start(["bash", "-c", "echo 'second run'"])
    assert (tmp_path / "logs" / "toy.log.1").read_text() == "x" * 1001
    small = daemon.log.read_text()
    assert small.startswith("\n=== perfkit lab: starting toy at ")
    daemon.start(["bash", "-c", "echo 'third run'"])  # a log under the limit is appended to
    assert daemon.log.read_text().startswith(small) and (tmp_path / "logs" / "toy.log.1").read_text() == "x" * 1001


def test_setting_aside_a_log_that_does_not_exist_yet_does_nothing(tmp_path):
    from perfkit.lab.process import set_aside_if_large

    set_aside_if_large(tmp_path / "none.log", limit=0)
    assert list(tmp_path.iterdir()) == []
