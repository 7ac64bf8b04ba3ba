from click.testing import CliRunner

from perfkit.cli import main


def test_bad_input_gives_one_message_and_exit_1():
    runner = CliRunner()
    result = runner.invoke(main, ["queries", "--engines", "spark,presto"])
    assert result.exit_code == 1
    assert result.output.strip() == "perfkit: unknown engine 'presto': choose from hive, spark"


def test_report_refuses_secret_parameters():
    result = CliRunner().invoke(main, ["report", "notebooks/hdfs_vs_s3_queries.ipynb", "-p", "secret_key=abc"])
    assert result.exit_code == 1 and "looks like a secret" in result.output


def test_unreachable_hdfs_stops_the_run_before_anything_runs(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_NAMENODE_HTTP", "1")
    result = CliRunner().invoke(main, ["queries", "--engines", "spark", "--rows", "10", "--files", "1"])
    assert result.exit_code == 1
    assert "perfkit: HDFS at http://127.0.0.1:1: not reachable" in result.output
    assert "Fix: start the lab with `perfkit lab up`" in result.output


def test_transfer_refuses_bad_concurrency_and_unknown_methods():
    result = CliRunner().invoke(main, ["transfer", "--concurrency", "1,four"])
    assert result.exit_code == 1 and "is not a list of integers" in result.output
    result = CliRunner().invoke(main, ["transfer", "--methods", "stream,rsync"])
    assert result.exit_code == 1 and "unknown transfer method 'rsync'" in result.output
