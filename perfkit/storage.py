"""Clients for the two compared storages, built from a profile, and the checks that they answer."""
from __future__ import annotations

from pathlib import Path

import boto3
import requests
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from hdfs import HdfsError, InsecureClient

from perfkit.config import Profile
from perfkit.errors import ServiceError

RETRIES = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5)
LAB_FIX = "start the lab with `perfkit lab up`" 


def s3_client(profile: Profile, config: Config | None = None):
    """boto3 S3 client: the lab's server and keys for the lab profile, the AWS chain otherwise."""
    kwargs = {"region_name": profile.s3_region, "config": RETRIES.merge(config) if config else RETRIES}
    if profile.s3_endpoint:
        kwargs["endpoint_url"] = profile.s3_endpoint
    if profile.uses_lab:
        from perfkit.lab.settings import lab_credentials

        creds = lab_credentials()
        kwargs.update(aws_access_key_id=creds["access_key"], aws_secret_access_key=creds["secret_key"])
    return boto3.session.Session().client("s3", **kwargs)  # a fresh session: the credential chain as it is now


def webhdfs_client(profile: Profile) -> InsecureClient:
    return InsecureClient(profile.webhdfs_url, user=profile.hdfs_user, timeout=30)


def _fix(profile: Profile, setting: str) -> str:
    return LAB_FIX if profile.uses_lab else f"check the profile's {setting} and that the service runs"


def check_hdfs(profile: Profile) -> None:
    try:
        webhdfs_client(profile).status("/")
    except (requests.RequestException, HdfsError) as err:
        raise ServiceError(f"HDFS at {profile.webhdfs_url}", f"not reachable ({type(err).__name__})",
                           _fix(profile, "webhdfs_url")) from None


def check_s3(profile: Profile) -> None:
    where = f"S3 bucket {profile.s3_bucket!r}" + (f" at {profile.s3_endpoint}" if profile.s3_endpoint else "")
    try:
        s3_client(profile).head_bucket(Bucket=profile.s3_bucket)
    except NoCredentialsError:
        raise ServiceError(where, "no AWS credentials found", "configure the standard AWS chain (aws configure, "
                           "environment or instance profile)") from None
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        if code in ("404", "NoSuchBucket"):
            raise ServiceError(where, "the bucket does not exist",
                               "create it, or pass the name of an existing bucket (profile setting s3_bucket / bucket=)") from None
        raise ServiceError(where, f"refused ({code})", "check the credentials and the bucket policy") from None
    except BotoCoreError as err:
        raise ServiceError(where, f"not reachable ({type(err).__name__})", _fix(profile, "s3_endpoint")) from None


def hdfs_listing(client: InsecureClient, path: str) -> dict[str, int]:
    """{file name: size} of the files directly under an HDFS folder ({} if it does not exist)."""
    try:
        return {name: st["length"] for name, st in client.list(path, status=True) if st["type"] == "FILE"}
    except HdfsError as err:
        if "does not exist" in str(err):
            return {}
        raise


def s3_listing(client, bucket: str, prefix: str) -> dict[str, int]:
    """{object name below the prefix: size}, through the paginator (any number of objects)."""
    prefix = prefix.rstrip("/") + "/"
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            found[obj["Key"][len(prefix):]] = obj["Size"]
    return found


def upload_to_hdfs(client: InsecureClient, local: Path, path: str) -> None:
    client.upload(path, str(local), overwrite=True)


def upload_to_s3(client, local: Path, bucket: str, key: str) -> None:
    client.upload_file(str(local), bucket, key)  # s3transfer: multipart for large files


def listing_problems(expected: dict[str, int], found: dict[str, int]) -> str | None:
    """What differs between two {name: size} listings, in words; None when they are equal."""
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    wrong = sorted(n for n in set(expected) & set(found) if expected[n] != found[n])
    parts = [f"{len(missing)} missing {missing[:3]}" if missing else "",
             f"{len(wrong)} of wrong size {wrong[:3]}" if wrong else "",
             f"{len(extra)} unexpected {extra[:3]}" if extra else ""]
    return ", ".join(p for p in parts if p) or None
