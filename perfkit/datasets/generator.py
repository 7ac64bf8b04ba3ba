"""Dataset generators behind one interface, registered by name and imported lazily (as perfkit.engines).

A generator's module imports this one, never the other way: the registry names classes as "module:Class".
"""
from __future__ import annotations

from perfkit.config import Profile
from perfkit.registry import Registry

REGISTRY = Registry("dataset generator", {
    "tpch": "perfkit.datasets.tpch:TpchGenerator",
    "hibench": "perfkit.datasets.hibench_gen:HiBenchGenerator",
})
register = REGISTRY.register


def generator_class(name: str) -> type["Generator"]:
    return REGISTRY.load(name)


def get_generator(name: str, profile: Profile, scale) -> "Generator":
    return generator_class(name)(profile, scale)


class Generator:
    """An engine that writes a dataset's tables into any location and checksums what it wrote."""

    dataset = "?"
    tables: tuple[str, ...] = ()

    def __init__(self, profile: Profile, scale):
        self.profile, self.scale = profile, scale

    @classmethod
    def checked_scale(cls, scale):
        """The scale to generate (the generator's default for None); raise PerfkitError naming the valid ones.

        A class method: a run's parameters are checked before any engine is opened."""
        return scale

    @property
    def name(self) -> str:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"generator": self.dataset, "scale": self.scale}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        pass

    def write(self, table: str, url: str, file_format: str) -> None:
        """Generate one table into the folder `url` (the plain generator: nothing else)."""
        raise NotImplementedError

    def expected_rows(self, table: str) -> int:
        raise NotImplementedError

    def written_checksum(self, table: str, url: str, file_format: str) -> list:
        """[rows, checksum] of the rows read back from `url`."""
        raise NotImplementedError

    def place(self, table: str, url: str, file_format: str) -> list:
        """Write the table, then [rows, checksum] of what was written; engines that can do both in one go do."""
        self.write(table, url, file_format)
        return self.written_checksum(table, url, file_format)
