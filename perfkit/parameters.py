"""An experiment's parameters, each declared once: on its dataclass field, with its check and its help text.

    rows: int = param(200_000, "taxi trips generated", check=validate.whole)

`check_fields(self)` in __post_init__ runs every field's check (notebook parameters arrive as any YAML type); the
command line's options come from the same fields (`options_of`), their defaults and help included, so the CLI, the
dataclass and its checks cannot drift apart. A report may size a run otherwise (more rows for a lab report): it says
so in one place, its experiment's REPORT_DEFAULTS, which a test holds the notebook's parameters to.
"""
from __future__ import annotations

import dataclasses
import importlib
from functools import partial
from typing import Any, Callable

import click

Check = Callable[[str, Any], Any]  # (name, value) -> the value as the experiment uses it, or PerfkitError


def param(default: Any = dataclasses.MISSING, help: str = "", *, check: Check | None = None,
          factory: Callable[[], Any] | None = None, option: str | None = None, recorded: bool = True,
          **check_args) -> Any:
    """A dataclass field with its help text and check (a function of perfkit.validate, called with the field's
    name, its value and `check_args`); `option` is its command-line spelling when not --name-with-dashes.
    recorded=False: how the run is carried out, not what it measures (how often a health probe asks), so it is
    left out of the run's recorded parameters, by which compare pairs runs."""
    if check is not None and check_args:
        check = partial(check, **check_args)
    metadata = {"help": help, "check": check, "option": option, "recorded": recorded}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def declared(cls, name: str, key: str) -> Any:
    """The field's `key` (help, check, option) as declared: a subclass that only gives a field another default
    (`runs: int = 2`) keeps its base's check and help."""
    for klass in cls.__mro__:
        f = getattr(klass, "__dataclass_fields__", {}).get(name)
        if f is not None and f.metadata.get(key) is not None:
            return f.metadata[key]
    return None


def check_fields(obj) -> None:
    """Every checked field of `obj`, checked and stored back in the type the experiment uses."""
    for f in dataclasses.fields(obj):
        if (check := declared(type(obj), f.name, "check")) is not None:
            setattr(obj, f.name, check(f.name, getattr(obj, f.name)))


def recorded(obj) -> dict:
    """What the run was asked to do: every field given to the experiment but its profile and those not recorded."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
            if f.init and f.name != "profile" and declared(type(obj), f.name, "recorded") is not False}


def default_of(cls, name: str) -> Any:
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


def _kind(cls, name: str) -> str:
    """How the command line spells the field's value: flag, list (comma-separated), int, float or text."""
    annotation = str({f.name: f.type for f in dataclasses.fields(cls)}[name]).replace(" ", "")
    for kind, spellings in (("flag", ("bool",)), ("list", ("list[str]", "list[str]|None")), ("ints", ("list[int]",)),
                            ("int", ("int",)), ("float", ("float", "float|None"))):
        if annotation in spellings:
            return kind
    return "text"


def options_of(cls, names: list[str]) -> list[click.Option]:
    """One command-line option per field in `names`, with the field's default and help: a list as comma-separated
    names, a flag as --name/--no-name unless the field spells it otherwise, numbers as numbers (their bounds are the
    field's check)."""
    options = []
    for name in names:
        kind, default = _kind(cls, name), default_of(cls, name)
        spelled = declared(cls, name, "option") or "--" + name.replace("_", "-")
        if kind == "flag" and "/" not in spelled:
            spelled = f"{spelled}/--no-{spelled.removeprefix('--')}"
        if kind in ("list", "ints"):
            default = ",".join(map(str, default)) if default else ""
        options.append(click.Option([spelled, name], default=default, show_default=default not in (None, ""),
                                    type=_click_type(declared(cls, name, "check"), kind),
                                    help=declared(cls, name, "help") or ""))
    return options


def _click_type(check: Check | None, kind: str):
    """The option's type with the bounds or choices of the field's check: a value out of range is a usage error
    before anything runs, worded by click as for every other command."""
    from perfkit import validate

    func, given = (check.func, check.keywords) if isinstance(check, partial) else (check, {})
    if func is validate.whole:
        return click.IntRange(min=given.get("minimum", 1), max=given.get("maximum"))
    if func is validate.number:
        low = given.get("above", given.get("minimum"))
        return click.FloatRange(min=low, max=given.get("maximum"), min_open="above" in given)
    if func is validate.choice:
        # a tuple: click 8.2+ keeps its choices as one whatever it is given, 8.1 (the newest on Python 3.9) as given
        return click.Choice(tuple(given["choices"]))
    return {"int": int, "float": float}.get(kind)


class FieldsCommand(click.Command):
    """A command whose options include an experiment's fields (`experiment`: "module:Class", `fields`: their names),
    made when the command parses its arguments or shows its help: the experiment, and pandas and pyarrow under it
    (2.7 s), are imported then, not by every `perfkit` command. Its options follow the command's own."""

    def __init__(self, *args, experiment: str, fields: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.experiment, self.fields, self._made = experiment, fields, False

    def experiment_class(self) -> type:
        module, name = self.experiment.split(":")
        return getattr(importlib.import_module(module), name)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self._made:
            self._made = True
            self.params.extend(options_of(self.experiment_class(), self.fields))
        return super().get_params(ctx)


def from_cli(cls, given: dict[str, Any]) -> dict[str, Any]:
    """The options of `options_of` as the dataclass takes them: comma-separated names as lists (none given: the
    field's default, None where that is None), comma-separated whole numbers as ints."""
    from perfkit.errors import PerfkitError

    found = {}
    for name, value in given.items():
        kind = _kind(cls, name)
        if kind in ("list", "ints") and isinstance(value, str):
            items = [part.strip() for part in value.split(",") if part.strip()]
            if kind == "ints":
                check = declared(cls, name, "check")
                least = check.keywords.get("minimum", 1) if isinstance(check, partial) else 1
                spelled = declared(cls, name, "option") or "--" + name.replace("_", "-")
                try:
                    items = [int(item) for item in items]
                except ValueError:
                    items = []
                if not items or min(items) < least:
                    example = ",".join(map(str, default_of(cls, name)))
                    raise PerfkitError(f"{spelled} {value!r} is not a list of integers >= {least}: write e.g. "
                                       f"{example}")
            value = items if items or default_of(cls, name) is not None else None
        found[name] = value
    return found
