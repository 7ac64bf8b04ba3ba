"""The socket audit reads /proc: a test server and client in this process are seen with their loopback peer."""
import os
import socket

from perfkit.lab.sockets import Connection, SocketWatch, connections, process_tree


def test_off_machine_means_a_peer_that_is_neither_loopback_nor_unset():
    def conn(remote):
        return Connection(1, "java", "tcp", "127.0.0.1:5000", remote, "ESTABLISHED")

    assert not conn("127.0.0.1:9000").off_machine
    assert not conn("::1:9000").off_machine
    assert not conn("0.0.0.0:0").off_machine  # listening or unconnected
    assert conn("169.254.169.254:80").off_machine  # a cloud's metadata address
    assert conn("10.0.0.5:443").off_machine


def test_a_loopback_connection_of_this_process_is_seen_with_its_peer():
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    try:
        port = server.getsockname()[1]
        mine = [c for c in connections([os.getpid()]) if c.pid == os.getpid()]
        assert any(c.state == "LISTEN" and c.local == f"127.0.0.1:{port}" for c in mine)
        assert any(c.state == "ESTABLISHED" and c.remote == f"127.0.0.1:{port}" for c in mine)
        watch = SocketWatch([os.getpid()])
        watch.sample()
        command = open("/proc/self/comm").read().strip()
        assert (command, f"127.0.0.1:{port}") in watch.peers and not watch.foreign
        assert os.getpid() in process_tree([os.getppid()])  # a child is found below its parent
    finally:
        for s in (accepted, client, server):
            s.close()


def test_a_grandchild_and_its_connection_to_us_are_found_below_the_root():
    import subprocess
    import sys

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    code = f"import socket,time; s=socket.create_connection(('127.0.0.1', {port})); time.sleep(30)"
    # bash -> python: the python client is a grandchild of nothing we know but the bash
    root = subprocess.Popen(["bash", "-c", f"{sys.executable} -c \"{code}\"; true"])
    accepted, tree = None, []
    try:
        server.settimeout(10)
        accepted, _ = server.accept()
        tree = process_tree([root.pid])
        assert tree[0] == root.pid and len(tree) == 2
        client = [c for c in connections([root.pid]) if c.remote == f"127.0.0.1:{port}"]
        assert len(client) == 1 and client[0].pid == tree[1] and client[0].state == "ESTABLISHED"
        assert client[0].protocol == "tcp" and not client[0].off_machine
    finally:
        for pid in reversed(tree or [root.pid]):  # the grandchild first, while we still know it
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        root.wait()
        for s in (accepted, server):
            if s is not None:
                s.close()
