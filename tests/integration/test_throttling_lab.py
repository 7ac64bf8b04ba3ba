"""Throttling on the lab: a proxy in front of the lab's S3 server answers some GETs 503 SlowDown; Spark's S3A counts
each throttled try (perfkit's snapshot equals the proxy's count), gives up in bounded time when every GET is
throttled, and Trino's S3 counters are read from its JMX. Only perfkit's own Spark session goes through the proxy
(the profile's spark_conf), so the lab's servers need no restart (that path: test_s3_endpoint_lab.py)."""
from __future__ import annotations

import http.client
import io
import threading
import time
import uuid
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from perfkit.engines import get_engine
from perfkit.storages import get_storage

pytestmark = pytest.mark.lab

SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")


class ThrottlingProxy(ThreadingHTTPServer):
    """Forwards requests unchanged (the Host header too: SigV4 signatures stay valid) to the S3 server; answers
    every `every`-th GET of an object under `prefix` with 503 SlowDown instead, and counts those."""

    daemon_threads = True

    def __init__(self, target: str, prefix: str, every: int):
        self.target, self.prefix, self.every = urlsplit(target), prefix, every
        self.gets = self.throttled = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "GET" and outer.prefix in self.path and "list-type" not in self.path:
                    with outer.lock:
                        outer.gets += 1
                        throttle = outer.every and outer.gets % outer.every == 0
                        outer.throttled += bool(throttle)
                    if throttle:
                        self.send_response(503)
                        self.send_header("Content-Type", "application/xml")
                        self.send_header("Content-Length", str(len(SLOW_DOWN)))
                        self.end_headers()
                        self.wfile.write(SLOW_DOWN)
                        return
                conn = http.client.HTTPConnection(outer.target.hostname, outer.target.port, timeout=60)
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    conn.putheader(name, value)
                conn.endheaders(body or None)
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status, answer.reason)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                # a HEAD has no body: its Content-Length is the object's size, as the server said
                length = answer.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data))
                self.send_header("Content-Length", length)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def parquet_on_s3(profile):
    """8 small Parquet files put straight on the lab's S3 (not through the proxy); deleted afterwards."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from perfkit.storages.s3 import s3_client

    client, prefix = s3_client(profile), f"perfkit/test-throttling-{uuid.uuid4().hex[:8]}"
    for i in range(8):
        buffer = io.BytesIO()
        pq.write_table(pa.table({"x": list(range(i * 1000, (i + 1) * 1000))}), buffer)
        client.put_object(Bucket=profile.s3_bucket, Key=f"{prefix}/part-{i}.parquet", Body=buffer.getvalue())
    yield prefix
    for i in range(8):
        client.delete_object(Bucket=profile.s3_bucket, Key=f"{prefix}/part-{i}.parquet")


def _spark_through(proxy, profile, timeout_s=None):
    engine = get_engine("spark", replace(profile, spark_conf={**profile.spark_conf,
                                                              "spark.hadoop.fs.s3a.endpoint": proxy.url}), timeout_s)
    engine.open()
    # Hadoop caches one S3A file system per bucket in the JVM: an earlier test's (another endpoint, other retry
    # settings) would be used instead of this session's
    engine.spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
    return engine


@pytest.fixture
def proxy(profile, parquet_on_s3):
    server = ThrottlingProxy(profile.s3_endpoint, parquet_on_s3, every=5)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_spark_counts_every_throttled_request(profile, parquet_on_s3, proxy):
    engine = _spark_through(proxy, profile)
    try:
        s3 = get_storage("s3", profile)
        before = s3.snapshot(engine)
        url = f"s3a://{profile.s3_bucket}/{parquet_on_s3}/"
        assert engine.spark.read.parquet(url).selectExpr("sum(x)").collect()[0][0] == sum(range(8000))
        after = s3.snapshot(engine)
    finally:
        engine.close()
    assert proxy.throttled >= 1, f"the proxy throttled none of {proxy.gets} GETs"
    assert after["s3_throttled"] - before["s3_throttled"] == proxy.throttled


def test_spark_gives_up_on_an_s3_server_that_throttles_everything(profile, parquet_on_s3, proxy):
    proxy.every = 1
    engine = _spark_through(proxy, profile, timeout_s=20)  # 10 s of retries per operation at most: 2 retries
    s3 = get_storage("s3", profile)
    try:
        before = s3.snapshot(engine)
        t0 = time.monotonic()
        with pytest.raises(Exception):  # noqa: B017 - whatever Spark raises: what counts is when, and what was seen
            engine.execute(f"SELECT count(*) FROM parquet.`s3a://{profile.s3_bucket}/{parquet_on_s3}/`")
        took = time.monotonic() - t0
        after = s3.snapshot(engine)
    finally:
        engine.close()
    assert took < 60, f"Spark gave up only after {took:.0f} s"
    assert after["s3_throttled"] - before["s3_throttled"] >= 1, "Spark's S3A saw no throttled request"


def test_trino_s3_counters_come_from_its_jmx(profile):
    with get_engine("trino", profile) as engine:
        counters = engine.s3_counters()
    assert counters is not None and set(counters) == {"s3_throttled", "s3_retried"}
    assert all(isinstance(v, int) and v >= 0 for v in counters.values())
