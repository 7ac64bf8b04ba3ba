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


FAKE_GO = """#!/bin/sh
# a stand-in for `go`: notes each call and its module's files; `go build -o OUT` writes OUT
echo "$@" >> "$GO_CALLS"; cat go.mod main.go >> "$GO_CALLS"
[ "$1" = build ] && [ -n "$GO_FAILS" ] && { echo "cannot find module providing package" >&2; exit 1; }
[ "$1" = build ] && printf '#!/bin/sh\\n' > "$4"
exit 0
"""


def _fake_go(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "go").write_text(FAKE_GO)
    (bin_dir / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GO_CALLS", str(tmp_path / "calls"))


def test_rclone_is_built_once_from_a_main_that_links_only_what_the_lab_runs(monkeypatch, tmp_path):
    _fake_go(tmp_path, monkeypatch)
    binary = tools.rclone()
    assert binary == tmp_path / "cache" / "go" / "bin" / f"rclone-{tools.versions.RCLONE}-lab" and binary.exists()
    calls = (tmp_path / "calls").read_text()
    assert calls.startswith("mod tidy\nmodule perfkit.lab/rclone\n")
    assert f"require github.com/rclone/rclone {tools.versions.RCLONE}\n" in calls
    imported = [line.strip() for line in calls.split("import (", 1)[1].split(")", 1)[0].splitlines() if line.strip()]
    assert imported == ['"github.com/rclone/rclone/cmd"', '_ "github.com/rclone/rclone/backend/local"',
                        '_ "github.com/rclone/rclone/backend/hdfs"', '_ "github.com/rclone/rclone/cmd/serve"',
                        '_ "github.com/rclone/rclone/cmd/serve/nfs"', '_ "github.com/rclone/rclone/cmd/mount"',
                        '_ "github.com/rclone/rclone/cmd/version"']
    assert "backend/all" not in calls and "func main() {\n\tcmd.Main()\n}" in calls
    assert tools.rclone() == binary and calls == (tmp_path / "calls").read_text()  # built once
    assert list(binary.parent.iterdir()) == [binary]  # no work folder left behind


def test_a_failed_go_build_names_the_module_and_the_fix_and_leaves_no_binary(monkeypatch, tmp_path):
    _fake_go(tmp_path, monkeypatch)
    monkeypatch.setenv("GO_FAILS", "1")
    with pytest.raises(PerfkitError, match=r"(?s)`go build` of rclone .*github.com/rclone/rclone@.*cannot find module.*"
                                           r"Fix: check that Go can reach its module proxy"):
        tools.rclone()
    assert list((tmp_path / "cache" / "go" / "bin").iterdir()) == []
