"""environment.yml (conda users) and pyproject.toml (pip users) declare the same dependencies."""
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_environment_yml_pip_list_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert sorted(r for r in pip if not r.startswith("-e")) == sorted(project)
    assert "-e ." in pip
