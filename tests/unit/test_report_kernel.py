"""Runs on a real kernel: one that dies mid-run, Ctrl-C, and what reaches the terminal."""
import signal

import nbformat
import psutil
import pytest

from perfkit import report


def _notebook(tmp_path, code: str, name: str = "study.ipynb"):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("rows = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('first cell ran')"), nbformat.v4.new_code_cell(code),
                nbformat.v4.new_code_cell("print('never')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _kernels():
    """Live kernel processes under this one; a zombie (a lab daemon an earlier test killed) has no command line."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "ipykernel" in " ".join(child.cmdline()):
                found.append(child)
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return found


def test_a_kernel_that_dies_still_gives_a_report_marked_failed_and_nothing_on_the_terminal(tmp_path, capfd):
    out_root = tmp_path / "reports"
    result = report.render(_notebook(tmp_path, "import os\nos._exit(1)"), out_root=out_root)

    assert not result.ok and result.error == "DeadKernelError: Kernel died"
    page = result.html.read_text()
    assert "This run did not finish" in page and "first cell ran" in page and "never" not in page
    executed = nbformat.read(result.notebook, as_version=4)
    assert executed.metadata.perfkit["ok"] is False
    stopped = executed.cells.index(next(c for c in executed.cells if "os._exit" in c.source))
    assert "stopped in the cell below" in executed.cells[stopped - 1].source
    assert sorted(p.name for p in (out_root / "study").iterdir()) == [result.html.name, result.notebook.name]
    err = capfd.readouterr().err
    assert "IPKernelApp" not in err and "Kernel died" not in err  # the kernel's log and nbclient's are kept off it
    assert not _kernels()


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raising KeyboardInterrupt here, as in a terminal: a runner started in the background of a
    non-interactive shell (CI's) passes SIGINT down ignored, and Python keeps it ignored."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_shuts_the_kernel_down_and_leaves_nothing(tmp_path, capfd, ctrl_c_raises):
    # the cell interrupts this process as a terminal's Ctrl-C would, then runs on
    code = "import os, signal, time\nos.kill(os.getppid(), signal.SIGINT)\ntime.sleep(30)"
    out_root = tmp_path / "reports"
    out_root.mkdir()
    with pytest.raises(KeyboardInterrupt):
        report.render(_notebook(tmp_path, code), out_root=out_root)
    assert list(out_root.iterdir()) == []  # no report, no temporary folder, no empty report folder
    assert not _kernels()
    assert "Traceback" not in capfd.readouterr().err
