"""Runs on a real kernel: one that dies mid-run, Ctrl-C, and what reaches the terminal."""
import signal
from pathlib import Path

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
    before = {k.pid for k in _kernels()}  # an earlier test's kernel of this worker, still on its way out
    with pytest.raises(KeyboardInterrupt):
        report.render(_notebook(tmp_path, code), out_root=out_root)
    assert list(out_root.iterdir()) == []  # no report, no temporary folder, no empty report folder
    # this test's kernel was told to stop: it ends (a busy machine may take seconds to reap it), not sleeps on 30 s
    _, alive = psutil.wait_procs([k for k in _kernels() if k.pid not in before], timeout=15)
    assert not alive
    assert "Traceback" not in capfd.readouterr().err


def _kernel_dies_at_start_once(monkeypatch, stderr: str) -> list:
    """papermill's first start of the kernel ends as a kernel that died before it answered kernel_info, its stderr
    saying why (a port taken, or something else); later starts are papermill's own. The kernels asked for."""
    import papermill

    real, calls = papermill.execute_notebook, []

    def dies_once(*args, **kwargs):
        calls.append(kwargs["kernel_name"])
        if len(calls) == 1:  # as papermill: the notebook written before its kernel starts
            Path(args[1]).write_bytes(Path(args[0]).read_bytes())
            Path(kwargs["config"]["QuietKernelManager"]["stderr_path"]).write_text(stderr)
            raise RuntimeError("Kernel died before replying to kernel_info")
        return real(*args, **kwargs)

    monkeypatch.setattr(papermill, "execute_notebook", dies_once)
    return calls


def test_a_kernel_whose_port_was_taken_before_it_answered_is_started_again(tmp_path, monkeypatch):
    """Two kernels started at once can be given the same free port (jupyter_client picks, the kernel binds later):
    the one that loses dies before any cell ran, and the report starts it again."""
    calls = _kernel_dies_at_start_once(
        monkeypatch, "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:57109')\n")
    result = report.render(_notebook(tmp_path, "print('ran')"), out_root=tmp_path / "reports")
    assert result.ok and calls == ["python3", "python3"]
    assert "ran" in result.html.read_text() and "This run did not finish" not in result.html.read_text()


def test_a_kernel_that_dies_at_start_for_another_reason_is_not_started_again(tmp_path, monkeypatch):
    calls = _kernel_dies_at_start_once(monkeypatch, "ModuleNotFoundError: No module named 'ipykernel'\n")
    result = report.render(_notebook(tmp_path, "print('ran')"), out_root=tmp_path / "reports")
    assert not result.ok and calls == ["python3"]
    assert result.error == "RuntimeError: Kernel died before replying to kernel_info"
    assert "No module named &#x27;ipykernel&#x27;" in result.html.read_text() or \
        "No module named 'ipykernel'" in result.html.read_text()  # the kernel's last words, in the report
