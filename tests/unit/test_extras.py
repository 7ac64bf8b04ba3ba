"""perfkit's optional parts (extras): what needs one says which, and how to install it, where it is missing."""
import importlib.util
import sys

import nbformat
import pytest

from perfkit import report
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.extras import EXTRA_OF, missing
from perfkit.transfer import get_method


@pytest.fixture
def without(monkeypatch):
    """Make modules look uninstalled: find_spec finds nothing, and an import fails as it would."""
    def hide(*modules: str) -> None:
        find_spec = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec",
                            lambda name, *a: None if name in modules else find_spec(name, *a))
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)
    return hide


def test_every_module_named_is_installed_by_the_extra_pyproject_says(without):
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pytest brings tomli where tomllib is missing
        import tomli as tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for module, extra in EXTRA_OF.items():
        distribution = {"nbformat": "nbconvert"}.get(module, module)  # nbformat comes with nbconvert and papermill
        assert any(r.startswith(distribution) for r in extras[extra]), (module, extra)


def test_a_missing_module_is_named_with_its_extra(without):
    without("awscli")
    assert missing("awscli", "the cli-sequential method (the aws CLI)") == (
        f"the cli-sequential method (the aws CLI) needs awscli, which is not installed in this Python "
        f"({sys.executable}). Fix: pip install 'perfkit[tools]'")
    assert missing("duckdb", "the independent TPC-H check") is None  # installed here


@pytest.mark.parametrize("method", ["cli-sequential", "gohdfs-sequential", "awscli"])
def test_the_aws_cli_methods_are_unavailable_without_awscli(without, method):
    without("awscli")
    reason = get_method(method, load_profile("lab")).unavailable()
    assert reason.startswith(f"the {method} method (the aws CLI) needs awscli") and "perfkit[tools]" in reason


def test_perfkit_report_without_papermill_names_the_report_extra(without, tmp_path):
    notebook = tmp_path / "study.ipynb"
    notebook.write_text(nbformat.writes(nbformat.v4.new_notebook()))
    without("papermill")
    with pytest.raises(PerfkitError, match=r"perfkit report needs papermill, .* pip install 'perfkit\[report\]'"):
        report.render(notebook, out_root=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()  # nothing written


def test_the_copy_benchmark_without_awscli_says_so_and_how_to_leave_its_reader_out(without):
    from perfkit.experiments.tier_copy import TierCopy

    without("awscli")
    with pytest.raises(PerfkitError, match=r"tier_copy: the reader 'aws s3 cp' needs awscli.*perfkit\[tools\]'"
                                           r", or leave that reader out"):
        TierCopy(load_profile("lab"))
    TierCopy(load_profile("lab"), readers=["boto3"])  # the other readers need no aws CLI


def test_the_independent_tpch_check_without_duckdb_names_the_tools_extra(without, tmp_path):
    from perfkit.datasets.tpch_reference import answers_over

    without("duckdb")
    with pytest.raises(PerfkitError, match=r"the independent TPC-H check needs duckdb.*perfkit\[tools\]"):
        answers_over(tmp_path, [], progress=False)
