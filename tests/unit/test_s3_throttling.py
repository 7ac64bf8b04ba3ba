"""Throttling, seen through a loopback HTTP server that answers like an S3 server asking for fewer requests."""
from __future__ import annotations

import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit.storages import s3 as s3_storage
from perfkit.config import load_profile
from perfkit.errors import ServiceError

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
    from perfkit.storages.s3 import s3_probe

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
    from perfkit.storages.s3 import s3_probe

    profile = replace(load_profile("lab"), s3_endpoint=throttling.url)
    assert s3_probe(profile)() is None
    assert len(throttling.requests) == 1


@pytest.fixture
def lab_s3_running(tmp_path):
    """The lab's S3 server counts as running (a stand-in process under its name): the server at the endpoint is the
    lab's own (behind a proxy, say), not another program on its port."""
    from perfkit.lab.process import Daemon

    s3 = Daemon("s3", tmp_path, "versitygw")
    s3.start(["bash", "-c", "exec -a versitygw-stand-in sleep 60"])
    yield
    s3.stop()


THROTTLED = ("throttled ({what}): the S3 server asks for fewer requests. Fix: lower the request rate (fewer "
             "engines/threads at once) or wait, and check the endpoint's request limits")


@pytest.mark.parametrize("status, body, what", [
    (503, SLOW_DOWN, "503"),  # HEAD: no body, the status alone
    (429, b"", "429"),
])
def test_an_s3_server_that_answers_every_request_503_is_named_as_throttling(throttling, lab_s3_running, monkeypatch,
                                                                               status, body, what):
    monkeypatch.setattr(s3_storage, "RETRIES", s3_storage.Config(retries={"total_max_attempts": 1}, connect_timeout=1))
    throttling.status, throttling.body = status, body
    profile = replace(load_profile("lab"), s3_endpoint=throttling.url)
    with pytest.raises(ServiceError) as err:
        s3_storage.check_s3(profile)
    assert str(err.value) == f"S3 bucket 'perfkit-lab' at {throttling.url}: " + THROTTLED.format(what=what)
    assert "credentials" not in str(err.value) and "bucket policy" not in str(err.value)


def test_a_slowdown_answer_with_its_body_is_named_with_its_code():
    """A GET's answer carries S3's XML: the code is named beside the status."""
    from botocore.exceptions import ClientError

    err = ClientError({"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."},
                       "ResponseMetadata": {"HTTPStatusCode": 503}}, "GetObject")
    assert s3_storage.throttling(err) == "503 SlowDown"
    other = ClientError({"Error": {"Code": "Busy", "Message": "Please reduce your request rate."},
                         "ResponseMetadata": {"HTTPStatusCode": 400}}, "GetObject")
    assert s3_storage.throttling(other) == "400 Busy"
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"},
                          "ResponseMetadata": {"HTTPStatusCode": 403}}, "HeadBucket")
    assert s3_storage.throttling(denied) is None


def test_a_denied_bucket_still_names_the_credentials(throttling, lab_s3_running, monkeypatch):
    monkeypatch.setattr(s3_storage, "RETRIES", s3_storage.Config(retries={"total_max_attempts": 1}, connect_timeout=1))
    throttling.status = 403
    with pytest.raises(ServiceError, match=r": refused \(403\)\. Fix: check the credentials and the bucket policy$"):
        s3_storage.check_s3(replace(load_profile("lab"), s3_endpoint=throttling.url))
