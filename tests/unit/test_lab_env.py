"""The lab's environment variables: each bad value is refused in one line that names it and the fix."""
import pytest

from perfkit.errors import PerfkitError
from perfkit.lab import Lab
from perfkit.lab.settings import LabPorts, datanode_count, lab_credentials
from perfkit.engines.spark_settings import driver_log_conf


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ([f"PERFKIT_LAB_PORT_{name.upper()}" for name in LabPorts.__dataclass_fields__]
                + ["PERFKIT_LAB_DATANODES"]):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("raw", ["²", "٩٨٧٠", "70a", "", "0", "65536"])
def test_a_port_must_be_ascii_digits_in_range(monkeypatch, raw):
    monkeypatch.setenv("PERFKIT_LAB_PORT_S3", raw)
    with pytest.raises(PerfkitError, match=rf"^PERFKIT_LAB_PORT_S3={raw!r} is not a port number: set it to an integer"):
        LabPorts.from_env()


@pytest.mark.parametrize("raw", ["²", "٣", "0", "9", "two"])
def test_the_datanode_count_must_be_ascii_digits_from_1_to_8(monkeypatch, raw):
    monkeypatch.setenv("PERFKIT_LAB_DATANODES", raw)
    with pytest.raises(PerfkitError, match=rf"^PERFKIT_LAB_DATANODES={raw!r}: give a number of DataNodes from 1 to 8"):
        datanode_count()


def test_ascii_values_are_taken(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_S3", "7171")
    monkeypatch.setenv("PERFKIT_LAB_DATANODES", "3")
    assert LabPorts.from_env().s3 == 7171 and datanode_count() == 3


def test_two_services_on_one_port_are_refused_naming_both(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_NFS", "10011")
    monkeypatch.setenv("PERFKIT_LAB_PORT_HIVESERVER2", "10011")
    with pytest.raises(PerfkitError) as err:
        LabPorts.from_env()
    text = str(err.value)
    assert "\n" not in text
    assert "PERFKIT_LAB_PORT_HIVESERVER2 and PERFKIT_LAB_PORT_NFS are both port 10011" in text
    assert "Fix: give each PERFKIT_LAB_PORT_<NAME> its own port" in text


def test_a_port_moved_onto_a_default_names_the_default(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_NFS", "10000")
    with pytest.raises(PerfkitError, match=r"PERFKIT_LAB_PORT_HIVESERVER2 \(default 10000\) and PERFKIT_LAB_PORT_NFS"):
        LabPorts.from_env()


def test_later_datanodes_count_with_their_offset(monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_PORT_DATANODE", "9850")  # datanode2 would land on the NameNode's web port 9870
    assert LabPorts.from_env().datanode == 9850  # one DataNode: no clash
    monkeypatch.setenv("PERFKIT_LAB_DATANODES", "3")
    with pytest.raises(PerfkitError, match=r"PERFKIT_LAB_PORT_NAMENODE_HTTP \(default 9870\) and "
                                           r"PERFKIT_LAB_PORT_DATANODE \+ 20 \(datanode2\) are both port 9870"):
        LabPorts.from_env()
    monkeypatch.setenv("PERFKIT_LAB_PORT_DATANODE", "65520")
    with pytest.raises(PerfkitError,
                       match=r"datanode2\) = 65540 is beyond 65535 .*Fix: set PERFKIT_LAB_PORT_DATANODE lower"):
        LabPorts.from_env()


def test_ports_given_to_the_lab_are_checked_too(tmp_path):
    with pytest.raises(PerfkitError, match="PERFKIT_LAB_PORT_S3 .*and PERFKIT_LAB_PORT_NFS .*are both port 7070"):
        Lab(home=tmp_path, ports=LabPorts(nfs=7070))


@pytest.mark.parametrize("inside", [False, True])
def test_a_lab_home_that_is_a_file_is_refused(monkeypatch, tmp_path, inside):
    afile = tmp_path / "afile"
    afile.write_text("x")
    home = afile / "lab" if inside else afile
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(home))
    for call in (Lab, lambda: lab_credentials(create=True)):
        with pytest.raises(PerfkitError, match=rf"^PERFKIT_LAB_HOME {home} is not a folder.*Fix: set PERFKIT_LAB_HOME"):
            call()


@pytest.mark.parametrize("below", ["", "logs"])
def test_a_log_dir_that_is_a_file_is_refused(monkeypatch, tmp_path, below):
    afile = tmp_path / "afile"
    afile.write_text("x")
    monkeypatch.setenv("PERFKIT_LOG_DIR", str(afile / below))
    with pytest.raises(PerfkitError,
                       match=rf"^PERFKIT_LOG_DIR={afile / below} is .*Fix: set PERFKIT_LOG_DIR to a folder"):
        driver_log_conf()


def test_a_log_dir_is_made_when_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LOG_DIR", str(tmp_path / "logs"))
    assert "log4j2.configurationFile" in driver_log_conf()["spark.driver.extraJavaOptions"]
    assert (tmp_path / "logs" / "spark-driver-log4j2.properties").exists()
