"""Every shipped notebook can be executed by EMR Notebooks on its PySpark kernel (see README, "Batch on EMR Notebooks"):

- its kernel is `python3`: on EMR, EMR Studio's Python kernel on the master node, where perfkit starts its own
  SparkSession on YARN, so a report keeps its Findings, tables and plots (sparkmagic's `pysparkkernel` returns
  text only: README, "Batch on EMR Notebooks");
- one cell tagged `parameters`, the first code cell, holding only `name = literal` lines whose values JSON can
  carry: EMR passes NotebookParams as one JSON object and writes the values after that cell, so a default
  computed from code, or a tuple, would differ between a local run and an EMR run;
- no IPython magic or shell escape (`%...`, `!...`): the same cells must also run on sparkmagic's PySpark kernel,
  where a `%` line is a sparkmagic magic and a `!` line runs nowhere near the Spark driver;
- everything it imports comes with `pip install perfkit` (the standard library, perfkit, its dependencies and
  theirs), so installing perfkit on the cluster (`perfkit emr bootstrap`) is enough;
- committed without outputs.
"""
import ast
import json
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 10):
    from importlib import metadata
else:  # metadata.packages_distributions is 3.10's: its backport (the dev extra's on 3.9)
    import importlib_metadata as metadata

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
# notebooks/compare_runs.ipynb belongs to the compare work going on beside this one; it is converted when it lands
def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture(scope="module")
def importable_with_perfkit():
    """Top-level module names that `pip install perfkit` makes importable: its requirements, transitively."""
    modules = {"perfkit"}
    seen, todo = set(), ["perfkit"]
    by_module = metadata.packages_distributions()
    dist_modules = {}
    for module, dists in by_module.items():
        for dist in dists:
            dist_modules.setdefault(dist.lower().replace("_", "-"), set()).add(module)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        modules |= dist_modules.get(name, set())
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" in requirement and "hive_pure_sasl" not in requirement:
                continue  # optional extras are not installed by `pip install perfkit`
            todo.append(re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-"))
    return modules


def test_every_notebook_is_checked():
    assert len(NOTEBOOKS) >= 5, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_kernel_is_python3(path):
    metadata = _load(path)["metadata"]
    assert (metadata["kernelspec"]["name"], metadata["language_info"]["name"]) == ("python3", "python")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_first_code_cell_alone_is_tagged_parameters_and_holds_json_literals(path):
    cells = _code_cells(_load(path))
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert tagged == [0], f"{path.name}: the cells tagged parameters are code cells {tagged}, not [0]"
    names = []
    for node in ast.parse(_source(cells[0])).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name), \
            f"{path.name}: line {node.lineno} of the parameters cell is not `name = value`"
        value = ast.literal_eval(node.value)  # raises on anything computed
        assert json.loads(json.dumps(value)) == value, f"{path.name}: {node.targets[0].id} is not a JSON value"
        names.append(node.targets[0].id)
    assert len(names) == len(set(names)), f"{path.name}: a parameter is assigned twice"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_magic_or_shell_escape(path):
    for cell in _code_cells(_load(path)):
        for line in _source(cell).splitlines():
            assert not line.lstrip().startswith(("%", "!")), f"{path.name}: {line!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_imports_come_with_perfkit(path, importable_with_perfkit, stdlib_module_names):
    for cell in _code_cells(_load(path)):
        for node in ast.walk(ast.parse(_source(cell))):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                assert top in stdlib_module_names or top in importable_with_perfkit, \
                    f"{path.name} imports {top}, which `pip install perfkit` does not install"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    for cell in _code_cells(_load(path)):
        assert cell["outputs"] == [] and cell["execution_count"] is None, f"{path.name}: {_source(cell)[:60]!r}"


def test_the_import_check_knows_what_perfkit_installs(importable_with_perfkit):
    # IPython is perfkit's own requirement (not only ipykernel's), yaml comes with pyyaml; the test tools do not come
    # with perfkit
    assert {"perfkit", "pandas", "IPython", "yaml", "matplotlib"} <= importable_with_perfkit
    assert not {"pytest", "moto"} & importable_with_perfkit


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_its_own_id(path):
    """nbformat 4.5 cells carry ids: without one, every render prints nbformat's "Cell is missing an id field"
    warning on the user's terminal (and a later nbformat refuses the notebook)."""
    nb = _load(path)
    ids = [cell.get("id") for cell in nb["cells"]]
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5) and all(ids), \
        f"{path.name}: {sum(not i for i in ids)} cells without an id"
    assert len(set(ids)) == len(ids), f"{path.name}: ids repeat"
