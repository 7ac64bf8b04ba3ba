"""The local kernel perfkit installs under the name the shipped notebooks declare (EMR's `pysparkkernel`), so that
JupyterLab opens them on a working kernel with no "Select Kernel" dialog, while EMR still finds its own kernel."""
import json
import sys
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from perfkit import kernel

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def _specs(prefix: Path) -> KernelSpecManager:
    return KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_installed_name_is_the_one_every_notebook_declares(path):
    assert json.loads(path.read_text())["metadata"]["kernelspec"]["name"] == kernel.NAME


def test_installs_a_python_kernel_of_this_environment_under_that_name(tmp_path):
    where, said = kernel.install(tmp_path, kernel_dirs=[])
    assert where == kernel.kernel_dir(tmp_path) and "installed" in said
    spec = _specs(tmp_path).get_kernel_spec(kernel.NAME)
    assert spec.language == "python" and spec.argv[:3] == [sys.executable, "-m", "ipykernel_launcher"]
    assert kernel.install(tmp_path, kernel_dirs=[])[0] == where  # again: ours, rewritten


def test_leaves_a_pysparkkernel_that_is_not_perfkits_alone(tmp_path):
    sparkmagic = tmp_path / "elsewhere" / kernel.NAME
    sparkmagic.mkdir(parents=True)
    (sparkmagic / "kernel.json").write_text(json.dumps({"argv": ["python", "-m", "sparkmagic.kernels.pysparkkernel"],
                                                        "display_name": "PySpark", "language": "python"}))
    where, said = kernel.install(tmp_path / "env", kernel_dirs=[str(tmp_path / "elsewhere")])
    assert where is None and str(sparkmagic) in said and "not perfkit's" in said
    assert not kernel.kernel_dir(tmp_path / "env").exists()
    # the same at the target itself: a sparkmagic spec installed into this environment is never overwritten
    target = kernel.kernel_dir(tmp_path / "env2")
    target.mkdir(parents=True)
    (target / "kernel.json").write_text((sparkmagic / "kernel.json").read_text())
    assert kernel.install(tmp_path / "env2", kernel_dirs=[])[0] is None
    assert "sparkmagic" in (target / "kernel.json").read_text()


def test_the_installed_kernel_starts_and_runs_python(tmp_path):
    from jupyter_client.manager import KernelManager

    kernel.install(tmp_path, kernel_dirs=[])
    manager = KernelManager(kernel_name=kernel.NAME)
    manager.kernel_spec_manager = _specs(tmp_path)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        reply = client.execute_interactive("import sys; print(sys.prefix)", timeout=60, output_hook=lambda m: None)
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
