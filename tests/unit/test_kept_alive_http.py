"""perfkit's GET for small answers: one kept-alive connection per thread and server, asked again once on a new
connection when the server closed the kept one, and requests' exceptions for what fails."""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from perfkit.kept_alive_http import KeptAliveHttp


@pytest.fixture
def server():
    """An HTTP/1.1 server that answers {"path": ..., "n": ...}; with `closing` set it drops each connection after one
    answer without saying so (as an idle timeout does). Records the client ports it served."""
    state = {"closing": False, "ports": [], "headers": []}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # http.server calls it by this name
            state["ports"].append(self.client_address[1])
            state["headers"].append(dict(self.headers))
            status = 404 if self.path.startswith("/missing") else 200
            data = json.dumps({"path": self.path, "n": len(state["ports"])}).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            if state["closing"]:
                self.close_connection = True

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    httpd.shutdown()
    httpd.server_close()


def test_gets_go_over_one_kept_connection_with_their_parameters_and_headers(server):
    url, state = server
    session = KeptAliveHttp({"X-Trino-User": "perfkit"})
    first = session.get(f"{url}/jmx", params={"qry": "Hadoop:service=DataNode,name=*"})
    second = session.get(f"{url}/jmx?x=1", params=[("name[]", "a b"), ("name[]", "c")])
    assert first.json()["path"] == "/jmx?qry=Hadoop%3Aservice%3DDataNode%2Cname%3D%2A"
    assert second.json()["path"] == "/jmx?x=1&name%5B%5D=a+b&name%5B%5D=c"
    assert len(set(state["ports"])) == 1  # the same connection, kept
    assert {h["X-Trino-User"] for h in state["headers"]} == {"perfkit"}


def test_a_connection_the_server_closed_is_replaced_and_the_get_asked_again(server):
    url, state = server
    state["closing"] = True
    session = KeptAliveHttp()
    answers = [session.get(f"{url}/n").json()["n"] for _ in range(3)]
    # each GET answered once: the one that met the closed connection was asked again on a new one
    assert answers == list(range(1, 4)) and len(set(state["ports"])) == 3


def test_each_thread_has_its_own_connection(server):
    url, state = server
    session = KeptAliveHttp()
    session.get(url)
    other = threading.Thread(target=session.get, args=(url,))
    other.start()
    other.join()
    session.get(url)
    assert len(state["ports"]) == 3 and len(set(state["ports"])) == 2


def test_an_error_status_raises_requests_http_error_with_the_status_and_url(server):
    url, _ = server
    answer = KeptAliveHttp().get(f"{url}/missing")
    assert answer.status_code == 404
    with pytest.raises(requests.HTTPError, match=rf"404 Not Found for url: {url}/missing"):
        answer.raise_for_status()


def test_a_server_that_is_not_there_raises_requests_connection_error_naming_the_url():
    with socket.socket() as probe:  # a free port, closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(requests.ConnectionError, match=rf"http://127.0.0.1:{port}/jmx: ConnectionRefusedError"):
        KeptAliveHttp().get(f"http://127.0.0.1:{port}/jmx")


def test_a_server_that_does_not_answer_in_time_raises_requests_timeout():
    with socket.socket() as silent:  # accepts (the backlog does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        with pytest.raises(requests.Timeout, match="timed out"):
            KeptAliveHttp().get(f"http://127.0.0.1:{silent.getsockname()[1]}/", timeout=0.2)
