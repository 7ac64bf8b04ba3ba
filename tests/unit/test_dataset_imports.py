"""No import circle inside perfkit/datasets/: read from the source's AST, function-level imports included."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "perfkit.datasets"
ROOT = Path(__file__).resolve().parents[2] / "perfkit" / "datasets"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((PACKAGE, *parts[:-1])) if parts[-1] == "__init__" else ".".join((PACKAGE, *parts))


def imported(tree: ast.AST, known: set[str]) -> set[str]:
    """The package's modules that a module imports anywhere in its body (`from a import b` may name module a.b)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in known:  # perfkit.datasets.tpch.TABLES -> perfkit.datasets.tpch
                name = name.rpartition(".")[0]
            if name.startswith(PACKAGE):
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = sorted(ROOT.rglob("*.py"))
    known = {module_name(p) for p in paths}
    return {module_name(p): imported(ast.parse(p.read_text()), known) - {module_name(p)} for p in paths}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module that can reach itself, with the path back."""
    found = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    found.append(path + [start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return found


def test_no_module_of_perfkit_datasets_imports_itself_back():
    graph = import_graph()
    assert f"{PACKAGE}.tpch" in graph and graph[f"{PACKAGE}.tpch"], "the graph must see the package's imports"
    assert circles(graph) == []


def test_the_check_sees_a_circle_through_a_function_level_import():
    top = ast.parse("from perfkit.datasets.generator import Generator")
    inner = ast.parse("def f():\n    from perfkit.datasets.tpch import TpchGenerator\n")
    known = {f"{PACKAGE}.generator", f"{PACKAGE}.tpch"}
    graph = {f"{PACKAGE}.tpch": imported(top, known), f"{PACKAGE}.generator": imported(inner, known)}
    assert circles(graph)
