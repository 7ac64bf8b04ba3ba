"""Dataset generators looked up by name, as engines are."""
from __future__ import annotations

import pytest

from perfkit.datasets.generator import REGISTRY, Generator, generator_class, register
from perfkit.errors import PerfkitError


def test_generators_are_looked_up_by_name():
    from perfkit.datasets.hibench_gen import HiBenchGenerator
    from perfkit.datasets.tpch import TpchGenerator

    assert generator_class("tpch") is TpchGenerator and generator_class("hibench") is HiBenchGenerator
    for name in REGISTRY:
        cls = generator_class(name)
        assert issubclass(cls, Generator) and cls.dataset == name and cls.tables


def test_an_unknown_generator_is_named_with_the_known_ones():
    with pytest.raises(PerfkitError) as err:
        generator_class("tpcds")
    assert str(err.value) == "unknown dataset generator 'tpcds': choose from hibench, tpch"


def test_a_generator_registers_by_name():
    register("plain", "perfkit.datasets.generator:Generator")
    try:
        assert generator_class("plain") is Generator
    finally:
        del REGISTRY["plain"]


def test_a_generators_scale_is_checked_before_any_engine_opens():
    assert generator_class("tpch").checked_scale(None) == 0.01 and generator_class("tpch").checked_scale("1") == 1.0
    assert generator_class("hibench").checked_scale(None) == "tiny"
    with pytest.raises(PerfkitError, match="the TPC-H scale factor must be a positive number"):
        generator_class("tpch").checked_scale(-1)
    with pytest.raises(PerfkitError, match="scale 'medium': HiBench's scales are tiny, small"):
        generator_class("hibench").checked_scale("medium")
