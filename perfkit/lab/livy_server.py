"""The lab's Livy stand-in: Apache Livy's REST API for interactive sessions, as sparkmagic uses it, bound to loopback.

Apache Livy for Spark 3.5 cannot be installed here (the registries serve org.apache.livy only up to 0.7.1, which runs
Spark 2), so this server answers in its place: sessions (POST, GET, DELETE, their log), statements (POST, GET,
cancel), with Livy's states and JSON. Each session is a Python process of Spark 3.5.6 (perfkit.lab.livy_repl: a
Spark driver in client mode on the lab's YARN, running statements under the rules of Livy's Python REPL). It speaks
only the `pyspark` kind; every answer says `"standIn": true`. Unlike Livy it never ends a session by itself (no
heartbeat timeout, no idle timeout): sessions end when a client deletes them or the server stops. As Livy's, a
deleted session stays listed (`shutting_down`) until its driver has exited and its YARN application has ended.

Run: python -m perfkit.lab.livy_server --port PORT --logs FOLDER [--yarn RESOURCEMANAGER_WEB_URL]."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections import deque
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path

from perfkit.lab.json_http import JsonHandler

# sparkmagic's `%%configure` body: Livy's POST /sessions fields and the Spark settings each stands for
SESSION_SETTINGS = {"driverMemory": "spark.driver.memory", "driverCores": "spark.driver.cores",
                    "executorMemory": "spark.executor.memory", "executorCores": "spark.executor.cores",
                    "numExecutors": "spark.executor.instances", "queue": "spark.yarn.queue",
                    "name": "spark.app.name"}
LOG_LINES = 200  # a session's log as GET /sessions/{id} shows it: the last lines
YARN_FINAL = ("FINISHED", "FAILED", "KILLED")


class Statement:
    def __init__(self, statement_id: int, code: str):
        self.id, self.code = statement_id, code
        self.state, self.output = "waiting", None
        self.started = self.completed = 0

    def json(self) -> dict:
        return {"id": self.id, "code": self.code, "state": self.state, "output": self.output,
                "progress": 1.0 if self.state in ("available", "cancelled") else 0.0,
                "started": self.started, "completed": self.completed}


class Session:
    """One Livy interactive session: its REPL process, its statements run one after another."""

    def __init__(self, session_id: int, body: dict, logs: Path, yarn: str | None = None):
        self.id, self.kind, self.yarn = session_id, body.get("kind", "pyspark"), yarn
        self.name = body.get("name")
        conf = {str(k): str(v) for k, v in (body.get("conf") or {}).items()}
        conf.update({SESSION_SETTINGS[k]: str(v) for k, v in body.items() if k in SESSION_SETTINGS})
        self.conf = conf
        self.state, self.app_id, self.ui = "starting", None, None
        self.log = deque(maxlen=LOG_LINES)
        self.log_file = logs / f"livy-session-{session_id}.log"
        self.statements: list[Statement] = []
        self.queue: list[Statement] = []
        self.lock = threading.Condition()
        self.process: subprocess.Popen | None = None
        self.executing = False  # the REPL has taken the running statement (said so): a SIGINT reaches it
        threading.Thread(target=self._run, daemon=True).start()

    def json(self) -> dict:
        return {"id": self.id, "name": self.name, "appId": self.app_id, "owner": None, "proxyUser": None,
                "state": self.state, "kind": self.kind, "standIn": True,
                "appInfo": {"driverLogUrl": str(self.log_file), "sparkUiUrl": self.ui}, "log": list(self.log)}

    def _say(self, line: str) -> None:
        self.log.append(line)
        with open(self.log_file, "a") as log:
            log.write(line + "\n")

    def _python(self) -> tuple[str, dict[str, str]]:
        """The session's Python and its environment. By default the cluster's: Spark 3.5.6's, where the lab puts this
        checkout's perfkit on the path as a bootstrap action would have installed it. A session that names its own
        (spark.pyspark.python, as Livy and Spark read it: the driver's and the executors') gets nothing added: it
        imports what is installed in it."""
        own = self.conf.get("spark.pyspark.python")
        if not own:
            return os.environ["PERFKIT_LIVY_PYTHON"], dict(os.environ)
        # as Livy does: the executors take it from PYSPARK_PYTHON (pyspark's SparkContext reads only that)
        return own, {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYSPARK_PYTHON": own}

    def _run(self) -> None:
        if self.kind != "pyspark":
            self.state = "error"
            self._say(f"the lab's Livy stand-in runs pyspark sessions only, not {self.kind}")
            return
        settings = json.dumps({"conf": self.conf, "name": self.name or f"livy-session-{self.id}"})
        python, environment = self._python()
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as stderr:
            # in a folder of the lab's, not the server's: `-m` puts the working folder first on the path, and a
            # checkout there would shadow what the session's Python has installed
            self.process = subprocess.Popen([python, "-m", "perfkit.lab.livy_repl", settings], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=stderr, text=True, bufsize=1,
                                            env=environment, cwd=self.log_file.parent)
        ready = self.process.stdout.readline()
        if not ready:
            self._say(f"the session's Spark driver exited ({self.process.wait()}) before it was ready: "
                      + _tail(self.log_file))
            self.state = "dead"  # after the log says why: a client that sees "dead" reads the log next
            return
        started = json.loads(ready)
        self.app_id, self.ui = started["appId"], started.get("sparkUiUrl")
        self._say(f"SparkSession available: application {self.app_id}")
        with self.lock:
            self.state = "idle"
        while True:
            with self.lock:
                while not self.queue and self.state not in ("shutting_down", "dead"):
                    self.lock.wait()
                if self.state in ("shutting_down", "dead"):
                    return
                statement = self.queue.pop(0)
                statement.state, statement.started, self.state = "running", _now_ms(), "busy"
                # handed over under the lock: stop() closes the REPL's stdin only after this line is in it
                self.process.stdin.write(json.dumps({"code": statement.code}) + "\n")
                self.process.stdin.flush()
            started = self.process.stdout.readline()  # the REPL took it: a SIGINT now cancels this statement
            with self.lock:
                self.executing = bool(started)
                # cancelled, or the session stopped, before the REPL took it: stop() could not interrupt it then
                if started and (statement.state == "cancelling" or self.state == "shutting_down"):
                    self.process.send_signal(signal.SIGINT)
            reply = self.process.stdout.readline() if started else ""
            with self.lock:
                self.executing = False
                if not reply:
                    statement.state, self.state = "error", "dead"
                    statement.output = {"status": "error", "execution_count": statement.id, "ename": "SessionDied",
                                        "evalue": "the session's Spark driver exited", "traceback": []}
                    self._say("the session's Spark driver exited: " + _tail(self.log_file))
                    return
                output = json.loads(reply)
                cancelled = statement.state == "cancelling" and output.get("ename") == "KeyboardInterrupt"
                statement.output = {**output, "execution_count": statement.id}
                statement.state, statement.completed = ("cancelled" if cancelled else "available"), _now_ms()
                self.state = "idle" if self.state == "busy" else self.state

    def submit(self, code: str) -> Statement:
        with self.lock:
            statement = Statement(len(self.statements), code)
            self.statements.append(statement)
            self.queue.append(statement)
            self.lock.notify_all()
            return statement

    def cancel(self, statement: Statement) -> None:
        with self.lock:
            if statement.state == "waiting":
                self.queue.remove(statement)
                statement.state = "cancelled"
            elif statement.state == "running" and self.process:
                statement.state = "cancelling"
                if self.executing:  # else the REPL has not taken it yet: _run interrupts it when it has
                    self.process.send_signal(signal.SIGINT)  # the REPL's statement stops with KeyboardInterrupt

    def stop(self) -> None:
        with self.lock:
            self.state = "shutting_down"
            if self.executing:  # as Livy's stop: a running statement does not keep the driver from stopping
                self.process.send_signal(signal.SIGINT)
            self.lock.notify_all()
        if self.process and self.process.poll() is None:
            self.process.stdin.close()  # the REPL stops its SparkContext (its YARN application) and exits
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.yarn and self.app_id:
            self._say(f"application {self.app_id}: {end_application(self.yarn, self.app_id)}")


def end_application(yarn: str, app_id: str, grace_s: float = 10, timeout_s: float = 30) -> str:
    """Wait for a stopped driver's YARN application to end (its ApplicationMaster unregisters a moment after the
    driver exits); kill it through the ResourceManager's REST API if it has not within `grace_s`, as Livy's session
    stop does. Returns its final state, or why it is not known."""
    url = f"{yarn}/ws/v1/cluster/apps/{app_id}/state"

    def state(body: bytes | None = None) -> str:
        request = urllib.request.Request(url, data=body, method="PUT" if body else "GET",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.load(answer)["state"]

    def state_after(seconds: float) -> str:  # final, or the last seen once `seconds` have passed
        deadline = time.monotonic() + seconds
        while (now := state()) not in YARN_FINAL and time.monotonic() < deadline:
            time.sleep(0.2)
        return now

    try:
        if (now := state_after(grace_s)) in YARN_FINAL:
            return f"ended {now}"
        state(json.dumps({"state": "KILLED"}).encode())
        return f"killed through the ResourceManager: {state_after(timeout_s)}"
    except (OSError, ValueError, KeyError) as err:  # the session goes anyway; its log says what is not known
        return f"its end not known, the ResourceManager at {yarn} did not answer ({err})"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class LivyApi(JsonHandler):
    sessions: dict[int, Session] = {}
    ids = itertools.count()
    logs = Path(".")
    yarn: str | None = None  # the ResourceManager's web address: a deleted session's application ends there
    lock = threading.Lock()

    def _route(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        match = re.fullmatch(r"/sessions(?:/(\d+)(?:/(log|state|statements)(?:/(\d+)(?:/(cancel))?)?)?)?", path)
        if not match:
            return self.send_json(HTTPStatus.NOT_FOUND, {"msg": f"no such resource: {path}"})
        session_id, part, statement_id, cancel = match.groups()
        if session_id is None:
            if method == "GET":
                listed = [s.json() for s in self.sessions.values()]
                return self.send_json(HTTPStatus.OK, {"from": 0, "total": len(listed), "sessions": listed})
            if method == "POST":
                with self.lock:
                    session = Session(next(self.ids), self.json_body(), self.logs, self.yarn)
                    self.sessions[session.id] = session
                return self.send_json(HTTPStatus.CREATED, session.json())
            return self.send_json(HTTPStatus.METHOD_NOT_ALLOWED, {"msg": method})
        session = self.sessions.get(int(session_id))
        if session is None:
            return self.send_json(HTTPStatus.NOT_FOUND, {"msg": f"Session '{session_id}' not found."})
        if part is None:
            if method == "DELETE":
                session.stop()  # listed as shutting_down until its driver and its application have ended
                with self.lock:
                    self.sessions.pop(session.id, None)
                return self.send_json(HTTPStatus.OK, {"msg": "deleted"})
            return self.send_json(HTTPStatus.OK, session.json())
        if part == "log":
            lines = list(session.log)
            return self.send_json(HTTPStatus.OK, {"id": session.id, "from": 0, "total": len(lines), "log": lines})
        if part == "state":
            return self.send_json(HTTPStatus.OK, {"id": session.id, "state": session.state})
        if statement_id is None:
            if method == "POST":
                code = self.json_body().get("code")
                if not isinstance(code, str):
                    return self.send_json(HTTPStatus.BAD_REQUEST, {"msg": "a statement needs its code"})
                return self.send_json(HTTPStatus.CREATED, session.submit(code).json())
            listed = [s.json() for s in session.statements]
            return self.send_json(HTTPStatus.OK, {"total_statements": len(listed), "statements": listed})
        index = int(statement_id)
        if index >= len(session.statements):
            return self.send_json(HTTPStatus.NOT_FOUND, {"msg": f"Statement '{index}' not found."})
        statement = session.statements[index]
        if cancel and method == "POST":
            session.cancel(statement)
            return self.send_json(HTTPStatus.OK, {"msg": "canceled"})
        return self.send_json(HTTPStatus.OK, statement.json())

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_DELETE(self):
        self._route("DELETE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--logs", type=Path, required=True)
    parser.add_argument("--yarn", help="the ResourceManager's web address (http://HOST:PORT)")
    args = parser.parse_args()
    LivyApi.logs, LivyApi.yarn = args.logs, args.yarn
    server = ThreadingHTTPServer((args.host, args.port), LivyApi)

    def stop(signum, frame):  # `lab down`: every session's driver stops with the server (Livy's do not outlive it)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"Livy stand-in listening on http://{args.host}:{args.port}", flush=True)
    try:
        server.serve_forever()
    finally:
        for session in list(LivyApi.sessions.values()):
            session.stop()


if __name__ == "__main__":
    main()
