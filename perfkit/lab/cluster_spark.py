"""The cluster shape's Spark: EMR 7.13's 3.5.6, as a cluster node has it beside perfkit's own Spark.

Its pyspark lives in an environment of the lab's own (a venv in the tool cache holding pyspark 3.5.6 and perfkit's
requirements, not perfkit: this checkout's perfkit is put on its path, so every clone runs its own code). It needs
two sets of jars on top of its own: S3A of the Hadoop it bundles (3.3.4, with the AWS SDK v1 that was built against),
and the newest Hive metastore client Spark 3.5 supports (3.1.3: its built-in 2.3.9 fails against a Hive 4 metastore)."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import perfkit
from perfkit.errors import PerfkitError
from perfkit.lab import tools, versions
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

_HERE = Path(__file__).parent
KERNEL = f"perfkit-spark-{versions.CLUSTER_SPARK}"


# the node's Python is also the primary node's notebook kernel (EMR's notebook environment): it renders and runs tools
EXTRAS = ("report", "tools")


def requirements() -> list[str]:
    """perfkit's own requirements with those of EXTRAS, and the cluster's pyspark."""
    from packaging.requirements import Requirement

    wanted = []
    for text in metadata.requires("perfkit") or []:
        requirement = Requirement(text)
        marker, requirement.marker = requirement.marker, None
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in EXTRAS):
            wanted.append(str(requirement))
    return [f"pyspark=={versions.CLUSTER_SPARK}", *sorted(wanted)]


def base_python() -> Path:
    """EMR 7's Python (3.9) to make the environment from: PERFKIT_CLUSTER_PYTHON, else python3.9 on the PATH or under
    pyenv's versions."""
    if os.environ.get("PERFKIT_CLUSTER_PYTHON"):
        return Path(os.environ["PERFKIT_CLUSTER_PYTHON"])
    name = f"python{versions.CLUSTER_PYTHON}"
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [shutil.which(name), *sorted(pyenv.glob(f"{versions.CLUSTER_PYTHON}.*/bin/{name}"), reverse=True)]
    for candidate in filter(None, found):
        # pyenv's shim is on the PATH even where it has no 3.9 to run
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return Path(candidate)
    raise PerfkitError(f"the cluster shape runs EMR 7's Python {versions.CLUSTER_PYTHON}, and this machine has no "
                       f"{name}: install it (pyenv install {versions.CLUSTER_PYTHON}), or set PERFKIT_CLUSTER_PYTHON "
                       "to a Python 3.9 or newer to run instead")


@functools.cache
def _base_and_version() -> tuple[Path, str]:
    """base_python() and its version, found once per process: environment() is asked for at every use of its Python."""
    base = base_python()
    version = subprocess.run([str(base), "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return base, version


def environment() -> Path:
    """The venv (made once per Python and set of requirements; a half-made one from a crash is made again)."""
    base, version = _base_and_version()
    # the venv's own pip first: an old one predates normalised extras (PEP 685), and pyhive[hive_pure_sasl] came
    # without thrift
    installs = [["--upgrade", "pip"], requirements()]
    digest = hashlib.sha256(repr([version, installs]).encode()).hexdigest()[:8]
    home = tool_cache() / f"spark-{versions.CLUSTER_SPARK}-env-{digest}"
    def make() -> None:
        shutil.rmtree(home, ignore_errors=True)  # a half-made one from a crash
        print(f"lab: making Spark {versions.CLUSTER_SPARK}'s Python {version} environment in {home} (once; pip builds "
              "pyspark's wheel: a minute or two) ...", flush=True)
        pip = [str(home / "bin" / "python"), "-m", "pip", "install", "-q"]
        for step in [[str(base), "-m", "venv", str(home)], *([*pip, *args] for args in installs)]:
            run = subprocess.run(step, capture_output=True, text=True)
            if run.returncode != 0:
                raise PerfkitError(f"lab: could not make Spark {versions.CLUSTER_SPARK}'s environment "
                                   f"({' '.join(step[:6])} ...):\n{(run.stdout + run.stderr)[-2000:]}\n"
                                   "Fix: check that pip can reach its package index, then run "
                                   "`perfkit lab up --shape cluster` again")
        (home / ".complete").touch()

    return fetched_once(home, home / ".complete", make)


def python() -> Path:
    return environment() / "bin" / "python"


def source_root() -> Path:
    """The folder this perfkit is imported from (a checkout's root, or site-packages)."""
    return Path(perfkit.__file__).resolve().parents[1]


def perfkit_command(*args: str) -> tuple[list[str], dict[str, str]]:
    """`perfkit ARGS` run by Spark 3.5.6's Python, with this perfkit: the command and its environment."""
    return ([str(python()), "-m", "perfkit", *args],
            {**os.environ, "PYTHONPATH": str(source_root())})


def kernel_folder(home: Path) -> Path:
    """A Jupyter data folder (JUPYTER_PATH) under the lab home with the kernel of Spark 3.5.6's Python: the notebooks
    of profile lab-cluster run their Spark driver there. Written at each use: it names this checkout's perfkit."""
    write_kernel(home / "jupyter", KERNEL, f"perfkit (Spark {versions.CLUSTER_SPARK}, EMR 7.13's)")
    return home / "jupyter"


def write_kernel(jupyter_folder: Path, name: str, display_name: str) -> None:
    """A kernelspec `name` under `jupyter_folder`: ipykernel on Spark 3.5.6's Python, with this checkout's perfkit."""
    spec = jupyter_folder / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python()), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": display_name, "language": "python",
        "env": {"PYTHONPATH": str(source_root())}}, indent=1))


def _spark_jars() -> set[str]:
    return {tools.artifact(j.name) for j in (environment_site() / "pyspark" / "jars").glob("*.jar")}


def environment_site() -> Path:
    return next((environment() / "lib").glob("python3*/site-packages"))


def s3a_jars() -> list[Path]:
    """hadoop-aws 3.3.4 and the SDK v1 modules, less what Spark 3.5.6 already holds (its jackson, httpclient, ...)."""
    lib = tools.maven_lib(tool_cache() / f"spark-{versions.CLUSTER_SPARK}" / "s3a", _HERE / "cluster-spark-s3a-pom.xml",
                          f"S3A jars of Spark {versions.CLUSTER_SPARK}",
                          {"HADOOP_VERSION": versions.CLUSTER_HADOOP, "AWSSDK_VERSION": versions.CLUSTER_AWS_SDK,
                           "JACKSON_VERSION": versions.CLUSTER_JACKSON})
    held = _spark_jars()
    return sorted(j for j in lib.glob("*.jar") if tools.artifact(j.name) not in held)


def metastore_jars() -> list[Path]:
    lib = tools.maven_lib(tool_cache() / f"hive-client-{versions.CLUSTER_HIVE_CLIENT}", _HERE / "hive-client-pom.xml",
                          f"Hive {versions.CLUSTER_HIVE_CLIENT} metastore client jars",
                          {"HIVE_VERSION": versions.CLUSTER_HIVE_CLIENT})
    return sorted(lib.glob("*.jar"))


def fetch() -> None:
    """Everything Spark 3.5.6 needs, once: its environment, its S3A jars, its metastore client."""
    environment()
    s3a_jars()
    metastore_jars()
