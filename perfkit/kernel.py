"""A local Jupyter kernel under the name the shipped notebooks declare, so JupyterLab opens them with no dialog.

The notebooks declare `pysparkkernel`, the PySpark kernel of EMR Notebooks / EMR Studio (sparkmagic's: the cells run
as Python in a Spark driver on the cluster, through Livy). EMR runs a notebook on the kernel its metadata names, so
that name must stay: `python3` there would run the cells on the notebook host, without the cluster's Spark. Here no
such kernel exists and JupyterLab stops at "Select Kernel" (its fallback matches the notebook's language_info name,
"pyspark", which no local kernel has). The cells are plain Python and the `profile` parameter, not the kernel, says
where the work runs, so this machine's Python kernel is a faithful stand-in: installed into this environment
(sys.prefix) under the same name, it is what JupyterLab and `perfkit report` start, and the notebook, saved again,
still names `pysparkkernel` for EMR.

Installed by `make install` (`python -m perfkit.kernel`), into the virtualenv only: never as package data of
`pip install perfkit`, which on an EMR node could shadow the real PySpark kernel. A `pysparkkernel` that is not ours
(sparkmagic installed here, talking to a real Livy) is left alone.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

NAME = "pysparkkernel"
DISPLAY_NAME = "PySpark (this machine's Python, perfkit)"
# marks the spec as perfkit's: reinstalled freely, while anyone else's kernel of that name is never overwritten
MARK = "perfkit-local-pyspark"


def kernel_dir(prefix: Path | str | None = None) -> Path:
    return Path(prefix or sys.prefix) / "share" / "jupyter" / "kernels" / NAME


def spec() -> dict:
    """The kernel.json: ipykernel on the Python running this (the virtualenv's), as ipykernel's own `python3`."""
    return {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "metadata": {MARK: True, "debugger": True},
    }


def is_ours(path: Path) -> bool:
    try:
        return bool(json.loads((path / "kernel.json").read_text()).get("metadata", {}).get(MARK))
    except (OSError, ValueError):
        return False


def install(prefix: Path | str | None = None, kernel_dirs: list[str] | None = None) -> tuple[Path | None, str]:
    """Install the kernel spec under `prefix` (default: this environment); (its folder or None, what happened).

    Skipped when Jupyter already finds a `pysparkkernel` that is not perfkit's anywhere on its kernel path
    (`kernel_dirs`, default Jupyter's own)."""
    from jupyter_client.kernelspec import KernelSpecManager

    target = kernel_dir(prefix)
    specs = KernelSpecManager(kernel_dirs=kernel_dirs) if kernel_dirs is not None else KernelSpecManager()
    found = specs.find_kernel_specs().get(NAME)
    if found and Path(found).resolve() != target.resolve() and not is_ours(Path(found)):
        return None, f"kept the {NAME} kernel at {found} (not perfkit's: sparkmagic's?)"
    if target.exists() and not is_ours(target):
        return None, f"kept the {NAME} kernel at {target} (not perfkit's: sparkmagic's?)"
    target.mkdir(parents=True, exist_ok=True)
    (target / "kernel.json").write_text(json.dumps(spec(), indent=1) + "\n")
    return target, f"installed the {NAME} kernel ({DISPLAY_NAME}) at {target}"


def main() -> None:
    _, said = install()
    print(f"perfkit: {said}")


if __name__ == "__main__":
    main()
