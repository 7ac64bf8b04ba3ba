"""The seam between perfkit and where it runs: a profile's provider answers what differs (tools, keys, fixes)."""
from __future__ import annotations

import os
import stat
from dataclasses import replace

import pytest

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.config import load_profile
from perfkit.errors import PerfkitError, ServiceError
from perfkit.hadoop_cli import HadoopCli, gohdfs
from perfkit.providers import Provider


class KeyedProvider(Provider):
    name = "keyed"

    def s3_credentials(self):
        return {"access_key": "AKEYFROMPROVIDER", "secret_key": "s3cr3t-from-provider"}


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing of Hadoop's on PATH but what a test puts there
    return load_profile("emr", bucket="my-bucket", master="127.0.0.1")


def fake_tool(folder, name):
    tool = folder / name
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return str(tool)


def test_a_cluster_runs_the_hadoop_command_on_path_and_names_it_when_missing(cluster, tmp_path):
    with pytest.raises(PerfkitError, match=r"the `hadoop` command is not on PATH: run on a cluster node"):
        HadoopCli(cluster).command("fs", "-ls", "/")
    hadoop = fake_tool(tmp_path, "hadoop")
    assert HadoopCli(cluster).command("fs", "-ls", "/") == [hadoop, "fs", "-ls", "/"]
    assert cluster.provider.local_mapreduce is False


def test_a_cluster_finds_gohdfs_on_path_with_the_profiles_user(cluster, tmp_path):
    with pytest.raises(PerfkitError, match="gohdfs is not on PATH"):
        gohdfs(cluster)
    binary = fake_tool(tmp_path, "gohdfs")
    assert gohdfs(cluster) == (binary, {"HADOOP_USER_NAME": "hadoop"})


def test_a_cluster_without_the_testdfsio_jar_is_told_where_it_was_looked_for(cluster, tmp_path):
    fake_tool(tmp_path, "hadoop")
    with pytest.raises(PerfkitError, match=r"no TestDFSIO jar matches /usr/lib/hadoop-mapreduce/.*-tests\.jar"):
        cluster.provider.testdfsio_command("-write")


def test_s3_clients_take_the_providers_keys_or_the_standard_chain(cluster, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKEYFROMENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-environment")
    chain = s3_storage.s3_client(cluster)._request_signer._credentials
    assert (chain.access_key, chain.secret_key) == ("AKEYFROMENVIRONMENT", "from-environment")
    keyed = replace(cluster, provider=KeyedProvider())
    own = s3_storage.s3_client(keyed)._request_signer._credentials
    assert (own.access_key, own.secret_key) == ("AKEYFROMPROVIDER", "s3cr3t-from-provider")
    assert s3_storage.shared_s3_client(keyed) is not s3_storage.shared_s3_client(cluster)  # keys are part of the key


def test_a_profile_shows_its_providers_name_never_the_provider(cluster):
    keyed = replace(cluster, provider=KeyedProvider())
    shown = keyed.describe()
    assert shown["provider"] == "keyed"
    assert "s3cr3t-from-provider" not in repr(shown) + repr(keyed)
    assert load_profile("lab").describe()["provider"] == "lab"


def test_a_yaml_profile_on_the_lab_keeps_the_labs_provider_and_cannot_set_one(tmp_path):
    f = tmp_path / "near.yml"
    f.write_text("base: lab\ns3_endpoint: http://127.0.0.1:18474\n")
    assert load_profile(str(f)).provider.name == "lab"
    f.write_text("base: lab\nprovider: cluster\n")
    with pytest.raises(PerfkitError, match="has no setting 'provider'"):
        load_profile(str(f))


def test_a_service_that_is_down_gets_the_providers_fix(cluster, tmp_path):
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback
    with pytest.raises(ServiceError, match=r"Fix: check the profile's webhdfs_url and that the service runs"):
        hdfs_storage.check_hdfs(replace(cluster, webhdfs_url=closed))
    lab = load_profile("lab")
    with pytest.raises(ServiceError, match=r"Fix: start it with `perfkit lab up hdfs`"):
        hdfs_storage.check_hdfs(replace(lab, webhdfs_url=closed))


def test_a_failed_hive_task_says_where_the_provider_logs_it(cluster, tmp_path, monkeypatch):
    from perfkit.engines.hive import HiveEngine

    failed = "FAILED: Execution Error, return code 2 from org.apache.hadoop.hive.ql.exec.mr.MapRedTask"
    assert "yarn logs -applicationId" in HiveEngine(cluster).with_task_logs(failed)
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    assert str(tmp_path / "logs" / "hiveserver2.log") in HiveEngine(load_profile("lab")).with_task_logs(failed)


def test_the_lab_provider_redacts_its_key_once_it_exists(tmp_path, monkeypatch):
    from perfkit.lab.settings import lab_credentials

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    provider = load_profile("lab").provider
    assert provider.secrets() == []  # no lab yet: nothing to hide, and no error
    secret = lab_credentials(create=True)["secret_key"]
    assert provider.secrets() == [secret] and provider.s3_credentials()["secret_key"] == secret
    assert os.stat(tmp_path / "lab" / "credentials.json").st_mode & 0o077 == 0
