"""perfkit drives the pyspark it finds: the installed one, else a cluster's through SPARK_HOME
(EMR's /usr/lib/spark)."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from perfkit.engines.spark_install import spark_python_path
from perfkit.errors import PerfkitError

ROOT = Path(__file__).resolve().parents[2]


def a_spark_home(tmp_path: Path, version: str = "3.5.6") -> Path:
    """A Spark distribution's Python side, as /usr/lib/spark lays it out."""
    python = tmp_path / "spark" / "python"
    (python / "pyspark").mkdir(parents=True)
    (python / "pyspark" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (python / "lib").mkdir()
    with zipfile.ZipFile(python / "lib" / "py4j-0.10.9.7-src.zip", "w") as z:
        z.writestr("py4j/__init__.py", "")
    return tmp_path / "spark"


# a Python whose site-packages hold no pyspark (a cluster node's): pyspark is looked for everywhere but there
HIDE_INSTALLED_PYSPARK = """
import importlib.machinery, sys
class NoInstalledPyspark:
    def find_spec(self, name, path=None, target=None):
        if name != "pyspark":
            return None
        elsewhere = [p for p in sys.path if "site-packages" not in p]
        return importlib.machinery.PathFinder.find_spec(name, elsewhere) or self.missing(name)
    def missing(self, name):
        raise ModuleNotFoundError(name)
sys.meta_path.insert(0, NoInstalledPyspark())
"""


def without_site_packages(code: str, **env: str) -> subprocess.CompletedProcess:
    """`code` in a Python that has no pip-installed pyspark, perfkit from this checkout."""
    return subprocess.run([sys.executable, "-c", HIDE_INSTALLED_PYSPARK + code], capture_output=True, text=True,
                          env={**env, "PATH": "/usr/bin:/bin"}, timeout=60, cwd=ROOT)


def test_the_clusters_pyspark_is_found_through_spark_home(tmp_path):
    home = a_spark_home(tmp_path)
    run = without_site_packages("from perfkit.engines.spark_install import import_pyspark, spark_home; "
                                "p = import_pyspark(); print(p.__version__, p.__file__, spark_home())",
                                SPARK_HOME=str(home))
    assert run.returncode == 0, run.stderr
    version, module, found_home = run.stdout.split()
    assert version == "3.5.6"
    assert Path(module) == home / "python" / "pyspark" / "__init__.py"
    assert Path(found_home) == home


def test_without_spark_home_emrs_spark_is_found_where_emr_keeps_it(tmp_path):
    home = a_spark_home(tmp_path)
    run = without_site_packages("import perfkit.engines.spark_install as s, pathlib, os\n"
                                f"s.EMR_SPARK_HOME = pathlib.Path({str(home)!r})\n"
                                "p = s.import_pyspark(); print(p.__version__, p.__file__, os.environ['SPARK_HOME'])")
    assert run.returncode == 0, run.stderr
    version, module, spark_home = run.stdout.split()
    assert (version, Path(module), Path(spark_home)) == ("3.5.6", home / "python" / "pyspark" / "__init__.py", home)


def test_no_pyspark_and_no_spark_home_is_one_clear_error():
    run = without_site_packages("from perfkit.engines.spark_install import import_pyspark\n"
                                "try:\n import_pyspark()\nexcept Exception as e: print(type(e).__name__, e)")
    assert run.stdout.startswith("PerfkitError the Spark engine needs pyspark"), run.stderr
    assert "SPARK_HOME is not set" in run.stdout and "pip install 'perfkit[spark]'" in run.stdout


def test_a_spark_home_without_its_python_side_is_named(tmp_path):
    home = a_spark_home(tmp_path)
    for zipped in (home / "python" / "lib").glob("py4j-*"):
        zipped.unlink()
    with pytest.raises(PerfkitError, match=r"SPARK_HOME .*spark has no py4j .*py4j-\*-src.zip.*SPARK_HOME"):
        spark_python_path(home)
    with pytest.raises(PerfkitError, match=r"SPARK_HOME .*nowhere has no pyspark"):
        spark_python_path(tmp_path / "nowhere")


def test_the_path_is_spark_homes_python_then_its_py4j(tmp_path):
    home = a_spark_home(tmp_path)
    assert spark_python_path(home) == [home / "python", home / "python" / "lib" / "py4j-0.10.9.7-src.zip"]
