import os
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.config import load_profile
from perfkit.errors import ServiceError
from perfkit.lab.process import Daemon


def test_unreachable_hdfs_names_the_address_and_the_fix():
    profile = replace(load_profile("lab"), webhdfs_url="http://127.0.0.1:1")
    with pytest.raises(ServiceError,
                       match=r"HDFS at http://127.0.0.1:1: not reachable .*Fix: start it with `perfkit lab up hdfs`"):
        hdfs_storage.check_hdfs(profile)


def test_unreachable_s3_names_the_bucket_endpoint_and_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "b"}')
    profile = replace(load_profile("lab"), s3_endpoint="http://127.0.0.1:1")
    monkeypatch.setattr(s3_storage, "RETRIES", s3_storage.Config(retries={"max_attempts": 1}, connect_timeout=1))
    with pytest.raises(ServiceError, match=r"S3 bucket 'perfkit-lab' at http://127.0.0.1:1: not reachable"):
        s3_storage.check_s3(profile)


def test_missing_aws_credentials_are_named(monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    profile = load_profile("emr", bucket="my-bucket", master="127.0.0.1")
    with pytest.raises(ServiceError, match="no AWS credentials found"):
        s3_storage.check_s3(profile)


@pytest.mark.parametrize("changes, message", [
    ({"s3_endpoint": "not a url"},
     r"at not a url: invalid endpoint URL 'not a url'\. Fix: set the profile's s3_endpoint"),
    ({"s3_endpoint": "http://a b"}, r"invalid endpoint URL 'http://a b'"),
    ({"s3_bucket": ""}, r"^S3 bucket '' at .*: the bucket name is empty\. Fix: set the profile's s3_bucket"),
    ({"s3_bucket": "Bad_Bucket!!"},
     r"^S3 bucket 'Bad_Bucket!!' at .*: invalid bucket name \(S3 bucket names are 3 to 63"),
    ({"s3_bucket": "my bucket"}, r"invalid bucket name .*Fix: set the profile's s3_bucket \(or bucket= / --bucket\)"),
    ({"s3_bucket": "10.0.0.1"}, r"invalid bucket name"),
    ({"s3_region": ""}, r"the region is empty\. Fix: set the profile's s3_region, e\.g\. us-east-1"),
    ({"s3_region": "us east"}, r"invalid region 'us east'"),
])
def test_bad_s3_settings_are_named_before_any_request(changes, message, monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(s3_storage, "s3_client", lambda _p: pytest.fail("no request with a bad setting"))
    with pytest.raises(ServiceError, match=message) as err:
        s3_storage.check_s3(replace(load_profile("lab"), **changes))
    assert "lab up" not in str(err.value) and "credentials" not in str(err.value)


def test_a_webhdfs_url_that_is_not_http_is_named():
    profile = replace(load_profile("lab"), webhdfs_url="ftp://namenode:9870")
    with pytest.raises(ServiceError, match=r"^HDFS at ftp://namenode:9870: webhdfs_url is not an http\(s\):// URL .*"
                                           r"Fix: set the profile's webhdfs_url to the NameNode's web address"):
        hdfs_storage.check_hdfs(profile)


@pytest.fixture
def s3_impostor():
    """Another program on the lab's S3 port: an HTTP server that answers every HEAD with 404."""
    class NotFound(BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_foreign_program_on_the_lab_s3_port_is_named(s3_impostor, monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "b"}')
    monkeypatch.setattr(s3_storage, "RETRIES", s3_storage.Config(retries={"max_attempts": 1}, connect_timeout=1))
    profile = replace(load_profile("lab"), s3_endpoint=f"http://127.0.0.1:{s3_impostor}")
    with pytest.raises(ServiceError) as err:
        s3_storage.check_s3(profile)
    text = str(err.value)
    assert f"the lab's S3 server is not running, and another program answers on its port (port {s3_impostor}, " \
           f"pid {os.getpid()}: " in text
    assert "Fix: stop that program, or move the lab with PERFKIT_LAB_PORT_S3=<free port>" in text
    assert "create it" not in text

    # with the lab's own S3 server running, a 404 is a missing bucket
    s3 = Daemon("s3", tmp_path, "versitygw")
    s3.start(["bash", "-c", "exec -a versitygw-stand-in sleep 60"])
    try:
        with pytest.raises(ServiceError, match="the bucket does not exist"):
            s3_storage.check_s3(profile)
    finally:
        s3.stop()
