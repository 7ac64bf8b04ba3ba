"""GETs of small answers (a JMX bean, a few counters) over kept-alive HTTP/1.1 connections, one per thread and server.

A run's I/O is read from JMX just before and just after the run. On the lab, a read through a `requests` session costs
about 0.8 ms more than the same GET on a kept `http.client` connection (2.5 against 3.4 ms for a DataNode's bean):
that is the library's own work per request, and a run pays it on every read. So these reads use the standard
library's connection, behind the small part of `requests`' interface their callers use (`get(url, params, timeout)`,
`raise_for_status()`, `json()`), raising `requests`' exceptions so that callers catch the same ones."""
from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse

import requests

# a connection's timeout: socket.timeout is TimeoutError itself since Python 3.10, a mere OSError before
TIMEOUTS = (TimeoutError, socket.timeout)
# the server closed a kept connection since the last request (idle timeout, restart): asked again on a new one
STALE = (http.client.RemoteDisconnected, http.client.CannotSendRequest, ConnectionResetError, BrokenPipeError)


class Answer:
    def __init__(self, url: str, status: int, reason: str, body: bytes):
        self.url, self.status_code, self.reason, self.content = url, status, reason, body

    def raise_for_status(self) -> None:
        if self.status_code >= 400:
            raise requests.HTTPError(f"{self.status_code} {self.reason} for url: {self.url}", response=self)

    def json(self):
        return json.loads(self.content)


class KeptAliveHttp:
    """A session: GET only, one kept-alive connection per thread and server."""

    def __init__(self, headers: dict[str, str] | None = None):
        self.headers = headers or {}
        self._local = threading.local()

    def get(self, url: str, params: dict | list | None = None, timeout: float = 10.0) -> Answer:
        parts = urllib.parse.urlsplit(url)
        key, path = (parts.scheme, parts.netloc), (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if params:
            path += ("&" if parts.query else "?") + urllib.parse.urlencode(params)
        for may_retry in (True, False):
            connection = self._connection(key, timeout)
            try:
                connection.request("GET", path, headers=self.headers)
                response = connection.getresponse()
                return Answer(url, response.status, response.reason, response.read())
            except (OSError, http.client.HTTPException) as err:  # refused, timed out, closed, garbled
                self._drop(key)
                if not (may_retry and isinstance(err, STALE)):
                    failure = requests.Timeout if isinstance(err, TIMEOUTS) else requests.ConnectionError
                    raise failure(f"{url}: {err!r}") from err
        raise AssertionError("a GET either returns or raises")

    def _connection(self, key: tuple[str, str], timeout: float) -> http.client.HTTPConnection:
        kept = self._local.__dict__.setdefault("connections", {})
        if key not in kept:
            scheme, netloc = key
            kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            kept[key] = kind(netloc, timeout=timeout)
        return kept[key]

    def _drop(self, key: tuple[str, str]) -> None:
        connection = self._local.__dict__.get("connections", {}).pop(key, None)
        if connection is not None:
            connection.close()
