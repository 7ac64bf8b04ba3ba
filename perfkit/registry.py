"""Plug-ins by name, imported lazily (the fsspec pattern): {name: "module:Class"}."""
from __future__ import annotations

import importlib

from perfkit.errors import PerfkitError


class Registry(dict):
    """A dict of name -> "module:Class" that imports a class only when it is asked for.

    Other packages extend it with `REGISTRY.register("name", "their.module:Class")` (or the class itself).
    """

    def __init__(self, kind: str, entries: dict[str, str]):
        super().__init__(entries)
        self.kind = kind

    def register(self, name: str, target: str | type) -> None:
        self[name] = target

    def load(self, name: str) -> type:
        if name not in self:
            raise PerfkitError(f"unknown {self.kind} {name!r}: choose from {', '.join(sorted(self))}")
        if isinstance(self[name], type):
            return self[name]
        module, cls = self[name].split(":")
        try:
            return getattr(importlib.import_module(module), cls)
        except ImportError as err:
            raise PerfkitError(f"{self.kind} {name!r} needs {err.name}, which is not installed. "
                               "Fix: pip install -e '.[dev]'") from None
