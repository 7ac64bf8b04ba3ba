"""Notebook parameters: read from `-p key=value`, checked for secrets, and checked against the names the notebook
declares in its cell tagged `parameters` (papermill's convention)."""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from perfkit.config import SECRET_NAME
from perfkit.errors import PerfkitError
from perfkit.report.notebook import read_notebook
from perfkit.report.redaction import SECRET_VALUE


def check_parameters(parameters: dict) -> None:
    """Refuse a parameter whose name or value looks like a secret: reports are shared.

    Lists, tuples and dicts are walked to any depth: a dict key is a name, every item a value."""
    for name, value in parameters.items():
        where = _secret_in(str(name), name, value)
        if where:
            raise PerfkitError(
                f"parameter {where!r} looks like a secret and would be written into a shared report: "
                "pass credentials through the AWS chain or the lab config, never as notebook parameters"
            )


def check_notebook_parameters(notebook: Path, parameters: dict, nb=None) -> None:
    """check_parameters(), then refuse a parameter the notebook does not declare (nb: the notebook, if read already)."""
    check_parameters(parameters)
    declared = _parameter_names(read_notebook(notebook) if nb is None else nb, notebook)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise PerfkitError(f"{notebook.name} has no parameter {', '.join(unknown)}: "
                           f"its parameters are {', '.join(declared)}")


def _secret_in(where: str, name, value) -> str | None:
    """The path (e.g. volume_ids[1] or opts.s3.key) of the first secret-looking name or value, else None."""
    if name is not None and (SECRET_NAME.search(str(name)) or SECRET_VALUE.search(str(name))):
        return where
    if isinstance(value, dict):
        items = ((f"{where}.{key}", key, item) for key, item in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = ((f"{where}[{i}]", None, item) for i, item in enumerate(value))
    else:
        return where if SECRET_VALUE.search(str(value)) else None
    return next((found for path, key, item in items if (found := _secret_in(path, key, item))), None)


def parse_parameters(pairs: list[str]) -> dict:
    """key=value pairs; values are read as YAML, so 3, 0.5, [spark, hive] and true keep their types, while dates and
    times stay the text written (2026-01-01T00:00:00, 12:30:00): the notebooks take them as strings."""
    import yaml

    parameters = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise PerfkitError(f"parameter {pair!r} is not key=value: write e.g. -p runs=5 -p engines='[spark, hive]'")
        try:
            parsed = yaml.load(value, Loader=_parameter_loader()) if value else ""
            json.dumps(parsed)  # what papermill and the report metadata can carry
        except (yaml.YAMLError, TypeError, ValueError) as err:
            why = " ".join(str(getattr(err, "problem", None) or err).split())
            raise PerfkitError(
                f"parameter {key.strip()}: {value!r} is not a plain YAML value ({why}): write a number, a string, "
                f"a list such as -p 'engines=[spark, hive]', or quote a string: -p \"{key.strip()}='{value}'\""
            ) from None
        parameters[key.strip()] = parsed
    return parameters


# YAML 1.2's core schema for numbers. PyYAML speaks YAML 1.1, where 12:30:00 is the base-60 integer 45000, 0755 is
# octal and 1_000 a thousand: a time written as a parameter would arrive as a number. Any other form stays text.
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_YAML_11_RULES = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"}


@functools.cache
def _parameter_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        """SafeLoader with YAML 1.2's numbers and no timestamps: a date or a time stays a string (datetime is not
        JSON), 12:30:00 too."""

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML_11_RULES]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))  # before float: 12 is an int
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789"))
    Loader.add_constructor("tag:yaml.org,2002:int", _yaml_12_int)
    return Loader


def _yaml_12_int(loader, node) -> int:
    """An integer as YAML 1.2 reads it: 0o17 octal, 0x1F hexadecimal, anything else decimal (0755 is 755)."""
    text = loader.construct_scalar(node)
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return int(text[2:] if base != 10 else text, base)


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the cell tagged `parameters`."""
    return _parameter_names(read_notebook(notebook), notebook)


# papermill's own inspection (PythonTranslator.inspect) is not used: it skips a line with two '=' (a comment such as
# "# e.g. -p runs=5", a string "a=b"), so a declared parameter would be refused; and its tagged-cell lookup needs
# the tags papermill adds on loading.
def _parameter_names(nb, notebook: Path) -> list[str]:
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return re.findall(r"^([A-Za-z_]\w*)\s*=", cell.source, re.M)
    raise PerfkitError(f"{notebook} has no cell tagged 'parameters': papermill needs one")


def literal_default(data: dict, name: str):
    """The default of parameter `name` in the cell tagged parameters of a notebook's JSON, if it is a literal."""
    import ast

    for cell in data.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell.get("source", ""))
            try:
                for node in ast.parse(source).body:
                    if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
                        return ast.literal_eval(node.value)
            except (SyntaxError, ValueError):
                return None
    return None
