"""EMR's PySpark kernel, for real: sparkmagic 0.23.0's `pysparkkernel`, in a Python environment of the lab's own (as
EMR keeps it in /emr/notebook-env, apart from the cluster's Python), talking to the lab's Livy stand-in.

Its kernelspec and its config.json live under the lab home, found through JUPYTER_PATH and SPARKMAGIC_CONF_DIR, so
nothing outside the lab sees them. The config is papermill's, from sparkmagic's README: a failed Spark statement
fails the cell (all_errors_are_fatal) and ends the session, and no Livy session outlives the kernel.

Kerberos: sparkmagic imports requests_kerberos unconditionally, whose `pyspnego[kerberos]` needs gssapi, which ships
no Linux wheels (it would need Debian's libkrb5-dev and a C build). The lab's Livy has no Kerberos, so
requests-kerberos goes in without that extra (as nixpkgs packages it): importable, and never asked to negotiate."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

SPARKMAGIC = "0.23.0"
KERNEL = "pysparkkernel"
# pip steps, in order. sparkmagic and requests-kerberos without their dependencies (pip's resolver would follow
# requests-kerberos to pyspnego[kerberos] and gssapi), then what they need: sparkmagic's requirements.txt, less
# requests_kerberos, and requests-kerberos's own less the kerberos extra
INSTALLS = [["--upgrade", "pip"], ["--no-deps", f"sparkmagic=={SPARKMAGIC}", "requests-kerberos==0.15.0"],
            [f"hdijupyterutils=={SPARKMAGIC}", f"autovizwidget=={SPARKMAGIC}", "ipython>=4.1.2", "pandas<3.0.0",
             "numpy", "requests", "ipykernel>=6.29", "ipywidgets>5.0.0", "notebook>=4.2", "tornado>=4",
             "nest_asyncio>1.5.5", "pyspnego", "cryptography>=1.3"]]
# papermill's settings (sparkmagic README, "Papermill"), and a session start that allows YARN's queue and Spark's JVM
SETTINGS = {"all_errors_are_fatal": True, "shutdown_session_on_spark_statement_errors": True,
            "cleanup_all_sessions_on_exit": True, "livy_session_startup_timeout_seconds": 180}


def environment() -> Path:
    """The notebook environment's venv (made once; a half-made one from a crash is made again)."""
    digest = hashlib.sha256(repr(INSTALLS).encode()).hexdigest()[:8]
    home = tool_cache() / f"emr-notebook-env-{digest}"
    def make() -> None:
        shutil.rmtree(home, ignore_errors=True)  # a half-made one from a crash
        print(f"lab: making the EMR notebook environment (sparkmagic {SPARKMAGIC}) in {home} (once) ...", flush=True)
        pip = [str(home / "bin" / "python"), "-m", "pip", "install", "-q"]
        for step in [[sys.executable, "-m", "venv", str(home)], *([*pip, *args] for args in INSTALLS)]:
            run = subprocess.run(step, capture_output=True, text=True)
            if run.returncode != 0:
                raise PerfkitError(f"lab: could not make the EMR notebook environment ({' '.join(step[:6])} ...):\n"
                                   f"{(run.stdout + run.stderr)[-2000:]}\n"
                                   "Fix: check that pip can reach its package index")
        (home / ".complete").touch()

    return fetched_once(home, home / ".complete", make)


def install(lab_home: Path, livy_url: str) -> dict[str, str]:
    """sparkmagic's pysparkkernel and its config under the lab home, for `livy_url`: the environment a Jupyter
    client (papermill) needs to find and run it (JUPYTER_PATH, SPARKMAGIC_CONF_DIR)."""
    python = environment() / "bin" / "python"
    config = lab_home / "sparkmagic"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps({
        "kernel_python_credentials": {"username": "", "password": "", "url": livy_url, "auth": "None"},
        **SETTINGS}, indent=1))
    spec = lab_home / "jupyter-emr" / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "sparkmagic.kernels.pysparkkernel.pysparkkernel", "-f", "{connection_file}"],
        "display_name": "PySpark", "language": "python",  # sparkmagic's own kernel.json
        "env": {"SPARKMAGIC_CONF_DIR": str(config)}}, indent=1))
    return {"JUPYTER_PATH": str(lab_home / "jupyter-emr"), "SPARKMAGIC_CONF_DIR": str(config)}
