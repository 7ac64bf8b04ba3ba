"""A real moto server over HTTP: the stand-in for AWS-only services (CloudWatch, EC2, EMR)."""
import socket

import boto3
import pytest


@pytest.fixture(autouse=True)
def _own_state_folders(own_state_folders):
    """Every AWS test in folders of its session's (tests/conftest.py)."""


@pytest.fixture(scope="session")
def moto_url():
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def aws(moto_url, monkeypatch):
    """boto3 clients against moto, through the same code path that talks to AWS, and a call counter."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    calls = []

    def client(service):
        c = boto3.client(service, region_name="us-east-1", endpoint_url=moto_url)
        c.meta.events.register("before-call", lambda model, **kw: calls.append(model.name))
        return c

    client.calls = calls
    return client
