"""The Livy stand-in's REST API, as sparkmagic uses Livy's: sessions and their states, statements, cancel, delete.
Its sessions run here without Spark (PERFKIT_LIVY_NO_SPARK, as Livy's own LIVY_TEST); the lab test runs them on YARN."""
from __future__ import annotations

import functools
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from perfkit.lab import livy_server
from perfkit.lab.json_http import JsonHandler
from perfkit.lab.livy_server import LivyApi, end_application

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def livy(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LIVY_PYTHON", sys.executable)
    monkeypatch.setenv("PERFKIT_LIVY_NO_SPARK", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setattr(LivyApi, "sessions", {})
    monkeypatch.setattr(LivyApi, "logs", tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), LivyApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    for session in list(LivyApi.sessions.values()):
        session.stop()


def call(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def until(url: str, key: str, wanted: set[str], timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status, body = call(url)
        if body[key] in wanted or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def test_a_session_starts_runs_statements_in_order_and_is_deleted(livy):
    status, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark", "heartbeatTimeoutInSecond": 60,
                                                        "conf": {"spark.executor.memory": "1g"}, "driverMemory": "1g"})
    assert status == 201 and session["state"] == "starting" and session["standIn"] is True
    url = f"{livy}/sessions/{session['id']}"
    assert until(url, "state", {"idle"})["state"] == "idle"
    assert LivyApi.sessions[session["id"]].conf == {"spark.executor.memory": "1g", "spark.driver.memory": "1g"}
    status, first = call(f"{url}/statements", "POST", {"code": "x = 20"})
    assert status == 201 and first["state"] in ("waiting", "running") and first["id"] == 0
    _, second = call(f"{url}/statements", "POST", {"code": "print('x is')\nx + 1"})
    done = until(f"{url}/statements/{second['id']}", "state", {"available"})
    assert done["output"] == {"status": "ok", "execution_count": 1, "data": {"text/plain": "x is\n21"}}
    assert call(f"{livy}/sessions")[1]["total"] == 1
    pid = LivyApi.sessions[session["id"]].process.pid
    assert call(url, "DELETE") == (200, {"msg": "deleted"})
    assert call(url)[0] == 404 and LivyApi.sessions == {}
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _answer(livy: str, body: dict, code: str) -> str:
    _, session = call(f"{livy}/sessions", "POST", body)
    url = f"{livy}/sessions/{session['id']}"
    until(url, "state", {"idle"})
    _, statement = call(f"{url}/statements", "POST", {"code": code})
    return until(f"{url}/statements/{statement['id']}", "state", {"available"})["output"]["data"]["text/plain"]


def test_a_session_that_names_its_python_runs_on_it_with_nothing_added_to_its_path(livy):
    code = "import os, sys\n(sys.executable, os.environ.get('PYTHONPATH'))"
    assert _answer(livy, {"kind": "pyspark"}, code) == repr((sys.executable, str(ROOT)))  # the cluster's, perfkit on it
    own = {"kind": "pyspark", "conf": {"spark.pyspark.python": sys.executable}}
    assert _answer(livy, own, code) == repr((sys.executable, None))  # what is installed in it, no more


def test_a_failed_statement_is_available_with_livys_error_output(livy):
    _, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark"})
    url = f"{livy}/sessions/{session['id']}"
    until(url, "state", {"idle"})
    _, statement = call(f"{url}/statements", "POST", {"code": "undefined_name"})
    done = until(f"{url}/statements/{statement['id']}", "state", {"available"})
    output = done["output"]
    assert (output["status"], output["ename"], output["evalue"]) == ("error", "NameError",
                                                                     "name 'undefined_name' is not defined")
    assert until(url, "state", {"idle"})["state"] == "idle"  # the session lives on


def test_a_running_statement_is_cancelled_and_the_session_goes_on(livy):
    _, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark"})
    url = f"{livy}/sessions/{session['id']}"
    until(url, "state", {"idle"})
    _, slow = call(f"{url}/statements", "POST", {"code": "import time\ntime.sleep(60)"})
    until(f"{url}/statements/{slow['id']}", "state", {"running"})
    assert call(f"{url}/statements/{slow['id']}/cancel", "POST", {}) == (200, {"msg": "canceled"})
    assert until(f"{url}/statements/{slow['id']}", "state", {"cancelled"}, timeout=10)["state"] == "cancelled"
    _, after = call(f"{url}/statements", "POST", {"code": "'still here'"})
    assert until(f"{url}/statements/{after['id']}", "state", {"available"})["output"]["data"] == {
        "text/plain": "'still here'"}


def test_a_session_that_cannot_start_is_dead_with_its_log(livy, monkeypatch):
    monkeypatch.setenv("PERFKIT_LIVY_PYTHON", "/bin/false")
    _, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark"})
    dead = until(f"{livy}/sessions/{session['id']}", "state", {"dead"})
    assert dead["state"] == "dead" and "exited (1) before it was ready" in dead["log"][-1]
    _, log = call(f"{livy}/sessions/{session['id']}/log?from=0")
    assert log["log"] == dead["log"]


def test_only_pyspark_sessions_and_known_resources(livy):
    _, session = call(f"{livy}/sessions", "POST", {"kind": "spark"})
    errored = until(f"{livy}/sessions/{session['id']}", "state", {"error"})
    assert errored["log"] == ["the lab's Livy stand-in runs pyspark sessions only, not spark"]
    assert call(f"{livy}/batches")[0] == 404
    assert call(f"{livy}/sessions/99")[1] == {"msg": "Session '99' not found."}


class FakeResourceManager(JsonHandler):
    """The two calls of YARN's REST API a session's stop makes: an application's state, and its kill. Applications
    named *_ends stop by themselves after two looks; others run until killed, the kill answered once `release` is
    set (so a test can look at the Livy server while the kill is under way)."""
    looks: dict[str, int] = {}
    kills: list[tuple[str, dict]] = []
    release = threading.Event()

    def do_GET(self):
        app = self.path.split("/")[-2]
        self.looks[app] = self.looks.get(app, 0) + 1
        if any(killed == app for killed, _ in self.kills):
            state = "KILLED"
        else:
            state = "FINISHED" if app.endswith("_ends") and self.looks[app] > 2 else "RUNNING"
        self.send_json(200, {"state": state})

    def do_PUT(self):
        self.release.wait(10)
        self.kills.append((self.path.split("/")[-2], self.json_body()))
        self.send_json(202, {"state": "KILLING"})


@pytest.fixture
def resourcemanager(monkeypatch):
    monkeypatch.setattr(FakeResourceManager, "looks", {})
    monkeypatch.setattr(FakeResourceManager, "kills", [])
    monkeypatch.setattr(FakeResourceManager, "release", threading.Event())
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeResourceManager)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    FakeResourceManager.release.set()
    server.shutdown()


def test_a_stopped_drivers_application_is_waited_for_then_killed_as_livy_does(resourcemanager):
    FakeResourceManager.release.set()
    assert end_application(resourcemanager, "application_1_ends", grace_s=5) == "ended FINISHED"
    assert FakeResourceManager.looks["application_1_ends"] == 3 and FakeResourceManager.kills == []
    assert end_application(resourcemanager, "application_2", grace_s=0.5) == \
        "killed through the ResourceManager: KILLED"
    assert FakeResourceManager.kills == [("application_2", {"state": "KILLED"})]
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{unused.getsockname()[1]}"
        assert end_application(gone, "application_3").startswith(
            f"its end not known, the ResourceManager at {gone} did not answer (")


def test_a_session_deleted_mid_statement_stops_at_once_and_is_listed_until_its_application_ends(
        livy, resourcemanager, monkeypatch):
    monkeypatch.setattr(LivyApi, "yarn", resourcemanager)
    monkeypatch.setattr(livy_server, "end_application", functools.partial(end_application, grace_s=0.5))
    _, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark"})
    url = f"{livy}/sessions/{session['id']}"
    until(url, "state", {"idle"})
    stand_in = LivyApi.sessions[session["id"]]
    stand_in.app_id = "application_4"  # as a driver on YARN reports it
    _, slow = call(f"{url}/statements", "POST", {"code": "import time\ntime.sleep(600)"})
    until(f"{url}/statements/{slow['id']}", "state", {"running"})
    deleted = []
    deleting = threading.Thread(target=lambda: deleted.append(call(url, "DELETE")))
    deleting.start()
    # the driver has stopped, its application not yet: the session is still there, shutting down
    deadline = time.monotonic() + 60  # a bound for a hung stop, not a timing: it ends when RM is asked
    while not FakeResourceManager.looks.get("application_4") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stand_in.process.poll() == 0  # it ended by itself, the sleeping statement interrupted: not killed
    assert call(f"{livy}/sessions")[1]["sessions"][0]["state"] == "shutting_down"
    FakeResourceManager.release.set()
    deleting.join(60)
    assert deleted == [(200, {"msg": "deleted"})] and call(f"{livy}/sessions")[1]["total"] == 0
    assert FakeResourceManager.kills == [("application_4", {"state": "KILLED"})]
    assert stand_in.log[-1] == "application application_4: killed through the ResourceManager: KILLED"


def test_a_session_deleted_as_its_statement_is_handed_over_still_stops_by_itself(livy):
    """A DELETE that lands after the server handed a statement over but before the REPL said it took it: the stop
    cannot interrupt it yet, so the hand-over does, once the REPL has it (no wait for the stop's 60 s, no kill).
    The REPL is paused (SIGSTOP) across that moment, which is otherwise a few microseconds wide."""
    _, session = call(f"{livy}/sessions", "POST", {"kind": "pyspark"})
    url = f"{livy}/sessions/{session['id']}"
    until(url, "state", {"idle"})
    stand_in = LivyApi.sessions[session["id"]]
    stand_in.process.send_signal(signal.SIGSTOP)
    try:
        _, slow = call(f"{url}/statements", "POST", {"code": "import time\ntime.sleep(600)"})
        until(f"{url}/statements/{slow['id']}", "state", {"running"})  # handed over; the REPL has not read it
        deleted = []
        deleting = threading.Thread(target=lambda: deleted.append(call(url, "DELETE")))
        deleting.start()
        until(url, "state", {"shutting_down"})
    finally:
        stand_in.process.send_signal(signal.SIGCONT)
    deleting.join(30)
    assert deleted == [(200, {"msg": "deleted"})]
    assert stand_in.process.poll() == 0  # it ended by itself, the statement interrupted as it started: not killed
