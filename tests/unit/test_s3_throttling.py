"""Throttling, seen through a loopback HTTP server that answers like an S3 server asking for fewer requests."""
from __future__ import annotations

import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit.config import load_profile

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message><RequestId>1</RequestId></Error>")


class Throttling(ThreadingHTTPServer):
    """Answers every request with `status` (503 by default) and S3's SlowDown body where a body is allowed;
    counts the requests."""

    def __init__(self, status: int = 503, body: bytes = SLOW_DOWN):
        self.status, self.body, self.requests = status, body, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, with_body: bool):
                outer.requests.append(f"{self.command} {self.path}")
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(outer.body)

            def do_HEAD(self):
                self._answer(False)

            def do_GET(self):
                self._answer(True)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def throttling(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "b"}')
    server = Throttling()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_health_probe_makes_exactly_one_request(throttling):
    """botocore's `max_attempts` in a Config's retries counts retries (1 = two requests); the probe's is one."""
    from perfkit.health import s3_probe

    profile = replace(load_profile("lab"), s3_endpoint=throttling.url)
    probe = s3_probe(profile)
    throttling.status = 500  # an error botocore retries in every mode
    reason = probe()
    assert throttling.requests == ["HEAD /perfkit-lab"]
    assert reason.startswith(f"S3 bucket 'perfkit-lab' at {throttling.url} not healthy (")
    assert "500" in reason


def test_a_throttled_probe_is_one_request_and_a_server_that_answers(throttling):
    """503 SlowDown is the server asking for fewer requests, not a server gone: the run is not failed for it (the
    engines' own counters flag the throttled run)."""
    from perfkit.health import s3_probe

    profile = replace(load_profile("lab"), s3_endpoint=throttling.url)
    assert s3_probe(profile)() is None
    assert len(throttling.requests) == 1

