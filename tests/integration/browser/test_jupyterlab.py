"""A shipped notebook in JupyterLab, in a real browser, as a user meets it (issue 24, item 4).

JupyterLab runs on 127.0.0.1 on a free port with a token, over a copy of notebooks/hdfs_vs_s3_queries.ipynb in a
temporary folder (JupyterLab autosaves: outputs must not land in the committed notebook). Chromium opens it: it must
start on the Python kernel they declare (python3, ipykernel's) with no "Select Kernel" dialog. The parameters cell
is edited in the page (small: Trino alone, 2 runs; the shipped seed, so a second run reuses the data placed), then
Run All from the Run menu; the recap table and a figure must appear, progress must have been visible while it ran,
and no output may be an error. Screenshots of the opened notebook and of the recap go to tests/artifacts/jupyterlab/."""
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

# the toolbar's name for the python3 kernel the notebooks declare (ipykernel's own spec)
KERNEL_DISPLAY_NAME = "Python 3 (ipykernel)"
NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "hdfs_vs_s3_queries.ipynb"
RUN_TIMEOUT_S = 900
# small, and the lab's network as the lab fixture set it (network = "")
OVERRIDES = {"engines": '["trino"]', "rows": "20_000", "files": "2", "runs": "2", "warmup": "0",
             "queries": '["q1", "q3"]', "copy_methods": '["stream"]'}

pytestmark = pytest.mark.lab


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path, artifacts):
    """JupyterLab on loopback with a token over a copy of the notebook; (base URL, token, the copy). Stopped by its
    PID, and any kernel it left behind by theirs."""
    root = tmp_path / "lab-root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    # no "official Jupyter news?" toast over the outputs: the user settings this test's JupyterLab reads
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    log = open(tmp_path / "jupyterlab.log", "wb")
    env = {**os.environ, "PERFKIT_RESULTS": str(tmp_path / "results")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         # the user's own settings and workspaces stay out of the test, and no update check goes out
         f"--LabApp.user_settings_dir={tmp_path / 'settings'}", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--ServerApp.terminals_enabled=False"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # CI's containers run as root; JupyterLab refuses it
        stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on {base}: "
                                f"{(tmp_path / 'jupyterlab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base, token, root / NOTEBOOK.name
    finally:
        children = psutil.Process(server.pid).children(recursive=True) if server.poll() is None else []
        server.terminate()  # jupyter_server shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        for child in children:  # a kernel that outlived its server
            if child.is_running():
                child.kill()
        log.close()
        shutil.copy(tmp_path / "jupyterlab.log", artifacts / "jupyterlab.log")


def _parameters_source() -> str:
    """The notebook's own parameters cell with the small values put in, every other line as shipped."""
    cell = next(c for c in json.loads(NOTEBOOK.read_text())["cells"] if "parameters" in c["metadata"].get("tags", []))
    lines = []
    for line in "".join(cell["source"]).splitlines():
        name = line.split("=", 1)[0].strip()
        lines.append(f"{name} = {OVERRIDES[name]}" if name in OVERRIDES else line)
    return "\n".join(lines)


# progress as the user sees it (the run's own bar over its queries): a widget bar (tqdm.auto with ipywidgets 8 draws
# .widget-hprogress) or tqdm's text bar "..%|███"
PROGRESS_JS = """() => document.querySelector(
    '.jp-OutputArea .widget-hprogress, .jp-OutputArea .widget-progress, .jp-OutputArea progress') !== null
    || Array.from(document.querySelectorAll('.jp-OutputArea-output')).some(e => e.textContent.includes('%|'))"""
PROMPTS_JS = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt'))
    .map(e => e.textContent.trim())"""


def test_the_hdfs_vs_s3_notebook_runs_in_jupyterlab_with_no_kernel_dialog(lab_for_browser, jupyterlab, page,
                                                                           artifacts):
    base, token, copy = jupyterlab
    shots = artifacts / "jupyterlab"
    shots.mkdir(exist_ok=True)
    started = time.monotonic()
    page.goto(f"{base}/lab/tree/{copy.name}?token={token}")

    # the kernel starts by itself: its name in the toolbar, and never the Select Kernel dialog
    dialog, kernel_name = page.locator(".jp-Dialog"), page.locator(".jp-Toolbar-kernelName")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    page.wait_for_function("""name => {
        const k = document.querySelector('.jp-Toolbar-kernelName');
        return document.querySelector('.jp-Dialog') !== null || (k !== null && k.textContent.includes(name)); }""",
                           arg=KERNEL_DISPLAY_NAME, timeout=60_000)
    page.screenshot(path=str(shots / "opened.png"))
    assert dialog.count() == 0, f"a dialog opened with the notebook: {dialog.first.inner_text()[:200]}"
    assert KERNEL_DISPLAY_NAME in kernel_name.first.inner_text()
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    opened = time.monotonic() - started

    # set the parameters as a user would: in the parameters cell's editor
    editor = page.locator(".jp-Notebook .jp-CodeCell").first.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(_parameters_source())
    page.keyboard.press("Escape")
    assert '"trino"' in editor.inner_text() and "runs = 2" in editor.inner_text()

    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    run_started, progress_seen, deadline = time.monotonic(), False, time.monotonic() + RUN_TIMEOUT_S
    page.wait_for_function("() => document.querySelector('.jp-Notebook .jp-InputPrompt') !== null "
                           "&& Array.from(document.querySelectorAll('.jp-InputPrompt'))"
                           ".some(e => e.textContent.includes('*'))", timeout=30_000)
    while True:  # until no cell waits or runs ([*]); watch for progress meanwhile
        prompts = page.evaluate(PROMPTS_JS)
        running = any("*" in p for p in prompts)
        progress_seen = progress_seen or (running and page.evaluate(PROGRESS_JS))
        if not running:
            break
        assert time.monotonic() < deadline, f"Run All still running after {RUN_TIMEOUT_S} s: prompts {prompts}"
        time.sleep(0.5)
    ran = time.monotonic() - run_started

    errors = [text for text in page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()
        if re.search(r"Traceback|\w+(Error|Exception)\b", text)]
    assert not errors, "error output: " + " | ".join(e.strip()[:300] for e in errors[:3])
    prompts = page.evaluate(PROMPTS_JS)
    assert all(re.search(r"\[\d+\]", p) for p in prompts), f"cells that did not run: {prompts}"

    recap = page.locator(".jp-OutputArea-output table", has_text="time (median)").first
    recap.scroll_into_view_if_needed()
    assert recap.is_visible(), "no recap table (with its S3 ÷ HDFS time column) in the outputs"
    figures = page.locator(".jp-OutputArea-output img, .jp-OutputArea-output svg")
    assert figures.count() > 0, "no figure in the outputs"
    assert page.get_by_text("No run failed.").count() > 0
    assert progress_seen, "no progress (a widget bar or tqdm's '%|' line) showed while the notebook ran"
    shot = shots / "recap.png"
    page.screenshot(path=str(shot))
    print(f"JupyterLab: opened on {KERNEL_DISPLAY_NAME} in {opened:.1f} s, Run All took {ran:.1f} s; "
          f"screenshots {shots / 'opened.png'} and {shot}")
