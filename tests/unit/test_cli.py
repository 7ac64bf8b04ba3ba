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
