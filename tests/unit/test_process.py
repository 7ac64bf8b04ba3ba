import socket

import pytest

from perfkit.errors import PerfkitError, ServiceError
from perfkit.lab import Lab
from perfkit.lab.process import Daemon
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
