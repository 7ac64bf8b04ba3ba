"""The architecture, checked: no import circle inside perfkit/, and only the lab's own modules know the lab."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import perfkit

ROOT = Path(perfkit.__file__).parent
# the only modules outside perfkit/lab/ allowed to know the lab: resolving a profile, and the CLI's `lab` commands
KNOWS_THE_LAB = {"perfkit.config", "perfkit.cli"}


def module_names() -> dict[str, Path]:
    names = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """perfkit modules `name` imports anywhere in its text (function-level imports count: they close circles too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from ..lab import y
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import sub` imports the module pkg.sub when there is one, else a name of pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    names = module_names()
    return {name: imports_of(name, path, set(names)) for name, path in names.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, groups, counter = {}, {}, set(), [], [], [0]

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return groups


def test_the_circle_finder_finds_a_circle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_inside_perfkit():
    found = circles(import_graph())
    assert not found, "import circles (each group imports itself through the others): " + "; ".join(
        " <-> ".join(group) for group in found)


def test_only_the_lab_config_and_cli_know_the_lab():
    graph = import_graph()
    knowing = sorted(name for name, targets in graph.items()
                     if not name.startswith("perfkit.lab") and name not in KNOWS_THE_LAB
                     and any(t == "perfkit.lab" or t.startswith("perfkit.lab.") for t in targets))
    assert not knowing, f"modules outside perfkit/lab/ that import it: {knowing}; ask profile.provider instead"
    asking = sorted(str(path.relative_to(ROOT.parent)) for name, path in module_names().items()
                    if not name.startswith("perfkit.lab") and re.search(r"\buses_lab\b", path.read_text()))
    assert not asking, f"modules that ask whether they run in the lab: {asking}; ask profile.provider instead"
