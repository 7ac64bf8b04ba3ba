"""`python -m perfkit.lab.fetch`, which `make report` runs beside pip's install: it must import with only what the
Makefile installs first, and say what is missing with a non-zero exit."""
import subprocess
import sys
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import Lab, fetch, tools

ROOT = Path(__file__).resolve().parents[2]
FIRST_INSTALLED = {"psutil", "yaml", "requests"}  # the Makefile's $(VENV)/.base


def test_it_imports_with_only_what_the_makefile_installs_first(stdlib_module_names):
    # every other third-party import refused, as in a venv where pip has not yet installed the rest
    guard = f"""
import sys
allowed = set({sorted(stdlib_module_names | FIRST_INSTALLED | {"perfkit"})!r})
class Refuse:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in allowed and not top.startswith("_"):
            raise ImportError(f"not installed yet: {{name}}")
import {", ".join(sorted(FIRST_INSTALLED))}  # and what they import (urllib3, idna, ...)
sys.meta_path.insert(0, Refuse())
import perfkit.lab.fetch
print("imported")
"""
    done = subprocess.run([sys.executable, "-c", guard], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "imported"


def test_it_fetches_the_tools_after_checking_java(monkeypatch):
    order = []
    monkeypatch.setattr(tools, "java_home", lambda: order.append("java"))
    monkeypatch.setattr(Lab, "fetch_tools", staticmethod(lambda: order.append("tools")))
    assert fetch.main() == 0
    assert order == ["java", "tools"]


def test_a_missing_tool_is_named_with_a_non_zero_exit(monkeypatch, capsys):
    def no_java():
        raise PerfkitError("lab: Java was not found. Fix: install Java 17+")

    monkeypatch.setattr(tools, "java_home", no_java)
    monkeypatch.setattr(Lab, "fetch_tools", staticmethod(_must_not_fetch))
    assert fetch.main() == 1
    assert capsys.readouterr().err.strip() == "perfkit: lab: Java was not found. Fix: install Java 17+"


def _must_not_fetch():
    raise AssertionError("no fetch without Java")
