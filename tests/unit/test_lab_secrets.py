"""The lab's S3 secret never shows in a command line (`ps` shows argv to every user): files 0600 or the environment."""
import stat

import pytest

from perfkit.lab import hive_jars, tools
from perfkit.lab.spark_thrift import SparkThriftServer
from perfkit.lab.process import Daemon
from perfkit.lab.s3 import S3Server
from perfkit.lab.settings import LabPorts, lab_credentials


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("tools_on_paper")
def test_the_thrift_server_gets_its_settings_from_a_private_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "spark_home", lambda: tmp_path / "spark")
    monkeypatch.setattr(tools, "s3a_jars", lambda: [tmp_path / "hadoop-aws.jar"])
    monkeypatch.setattr(hive_jars, "spark_metastore_jars", lambda: [tmp_path / "hive-exec.jar"])
    secret = lab_credentials(create=True, home=tmp_path)["secret_key"]
    server = SparkThriftServer(tmp_path, LabPorts(spark_thrift=10123, metastore=9083))

    argv = server.argv()
    assert not any(secret in arg for arg in argv)
    assert not any("secret.key" in arg for arg in argv) and "--conf" not in argv
    assert argv[argv.index("--properties-file") + 1] == str(server.properties_file)
    assert "hive.server2.thrift.port=10123" in argv  # the port stays visible: no secret there
    assert _mode(server.properties_file) == 0o600
    text = server.properties_file.read_text()
    assert f"spark.hadoop.fs.s3a.secret.key={secret}" in text
    # Java properties syntax: ':' and '=' in a value need no escape, the Derby URL is kept whole
    assert "spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:9083" in text  # the shared metastore, kept whole

    server.properties_file.chmod(0o644)  # a loosened file is replaced, not reused
    server.argv()
    assert _mode(server.properties_file) == 0o600


def test_the_credentials_file_is_private(tmp_path):
    lab_credentials(create=True, home=tmp_path)
    assert _mode(tmp_path / "credentials.json") == 0o600


def test_the_s3_server_takes_its_keys_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "versitygw", lambda: tmp_path / "versitygw")
    started = {}
    monkeypatch.setattr(Daemon, "start", lambda self, argv, env=None, cwd=None: started.update(argv=argv, env=env))
    monkeypatch.setattr(Daemon, "pid", lambda self: None)
    monkeypatch.setattr(Daemon, "wait_until", lambda self, *a: None)
    creds = lab_credentials(create=True, home=tmp_path)
    S3Server(tmp_path, LabPorts()).start()
    assert not any(creds["secret_key"] in arg for arg in started["argv"])
    assert started["env"]["ROOT_SECRET_ACCESS_KEY"] == creds["secret_key"]  # versitygw's documented variable
