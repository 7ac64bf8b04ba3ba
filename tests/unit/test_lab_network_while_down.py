"""`perfkit lab network NAME` on a lab that is down records the choice and starts nothing: the lab's S3 goes behind
that network when the lab starts (no real lab: nothing runs in the test's lab home)."""
import pytest
from click.testing import CliRunner

from perfkit.cli import main
from perfkit.lab import Lab
from perfkit.lab.s3_network import current_network
from perfkit.lab.settings import LabPorts, default_s3_endpoint, lab_s3_endpoint


def test_a_network_chosen_while_the_lab_is_down_is_recorded_and_nothing_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(Lab, "up", lambda self, *args, **kwargs: pytest.fail("a service was started"))
    result = CliRunner().invoke(main, ["lab", "network", "ec2-s3"])
    assert result.exit_code == 0, result.output
    assert "(recorded: the lab is down, and its S3 goes behind it when the lab starts)" in result.output
    assert current_network(tmp_path).name == "ec2-s3"
    ports = LabPorts.from_env()
    proxy, server = Lab(home=tmp_path).service("s3-network"), Lab(home=tmp_path).service("s3")
    assert lab_s3_endpoint(ports, tmp_path) == proxy.endpoint == f"http://127.0.0.1:{ports.s3}"  # the clients' port
    assert server.endpoint == f"http://127.0.0.1:{ports.s3_behind_proxy}"  # the server will start behind the proxy
    assert CliRunner().invoke(main, ["lab", "network", "local"]).exit_code == 0
    assert current_network(tmp_path).name == "local"
    assert lab_s3_endpoint(ports, tmp_path) == default_s3_endpoint(ports) == server.endpoint  # the server takes it


def test_the_s3_server_starts_with_the_network_s_proxy_when_its_clients_go_through_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(Lab, "up", lambda self, *args, **kwargs: pytest.fail("a service was started"))
    lab = Lab(home=tmp_path)
    assert [s.name for s in lab.select(["s3"])] == ["s3"]  # network local: S3's clients reach it directly
    assert CliRunner().invoke(main, ["lab", "network", "ec2-s3"]).exit_code == 0
    assert [s.name for s in lab.select(["s3"])] == ["s3", "s3-network"]
