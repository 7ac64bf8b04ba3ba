import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import tools


def test_missing_java_names_the_fix(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(PerfkitError, match=r"lab: Java was not found. Fix: install Java 17\+"):
        tools.java_home()


def test_missing_go_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))  # nothing built yet
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(tools, "GO_TARBALL_INSTALL", tmp_path / "no-go")
    with pytest.raises(PerfkitError, match=r"lab: Go is needed once to build the S3 server .* Fix: install Go"):
        tools.versitygw()


def test_missing_maven_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(PerfkitError, match=r"Maven \(mvn\) is needed once .* Fix: apt-get install maven"):
        tools.hadoop_lib()


def test_s3a_jars_for_spark_leave_out_what_spark_already_has(monkeypatch, tmp_path):
    lib = tmp_path / "hadoop-lib"
    lib.mkdir()
    for name in ("hadoop-aws-3.5.0.jar", f"s3-{tools.versions.AWS_SDK}.jar", "netty-common-4.1.126.Final.jar",
                 "httpclient-4.5.13.jar", "hadoop-common-3.5.0.jar", "eventstream-1.0.1.jar"):
        (lib / name).touch()
    monkeypatch.setattr(tools, "hadoop_lib", lambda: lib)
    assert [p.name for p in tools.s3a_jars()] == ["eventstream-1.0.1.jar", "hadoop-aws-3.5.0.jar",
                                                  f"s3-{tools.versions.AWS_SDK}.jar"]
