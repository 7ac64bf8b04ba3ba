"""The cluster shape's Spark, EMR 7.13's 3.5.6: its own Python environment and kernel, and the jars the lab gives each
Spark (S3A of the Hadoop it bundles, the Hive metastore client it supports)."""
import json
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.lab import cluster_spark, tools, versions
from perfkit.lab.settings import lab_credentials
from perfkit.lab.shape import CLUSTER, save_shape, shape_named

ROOT = Path(__file__).resolve().parents[2]


def test_the_environment_holds_emrs_pyspark_and_perfkits_requirements_not_the_labs_pin():
    wanted = cluster_spark.requirements()
    assert wanted[0] == "pyspark==3.5.6"
    assert not [r for r in wanted[1:] if r.startswith("pyspark")]  # not the lab's 4.3.0
    assert any(r.startswith("pandas") for r in wanted) and not any(r.startswith("pytest") for r in wanted)


def test_the_environment_is_made_from_emr_7s_python_found_where_it_is_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CLUSTER_PYTHON", "/opt/python3.9/bin/python3.9")
    assert cluster_spark.base_python() == Path("/opt/python3.9/bin/python3.9")
    monkeypatch.delenv("PERFKIT_CLUSTER_PYTHON")
    monkeypatch.setenv("PATH", str(tmp_path))  # no python3.9 on the PATH
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    with pytest.raises(PerfkitError, match=r"the cluster shape runs EMR 7's Python 3\.9, and this machine has no "
                                           r"python3\.9: install it \(pyenv install 3\.9\), or set "
                                           r"PERFKIT_CLUSTER_PYTHON to a Python 3\.9 or newer"):
        cluster_spark.base_python()
    found = tmp_path / "pyenv" / "versions" / "3.9.18" / "bin" / "python3.9"
    found.parent.mkdir(parents=True)
    found.write_text("#!/bin/sh\nexit 0\n")
    found.chmod(0o755)
    assert cluster_spark.base_python() == found  # pyenv's, though pyenv's shim is not on the PATH


@pytest.fixture
def jars(tmp_path, monkeypatch):
    """Each jar folder of the lab, with a jar or two, and no fetch."""
    def folder(name, *jar_names):
        (tmp_path / name).mkdir()
        for jar in jar_names:
            (tmp_path / name / jar).touch()
        return [tmp_path / name / jar for jar in jar_names]

    lab_s3a = folder("lab-s3a", "hadoop-aws-3.5.0.jar", "bundle-2.35.4.jar")
    lab_hive = folder("lab-hive", "hive-exec-4.0.1.jar")
    cluster_s3a = folder("cluster-s3a", "hadoop-aws-3.3.4.jar", "aws-java-sdk-s3-1.12.262.jar")
    cluster_hive = folder("cluster-hive", "hive-exec-3.1.3.jar", "hive-metastore-3.1.3.jar")
    monkeypatch.setattr(tools, "s3a_jars", lambda: lab_s3a)
    monkeypatch.setattr("perfkit.lab.hive_jars.spark_metastore_jars", lambda: lab_hive)
    monkeypatch.setattr(cluster_spark, "s3a_jars", lambda: cluster_s3a)
    monkeypatch.setattr(cluster_spark, "metastore_jars", lambda: cluster_hive)
    monkeypatch.setattr("perfkit.lab.alluxio_dist.alluxio_client_jar", lambda: tmp_path / "alluxio-client.jar")
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    lab_credentials(create=True)


@pytest.mark.parametrize("spark, client, s3a, metastore", [
    ("4.3.0", "4.0.1", "hadoop-aws-3.5.0.jar", "hive-exec-4.0.1.jar"),
    ("3.5.6", "3.1.3", "hadoop-aws-3.3.4.jar", "hive-exec-3.1.3.jar"),
])
def test_each_spark_gets_the_s3a_of_its_hadoop_and_a_metastore_client_it_supports(jars, monkeypatch, spark, client,
                                                                                  s3a, metastore):
    monkeypatch.setattr("perfkit.engines.spark_install.pyspark_version", lambda: spark)
    profile = load_profile("lab")
    conf = profile.provider.spark_conf(profile)
    assert conf["spark.sql.hive.metastore.version"] == client
    assert s3a in conf["spark.jars"] and conf["spark.jars"].endswith("alluxio-client.jar")
    assert metastore in conf["spark.sql.hive.metastore.jars.path"]
    other = {"hadoop-aws-3.5.0.jar", "hadoop-aws-3.3.4.jar"} - {s3a}
    assert other.pop() not in conf["spark.jars"]


def test_a_spark_the_lab_holds_no_jars_for_is_refused_by_name(jars, monkeypatch):
    monkeypatch.setattr("perfkit.engines.spark_install.pyspark_version", lambda: "3.4.1")
    profile = load_profile("lab")
    with pytest.raises(PerfkitError, match=r"the lab runs Spark 4.3.0 \(its own\) and 3.5.6 \(EMR 7.13's, the cluster "
                                           r"shape's\); this Python has pyspark 3.4.1"):
        profile.provider.spark_conf(profile)


def test_only_the_jars_spark_does_not_hold_go_on_its_class_path(tmp_path, monkeypatch):
    fetched = tmp_path / "s3a"
    fetched.mkdir()
    for jar in ("hadoop-aws-3.3.4.jar", "jackson-databind-2.12.6.1.jar", "jackson-dataformat-cbor-2.15.2.jar"):
        (fetched / jar).touch()
    spark_jars = tmp_path / "site-packages" / "pyspark" / "jars"
    spark_jars.mkdir(parents=True)
    (spark_jars / "jackson-databind-2.15.2.jar").touch()
    monkeypatch.setattr(tools, "maven_lib", lambda *args, **kwargs: fetched)
    monkeypatch.setattr(cluster_spark, "environment_site", lambda: tmp_path / "site-packages")
    assert [j.name for j in cluster_spark.s3a_jars()] == ["hadoop-aws-3.3.4.jar", "jackson-dataformat-cbor-2.15.2.jar"]


def test_profile_lab_cluster_runs_its_notebooks_on_spark_356s_python_with_this_perfkit(tmp_path, monkeypatch):
    from perfkit.cli import _profile_kernel

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(cluster_spark, "python", lambda: Path("/envs/spark-3.5.6/bin/python"))
    name, environment = _profile_kernel("lab-cluster")
    assert name == "perfkit-spark-3.5.6" and environment == {"JUPYTER_PATH": str(tmp_path / "jupyter")}
    spec = json.loads((tmp_path / "jupyter" / "kernels" / name / "kernel.json").read_text())
    assert spec["argv"][:3] == ["/envs/spark-3.5.6/bin/python", "-m", "ipykernel_launcher"]
    assert spec["env"] == {"PYTHONPATH": str(ROOT)}  # this checkout's perfkit, not one installed there
    monkeypatch.setenv("JUPYTER_PATH", environment["JUPYTER_PATH"])
    assert Path(KernelSpecManager().find_kernel_specs()[name]) == tmp_path / "jupyter" / "kernels" / name
    assert _profile_kernel("lab") is None and _profile_kernel(None) is None


def test_lab_cluster_refuses_another_spark_than_emrs_and_says_how_to_run_it(tmp_path, monkeypatch):
    from perfkit.engines import get_engine

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    save_shape(shape_named(CLUSTER), tmp_path)
    monkeypatch.setattr("perfkit.lab.yarn.Yarn.health", lambda self: (True, "2 NodeManagers"))
    monkeypatch.setattr("perfkit.engines.spark_install.pyspark_version", lambda: "4.3.0")
    monkeypatch.setattr(cluster_spark, "python", lambda: Path("/envs/spark-3.5.6/bin/python"))
    with pytest.raises(PerfkitError, match=r"profile lab-cluster runs EMR 7.13's Spark 3.5.6, and this Python has "
                                           r"pyspark 4.3.0. Fix: run perfkit with Spark 3.5.6's Python, "
                                           r"PYTHONPATH=\S+ /envs/spark-3.5.6/bin/python -m perfkit "):
        get_engine("spark", load_profile("lab-cluster")).check()
    assert versions.CLUSTER_SPARK == "3.5.6"


def test_the_cli_runs_a_lab_cluster_command_again_on_spark_356s_python(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from perfkit import cli

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.delenv(cli.RUN_AGAIN, raising=False)
    save_shape(shape_named(CLUSTER), tmp_path)
    monkeypatch.setattr("perfkit.engines.spark_install.pyspark_version", lambda: "4.3.0")
    monkeypatch.setattr(cluster_spark, "python", lambda: Path("/envs/spark-3.5.6/bin/python"))
    monkeypatch.setattr(cli.sys, "argv", ["perfkit", "queries", "--profile", "lab-cluster", "--runs", "1"])
    ran = []

    def execve(path, argv, env):
        ran.append((path, argv, env))
        raise SystemExit(0)  # execve does not return: the new process answers

    monkeypatch.setattr(cli.os, "execve", execve)
    done = CliRunner().invoke(cli.main, ["queries", "--profile", "lab-cluster", "--runs", "1"])
    assert done.exit_code == 0 and len(ran) == 1, done.output
    path, argv, env = ran[0]
    assert path == "/envs/spark-3.5.6/bin/python"
    assert argv == [path, "-m", "perfkit", "queries", "--profile", "lab-cluster", "--runs", "1"]
    assert env["PYTHONPATH"] == str(ROOT) and env[cli.RUN_AGAIN] == "1"
    # run again already, or another profile: never again (the profile's own check speaks)
    monkeypatch.setenv(cli.RUN_AGAIN, "1")
    cli._on_the_profile_s_spark("lab-cluster")
    monkeypatch.delenv(cli.RUN_AGAIN)
    cli._on_the_profile_s_spark("lab")
    assert len(ran) == 1
