"""A parameter declared once (perfkit.parameters): its check, default and help on the dataclass field; the command
line's options made from them, imported only by the command that has them."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field

import click
import pytest
from click.testing import CliRunner

from perfkit import validate
from perfkit.cli import main
from perfkit.errors import PerfkitError
from perfkit.parameters import FieldsCommand, check_fields, from_cli, options_of, param, recorded


@dataclass
class Sized:
    rows: int = param(200, "Rows generated.", check=validate.whole)
    warmup: int = param(1, "Warm-up runs.", check=validate.whole, minimum=0)
    timeout_s: float | None = param(None, "Seconds.", check=validate.number, above=0, none_means="no limit",
                                    option="--timeout")
    fmt: str = param("orc", "orc or parquet.", check=validate.choice, choices=("orc", "parquet"))
    engines: list[str] = param(help="Engines.", factory=lambda: ["spark", "trino"], check=validate.names)
    queries: list[str] | None = param(None, "Query ids.")
    cold: bool = param(False, "Drop the page cache.", check=validate.flag)

    def __post_init__(self):
        check_fields(self)


@dataclass
class Bigger(Sized):
    rows: int = 5_000  # another default only: the base's check and help still hold


def test_each_field_is_checked_and_stored_in_the_type_used():
    assert Sized(rows=1e5).rows == 100_000 and isinstance(Sized(rows=1e5).rows, int)
    with pytest.raises(PerfkitError, match=r"^rows=0: give a whole number >= 1$"):
        Sized(rows=0)
    with pytest.raises(PerfkitError, match=r"^warmup=-1: give a whole number >= 0$"):
        Sized(warmup=-1)
    with pytest.raises(PerfkitError, match=r"^fmt='csv': use one of orc, parquet$"):
        Sized(fmt="csv")
    with pytest.raises(PerfkitError, match=r"^cold='false': give true or false$"):
        Sized(cold="false")


def test_a_subclass_giving_another_default_keeps_the_check():
    assert Bigger().rows == 5_000
    with pytest.raises(PerfkitError, match=r"^rows=0: give a whole number >= 1$"):
        Bigger(rows=0)


def test_options_carry_the_fields_default_help_and_bounds():
    options = {o.name: o for o in options_of(Bigger, ["rows", "warmup", "timeout_s", "fmt", "engines", "cold"])}
    assert options["rows"].opts == ["--rows"] and options["rows"].default == 5_000  # the subclass's default
    assert options["rows"].help == "Rows generated."
    assert (options["rows"].type.min, options["warmup"].type.min) == (1, 0)
    assert options["timeout_s"].opts == ["--timeout"] and options["timeout_s"].type.min_open
    assert options["fmt"].type.choices == ("orc", "parquet")
    assert options["engines"].default == "spark,trino"
    assert options["cold"].opts == ["--cold"] and options["cold"].secondary_opts == ["--no-cold"]


def _command():
    @click.command(cls=FieldsCommand, experiment=f"{__name__}:Bigger", fields=["rows", "engines", "queries", "cold"])
    @click.option("--profile", default="lab")
    def run(profile, **asked):
        click.echo(repr(Bigger(**from_cli(Bigger, asked))))
    return run


def test_the_command_reads_lists_and_flags_as_the_dataclass_takes_them():
    said = CliRunner().invoke(_command(), ["--engines", "hive, trino", "--cold"])
    assert said.exit_code == 0, said.output
    assert said.output.strip() == ("Bigger(rows=5000, warmup=1, timeout_s=None, fmt='orc', engines=['hive', 'trino'], "
                                   "queries=None, cold=True)")


def test_a_value_out_of_the_checks_range_is_a_usage_error_before_anything_runs():
    said = CliRunner().invoke(_command(), ["--rows", "0"])
    assert said.exit_code == 2 and "Invalid value for '--rows': 0 is not in the range x>=1." in said.output


def test_perfkit_commands_do_not_import_an_experiment_until_one_runs():
    code = ("import sys; from perfkit.cli import main; main(['--help'], standalone_mode=False); "
            "print(sorted(m for m in sys.modules if m.startswith('perfkit.experiments')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    help_text = CliRunner().invoke(main, ["queries", "--help"]).output
    assert "--rows INTEGER RANGE" in help_text and "[default: 200000" in help_text


@dataclass
class Probed(Sized):
    profile: str = "lab"
    probe_every_s: float = param(1.0, "How often a probe asks.", check=validate.number, above=0, recorded=False)
    found: dict = field(default_factory=dict, init=False)  # filled by the run, not asked of it


def test_the_recorded_parameters_are_what_the_run_was_asked_to_measure():
    probed = Probed(rows=300, probe_every_s=0.5)
    assert recorded(probed) == {"rows": 300, "warmup": 1, "timeout_s": None, "fmt": "orc",
                                "engines": ["spark", "trino"], "queries": None, "cold": False}
