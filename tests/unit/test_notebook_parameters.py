"""Every notebook parameter is a parameter of what the notebook runs: each reaches an experiment's field (or a
perfkit function's argument) of its own name, or of its name after a prefix that names the part (`copy_objects` is
TierCopy's `objects`). A parameter that reaches nothing, or a field under another name, fails here."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def _cells(path: Path) -> tuple[list[str], str]:
    """The parameters cell's names, and every code cell's text."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    tagged = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    names = [t.id for node in ast.parse("".join(tagged["source"])).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)]
    return names, "\n".join("".join(c["source"]) for c in cells if c is not tagged)


def _imported(tree: ast.AST) -> dict[str, object]:
    """Name -> the perfkit object the notebook imports under it."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perfkit"):
            module = importlib.import_module(node.module)
            for alias in node.names:  # a name of the module, or a submodule of the package
                found[alias.asname or alias.name] = (getattr(module, alias.name, None)
                                                     or importlib.import_module(f"{node.module}.{alias.name}"))
    return found


def _accepts(target) -> set[str] | None:
    """The keywords `target` takes; None when it takes any (**options: load_profile's, passed on by name)."""
    if dataclasses.is_dataclass(target):
        return {f.name for f in dataclasses.fields(target) if f.init}
    parameters = inspect.signature(target).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters}


def _name(value: ast.expr) -> str | None:
    """The parameter an argument passes: `x`, or `x or None` (a notebook's "" for None)."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        value = value.values[0]
    return value.id if isinstance(value, ast.Name) else None


def _uses(code: str) -> list[tuple[str, str, str, set[str] | None]]:
    """(parameter, callee, keyword or '' for a positional, what the callee accepts) for every perfkit call that
    passes a bare name."""
    tree = ast.parse(code)
    imported = _imported(tree)
    uses = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and callable(imported.get(node.func.id)):
            callee, target = node.func.id, imported[node.func.id]
        elif (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)  # QueryReport.load(x)
              and inspect.isclass(imported.get(node.func.value.id))
              and callable(getattr(imported[node.func.value.id], node.func.attr, None))):
            callee = f"{node.func.value.id}.{node.func.attr}"
            target = getattr(imported[node.func.value.id], node.func.attr)
        else:
            continue
        accepts = _accepts(target)
        uses += [(_name(a), callee, "", accepts) for a in node.args if _name(a)]
        uses += [(_name(k.value), callee, k.arg, accepts) for k in node.keywords if _name(k.value) and k.arg]
    return uses


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_parameter_is_a_parameter_of_what_it_runs_under_its_own_name(path):
    names, code = _cells(path)
    uses = _uses(code)
    reached = {name for name, *_ in uses}
    assert [n for n in names if n not in reached] == [], "parameters that reach no perfkit call"
    wrong = [f"{name} -> {callee}({keyword}=)" for name, callee, keyword, accepts in uses if name in names and keyword
             and ((accepts is not None and keyword not in accepts)
                  or not (name == keyword or name.endswith(f"_{keyword}")))]
    assert wrong == [], "parameters passed under another name, or to what does not take them"


def test_the_check_names_a_parameter_passed_under_another_name():
    code = "from perfkit.experiments.tier_copy import TierCopy\nTierCopy(profile, objects=count)"
    [(name, callee, keyword, accepts)] = [u for u in _uses(code) if u[2]]
    assert (name, callee, keyword) == ("count", "TierCopy", "objects") and "objects" in accepts
    assert not (name == keyword or name.endswith(f"_{keyword}"))


def _values(path: Path) -> dict[str, object]:
    """The parameters cell's values."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    tagged = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return {t.id: ast.literal_eval(node.value) for node in ast.parse("".join(tagged["source"])).body
            if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_asks_for_its_experiments_defaults_or_the_report_defaults_it_states(path):
    """A default is declared once, on the experiment's field; a report that sizes a run otherwise says so in its
    experiment's REPORT_DEFAULTS (with why), and the notebook's parameter cell holds exactly that."""
    from perfkit.parameters import default_of

    names, code = _cells(path)
    values, imported = _values(path), _imported(ast.parse(code))
    drift = []
    for name, callee, keyword, _ in _uses(code):
        cls = imported.get(callee)  # None: a class's method (QueryReport.load)
        if name not in values or not keyword or not dataclasses.is_dataclass(cls):
            continue
        stated = vars(cls).get("REPORT_DEFAULTS", {})
        expected = stated.get(keyword, default_of(cls, keyword))
        given = None if values[name] == "" and expected is None else values[name]  # a notebook's "" for None
        if given != expected:
            drift.append(f"{name}={values[name]!r}, but {cls.__name__}.{keyword} is {expected!r}"
                         + (" (its REPORT_DEFAULTS)" if keyword in stated else " (its default)"))
    assert drift == [], "state the report's value in the experiment's REPORT_DEFAULTS, or ask for the default"


def test_a_report_default_names_a_field_and_differs_from_its_default():
    from perfkit.experiments import (cache_tier, hdfs_vs_s3_queries, nfs_vs_hdfs_reads, s3_to_hdfs_transfer,
                                     tier_copy)
    from perfkit.parameters import default_of

    classes = [cache_tier.CacheTierComparison, hdfs_vs_s3_queries.QueryComparison, nfs_vs_hdfs_reads.ReadComparison,
               s3_to_hdfs_transfer.TransferComparison, tier_copy.TierCopy]
    for cls in classes:
        stated = vars(cls)["REPORT_DEFAULTS"]
        assert set(stated) <= {f.name for f in dataclasses.fields(cls)}, cls
        assert [k for k, v in stated.items() if v == default_of(cls, k)] == [], f"{cls.__name__}: no override"
