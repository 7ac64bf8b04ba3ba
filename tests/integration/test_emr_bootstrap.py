"""The script `perfkit emr bootstrap` prints, run as EMR runs a bootstrap action, against a Python of its own (no lab).
Installing perfkit for real into the Python of the cluster shape's Livy sessions is the cluster module's test."""
import base64
import hashlib
import subprocess
import sys
import zipfile

import pytest
from click.testing import CliRunner

from perfkit.cli import main


def _wheel(folder, name: str, version: str, module_text: str, metadata: str = ""):
    """A wheel of one module, made by hand (no build backend, no index): what pip installs from a file."""
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": module_text,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{metadata}",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
            record.append(f"{member},sha256={digest},{len(text.encode())}")
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bootstrap")
    printed = CliRunner().invoke(main, ["emr", "bootstrap"])
    assert printed.exit_code == 0 and printed.output.startswith("#!/bin/bash\n")
    path = folder / "perfkit-bootstrap.sh"
    path.write_text(printed.output)
    return path


@pytest.fixture
def node_python(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "node")], check=True)
    return tmp_path / "node" / "bin" / "python"


def _bootstrap(script, python, *args, **env):
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=300,
                          cwd=script.parent,  # not this checkout: `python -c` imports perfkit from its folder
                          env={"PATH": "/usr/bin:/bin", "PERFKIT_PYTHON": str(python), **env})


def test_without_a_package_it_says_what_to_give(script, node_python):
    done = _bootstrap(script, node_python)
    assert done.returncode == 2
    assert done.stderr.strip() == ("perfkit bootstrap: give perfkit's wheel "
                                   "(s3://BUCKET/perfkit-VERSION-py3-none-any.whl) or a pip requirement")


def test_a_package_that_would_change_the_clusters_pyspark_is_refused_by_name(script, node_python, tmp_path):
    done = _bootstrap(script, node_python, str(_wheel(tmp_path, "pyspark", "9.9.9", "__version__ = '9.9.9'\n")))
    assert done.returncode == 1
    assert "changed this Python's pyspark (none -> 9.9.9 " in done.stderr
    assert f"undo it with {node_python} -m pip uninstall pyspark" in done.stderr


def test_a_node_gets_perfkit_alone_and_the_notebook_environment_the_extras_it_names(script, tmp_path):
    """perfkit's wheel (made by hand: an extra `tools` that brings a tool of its own) installed twice, from a folder
    and no index: as a bootstrap action (no extra) and as the notebook environment's step (PERFKIT_EXTRAS)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = _wheel(wheels, "perfkit", "0.0.1", "__version__ = '0.0.1'\n",
                   'Provides-Extra: tools\nRequires-Dist: sometool; extra == "tools"\n')
    _wheel(wheels, "sometool", "1.0", "")
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    for name, extras in (("node", None), ("notebook-env", "tools")):
        subprocess.run([sys.executable, "-m", "venv", str(tmp_path / name)], check=True)
        python = tmp_path / name / "bin" / "python"
        done = _bootstrap(script, python, str(wheel), **offline, **({"PERFKIT_EXTRAS": extras} if extras else {}))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"perfkit 0.0.1 in {python} "), done.stdout
        tool = subprocess.run([str(python), "-c", "import sometool"], capture_output=True)
        assert (tool.returncode == 0) == (extras is not None), (name, tool.stderr)
