"""`perfkit lab network NAME` on a lab that is down records the choice and starts nothing: the lab's S3 goes behind
that network when the lab starts (no real lab: nothing runs in the test's lab home)."""
import pytest
from click.testing import CliRunner

from perfkit.cli import main
from perfkit.lab import Lab
from perfkit.lab.s3_network import current_network
from perfkit.lab.settings import LabPorts, direct_s3_endpoint, lab_s3_endpoint


def test_a_network_chosen_while_the_lab_is_down_is_recorded_and_nothing_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(Lab, "up", lambda self, *args, **kwargs: pytest.fail("a service was started"))
    result = CliRunner().invoke(main, ["lab", "network", "ec2-s3"])
    assert result.exit_code == 0, result.output
    assert "(recorded: the lab is down, and its S3 goes behind it when the lab starts)" in result.output
    assert current_network(tmp_path).name == "ec2-s3"
    proxy = Lab(home=tmp_path).service("s3-network")
    assert lab_s3_endpoint(LabPorts.from_env(), tmp_path) == proxy.endpoint  # the clients will go through it
    assert CliRunner().invoke(main, ["lab", "network", "local"]).exit_code == 0
    assert current_network(tmp_path).name == "local"
    assert lab_s3_endpoint(LabPorts.from_env(), tmp_path) == direct_s3_endpoint(LabPorts.from_env())


def test_the_s3_server_starts_with_the_network_s_proxy_when_its_clients_go_through_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(Lab, "up", lambda self, *args, **kwargs: pytest.fail("a service was started"))
    lab = Lab(home=tmp_path)
    assert [s.name for s in lab.select(["s3"])] == ["s3"]  # network local: S3's clients reach it directly
    assert CliRunner().invoke(main, ["lab", "network", "ec2-s3"]).exit_code == 0
    assert [s.name for s in lab.select(["s3"])] == ["s3", "s3-network"]
