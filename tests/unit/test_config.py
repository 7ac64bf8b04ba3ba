import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError


def test_lab_profile_points_at_loopback_services():
    p = load_profile("lab")
    assert p.hdfs_uri == "hdfs://127.0.0.1:9000" and p.s3_endpoint == "http://127.0.0.1:7070"
    assert p.hive_host == "127.0.0.1" and p.spark_master.startswith("local")
    assert p.hdfs_url("datasets", "x") == "hdfs://127.0.0.1:9000/perfkit/datasets/x"
    assert p.s3_url("datasets", "x") == "s3a://perfkit-lab/perfkit/datasets/x"


def test_lab_ports_move_with_environment(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_S3", "7171")
    monkeypatch.setenv("PERFKIT_LAB_PORT_HIVESERVER2", "11000")
    p = load_profile("lab")
    assert p.s3_endpoint == "http://127.0.0.1:7171" and p.hive_port == 11000


def test_a_bad_port_names_the_variable(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_S3", "seventy")
    with pytest.raises(PerfkitError, match="PERFKIT_LAB_PORT_S3='seventy' is not a port number"):
        load_profile("lab")


def test_emr_profile_needs_a_bucket_and_uses_the_cluster():
    with pytest.raises(PerfkitError, match="needs an S3 bucket"):
        load_profile("emr")
    p = load_profile("emr", bucket="s3://my-bucket/", master="10.0.0.5")
    assert p.s3_url("d") == "s3://my-bucket/perfkit/d" and p.s3_endpoint is None
    assert p.spark_master == "yarn" and p.hive_host == "10.0.0.5" and p.hdfs_url("d") == "hdfs:///perfkit/d"
    assert not p.uses_lab


def test_yaml_profile_overrides_a_base(tmp_path):
    f = tmp_path / "prod.yml"
    f.write_text("base: emr\nbucket: data-bucket\nmaster: m1\nprefix: team/perfkit\nspark_conf:\n  spark.executor.memory: 4g\n")
    p = load_profile(str(f))
    assert p.name == "prod" and p.s3_bucket == "data-bucket" and p.prefix == "team/perfkit"
    assert p.spark_conf == {"spark.executor.memory": "4g"}
    assert p.hdfs_path("x") == "/team/perfkit/x"


@pytest.mark.parametrize("name, message", [
    ("prod", "unknown profile 'prod'"),
    ("missing.yml", "profile file missing.yml does not exist"),
])
def test_unknown_profiles_are_named(name, message):
    with pytest.raises(PerfkitError, match=message):
        load_profile(name)


def test_unknown_setting_is_named(tmp_path):
    f = tmp_path / "p.yml"
    f.write_text("base: lab\nbucket_name: x\n")
    with pytest.raises(PerfkitError, match="has no setting bucket_name"):
        load_profile(str(f))


def test_describe_holds_no_credentials():
    assert not any("secret" in key or "key" == key[-3:] for key in load_profile("lab").describe())
