"""The lab's shape: one process, or a cluster's (YARN, several DataNodes, each node on a loopback
address of its own)."""
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import Lab, hive_jars, tools
from perfkit.lab.hive import HiveServer2
from perfkit.lab.process import Daemon
from perfkit.lab.settings import LabPorts, lab_credentials
from perfkit.lab.shape import CLUSTER, ONE_PROCESS, current_shape, lab_replication, save_shape, shape_named
from perfkit.lab.yarn import Yarn


def _site(path) -> dict[str, str]:
    return {p.findtext("name"): p.findtext("value") for p in ET.parse(path).getroot()}


def test_a_lab_home_without_a_shape_is_one_process_and_the_cluster_shape_is_kept(tmp_path):
    assert current_shape(tmp_path).name == ONE_PROCESS and lab_replication(tmp_path) == 1
    save_shape(shape_named(CLUSTER), tmp_path)
    shape = current_shape(tmp_path)
    assert (shape.name, shape.datanodes, shape.replication, shape.node_managers) == (CLUSTER, 3, 2, 2)
    assert [shape.node_host(i) for i in range(3)] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    save_shape(shape_named(ONE_PROCESS), tmp_path)  # the default again: no file left
    assert not (tmp_path / "shape.json").exists() and current_shape(tmp_path).node_host(0) == "127.0.0.1"


def test_an_unknown_or_unreadable_shape_is_named_with_the_fix(tmp_path):
    with pytest.raises(PerfkitError,
                       match=r"lab shape 'yarn' is not known: give one-process \(the default\) or cluster"):
        shape_named("yarn")
    (tmp_path / "shape.json").write_text("{not json")
    with pytest.raises(PerfkitError, match=r"shape setting .*shape.json is unreadable .*Fix: `perfkit lab down`"):
        current_shape(tmp_path)


def test_the_one_process_lab_neither_starts_nor_offers_yarn(tmp_path):
    lab = Lab(home=tmp_path)
    assert "yarn" not in [s.name for s in lab.select()]
    assert "yarn" in [s.name for s in lab.services]  # `down` and `status` still see it
    with pytest.raises(PerfkitError, match=r"yarn runs in the cluster shape only, .*`perfkit lab up --shape cluster`"):
        lab.select(["nodemanager0"])
    assert "livy" not in [s.name for s in lab.select()]
    with pytest.raises(PerfkitError, match=r"livy and yarn run in the cluster shape only, and this lab is one-process"):
        lab.select(["livy", "resourcemanager"])


def test_the_cluster_shape_runs_yarn_before_hive_and_three_datanodes_on_their_nodes(tmp_path):
    lab = Lab(home=tmp_path)
    lab.set_shape(shape_named(CLUSTER))
    names = [s.name for s in lab.select(["hiveserver2"])]
    assert names.index("hdfs") < names.index("yarn") < names.index("hiveserver2")
    hdfs = lab.service("hdfs")
    assert [d.name for d in hdfs.datanodes] == ["datanode", "datanode1", "datanode2"]
    lab_credentials(create=True, home=tmp_path)  # core-site.xml names the lab's S3 keys
    hdfs.write_config()
    site = _site(tmp_path / "hadoop-conf-dn2" / "hdfs-site.xml")
    assert site["dfs.datanode.address"] == "127.0.0.4:9886" and site["dfs.datanode.hostname"] == "127.0.0.4"
    assert site["dfs.replication"] == "2"
    assert hdfs.addresses()["datanode1"] == "127.0.0.3:9876"


def test_the_shape_changes_only_while_the_lab_is_down(tmp_path, monkeypatch):
    lab = Lab(home=tmp_path)
    monkeypatch.setattr(Lab, "pids", lambda self: [4242])
    with pytest.raises(PerfkitError, match=r"runs in the one-process shape; it changes shape only while down. "
                                           r"Fix: `perfkit lab down`, then `perfkit lab up --shape cluster`"):
        lab.set_shape(shape_named(CLUSTER))
    assert current_shape(tmp_path).name == ONE_PROCESS
    lab.set_shape(shape_named(ONE_PROCESS))  # the shape it has: nothing to change, not refused


def test_each_nodemanager_listens_on_its_node_and_its_containers_bind_there_too(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "node_address_library", lambda: tmp_path / "bind.so")
    lab_credentials(create=True, home=tmp_path)
    yarn = Yarn(tmp_path, LabPorts(), shape_named(CLUSTER))
    assert [d.name for d in yarn.daemons] == ["resourcemanager", "nodemanager0", "nodemanager1"]
    site = yarn.nodemanager_site(1)
    assert site["yarn.nodemanager.address"] == "127.0.0.3:8051"
    assert site["yarn.nodemanager.webapp.address"] == "127.0.0.3:8052"
    assert site["yarn.nodemanager.local-dirs"] == tmp_path / "yarn" / "nm1" / "local"
    keys = lab_credentials(home=tmp_path)
    assert site["yarn.nodemanager.admin-env"].split(",") == [
        f"LD_PRELOAD={tmp_path / 'bind.so'}", "PERFKIT_BIND_HOST=127.0.0.3", f"AWS_ACCESS_KEY_ID={keys['access_key']}",
        f"AWS_SECRET_ACCESS_KEY={keys['secret_key']}", "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX"]
    assert yarn.node_id(0) == "127.0.0.2:8041"
    assert yarn.env(None)["PERFKIT_BIND_HOST"] == "127.0.0.1"  # the ResourceManager: the master's address
    assert set(yarn.ports_needed().values()) >= {8032, 8030, 8031, 8033, 8088, 8041, 8051, 13562, 13572}


def test_hive_runs_its_mapreduce_on_yarn_in_the_cluster_shape_only(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "yarn_lib", lambda: tmp_path / "yarn-lib")
    monkeypatch.setattr(tools, "hadoop_lib", lambda: tmp_path / "lib")
    monkeypatch.setattr(hive_jars, "hive_lib", lambda: tmp_path / "hive-lib")
    assert HiveServer2(tmp_path, LabPorts()).site()["mapreduce.framework.name"] == "local"
    save_shape(shape_named(CLUSTER), tmp_path)
    hive = HiveServer2(tmp_path, LabPorts())
    site = hive.site()
    assert "yarn" in hive.needs and site["mapreduce.framework.name"] == "yarn"
    # on YARN each job's tasks load hive-exec from the jar submitted with it: the jar stays on the class path
    assert hive.hive_classpath() == f"{tmp_path / 'hive-lib'}/*" and "mapreduce.jobtracker.staging.root.dir" not in site
    assert site["yarn.resourcemanager.address"] == "127.0.0.1:8032"
    assert site["mapreduce.application.classpath"].endswith(
        f"{tmp_path / 'yarn-lib'}/*,{tmp_path / 'lib'}/*,{tmp_path / 'hive' / 'task-lib'}/*")  # Hive's jars last
    for folder, jars in (("lib", ["guava-33.4.8-jre.jar", "reload4j-1.2.22.jar"]), ("yarn-lib", ["jna-5.2.0.jar"]),
                         ("hive-lib", ["guava-22.0.jar", "hive-exec-4.0.1.jar", "log4j-1.2-api-2.18.0.jar",
                                       "commons-collections-3.2.2.jar", "jna-5.2.0.jar", "slf4j-api-1.7.30.jar"])):
        (tmp_path / folder).mkdir()
        for jar in jars:
            (tmp_path / folder / jar).touch()
    hive.link_task_lib()
    linked = sorted(p.name for p in (tmp_path / "hive" / "task-lib").iterdir())
    assert linked == ["commons-collections-3.2.2.jar", "hive-exec-4.0.1.jar"]  # no second guava, jna, no log4j 2


def test_yarn_keeps_only_the_jars_the_hadoop_folder_lacks():
    assert tools.artifact("guava-30.1-jre.jar") == tools.artifact("guava-33.4.8-jre.jar") == "guava"
    assert tools.artifact("jetty-server-9.4.58.v20250814.jar") == "jetty-server"
    assert tools.artifact("hadoop-yarn-server-nodemanager-3.5.0.jar") == "hadoop-yarn-server-nodemanager"
    assert tools.artifact("org.eclipse.persistence.core-2.7.14.jar") == "org.eclipse.persistence.core"


BIND = """
import socket, sys
found = []
for family, host in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::"), (socket.AF_INET, "127.0.0.1")):
    s = socket.socket(family)
    s.bind((host, 0))
    found.append(s.getsockname()[0])
print(",".join(found))
"""


def test_the_bind_shim_puts_a_wildcard_bind_on_the_nodes_address_and_leaves_an_explicit_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))
    library = tools.node_address_library()
    assert tools.node_address_library() == library  # built once
    env = {"LD_PRELOAD": str(library), "PERFKIT_BIND_HOST": "127.0.0.3"}
    out = subprocess.run([sys.executable, "-c", BIND], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["127.0.0.3,::ffff:127.0.0.3,127.0.0.1"]
    plain = subprocess.run([sys.executable, "-c", BIND], capture_output=True, text=True, check=True).stdout
    assert plain.split() == ["0.0.0.0,::,127.0.0.1"]  # without it: the wildcard, as asked


def test_a_daemon_started_with_the_shim_listens_on_its_node_only(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))
    server = Daemon("toy-listener", tmp_path, "perfkit-toy-listener")
    code = ("import socket, time; s = socket.socket(); s.bind(('', 0)); s.listen(); "
            "open('port', 'w').write(str(s.getsockname()[1])); time.sleep(30)  # perfkit-toy-listener")
    server.start([sys.executable, "-c", code], env={"LD_PRELOAD": str(tools.node_address_library()),
                                                    "PERFKIT_BIND_HOST": "127.0.0.4"}, cwd=tmp_path)
    try:
        from perfkit.waiting import poll_until

        poll_until(lambda: (tmp_path / "port").exists() and (tmp_path / "port").read_text(), 10, 0.05, what="port")
        port = int((tmp_path / "port").read_text())
        with socket.create_connection(("127.0.0.4", port), timeout=2):
            pass
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2)
    finally:
        server.stop()


CONNECT = """
import socket, sys
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")):
    s = socket.socket(family)
    s.connect((host, int(sys.argv[1])))
    s.close()
"""


def test_the_shim_makes_a_connection_to_loopback_leave_from_the_nodes_address(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path))
    env = {"LD_PRELOAD": str(tools.node_address_library()), "PERFKIT_BIND_HOST": "127.0.0.3"}
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = str(server.getsockname()[1])
        subprocess.run([sys.executable, "-c", CONNECT, port], env=env, check=True)
        peers = [server.accept() for _ in range(2)]
        assert [addr[0] for _, addr in peers] == ["127.0.0.3", "127.0.0.3"]  # the kernel alone: 127.0.0.1
        subprocess.run([sys.executable, "-c", CONNECT, port], check=True)
        assert [server.accept()[1][0] for _ in range(2)] == ["127.0.0.1", "127.0.0.1"]
        for conn, _ in peers:
            conn.close()


def test_profile_lab_cluster_runs_spark_on_the_labs_yarn_and_refuses_a_lab_without_it(tmp_path, monkeypatch):
    from perfkit.config import load_profile
    from perfkit.engines import get_engine

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    profile = load_profile("lab-cluster")
    assert (profile.name, profile.spark_master, profile.provider.name) == ("lab-cluster", "yarn", "lab-cluster")
    environment = profile.provider.spark_environment()
    assert environment["HADOOP_CONF_DIR"] == str(tmp_path / "yarn" / "conf")
    assert environment["PYSPARK_PYTHON"] == sys.executable  # the executors run the driver's Python
    with pytest.raises(PerfkitError, match=r"profile lab-cluster runs Spark on the lab's YARN, and the lab has the "
                                           r"one-process shape. Fix: `perfkit lab down`, then `perfkit lab up "
                                           r"--shape cluster`"):
        get_engine("spark", profile).check()
    save_shape(shape_named(CLUSTER), tmp_path)
    with socket.socket() as closed:  # a port nothing listens on: no ResourceManager (whatever lab runs here)
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("PERFKIT_LAB_PORT_YARN_WEB", str(closed.getsockname()[1]))
    with pytest.raises(PerfkitError, match=r"YARN, which is not up \(ResourceManager REST API does not answer\)"):
        get_engine("spark", profile).check()


def test_every_record_of_a_lab_cluster_run_says_where_it_ran(tmp_path, monkeypatch):
    from perfkit import provenance
    from perfkit.config import load_profile

    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    save_shape(shape_named(CLUSTER), tmp_path)
    config = provenance.run_config(load_profile("lab-cluster"), {"rows": 1})
    assert config["cluster"] == {"shape": "cluster", "datanodes": "127.0.0.2:9866, 127.0.0.3:9876, 127.0.0.4:9886",
                                 "replication": "2", "yarn nodemanagers": "127.0.0.2:8041, 127.0.0.3:8051",
                                 "yarn node resources": "4096 MB, 2 vcores each"}
    assert "cluster" not in provenance.run_config(load_profile("lab"), {})  # the one-process lab says nothing more

    class Engine:
        name = "spark"

        def versions(self):
            return {"spark": "Spark 4.3.0 (yarn)"}

        def placement(self):
            return {"master": "yarn", "application": "application_1_0001"}

    provenance.record_engine(config, Engine())
    assert config["versions"]["spark"] == "Spark 4.3.0 (yarn)"
    assert config["placement"] == {"spark": {"master": "yarn", "application": "application_1_0001"}}


def test_the_conditions_name_yarn_the_executors_and_the_datanodes_a_run_recorded():
    from types import SimpleNamespace

    from perfkit.findings import where

    config = {"cluster": {"shape": "cluster", "datanodes": "127.0.0.2:9866, 127.0.0.3:9876", "replication": "2",
                          "yarn nodemanagers": "127.0.0.2:8041", "yarn node resources": "4096 MB, 2 vcores each"},
              "placement": {"spark": {"master": "yarn", "application": "application_7_0001",
                                      "executors": "2 (127.0.0.2:1, 127.0.0.3:2), 1 core and 1g each"}}}
    assert where(SimpleNamespace(name="lab-cluster"), None, config) == (
        "the embedded lab in its cluster shape on this machine; YARN NodeManagers 127.0.0.2:8041 (4096 MB, 2 vcores "
        "each); HDFS DataNodes 127.0.0.2:9866, 127.0.0.3:9876, replication 2; spark on yarn, application "
        "application_7_0001, executors 2 (127.0.0.2:1, 127.0.0.3:2), 1 core and 1g each")
    assert where(SimpleNamespace(name="lab")) == "the embedded lab on this machine"
