"""Storages behind one interface (perfkit.storages.base.Storage), registered by name and imported lazily.

Adding a storage is one class, one line in its REGISTRY (storages/registry.py; or `register(name, "module:Class")`
from another package), and the conformance checks (perfkit.storages.conformance) passing for it.
"""
from __future__ import annotations

from perfkit.storages.base import Location, Storage
from perfkit.storages.registry import (REGISTRY, backing_of, break_even_pair, client_of, colour_of, get_storage,
                                      hadoop_scheme_of, placed, reads_remote, register, storage_class, storage_of_url,
                                      storage_probes, tiers)

__all__ = ["REGISTRY", "Location", "Storage", "backing_of", "break_even_pair", "client_of", "colour_of", "get_storage",
           "hadoop_scheme_of", "placed", "reads_remote", "register", "storage_class", "storage_of_url",
           "storage_probes", "tiers"]
