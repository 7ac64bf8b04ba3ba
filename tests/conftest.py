import json
import os
import pkgutil
import re
import sys
import sysconfig
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from perfkit import machine_load

CPU_AT_START: dict = {}


def pytest_sessionstart(session):
    try:
        CPU_AT_START.update(machine_load.snapshot())
    except OSError:  # no /proc/stat (not Linux): no CPU line in the summary
        pass


def pytest_terminal_summary(terminalreporter):
    """The session's times beside how busy the cores were, the host's steal and one core's speed (the same tests
    took 2.5x as long on some days of the same machine kind)."""
    if CPU_AT_START:
        terminalreporter.write_line(machine_load.line_since(CPU_AT_START))


def pytest_collection_modifyitems(config, items):
    """Tests marked lab_lifecycle stop the lab: they run after every other test."""
    items.sort(key=lambda item: item.get_closest_marker("lab_lifecycle") is not None)


@pytest.fixture(scope="session")
def stdlib_module_names() -> frozenset:
    """sys.stdlib_module_names (Python 3.10+); on 3.9, found on disk: the interpreter's built-in modules and the
    modules and packages in the standard library's folders, lib-dynload's extension modules among them. Found so on
    3.10, it differs from 3.10's list only by modules not on disk there (other platforms', frozen ones) and CPython's
    own test modules."""
    if sys.version_info >= (3, 10):
        return frozenset(sys.stdlib_module_names)
    folders = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    folders |= {os.path.join(folder, "lib-dynload") for folder in folders}
    return frozenset(sys.builtin_module_names) | {module.name for module in pkgutil.iter_modules(sorted(folders))}


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


# a quote around a sentence, as the HTML export escapes it
QUOTE = r"(?:'|&#x27;|&#39;)"
# one of something counted, in the plural: "after 1 runs", "1 HEADs and LISTs"
ONE_OF_MANY = (r"\b1 (runs|queries|files|rounds|copies|jobs|requests|GETs|HEADs|LISTs|reads|RPCs|splits|tries|engines|"
               r"storages|partitions|objects|methods)\b")


@pytest.fixture
def reads_well():
    """A check of a rendered report's HTML for none of what a reader tripped over (issue 43): a column of row numbers,
    a cell cut with "...", a sentence shown as a quoted Python string, a raw float with six decimals, "after 1 runs"
    (or any one counted thing in the plural)."""

    def check(page: str) -> None:
        numbered = re.search(r"<tr>\s*<th>\d+</th>", page)
        assert not numbered, page[max(0, numbered.start() - 400):numbered.end()] if numbered else ""
        assert "...</td>" not in page
        quoted = re.findall(rf"<pre>{QUOTE}[A-Z][^<]*\.{QUOTE}</pre>", page)
        assert not quoted, quoted
        raw = [n for n in re.findall(r"<td>-?([\d,]*\.\d+)</td>", page)
               if len(n.replace(",", "").replace(".", "").lstrip("0")) > 4]
        assert not raw, raw  # more than 4 significant digits: 1.444147, not 1.44 or 0.00632
        one = re.search(ONE_OF_MANY, page)
        assert not one, page[max(0, one.start() - 200):one.end()] if one else ""

    return check
