"""The Hive metastore and HiveServer2 of the lab, as configured (nothing is started or fetched): loopback only,
ports from LabPorts, Hive 4's location rewriting off, and the S3 secret only in the environment."""
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from perfkit.lab import hive_jars, tools
from perfkit.lab.hive import HiveServer2
from perfkit.lab.metastore import HiveMetastore, get_all_databases, spark_metastore_conf
from perfkit.lab.settings import LabPorts, lab_credentials

PORTS = LabPorts(namenode_rpc=19000, s3=17070, metastore=19083, hiveserver2=11000)
UNPACK_HIVE_EXEC = hive_jars.hive_exec_classes  # before no_fetching puts a folder on paper in its place


@pytest.fixture(autouse=True)
def no_fetching(tools_on_paper, monkeypatch):
    """Tool locations that exist only on paper (tests/unit/conftest.py), a JDK too: building a command line must
    not fetch or run anything."""
    monkeypatch.setattr(tools, "java_home", lambda: tools_on_paper / "jdk")


@pytest.fixture
def secret(tmp_path) -> str:
    return lab_credentials(create=True, home=tmp_path)["secret_key"]


def _site(path: Path) -> dict[str, str]:
    return {p.findtext("name"): p.findtext("value") for p in ET.parse(path).getroot().iter("property")}


def test_the_metastore_listens_on_loopback_at_its_lab_port(tmp_path, secret):
    metastore = HiveMetastore(tmp_path, PORTS)
    metastore.write_config()
    site = _site(tmp_path / "metastore" / "conf" / "metastore-site.xml")
    assert site["metastore.thrift.bind.host"] == "127.0.0.1"
    assert site["metastore.thrift.port"] == "19083"
    assert metastore.uri == "thrift://127.0.0.1:19083" and metastore.ports_needed() == {"metastore": 19083}
    # a single space (not empty: empty means "the default transformer"), kept through the XML file
    assert site["metastore.metadata.transformer.class"] == " "
    assert site["metastore.housekeeping.threads.on"] == "false" and site["metastore.compactor.initiator.on"] == "false"
    assert site["metastore.warehouse.dir"] == "hdfs://127.0.0.1:19000/warehouse"
    assert str(tmp_path / "metastore" / "metastore_db") in site["javax.jdo.option.ConnectionURL"]


def test_hiveserver2_listens_on_loopback_only_and_uses_the_shared_metastore(tmp_path, secret):
    server = HiveServer2(tmp_path, PORTS)
    server.write_config()
    site = _site(tmp_path / "hive" / "conf" / "hive-site.xml")
    assert site["hive.server2.thrift.bind.host"] == "127.0.0.1" and site["hive.server2.thrift.port"] == "11000"
    # its web UI (for its JMX: Hive's S3A statistics) on loopback too, refreshed each read (10 ms periods)
    assert site["hive.server2.webui.host"] == "127.0.0.1"
    assert site["hive.server2.webui.port"] == str(PORTS.hiveserver2_http)
    assert (tmp_path / "hive" / "conf" / "hadoop-metrics2.properties").read_text() == "*.periodMillis=10\n"
    assert site["hive.metastore.uris"] == "thrift://127.0.0.1:19083"
    assert site["hive.execution.engine"] == "mr" and site["mapreduce.framework.name"] == "local"
    assert site["hive.server2.enable.doAs"] == "false" and site["hive.server2.authentication"] == "NONE"
    assert all(site[k].startswith((str(tmp_path), tmp_path.as_uri())) for k in
               ("hive.exec.scratchdir", "hive.exec.local.scratchdir", "hive.querylog.location"))
    assert server.ports_needed() == {"hiveserver2": 11000, "hiveserver2_http": PORTS.hiveserver2_http}


def test_hiveserver2_loads_hive_exec_from_a_folder_and_stages_its_jobs_in_the_lab(tmp_path, secret):
    """With local MapReduce a job's JobConf names no jar (the classes come from a folder), so no 83 MB hive-exec is
    copied per stage; the jobs' staging folders are in the lab's home, not /tmp/hadoop."""
    lib = tmp_path / "cache" / "hive-lib"  # tools_on_paper's, empty
    for jar in ("hive-exec-4.0.1.jar", "hive-common-4.0.1.jar", "guava-22.0.jar"):
        (lib / jar).touch()
    server = HiveServer2(tmp_path, PORTS)
    argv = server.argv()
    classpath = argv[argv.index("-cp") + 1].split(":")
    hive_part = classpath[1:4]
    assert hive_part == [str(tmp_path / "cache" / "hive-exec-classes"), str(lib / "guava-22.0.jar"),
                         str(lib / "hive-common-4.0.1.jar")]
    assert not any("hive-exec-4.0.1.jar" in entry or entry.endswith("/*") and "hive-lib" in entry
                   for entry in classpath)
    staging = server.site()["mapreduce.jobtracker.staging.root.dir"]
    assert staging == (tmp_path / "hive" / "mapred-staging").as_uri()


def test_hive_exec_is_unpacked_once_with_every_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path / "cache"))
    lib = tmp_path / "cache" / "hive-4.0.1" / "lib"
    lib.mkdir(parents=True)
    monkeypatch.setattr(hive_jars, "hive_lib", lambda: lib)
    monkeypatch.setattr(hive_jars, "hive_exec_classes", UNPACK_HIVE_EXEC)
    entries = {"org/apache/hadoop/hive/ql/exec/mr/ExecDriver.class": b"\xca\xfe\xba\xbe driver",
               "META-INF/services/org.apache.hadoop.fs.FileSystem": b"one.FileSystem\n"}
    with zipfile.ZipFile(lib / "hive-exec-4.0.1.jar", "w") as jar:
        for name, data in entries.items():
            jar.writestr(name, data)
    folder = hive_jars.hive_exec_classes()
    assert folder == tmp_path / "cache" / "hive-4.0.1" / "hive-exec-4.0.1-classes"
    assert {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
            and p.name != ".complete"} == entries
    (lib / "hive-exec-4.0.1.jar").unlink()  # unpacked already: the jar is not read again
    assert hive_jars.hive_exec_classes() == folder and (folder / "org/apache/hadoop/hive/ql/exec/mr").is_dir()


@pytest.mark.parametrize("service", [HiveMetastore, HiveServer2])
def test_the_s3_secret_is_in_the_environment_only(tmp_path, secret, service):
    daemon = service(tmp_path, PORTS)
    daemon.write_config()
    argv, env = daemon.argv(), daemon.env()
    assert not any(secret in arg for arg in argv)  # `ps` shows argv to every user
    assert "-Duser.timezone=UTC" in argv
    assert env["AWS_SECRET_ACCESS_KEY"] == secret
    for path in daemon.conf_dir.iterdir():  # Hive would echo a key from its configuration in logs and `set`
        assert secret not in path.read_text()
    core = _site(daemon.conf_dir / "core-site.xml")
    assert core["fs.s3a.endpoint"] == "http://127.0.0.1:17070" and core["fs.s3a.path.style.access"] == "true"
    assert core["fs.s3a.aws.credentials.provider"].endswith("EnvironmentVariableCredentialsProvider")


def test_spark_uses_the_shared_metastore_through_hive_4_client_jars(tmp_path, monkeypatch):
    lib = tmp_path / "hive-lib"
    lib.mkdir()
    for name in ("hive-exec-4.0.1.jar", "guava-22.0.jar", "hive-service-4.0.1.jar", "derby-10.14.2.0.jar"):
        (lib / name).touch()
    monkeypatch.setattr(hive_jars, "hive_lib", lambda: lib)
    conf = spark_metastore_conf(PORTS)
    assert conf["spark.hadoop.hive.metastore.uris"] == "thrift://127.0.0.1:19083"
    assert conf["spark.sql.catalogImplementation"] == "hive" and conf["spark.sql.hive.metastore.version"] == "4.0.1"
    assert conf["spark.sql.hive.metastore.jars"] == "path"
    assert conf["spark.sql.hive.metastore.jars.path"].split(",") == [(lib / "guava-22.0.jar").as_uri(),
                                                                     (lib / "hive-exec-4.0.1.jar").as_uri()]


def test_the_metastore_probe_fails_fast_on_a_closed_port():
    from thrift.transport.TTransport import TTransportException

    with pytest.raises(TTransportException, match="Could not connect"):
        get_all_databases("127.0.0.1", 1, timeout_s=1)


def test_the_schema_is_made_once_and_a_half_made_one_again(tmp_path, secret, monkeypatch):
    import subprocess

    from perfkit.lab import metastore as module

    runs = []

    def fake_run(argv, **kwargs):
        runs.append(argv)
        assert not (tmp_path / "metastore" / "metastore_db" / "leftover").exists()  # the crashed init's files are gone
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(module.subprocess, "run", fake_run)
    metastore = HiveMetastore(tmp_path, PORTS)
    (metastore.database / "leftover").parent.mkdir(parents=True)
    (metastore.database / "leftover").touch()  # an init that died half-way: no marker
    metastore.init_schema()
    assert len(runs) == 1 and runs[0][-3:] == ["-dbType", "derby", "-initSchema"]
    metastore.database.mkdir()  # what the real tool leaves
    metastore.init_schema()  # marked done: not again
    assert len(runs) == 1


def test_hiveserver2_is_healthy_once_its_web_ui_listens_too(tmp_path, monkeypatch):
    """The web UI (its JMX: Hive's S3A statistics) starts after the Thrift service answers."""
    server = HiveServer2(tmp_path, PORTS)
    monkeypatch.setattr("perfkit.lab.hive.hs2.select_one", lambda port, timeout: (True, "SELECT 1 ok"))
    listening = set()
    monkeypatch.setattr("perfkit.lab.hive.port_in_use", lambda host, port: port in listening)
    assert server.health() == (False, f"SELECT 1 ok; web UI not up yet (port {PORTS.hiveserver2_http})")
    listening.add(PORTS.hiveserver2_http)
    assert server.health() == (True, "SELECT 1 ok")
