"""Run a notebook with papermill and store the executed copy as a report, even when a cell fails or the kernel dies.

The HTML is self-contained (images embedded) and shows outputs only unless show_code is asked for.
Parameters that look like secrets are refused, and anything of secret shape is redacted from what is
written (notebook, HTML, index), should a cell ever print it.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import stat
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from perfkit import provenance
from perfkit.errors import PerfkitError, root_cause
from perfkit.extras import require
from perfkit.paths import ensure_writable_dir, project_root
from perfkit.progress import RENDERING
from perfkit.report.notebook import JVM_NOISE, read_notebook, report_title, tidy
from perfkit.report.parameters import check_notebook_parameters
from perfkit.report.store import Report, report_dir, store_report

# EMR Notebooks' PySpark kernels (sparkmagic): Python run in a Spark driver on the cluster
EMR_PYTHON_KERNELS = ("pysparkkernel", "pyspark3kernel")
# ipykernel's warning at every start on a plain-TCP connection (local, as papermill starts it): not a cause of death.
KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption")


def render(notebook: Path | str, parameters: dict | None = None, out_root: Path | None = None,
           kernel: str | None = None, show_code: bool = False) -> Report:
    """Execute the notebook; keep the executed copy and its HTML even when a cell fails or the kernel dies (ok=False).

    What can be checked is checked before the kernel starts: the file is a notebook, its kernel is installed, the
    parameters are known and the report folders are writable. An interrupted run (Ctrl-C) leaves nothing behind.
    The HTML shows the outputs alone unless show_code; the executed .ipynb always keeps the code."""
    nbformat = require("nbformat", "perfkit report")
    pm = require("papermill", "perfkit report")
    require("nbconvert", "perfkit report")
    from traitlets.config import Config

    notebook = Path(notebook)
    if not notebook.exists():
        raise PerfkitError(f"notebook {notebook} does not exist: give the path of one of notebooks/*.ipynb")
    source = read_notebook(notebook)
    out_dir = report_dir(notebook, out_root)
    parameters = dict(parameters or {})
    check_notebook_parameters(notebook, parameters, source)
    kernel, language = _kernel(source, notebook, kernel)
    root_fix = "pass a writable out_root" if out_root else "set PERFKIT_REPORTS to a writable folder"
    ensure_writable_dir(out_dir.parent, "reports folder", root_fix)
    created = not out_dir.exists()
    ensure_writable_dir(out_dir, "report folder", f"make it writable, or {root_fix}")

    started_at = datetime.now(timezone.utc)  # the report's name: when the run started
    try:
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".render-") as work:
            executed, kernel_log = Path(work) / notebook.name, Path(work) / "kernel-stderr.log"
            started = time.monotonic()
            error, marked = None, True
            pm_log = logging.getLogger("papermill")  # nbclient logs through it too
            pm_level = pm_log.level
            pm_log.setLevel(logging.CRITICAL)  # its "Kernel died..." line on the terminal: the error is ours to report
            try:
                for attempt in range(1, KERNEL_STARTS + 1):
                    kernel_log.unlink(missing_ok=True)  # each start's own stderr
                    try:
                        pm.execute_notebook(str(notebook), str(executed), parameters=parameters, kernel_name=kernel,
                                            language=language, cwd=str(project_root()), progress_bar=False,
                                            kernel_manager_class=_kernel_manager_class(),
                                            config=Config({"QuietKernelManager": {"stderr_path": str(kernel_log)}}))
                        break
                    except RuntimeError as err:
                        if attempt == KERNEL_STARTS or not _lost_a_port(err, kernel_log):
                            raise
            except pm.PapermillExecutionError as err:  # a cell raised: papermill marked it in the notebook
                error = f"{err.ename}: {err.evalue}"
            except Exception as err:  # noqa: BLE001 - the kernel died, timed out or never started
                error, marked = f"{type(err).__name__}: {root_cause(err)}", False
            finally:
                pm_log.setLevel(pm_level)
            if not executed.exists():
                raise PerfkitError(f"papermill wrote no output for {notebook}: {error}")
            nb = tidy(nbformat.read(str(executed), as_version=4))
            nb.metadata["title"] = report_title(nb)  # nbconvert's <title>; else the file's name
            if not marked:
                _mark_stop(nb, error, kernel_log.read_text(errors="replace") if kernel_log.exists() else "")
            return store_report(out_dir, nb, ok=error is None, error=error, parameters=parameters,
                                show_code=show_code, seconds=time.monotonic() - started, started=started_at,
                                git_commit=provenance.git_commit(), versions=provenance.versions())
    except BaseException:
        # Ctrl-C or no report: nbclient has shut the kernel down on the way out and the `with` removed the work
        # folder; a report folder this run made goes too unless another run put something in it meanwhile
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()
        raise


# a kernel's ports are picked free by jupyter_client, then bound by the kernel: another process (a kernel started at
# the same moment) can take one in between, and the kernel dies before it answers. Nothing ran: start it again
KERNEL_STARTS = 3
PORT_TAKEN = "Address already in use"


def _lost_a_port(err: Exception, kernel_log: Path) -> bool:
    """The kernel died before replying to kernel_info (no cell ran) because a port it was given was taken."""
    return ("before replying to kernel_info" in str(err) and kernel_log.exists()
            and PORT_TAKEN in kernel_log.read_text(errors="replace"))


def _kernel(nb, notebook: Path, kernel: str | None) -> tuple[str, str]:
    """The kernel the notebook will run on and its language (papermill writes the parameters in it); refused, before
    anything is created, if the notebook names no kernel or the kernel is not installed.

    A notebook made for EMR's PySpark kernel (sparkmagic's pysparkkernel: the cells run as Python in a Spark
    driver on the cluster) runs on this machine's own Python kernel when pysparkkernel is not installed here:
    its cells are plain Python, and the profile parameter, not the kernel, says where the work runs. Where
    pysparkkernel is installed it is found here like any kernel. (perfkit's own notebooks declare python3.)"""
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager, NoSuchKernel

    specs = KernelSpecManager()
    found = specs.find_kernel_specs()
    installed = ", ".join(sorted(found)) or "none"
    name = kernel or nb.metadata.get("kernelspec", {}).get("name")
    if not name:
        raise PerfkitError(f"{notebook} has no kernel: pass --kernel NAME (installed: {installed}) "
                           "or open it in Jupyter, choose a kernel and save it")
    if name == "python" or (name in EMR_PYTHON_KERNELS and not kernel and name not in found):
        name = NATIVE_KERNEL_NAME  # jupyter_client's alias for the Python kernel it runs in
    try:
        spec = specs.get_kernel_spec(name)
    except NoSuchKernel:
        asked = "--kernel" if kernel else f"{notebook} asks for kernel"
        raise PerfkitError(f"{asked} {name!r} is not an installed Jupyter kernel: "
                           f"pass --kernel with one of {installed}") from None
    return name, spec.language


@functools.cache
def _kernel_manager_class():
    """The kernel manager papermill uses: it starts the kernel with its own stderr in a file (stderr_path) rather than
    on the user's terminal. ipykernel logs there: a plain-TCP warning at every start, a ZMQ traceback when Ctrl-C
    shuts it down mid-cell, and a crash's last words (quoted in the report). Cell outputs travel separately."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Unicode

    class QuietKernelManager(AsyncKernelManager):
        stderr_path = Unicode("", config=True)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kernel_cmd, kw = report_kernel(kernel_cmd, kw)
            if not self.stderr_path:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(self.stderr_path, "ab") as log:  # the kernel process keeps its own copy of the descriptor
                return await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": log})

    return QuietKernelManager


def report_kernel(kernel_cmd: list[str], launch: dict) -> tuple[list[str], dict]:
    """A report shows what the notebook's Python prints, never what other processes write to the kernel's file
    descriptors (a JVM's log lines, Hive's session banner, a child process): ipykernel is told not to forward those
    into cells (they go to the kernel's log, quoted only when the kernel dies), and perfkit's progress bars learn that
    a report renders and where to draw live (this process's terminal, when it is one)."""
    if any("ipykernel" in part for part in kernel_cmd):
        kernel_cmd = [*kernel_cmd, "--IPKernelApp.capture_fd_output=False"]
    env = dict(launch.get("env") or os.environ)
    env[RENDERING] = live_terminal()
    return kernel_cmd, {**launch, "env": env}


def live_terminal() -> str:
    """A path the kernel can open to draw on this process's stderr: only a terminal or a pipe (a regular file opened
    anew would be written from its start, over what is there); empty for none."""
    try:
        mode = os.fstat(2).st_mode
    except OSError:
        return ""
    path = f"/proc/{os.getpid()}/fd/2"
    return path if (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)) and os.path.exists(path) else ""


def _mark_stop(nb, error: str, kernel_stderr: str) -> None:
    """papermill marks a cell that raised; a kernel that died or timed out leaves no mark. Say so at the top, with the
    kernel's last stderr lines, and before the cell that was running."""
    import nbformat

    def marker(text):
        cell = nbformat.v4.new_markdown_cell(text, metadata={"tags": ["papermill-error-cell-tag"]})
        if nb.nbformat_minor < 5:
            cell.pop("id", None)  # cell ids came with nbformat 4.5
        return cell

    said = [line for line in kernel_stderr.splitlines()
            if line.strip() and not KERNEL_NOISE.search(line) and not JVM_NOISE.search(line)]
    last_words = "\n\nThe kernel's last lines on stderr:\n\n```\n" + "\n".join(said[-20:]) + "\n```" if said else ""
    ran = [i for i, cell in enumerate(nb.cells) if cell.get("metadata", {}).get("papermill", {}).get("start_time")]
    if ran:
        nb.cells.insert(ran[-1], marker(f"**The run stopped in the cell below**: `{error}`"))
    nb.cells.insert(0, marker(f"**This run did not finish**: `{error}`; the cells after the one where it stopped "
                              f"did not run.{last_words}"))
