"""PERFKIT_LAB_JAVA_OPTIONS: what every JVM the lab starts adds to its options (the tests' C1-only labs), checked
on its way in, carried into each JVM's command line and config, and said in the runs' versions while in use."""
import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import java, tools, trino_dist
from perfkit.lab.hdfs import Hdfs
from perfkit.lab.provider import LabProvider
from perfkit.lab.settings import (JAVA_OPTIONS_ENV, LabPorts, extra_java_options, java_options_in_use,
                                  lab_java_options, note_java_options)
from perfkit.lab.trino import TrinoServer

C1 = "-XX:TieredStopAtLevel=1"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    monkeypatch.delenv(JAVA_OPTIONS_ENV, raising=False)
    (tmp_path / "lab").mkdir()
    return tmp_path / "lab"


def test_unset_adds_nothing_and_options_are_split_as_a_shell_would(home, monkeypatch):
    assert extra_java_options() == []
    assert lab_java_options(home) == [f"-Djava.io.tmpdir={home / 'tmp'}"]
    monkeypatch.setenv(JAVA_OPTIONS_ENV, f"  {C1} '-Dperfkit.note=two words' ")
    assert extra_java_options() == [C1, "-Dperfkit.note=two words"]
    assert lab_java_options(home) == [f"-Djava.io.tmpdir={home / 'tmp'}", C1, "-Dperfkit.note=two words"]


@pytest.mark.parametrize("value, says", [
    ("TieredStopAtLevel=1", "'TieredStopAtLevel=1' is not a JVM option"),
    (f"{C1} '-Dunclosed", "No closing quotation"),
])
def test_a_value_that_is_not_jvm_options_is_refused_naming_the_variable(home, monkeypatch, value, says):
    monkeypatch.setenv(JAVA_OPTIONS_ENV, value)
    with pytest.raises(PerfkitError, match=rf"^{JAVA_OPTIONS_ENV}=.*{says}.*Fix: "):
        extra_java_options()


@pytest.mark.usefixtures("tools_on_paper")
def test_the_daemons_and_trino_start_with_the_options(home, monkeypatch, tmp_path):
    monkeypatch.setenv(JAVA_OPTIONS_ENV, C1)
    monkeypatch.setattr(tools, "java_home", lambda: tmp_path / "jdk")
    monkeypatch.setattr(tools, "hadoop_lib", lambda: tmp_path / "hadoop" / "lib")
    namenode = Hdfs(home, LabPorts()).argv()
    assert C1 in namenode and namenode.index(C1) < namenode.index("-cp")  # a JVM option, not an argument
    monkeypatch.setattr(trino_dist, "trino_home", lambda: tmp_path / "dist")
    monkeypatch.setattr(java, "java_for_trino", lambda: tmp_path / "jdk")
    trino = TrinoServer(home, LabPorts())
    trino.write_config()
    assert C1 in (trino.etc / "jvm.config").read_text().splitlines()
    assert C1 in LabProvider().hadoop_command("fs", "-ls", "/")  # the Hadoop tools' JVMs too


def test_the_runs_say_the_options_while_a_daemon_started_with_them_may_run(home, monkeypatch):
    assert java_options_in_use(home) == "" and "lab JVM options" not in LabProvider().versions()
    monkeypatch.setenv(JAVA_OPTIONS_ENV, C1)
    note_java_options(home, whole_lab_down=True)
    monkeypatch.delenv(JAVA_OPTIONS_ENV)  # a report's process without the variable, on that lab
    assert java_options_in_use(home) == C1
    assert LabProvider().versions()["lab JVM options"] == f"{C1} ({JAVA_OPTIONS_ENV})"
    note_java_options(home, whole_lab_down=False)  # more daemons started without: the first ones still run
    assert java_options_in_use(home) == C1
    note_java_options(home, whole_lab_down=True)  # the whole lab starts anew without them
    assert java_options_in_use(home) == "" and "lab JVM options" not in LabProvider().versions()
