import os

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError


def test_lab_profile_points_at_loopback_services(monkeypatch):
    for var in [v for v in os.environ if v.startswith("PERFKIT_LAB_PORT_")]:
        monkeypatch.delenv(var)  # the default ports, whatever this shell moved
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
    assert p.provider.name == "cluster" and p.provider.s3_credentials() is None  # the standard AWS chain
    assert load_profile("lab").provider.name == "lab" and p.describe()["provider"] == "cluster"


def test_yaml_profile_overrides_a_base(tmp_path):
    f = tmp_path / "prod.yml"
    f.write_text("base: emr\nbucket: data-bucket\nmaster: m1\nprefix: team/perfkit\n"
                 "spark_conf:\n  spark.executor.memory: 4g\n")
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


def test_a_misspelled_setting_names_the_file_and_the_closest_setting(tmp_path):
    f = tmp_path / "p.yml"
    f.write_text("base: lab\nspark_mastr: yarn\n")
    with pytest.raises(PerfkitError,
                       match=rf"profile file {f} has no setting 'spark_mastr': did you mean 'spark_master'\?"):
        load_profile(str(f))


def test_emr_options_are_settings_of_an_emr_file_only(tmp_path):
    f = tmp_path / "p.yml"
    f.write_text("base: emr\nbuket: b\n")
    with pytest.raises(PerfkitError, match="has no setting 'buket': did you mean 'bucket'"):
        load_profile(str(f))
    f.write_text("base: emr\nmaster: m1\n")
    with pytest.raises(PerfkitError,
                       match=rf"profile file {f} \(base: emr\) needs an S3 bucket: add a line `bucket: NAME`"):
        load_profile(str(f))


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n", "---\n"])
def test_an_empty_profile_file_is_refused_not_run_as_the_lab(tmp_path, text):
    f = tmp_path / "empty.yml"
    f.write_text(text)
    with pytest.raises(PerfkitError, match=rf"profile file {f} is empty: write at least `base: lab` or `base: emr`"):
        load_profile(str(f))


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path):
    f = tmp_path / "bad.yml"
    f.write_text("base: lab\nprefix: team\n  spark_master: yarn\n")
    with pytest.raises(PerfkitError) as caught:
        load_profile(str(f))
    assert str(caught.value).startswith(f"profile file {f} line 3, column 15 is not valid YAML "
                                        "(mapping values are not allowed here): fix the syntax there")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("text, message", [
    ("- base: lab\n", "must hold a mapping of settings"),
    ("base: hdfs\n", "base 'hdfs' is unknown; use one of lab, lab-cluster, emr"),
    ("base: lab\nhive_port: ten\n", "setting 'hive_port' must be a whole number, not 'ten'"),
    ("base: lab\nhive_port: true\n", "setting 'hive_port' must be a whole number, not True"),
    ("base: lab\nhive_webui_port: web\n", "setting 'hive_webui_port' must be a whole number, not 'web'"),
    ("base: lab\nspark_conf: [a, b]\n", "setting 'spark_conf' must be a mapping"),
    ("base: emr\nbucket: b\nhadoop_metrics_period_s: 0\n",
     "setting 'hadoop_metrics_period_s' must be a number of seconds above 0, not 0.0"),
    ("base: emr\nbucket: b\nhadoop_metrics_period_s: 10s\n",
     "setting 'hadoop_metrics_period_s' must be a number of seconds above 0, not '10s'"),
    ("base: lab\n1: x\n", "has no setting 1"),
])
def test_unusable_profile_files_are_named_with_the_problem(tmp_path, text, message):
    f = tmp_path / "p.yml"
    f.write_text(text)
    with pytest.raises(PerfkitError, match=message) as caught:
        load_profile(str(f))
    assert str(f) in str(caught.value)


def test_a_folder_or_binary_file_named_like_a_profile_is_refused(tmp_path):
    (tmp_path / "dir.yml").mkdir()
    with pytest.raises(PerfkitError, match="dir.yml cannot be read"):
        load_profile(str(tmp_path / "dir.yml"))
    (tmp_path / "bin.yml").write_bytes(b"\xff\xfe\x00base")
    with pytest.raises(PerfkitError, match="bin.yml cannot be read"):
        load_profile(str(tmp_path / "bin.yml"))


def test_a_builtin_profile_names_itself_for_an_unknown_option():
    with pytest.raises(PerfkitError, match="profile 'lab' has no setting 'buckett': did you mean 's3_bucket'"):
        load_profile("lab", buckett="b")
    with pytest.raises(PerfkitError, match="profile 'lab': a bucket is for profile emr; the lab uses its own bucket"):
        load_profile("lab", bucket="b")


def test_describe_holds_no_credentials():
    assert not any("secret" in key or "key" == key[-3:] for key in load_profile("lab").describe())


@pytest.mark.parametrize("line, message", [
    ("hive_port: 99999", "setting 'hive_port' = 99999 is not a port: give a number from 1 to 65535"),
    ("webhdfs_url: ftp://x", "setting 'webhdfs_url' = 'ftp://x' is not an http(s):// address"),
    ("s3_endpoint: not a url", "setting 's3_endpoint' = 'not a url' is not an http(s):// address"),
    ("hdfs_uri: /data", "setting 'hdfs_uri' = '/data' is not an hdfs:// URI"),
])
def test_profile_addresses_are_checked_when_the_profile_loads(tmp_path, line, message):
    path = tmp_path / "p.yml"
    path.write_text(f"base: lab\n{line}\n")
    with pytest.raises(PerfkitError) as caught:
        load_profile(str(path))
    assert message in str(caught.value)


def test_spark_settings_that_name_a_secret_are_hidden_from_reports():
    from dataclasses import replace

    profile = replace(load_profile("lab"), spark_conf={"spark.hadoop.fs.s3a.secret.key": "hunter2-my-s3-pass",
                                                       "spark.executor.memory": "4g"})
    shown = profile.describe()["spark_conf"]
    assert shown == {"spark.hadoop.fs.s3a.secret.key": "***", "spark.executor.memory": "4g"}


def test_a_yaml_profile_places_trino_and_the_metastore(tmp_path):
    path = tmp_path / "cluster.yml"
    path.write_text("base: emr\nbucket: b\ntrino_host: coord.internal\ntrino_port: 8080\ntrino_catalog: lake\n"
                    "trino_user: analyst\nmetastore_uri: thrift://hms.internal:9083\n")
    p = load_profile(str(path))
    assert (p.trino_host, p.trino_port, p.trino_catalog, p.trino_user) == ("coord.internal", 8080, "lake", "analyst")
    assert p.metastore_uri == "thrift://hms.internal:9083"


@pytest.mark.parametrize("line, message", [
    ("metastore_uri: hms:9083", "setting 'metastore_uri' = 'hms:9083' is not a thrift:// address, e.g. thrift://master:9083"),
    ("trino_port: 0", "setting 'trino_port' = 0 is not a port: give a number from 1 to 65535"),
    ("trino_port: eight", "setting 'trino_port' must be a whole number, not 'eight'"),
])
def test_bad_trino_and_metastore_settings_are_named(tmp_path, line, message):
    path = tmp_path / "p.yml"
    path.write_text(f"base: lab\n{line}\n")
    with pytest.raises(PerfkitError) as caught:
        load_profile(str(path))
    assert message in str(caught.value)


def test_a_cluster_s_hadoop_metrics_period_is_a_number_of_seconds(tmp_path):
    f = tmp_path / "p.yml"
    f.write_text("base: emr\nbucket: b\nhadoop_metrics_period_s: 1\n")  # YAML's whole number: seconds too
    assert load_profile(str(f)).hadoop_metrics_period_s == 1.0
    assert load_profile("lab").hadoop_metrics_period_s == 0.01  # what the lab writes for its daemons
