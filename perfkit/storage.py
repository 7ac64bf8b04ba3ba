"""Clients for the two compared storages, built from a profile, and the checks that they answer."""
from __future__ import annotations

import re
import threading
from pathlib import Path
from urllib.parse import quote, urlsplit

import boto3
import requests
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ParamValidationError
from hdfs import HdfsError, InsecureClient

from perfkit.config import Profile
from perfkit.errors import ServiceError

RETRIES = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5)
# S3's bucket naming rules; s3a:// URLs carry the bucket as a host name, so legacy names (capitals, _) fail there too
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_BUCKET_RULES = ("S3 bucket names are 3 to 63 lowercase letters, digits, dots and hyphens, start and end with a "
                 "letter or digit, and are not an IP address")
_REGION = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$")  # what botocore accepts


# what an S3 server answers when it asks for fewer requests: AWS's 503 SlowDown, and the codes of other stores
THROTTLING_CODES = {"SlowDown", "SlowDownRead", "SlowDownWrite", "Throttling", "ThrottlingException",
                    "RequestLimitExceeded", "TooManyRequests", "TooManyRequestsException", "503", "429"}
THROTTLING_STATUS = {503, 429}


def throttling(err: ClientError) -> str | None:
    """'503 SlowDown' (the status and the server's code) when the answer says the server throttles, else None.

    A HEAD answer has no body: its code is the status alone ('503'); S3 answers 503 only for SlowDown (and a
    rare internal overload that asks for the same thing: fewer requests)."""
    response = getattr(err, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    message = str(response.get("Error", {}).get("Message", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code in THROTTLING_CODES or status in THROTTLING_STATUS or "reduce your request rate" in message.lower():
        shown = [str(status)] if status else []
        return " ".join(shown + ([code] if code and code != str(status) else [])) or code
    return None


def s3_client(profile: Profile, config: Config | None = None):
    """boto3 S3 client: the keys the profile's provider gives (the lab's), else the standard AWS chain."""
    kwargs = {"region_name": profile.s3_region, "config": RETRIES.merge(config) if config else RETRIES}
    if profile.s3_endpoint:
        kwargs["endpoint_url"] = profile.s3_endpoint
    creds = profile.provider.s3_credentials()
    if not creds:
        return boto3.session.Session().client("s3", **kwargs)  # a fresh session: the credential chain as it is now
    kwargs.update(aws_access_key_id=creds["access_key"], aws_secret_access_key=creds["secret_key"])
    # keys given: no chain to follow, so one session serves every client, and its loaded service model with it
    # (a client from a fresh session cost 0.13-0.15 s, most of it loading that model; s3_distance made 70)
    with _KEYED_SESSION_LOCK:  # a boto3 session is not safe to share between threads while it makes clients
        return _KEYED_SESSION.client("s3", **kwargs)


_KEYED_SESSION = boto3.session.Session()
_KEYED_SESSION_LOCK = threading.Lock()


_SHARED_S3: dict[tuple, object] = {}
_SHARED_S3_LOCK = threading.Lock()


def shared_s3_client(profile: Profile):
    """One S3 client per endpoint, region and keys, for many small requests (listings, footers, markers): making a
    client costs 0.1-0.3 s, and boto3's clients are safe to share between threads."""
    creds = profile.provider.s3_credentials()
    key = (profile.s3_endpoint, profile.s3_region, tuple(sorted(creds.items())) if creds else None)
    with _SHARED_S3_LOCK:
        if key not in _SHARED_S3:
            _SHARED_S3[key] = s3_client(profile, Config(max_pool_connections=32))
        return _SHARED_S3[key]


def webhdfs_client(profile: Profile) -> InsecureClient:
    return InsecureClient(profile.webhdfs_url, user=profile.hdfs_user, timeout=30)


def located_blocks(profile: Profile, path: str, length: int, session=requests, timeout_s: float = 30) -> list[dict]:
    """The blocks of `path`'s first `length` bytes as the NameNode knows them (WebHDFS GET_BLOCK_LOCATIONS), each with
    its live replicas' DataNodes (`locations`: ipAddr, infoPort, ...) and isCorrupt. Raises requests' errors, and
    ValueError, KeyError or TypeError for an answer of another shape."""
    url = f"{profile.webhdfs_url.rstrip('/')}/webhdfs/v1{quote(path)}"
    params = {"op": "GET_BLOCK_LOCATIONS", "offset": 0, "length": max(length, 1), "user.name": profile.hdfs_user}
    response = session.get(url, params=params, timeout=timeout_s)
    response.raise_for_status()
    return response.json()["LocatedBlocks"]["locatedBlocks"]


def _fix(profile: Profile, setting: str, service: str) -> str:
    return profile.provider.fix(service, f"check the profile's {setting} and that the service runs")


def is_http_url(url: str | None) -> bool:
    try:
        parts = urlsplit(url or "")
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not re.search(r"\s", url)


def _bucket_name_ok(name: str) -> bool:
    return (bool(_BUCKET.match(name)) and ".." not in name and not re.fullmatch(r"[\d.]+", name)
            and not name.startswith(("xn--", "sthree-")) and not name.endswith(("-s3alias", "--ol-s3")))


def check_hdfs(profile: Profile) -> None:
    if not is_http_url(profile.webhdfs_url):
        raise ServiceError(f"HDFS at {profile.webhdfs_url}", "webhdfs_url is not an http(s):// URL (WebHDFS)",
                           "set the profile's webhdfs_url to the NameNode's web address, e.g. http://namenode:9870")
    try:
        webhdfs_client(profile).status("/")
    except (requests.RequestException, HdfsError) as err:
        raise ServiceError(f"HDFS at {profile.webhdfs_url}", f"not reachable ({type(err).__name__})",
                           _fix(profile, "webhdfs_url", "hdfs")) from None


def check_s3(profile: Profile) -> None:
    where = f"S3 bucket {profile.s3_bucket!r}" + (f" at {profile.s3_endpoint}" if profile.s3_endpoint else "")
    # what boto3 would refuse with a traceback or a misleading error, named here before any request
    if profile.s3_endpoint is not None and not is_http_url(profile.s3_endpoint):
        raise ServiceError(where, f"invalid endpoint URL {profile.s3_endpoint!r}", "set the profile's s3_endpoint "
                           "to an http(s):// address, e.g. http://127.0.0.1:7070 (or null for AWS itself)")
    if not profile.s3_region:
        raise ServiceError(where, "the region is empty", "set the profile's s3_region, e.g. us-east-1")
    if not _REGION.match(profile.s3_region):
        raise ServiceError(where, f"invalid region {profile.s3_region!r}",
                           "set the profile's s3_region to a region name, e.g. us-east-1")
    if not _bucket_name_ok(profile.s3_bucket):
        raise ServiceError(where, "the bucket name is empty" if not profile.s3_bucket else
                           f"invalid bucket name ({_BUCKET_RULES})",
                           "set the profile's s3_bucket (or bucket= / --bucket) to a valid bucket name")
    try:
        s3_client(profile).head_bucket(Bucket=profile.s3_bucket)
    except NoCredentialsError:
        raise ServiceError(where, "no AWS credentials found", "configure the standard AWS chain (aws configure, "
                           "environment or instance profile)") from None
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        if (impostor := profile.provider.s3_impostor(profile)) is not None:
            raise ServiceError(where, *impostor) from None
        if code in ("404", "NoSuchBucket"):
            raise ServiceError(where, "the bucket does not exist",
                               "create it, or pass the name of an existing bucket "
                               "(profile setting s3_bucket / bucket=)") from None
        if throttled := throttling(err):  # the server answers, and asks for fewer requests: not a matter of keys
            raise ServiceError(where, f"throttled ({throttled}): the S3 server asks for fewer requests",
                               "lower the request rate (fewer engines/threads at once) or wait, and check the "
                               "endpoint's request limits") from None
        raise ServiceError(where, f"refused ({code})", "check the credentials and the bucket policy") from None
    except ParamValidationError as err:  # a setting the checks above let through
        raise ServiceError(where, f"invalid request ({' '.join(str(err).split())})",
                           "check the profile's s3_bucket and s3_region") from None
    except BotoCoreError as err:
        raise ServiceError(where, f"not reachable ({type(err).__name__})", _fix(profile, "s3_endpoint", "s3")) from None
    # S3 answers at the endpoint: do the engines the provider configured send their requests there too?
    if (elsewhere := profile.provider.s3_clients_elsewhere(profile)) is not None:
        raise ServiceError(where, *elsewhere)


def hdfs_listing(client: InsecureClient, path: str) -> dict[str, int]:
    """{file name: size} of the files directly under an HDFS folder ({} if it does not exist)."""
    try:
        return {name: st["length"] for name, st in client.list(path, status=True) if st["type"] == "FILE"}
    except HdfsError as err:
        if "does not exist" in str(err):
            return {}
        raise


def s3_listing(client, bucket: str, prefix: str) -> dict[str, int]:
    """{object name below the prefix: size}, through the paginator (any number of objects). Empty folder markers
    ("name/", 0 bytes: what S3A's mkdir and Alluxio leave) are folders, not files: left out."""
    prefix = prefix.rstrip("/") + "/"
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            if obj["Key"].endswith("/") and obj["Size"] == 0:
                continue
            found[obj["Key"][len(prefix):]] = obj["Size"]
    return found


def upload_to_hdfs(client: InsecureClient, local: Path, path: str) -> None:
    client.upload(path, str(local), overwrite=True)


def upload_to_s3(client, local: Path, bucket: str, key: str, config=None) -> None:
    client.upload_file(str(local), bucket, key, Config=config)  # s3transfer: multipart for large files


def listing_problems(expected: dict[str, int], found: dict[str, int]) -> str | None:
    """What differs between two {name: size} listings, in words; None when they are equal."""
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    wrong = sorted(n for n in set(expected) & set(found) if expected[n] != found[n])
    parts = [f"{len(missing)} missing {missing[:3]}" if missing else "",
             f"{len(wrong)} of wrong size {wrong[:3]}" if wrong else "",
             f"{len(extra)} unexpected {extra[:3]}" if extra else ""]
    return ", ".join(p for p in parts if p) or None


def check_metastore(profile: Profile) -> None:
    """The Hive metastore accepts connections (a thrift call is the engines' job; this names a service that is down)."""
    import socket

    address = urlsplit(profile.metastore_uri)
    where = f"Hive metastore at {address.hostname}:{address.port}"
    try:
        with socket.create_connection((address.hostname, address.port or 9083), timeout=5):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ServiceError(where, f"not reachable ({reason})",
                           _fix(profile, "metastore_uri", "hive-metastore")) from None
