import pytest
from click.testing import CliRunner

from perfkit.cli import main


def test_bad_input_gives_one_message_and_exit_1():
    runner = CliRunner()
    result = runner.invoke(main, ["queries", "--engines", "spark,presto"])
    assert result.exit_code == 1
    assert result.output.strip() == "perfkit: unknown engine 'presto': choose from hive, spark, spark-thrift, trino"


def test_report_refuses_secret_parameters():
    result = CliRunner().invoke(main, ["report", "notebooks/hdfs_vs_s3_queries.ipynb", "-p", "secret_key=abc"])
    assert result.exit_code == 1 and "looks like a secret" in result.output


def test_unreachable_hdfs_stops_the_run_before_anything_runs(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_NAMENODE_HTTP", "1")
    result = CliRunner().invoke(main, ["queries", "--engines", "spark", "--rows", "10", "--files", "1"])
    assert result.exit_code == 1
    assert "perfkit: HDFS at http://127.0.0.1:1: not reachable" in result.output
    assert "Fix: start it with `perfkit lab up hdfs`" in result.output


def test_transfer_refuses_bad_concurrency_and_unknown_methods():
    result = CliRunner().invoke(main, ["transfer", "--concurrency", "1,four"])
    assert result.exit_code == 1 and "is not a list of integers" in result.output
    result = CliRunner().invoke(main, ["transfer", "--methods", "stream,rsync"])
    assert result.exit_code == 1 and "unknown transfer method 'rsync'" in result.output


def _one_line(result, code=1):
    """The exit code, no traceback, and the message on one line (click's usage errors: the `Error:` line)."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, (ValueError, TypeError))
    lines = [line for line in result.output.splitlines() if line.startswith(("perfkit:", "Error:"))]
    assert len(lines) == 1, result.output
    if code == 1:
        assert result.output.strip() == lines[0]
    return lines[0]


def test_a_yaml_syntax_error_is_one_line_naming_file_and_place(tmp_path):
    f = tmp_path / "bad.yml"
    f.write_text("base: lab\nprefix: [a\n")
    line = _one_line(CliRunner().invoke(main, ["queries", "--profile", str(f)]))
    assert line.startswith(f"perfkit: profile file {f} line 3, column 1 is not valid YAML")
    assert "fix the syntax there" in line


def test_an_empty_profile_file_is_refused(tmp_path):
    f = tmp_path / "empty.yml"
    f.write_text("")
    line = _one_line(CliRunner().invoke(main, ["transfer", "--profile", str(f)]))
    assert line == (f"perfkit: profile file {f} is empty: write at least `base: lab` or `base: emr`, "
                    "then the settings to override")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_transfer_refuses_a_mean_size_that_is_not_a_finite_number(value):
    line = _one_line(CliRunner().invoke(main, ["transfer", "--mean-mb", value]))
    assert line == f"perfkit: mean_mb={value}: give a number of MB > 0"  # the field's check: click lets nan through


@pytest.mark.parametrize("args, option", [
    (["transfer", "--files", "0"], "'--files': 0 is not in the range x>=1"),
    (["transfer", "--mean-mb", "0"], "'--mean-mb': 0.0 is not in the range x>0"),
    (["transfer", "--mean-mb", "-3"], "'--mean-mb': -3.0 is not in the range x>0"),
    (["transfer", "--repeats", "0"], "'--repeats': 0 is not in the range x>=1"),
    (["queries", "--runs", "-1"], "'--runs': -1 is not in the range x>=1"),
    (["queries", "--warmup", "-1"], "'--warmup': -1 is not in the range x>=0"),
    (["queries", "--rows", "0"], "'--rows': 0 is not in the range x>=1"),
    (["queries", "--files", "0"], "'--files': 0 is not in the range x>=1"),
])
def test_counts_out_of_range_are_usage_errors(args, option):
    assert _one_line(CliRunner().invoke(main, args), code=2) == f"Error: Invalid value for {option}."


@pytest.mark.parametrize("levels", ["0,4", ",", "-1"])
def test_transfer_refuses_concurrency_below_one(levels):
    line = _one_line(CliRunner().invoke(main, ["transfer", "--concurrency", levels]))
    assert line == f"perfkit: --concurrency {levels!r} is not a list of integers >= 1: write e.g. 1,4"


def test_transfer_concurrency_beyond_the_machine_is_refused_before_anything_runs():
    from click.testing import CliRunner

    from perfkit.cli import main

    result = CliRunner().invoke(main, ["transfer", "--concurrency", "4,99999999999999999999"])
    assert result.exit_code == 1
    assert result.output.strip() == ("perfkit: concurrency 99999999999999999999 is more than 256 parallel copies: "
                                     "give levels from 1 to 256")
