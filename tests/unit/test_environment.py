"""environment.yml (conda users) and pyproject.toml (pip users) declare the same dependencies."""
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where tomllib is missing
    import tomli as tomllib

import yaml

from perfkit.lab import versions

ROOT = Path(__file__).resolve().parents[2]


def test_environment_yml_pip_list_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    lab = project["dependencies"] + extras["report"] + extras["tools"] + extras["lab"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert sorted(r for r in pip if not r.startswith("-e")) == sorted(lab)
    assert "-e ." in pip


def test_perfkit_forces_no_pyspark_on_a_machine_that_has_its_own():
    """A cluster's Spark (EMR's /usr/lib/spark) comes with its pyspark: perfkit's own requirements name none, and the
    lab's pin sits in an extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [r for r in project["dependencies"] if r.startswith("pyspark")]
    assert project["optional-dependencies"]["lab"] == [f"pyspark=={versions.PYSPARK}"]
    assert project["optional-dependencies"]["spark"] == ["pyspark>=3.5"]


def test_rendering_a_report_imports_no_grammar_compiler():
    """The Makefile leaves rfc3987-syntax out of the venv: imported by jsonschema when present, it compiles 38 grammars
    (2.7 s) in every process that imports papermill or nbformat."""
    import subprocess

    loaded = subprocess.run([sys.executable, "-c", "import sys, papermill, nbformat, nbconvert; "
                             "print(sorted({'rfc3987_syntax', 'lark'} & set(sys.modules)))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
