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


# The packages in layers, lowest first: a module imports only from its own layer and those below (at module level,
# inside a function, or by a registry's "module:Class" string, all three edges alike). Within a layer the circle test
# above holds. A new top-level module or package is placed here, or this test names it.
LAYERS = [
    ["errors", "compat", "atomic", "paths", "locks", "registry", "validate", "waiting", "interrupts", "progress",
     "findings", "kept_alive_http", "jmx_freshness", "s3_retries", "extras", "network", "metrics", "prices",
     "partitions", "parameters", "machine_load", "perfkit"],
    ["providers", "config"],  # a profile and who provides it (the lab, EMR): what every layer above reads
    ["health"],  # the watch a run is probed by (each storage makes its own probe)
    ["storages"],  # each storage and what it knows of itself
    ["accounting"],  # what a run asked of the storages
    ["engines", "suites"],  # what runs the queries, and the queries
    ["datasets"],  # data placed on the storages and registered with the engines
    ["tiers"],  # caches in front of a storage, read by the engines
    # measuring, recording, presenting
    ["results", "stats", "drift", "chance", "keep", "compare", "provenance", "report", "emr", "breakeven", "model",
     "decide", "calibration", "protocol", "hadoop_cli", "reads", "testdfsio", "transfer"],
    ["experiments", "plots"],
    ["presenting"],  # every report, from a run's records: the experiments import nothing from it
    ["lab", "cli", "__main__"],  # the embedded lab (a provider of everything below) and the command line
]
# Known edges against the order, each a registry string that names a plugin: to go with entry points (issue 45)
PLUGIN_EDGES = {("config", "lab"), ("storages", "tiers")}
REGISTRY_STRING = re.compile(r"""["'](perfkit(?:\.\w+)+):\w+["']""")


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "perfkit"


def edges_against_the_layers(graph: dict[str, set[str]], texts: dict[str, str]) -> list[str]:
    rank = {unit: n for n, layer in enumerate(LAYERS) for unit in layer}
    found = []
    for module, targets in sorted(graph.items()):
        named = {m for m in REGISTRY_STRING.findall(texts.get(module, "")) if m in graph}
        for target in sorted(targets | named):
            a, b = unit_of(module), unit_of(target)
            if a != b and rank[b] > rank[a] and (a, b) not in PLUGIN_EDGES:
                found.append(f"{module} -> {target} ({a} is below {b})")
    return found


def test_every_package_has_a_layer():
    units = {unit_of(name) for name in module_names()}
    placed = [unit for layer in LAYERS for unit in layer]
    assert len(placed) == len(set(placed)), "a package in two layers"
    assert sorted(units - set(placed)) == [], "place these in LAYERS"
    assert sorted(set(placed) - units) == [], "LAYERS names packages that are gone"


def test_no_import_runs_up_the_layers_not_even_inside_a_function_or_by_a_registry_string():
    texts = {name: path.read_text() for name, path in module_names().items()}
    against = edges_against_the_layers(import_graph(), texts)
    assert not against, "imports against the layer order: " + "; ".join(against)


def test_the_layer_check_sees_an_import_inside_a_function_and_a_registry_string():
    graph = {"perfkit.storages.x": {"perfkit.engines"}, "perfkit.engines": set(), "perfkit.health": set(),
             "perfkit.tiers": set(), "perfkit.experiments.y": set()}
    texts = {"perfkit.health": 'REGISTRY = {"e": "perfkit.experiments.y:Thing"}'}
    assert edges_against_the_layers(graph, texts) == [
        "perfkit.health -> perfkit.experiments.y (health is below experiments)",
        "perfkit.storages.x -> perfkit.engines (storages is below engines)"]
