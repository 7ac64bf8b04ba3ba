import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def pytest_collection_modifyitems(config, items):
    """Tests marked lab_lifecycle stop the lab: they run after every other test."""
    items.sort(key=lambda item: item.get_closest_marker("lab_lifecycle") is not None)


@pytest.fixture
def json_server():
    """Start loopback HTTP servers that answer each GET from `answer(path, headers) -> (status, JSON body or text)`;
    returns (port, the (path, headers) asked so far). Stopped after the test. A stand-in for a service's REST or JMX
    API."""
    servers = []

    def start(answer):
        asked = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server calls it by this name
                asked.append((self.path, dict(self.headers)))
                status, body = answer(self.path, self.headers)
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_address[1], asked

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def own_state_folders(tmp_path_factory, monkeypatch):
    """Dataset locks, records kept after a failed save, and the lab's home in folders of the test session's: not the
    user's ~/.local/state/perfkit nor the machine's temporary folder (a lab there, with its S3 endpoint setting,
    would change what these tests see, and a perfkit run measuring on this machine meanwhile would count as another
    run in the accounting window). Autouse in the tests that need no lab."""
    from perfkit import keep

    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(base / "lab-home"))
    monkeypatch.setenv("PERFKIT_LOCK_DIR", str(base / "locks"))
    monkeypatch.setattr(keep, "fallback_folders", lambda: [base / "kept-home", base / "kept-tmp"])
