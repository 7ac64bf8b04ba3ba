"""sparkmagic 0.23.0's own pysparkkernel, run by papermill against the lab's Livy stand-in: what EMR's notebook
executions do, cell by cell. The sessions here run without Spark (PERFKIT_LIVY_NO_SPARK, as Livy's LIVY_TEST: `spark`
is None), so this is the protocol alone; test_zzz_cluster_shape_lab.py runs the same kernel on Spark on YARN."""
from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import papermill
import pytest

from perfkit.lab import sparkmagic_kernel

ROOT = Path(__file__).resolve().parents[2]


def notebook(path: Path, *cells: str) -> Path:
    """A notebook on EMR's kernel: a `parameters` cell (x = 1), then `cells`."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "pysparkkernel", "display_name": "PySpark", "language": "python"}
    parameters = nbformat.v4.new_code_cell("x = 1")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, path)
    return path


def outputs(cell) -> tuple[str, list[str]]:
    """A cell's printed text (sparkmagic's progress widgets and banners aside) and the other types it displayed."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    shown = sorted({t for o in cell.outputs if o.output_type == "display_data" for t in o.data
                    if t != "text/plain" and "widget" not in t})
    return text, shown


@pytest.fixture(scope="module")
def livy(tmp_path_factory):
    """The stand-in on a free loopback port, and sparkmagic's kernel configured for it (papermill's settings)."""
    home = tmp_path_factory.mktemp("livy-home")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    environment = {**os.environ, "PERFKIT_LIVY_PYTHON": sys.executable, "PERFKIT_LIVY_NO_SPARK": "1",
                   "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "perfkit.lab.livy_server", "--port", str(port), "--logs",
                               str(home / "logs")], env=environment, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    with pytest.MonkeyPatch.context() as env:
        for name, value in sparkmagic_kernel.install(home, url).items():
            env.setenv(name, value)
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{url}/sessions", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Livy stand-in did not answer"
                time.sleep(0.2)
        yield url
    server.terminate()
    server.wait(timeout=30)


def sessions(url: str) -> int:
    with urllib.request.urlopen(f"{url}/sessions", timeout=5) as answer:
        return json.load(answer)["total"]


def test_cells_run_in_livy_with_its_rules_and_papermills_parameters(livy, tmp_path):
    source = notebook(tmp_path / "cells.ipynb",
                      "print('x is', x)\nx * 10",
                      "import pandas as pd\npd.DataFrame({'engine': ['spark'], 's3_s': [1.5]})",
                      "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n_ = plt.plot([1, 2])",
                      "%matplot plt",
                      "%%local\nimport os\nprint('kernel side', os.getpid())")
    executed = papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), parameters={"x": 2},
                                          kernel_name="pysparkkernel", progress_bar=False)
    cells = executed.cells
    assert "SparkSession available as 'spark'." in outputs(cells[0])[0]  # sparkmagic asked Livy for `spark`
    assert cells[1].source.startswith("# Parameters") and "x = 2" in cells[1].source  # papermill's, run in Livy
    assert outputs(cells[2]) == ("x is 2\n20", [])
    assert outputs(cells[3]) == ("  engine  s3_s\n0  spark   1.5", [])  # a frame's text, never its HTML
    assert outputs(cells[5])[1] == ["image/png"]  # a figure only through %matplot
    png = next(o.data["image/png"] for o in cells[5].outputs if "image/png" in o.get("data", {}))
    assert base64.b64decode(png).startswith(b"\x89PNG")
    text, _ = outputs(cells[6])
    assert text.startswith("kernel side") and int(text.split()[-1]) != os.getpid()  # %%local: the kernel's own Python
    assert sessions(livy) == 0  # cleanup_all_sessions_on_exit: no session outlives the run


def test_a_failing_cell_fails_the_run_and_later_cells_do_not_run(livy, tmp_path):
    source = notebook(tmp_path / "fails.ipynb", "1 / 0", "print('after the failure')")
    with pytest.raises(papermill.PapermillExecutionError) as failed:
        papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), kernel_name="pysparkkernel",
                                   progress_bar=False)
    assert failed.value.ename == "SparkStatementException" and "division by zero" in failed.value.evalue
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert executed.cells[-1].outputs == []  # all_errors_are_fatal: the run stopped there
    assert sessions(livy) == 0
