"""Reports answer first: nothing a notebook computes shows above its Findings but the line saying where S3 sat. A code
cell shows its last bare expression's value, so before the Findings only those meant to show may end in one."""
import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
SHOWN_ABOVE_FINDINGS = {"network_headline", "set_option"}  # the headline; pandas' option setter shows None: nothing


def _callee(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _cells_before_findings(path: Path) -> list[str]:
    cells = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if "findings(" in source:
            return cells
        cells.append(source)
    raise AssertionError(f"{path.name}: no cell shows the Findings")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_nothing_but_the_headline_shows_above_the_findings(path):
    for source in _cells_before_findings(path):
        body = ast.parse(source).body
        last = body[-1] if body else None
        if not isinstance(last, ast.Expr):
            continue
        after = source.splitlines()[last.end_lineno - 1][last.end_col_offset:]
        if after.lstrip().startswith(";"):  # IPython shows nothing for a statement ended by ';'
            continue
        assert _callee(last.value) in SHOWN_ABOVE_FINDINGS, \
            f"{path.name}: {source.strip().splitlines()[-1]!r} shows its value above the Findings (end it with ';')"
