from dataclasses import replace

import pytest

from perfkit import storage
from perfkit.config import load_profile
from perfkit.errors import ServiceError


def test_unreachable_hdfs_names_the_address_and_the_fix():
    profile = replace(load_profile("lab"), webhdfs_url="http://127.0.0.1:1")
    with pytest.raises(ServiceError, match=r"HDFS at http://127.0.0.1:1: not reachable .*Fix: start the lab"):
        storage.check_hdfs(profile)


def test_unreachable_s3_names_the_bucket_endpoint_and_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    (tmp_path / "credentials.json").write_text('{"access_key": "a", "secret_key": "b"}')
    profile = replace(load_profile("lab"), s3_endpoint="http://127.0.0.1:1")
    monkeypatch.setattr(storage, "RETRIES", storage.Config(retries={"max_attempts": 1}, connect_timeout=1))
    with pytest.raises(ServiceError, match=r"S3 bucket 'perfkit-lab' at http://127.0.0.1:1: not reachable"):
        storage.check_s3(profile)


def test_missing_aws_credentials_are_named(monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    profile = load_profile("emr", bucket="b", master="127.0.0.1")
    with pytest.raises(ServiceError, match="no AWS credentials found"):
        storage.check_s3(profile)
